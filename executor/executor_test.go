package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dagent-dev/dagent/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/verify"
)

const mission = "Digest this week's papers"

func TestExecuteCompletesFirstTime(t *testing.T) {
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "b", "input": "B from {{results.a}}", "depends_on": ["a"]}]}`)
	w := newWorkers()
	rp := newReplanner()

	res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp))...)
	require.NoError(t, err)

	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.NoError(t, res.Err)
	assert.Empty(t, res.Halt)
	assert.Zero(t, res.ReplanCount)
	assert.Equal(t, 1, res.ExecutionAttempts)
	assert.Empty(t, res.History)
	assert.Same(t, p, res.Plan)
	assert.Equal(t, map[string]any{"a": "a-out", "b": "b-out"}, res.Outputs())
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, w.counts())
	assert.Equal(t, "B from a-out", w.requests("b")[0].Input)
	assert.Empty(t, rp.received())
	assert.False(t, res.Report.Has(critic.Critical))
	assert.Positive(t, res.Duration)
}

// TestExecuteReplanKeepsCompleted: b asks for a replan while its sibling c,
// in the same phase, has already finished; the repair plan runs, a and c
// are not run again, and their outputs reach the repair's tasks.
func TestExecuteReplanKeepsCompleted(t *testing.T) {
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "b", "input": "B from {{results.a}}", "depends_on": ["a"], "on_failure": "replan"},
		{"id": "c", "input": "C", "depends_on": ["a"]},
		{"id": "d", "input": "D", "depends_on": ["b", "c"]}]}`)
	repair := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "c", "input": "C", "depends_on": ["a"]},
		{"id": "b2", "input": "B again from {{results.a}}", "depends_on": ["a"]},
		{"id": "d", "input": "D", "depends_on": ["b2", "c"]}]}`)

	// b fails only once c has settled: the observer sees c's final event,
	// which the runner emits when it records c's result.
	cSettled := make(chan struct{})
	var once sync.Once
	observer := runner.ObserverFunc(func(e runner.Event) {
		if e.Kind == runner.EventTaskFinished && e.TaskID == "c" {
			once.Do(func() { close(cSettled) })
		}
	})
	w := newWorkers().
		set("a", output("A-out")).
		set("c", output(map[string]any{"n": 3.0})).
		set("b", func(ctx context.Context, req agent.Request) (agent.Result, error) {
			select {
			case <-cSettled:
			case <-ctx.Done():
				return agent.Result{}, ctx.Err()
			}
			return agent.Result{}, errors.New("the source is down")
		})
	rp := newReplanner(reply{plan: repair})

	res, err := executor.Execute(context.Background(), p, mission, w.options(
		executor.WithReplanner(rp),
		executor.WithRunner(runner.WithSchedule(runner.Phased), runner.WithObserver(observer)),
		executor.WithRunID("exec-1"),
	)...)
	require.NoError(t, err)

	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, "exec-1", res.RunID, "the first run's id, not the repair's exec-1.1")
	assert.Empty(t, res.Halt)
	assert.Equal(t, 1, res.ReplanCount)
	assert.Equal(t, 2, res.ExecutionAttempts)
	assert.Same(t, repair, res.Plan)
	// Completed tasks, the sibling c included, ran once.
	assert.Equal(t, map[string]int{"a": 1, "b": 1, "c": 1, "b2": 1, "d": 1}, w.counts())
	// Their outputs reached the repair plan's tasks.
	assert.Equal(t, "B again from A-out", w.requests("b2")[0].Input)
	assert.Equal(t, map[string]any{"b2": "b2-out", "c": map[string]any{"n": float64(3)}}, w.requests("d")[0].Depends)
	assert.Equal(t, map[string]any{
		"a": "A-out", "c": map[string]any{"n": float64(3)}, "b2": "b2-out", "d": "d-out",
	}, res.Outputs())

	// The failed task stays in the result; the carried ones keep the
	// result of the run that did them.
	require.Contains(t, res.Tasks, "b")
	assert.Equal(t, runner.TaskFailed, res.Tasks["b"].Status)
	assert.Equal(t, 1, res.Tasks["a"].Attempts)
	assert.Equal(t, 1, res.Tasks["c"].Attempts)

	got := rp.received()
	require.Len(t, got, 1)
	assert.Equal(t, mission, got[0].mission)
	assert.Equal(t, map[string]any{"a": "A-out", "c": map[string]any{"n": float64(3)}}, got[0].completed)
	assert.Same(t, p, got[0].failure.Plan)
	assert.Equal(t, "b", got[0].failure.TaskID)
	assert.Equal(t, string(runner.ClassAgentError), got[0].failure.Class)
	assert.Equal(t, "the source is down", got[0].failure.Diagnosis)
	assert.Empty(t, got[0].history)

	require.Len(t, res.History, 1)
	assert.Equal(t, executor.Trial{
		Attempt: 1, TaskID: "b", Class: "agent_error", Diagnosis: "the source is down", NewTaskCount: 1,
	}, res.History[0])
}

// TestExecuteCriticalFailureReplanned: a critical task under on_failure
// stop halts the run; with a replanner, the tail is replanned.
func TestExecuteCriticalFailureReplanned(t *testing.T) {
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "b", "input": "B", "depends_on": ["a"], "on_failure": "stop", "critical": true},
		{"id": "d", "input": "D", "depends_on": ["b"]}]}`)
	repair := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "b2", "input": "B another way", "depends_on": ["a"]},
		{"id": "d", "input": "D", "depends_on": ["b2"]}]}`)
	w := newWorkers().set("b", fail(errBoom))
	rp := newReplanner(reply{plan: repair})

	res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp))...)
	require.NoError(t, err)

	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, 1, res.ReplanCount)
	assert.Equal(t, 2, res.ExecutionAttempts)
	assert.Equal(t, map[string]int{"a": 1, "b": 1, "b2": 1, "d": 1}, w.counts())
	got := rp.received()
	require.Len(t, got, 1)
	assert.Equal(t, "b", got[0].failure.TaskID)
	assert.Equal(t, "agent_error", got[0].failure.Class)
	assert.Equal(t, "boom", got[0].failure.Diagnosis)
	assert.Equal(t, map[string]any{"a": "a-out"}, got[0].completed)
}

func TestExecuteWithoutReplanner(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		status runner.Status
	}{
		{"replan policy", "replan", runner.StatusReplanRequired},
		{"critical failure", "stop", runner.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPlan(t, fmt.Sprintf(`{"tasks": [
				{"id": "a", "input": "A"},
				{"id": "b", "input": "B", "depends_on": ["a"], "on_failure": %q}]}`, tt.policy))
			w := newWorkers().set("b", fail(errBoom))

			res, err := executor.Execute(context.Background(), p, mission, w.options()...)
			require.NoError(t, err)

			assert.Equal(t, tt.status, res.Status)
			assert.Empty(t, res.Halt)
			assert.Zero(t, res.ReplanCount)
			assert.Equal(t, 1, res.ExecutionAttempts)
			assert.Empty(t, res.History)
			assert.Equal(t, map[string]any{"a": "a-out"}, res.Outputs())
			if tt.status == runner.StatusReplanRequired {
				require.NotNil(t, res.Replan)
				assert.Equal(t, "b", res.Replan.TaskID)
			} else {
				var te *runner.TaskError
				require.ErrorAs(t, res.Err, &te)
				assert.Equal(t, "b", te.TaskID)
				assert.ErrorIs(t, res.Err, errBoom)
			}
		})
	}
}

func TestExecuteRefused(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check string
	}{
		{"cycle", `{"tasks": [
			{"id": "a", "input": "A", "depends_on": ["b"]},
			{"id": "b", "input": "B", "depends_on": ["a"]}]}`, string(plan.CodeCycle)},
		{"unknown agent", `{"tasks": [{"id": "a", "agent": "nobody", "input": "A"}]}`, string(plan.CodeUnknownAgent)},
		{"missing dependency", `{"tasks": [{"id": "a", "input": "A", "depends_on": ["ghost"]}]}`, string(plan.CodeMissingDependency)},
		{"no tasks", `{"tasks": []}`, string(plan.CodeEmptyPlan)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := plan.Parse([]byte(tt.src)) // problems of validation, not parsing
			require.NotNil(t, p)
			w := newWorkers()
			rp := newReplanner()

			res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp))...)
			require.Error(t, err)
			assert.Nil(t, res)
			assert.ErrorIs(t, err, executor.ErrRefused)
			var refused *executor.RefusedError
			require.ErrorAs(t, err, &refused)
			assert.True(t, refused.Report.Has(critic.Critical))
			var checks []string
			for _, is := range refused.Report.Issues {
				if is.Severity == critic.Critical {
					checks = append(checks, is.Check)
				}
			}
			assert.Contains(t, checks, tt.check)
			assert.Contains(t, err.Error(), "plan refused by the critic")
			assert.Contains(t, err.Error(), "["+tt.check+"]")
			assert.Empty(t, w.counts(), "nothing runs")
			assert.Empty(t, rp.received())
		})
	}
}

func TestRefusedErrorMessage(t *testing.T) {
	p, _ := plan.Parse([]byte(`{"tasks": [
		{"id": "a", "agent": "nobody", "input": "A"},
		{"id": "b", "agent": "nobody", "input": "B"}]}`))
	_, err := executor.Execute(context.Background(), p, mission)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "plan refused by the critic: 2 critical issues; "), err.Error())

	p, _ = plan.Parse([]byte(`{"tasks": [{"id": "a", "agent": "nobody", "input": "A"}]}`))
	_, err = executor.Execute(context.Background(), p, mission)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "plan refused by the critic: 1 critical issue; "), err.Error())
}

// TestExecuteHistory: attempt numbering, the failing output's excerpt, the
// count of new tasks, and what the replanner receives on each replan.
func TestExecuteHistory(t *testing.T) {
	// 1 + 600×2 bytes: byte 500 is inside a rune, so the cut moves back.
	big := "x" + strings.Repeat("é", 600)
	p := mustPlan(t, `{"tasks": [
		{"id": "x", "input": "X", "verification": "(< (count data/result) 10)", "on_verification_failure": "replan"}]}`)
	repair1 := mustPlan(t, `{"tasks": [
		{"id": "y1", "input": "Y1", "on_failure": "replan"},
		{"id": "y2", "input": "Y2"}]}`)
	repair2 := mustPlan(t, `{"tasks": [
		{"id": "y2", "input": "Y2"},
		{"id": "z", "input": "Z"}]}`)
	w := newWorkers().set("x", output(big)).set("y1", fail(errBoom))
	rp := newReplanner(reply{plan: repair1}, reply{plan: repair2})

	res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp))...)
	require.NoError(t, err)

	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, 2, res.ReplanCount)
	assert.Equal(t, 3, res.ExecutionAttempts)
	assert.Equal(t, map[string]int{"x": 1, "y1": 1, "y2": 1, "z": 1}, w.counts())

	require.Len(t, res.History, 2)
	first, second := res.History[0], res.History[1]
	assert.Equal(t, 1, first.Attempt)
	assert.Equal(t, "x", first.TaskID)
	assert.Equal(t, string(runner.ClassVerification), first.Class)
	assert.Equal(t, res.Tasks["x"].Diagnosis, first.Diagnosis)
	assert.NotEmpty(t, first.Diagnosis)
	assert.True(t, utf8.ValidString(first.Output), "the excerpt is cut on a rune boundary")
	assert.True(t, strings.HasSuffix(first.Output, "…"))
	body := strings.TrimSuffix(first.Output, "…")
	assert.LessOrEqual(t, len(body), 500)
	assert.Greater(t, len(body), 490)
	assert.True(t, strings.HasPrefix(big, body))
	assert.Equal(t, 2, first.NewTaskCount)

	assert.Equal(t, executor.Trial{Attempt: 2, TaskID: "y1", Class: "agent_error", Diagnosis: "boom", NewTaskCount: 1}, second)

	got := rp.received()
	require.Len(t, got, 2)
	assert.Same(t, p, got[0].failure.Plan)
	assert.Equal(t, big, got[0].failure.Output, "the replanner gets the whole output")
	assert.Equal(t, "verification_failed", got[0].failure.Class)
	assert.Empty(t, got[0].history)
	assert.Empty(t, got[0].completed)

	assert.Same(t, repair1, got[1].failure.Plan)
	assert.Equal(t, "y1", got[1].failure.TaskID)
	assert.Equal(t, []executor.Trial{first}, got[1].history)
	assert.Equal(t, map[string]any{"y2": "y2-out"}, got[1].completed)
}

func TestExecuteHistoryExcerpt(t *testing.T) {
	long := strings.Repeat("a", 2000)
	tests := []struct {
		name   string
		output any
		want   string
	}{
		{"short text", "too short", "too short"},
		{"exactly 500 bytes", long[:500], long[:500]},
		{"long text", long, long[:500] + "…"},
		{"JSON", map[string]any{"k": []any{1, 2}}, `{"k":[1,2]}`},
		{"long JSON", []any{long}, `["` + long[:498] + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPlan(t, `{"tasks": [
				{"id": "x", "input": "X", "verification": "false", "on_verification_failure": "replan"}]}`)
			repair := mustPlan(t, `{"tasks": [{"id": "y", "input": "Y"}]}`)
			w := newWorkers().set("x", output(tt.output))
			rp := newReplanner(reply{plan: repair})

			res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp))...)
			require.NoError(t, err)
			require.Len(t, res.History, 1)
			assert.Equal(t, tt.want, res.History[0].Output)
		})
	}
}

func TestExecuteUsage(t *testing.T) {
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "x", "input": "X", "depends_on": ["a"], "on_failure": "replan"}]}`)
	repair := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "y", "input": "Y", "depends_on": ["a"]}]}`)
	w := newWorkers().
		set("a", func(context.Context, agent.Request) (agent.Result, error) {
			return agent.Result{Output: "a", Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5}}, nil
		}).
		set("x", func(context.Context, agent.Request) (agent.Result, error) {
			// The tokens of a failed attempt count too.
			return agent.Result{Usage: llm.Usage{PromptTokens: 3, CompletionTokens: 1}}, errBoom
		}).
		set("y", func(context.Context, agent.Request) (agent.Result, error) {
			return agent.Result{Output: "y", Usage: llm.Usage{PromptTokens: 7, CompletionTokens: 2}}, nil
		})
	rp := newReplanner(reply{plan: repair, usage: llm.Usage{PromptTokens: 100, CompletionTokens: 20}})

	res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp))...)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	// a is carried into the repair run with no new usage: counted once.
	assert.Equal(t, llm.Usage{PromptTokens: 10 + 3 + 100 + 7, CompletionTokens: 5 + 1 + 20 + 2}, res.Usage)
}

// TestExecuteReplanUsageOnError: the planner's tokens count even when its
// replan fails.
func TestExecuteReplanUsageOnError(t *testing.T) {
	p := mustPlan(t, `{"tasks": [{"id": "x", "input": "X", "on_failure": "replan"}]}`)
	w := newWorkers().set("x", fail(errBoom))
	rp := newReplanner(reply{err: errors.New("the model answered prose"), usage: llm.Usage{PromptTokens: 40, CompletionTokens: 2}})

	res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp))...)
	require.NoError(t, err)
	assert.Equal(t, executor.HaltReplanFailed, res.Halt)
	assert.Equal(t, 42, res.Usage.Total())
}

func TestExecuteCooldown(t *testing.T) {
	const cooldown = 50 * time.Millisecond
	p := mustPlan(t, `{"tasks": [{"id": "x", "input": "X", "on_failure": "replan"}]}`)
	repair1 := mustPlan(t, `{"tasks": [{"id": "y", "input": "Y", "on_failure": "replan"}]}`)
	repair2 := mustPlan(t, `{"tasks": [{"id": "z", "input": "Z"}]}`)
	w := newWorkers().set("x", fail(errBoom)).set("y", fail(errBoom))
	rp := newReplanner(reply{plan: repair1}, reply{plan: repair2})

	start := time.Now()
	res, err := executor.Execute(context.Background(), p, mission, w.options(
		executor.WithReplanner(rp), executor.WithCooldown(cooldown))...)
	elapsed := time.Since(start)
	require.NoError(t, err)

	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, 2, res.ReplanCount)
	assert.GreaterOrEqual(t, elapsed, 2*cooldown)
	assert.GreaterOrEqual(t, res.Duration, 2*cooldown)
	assert.Less(t, elapsed, 30*time.Second)
}

func TestExecuteCancelledDuringCooldown(t *testing.T) {
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "x", "input": "X", "depends_on": ["a"], "on_failure": "replan"}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWorkers().set("x", func(context.Context, agent.Request) (agent.Result, error) {
		// The run ends at once; the cancellation comes during the cooldown.
		time.AfterFunc(20*time.Millisecond, cancel)
		return agent.Result{}, errBoom
	})
	rp := newReplanner()

	start := time.Now()
	res, err := executor.Execute(ctx, p, mission, w.options(
		executor.WithReplanner(rp), executor.WithCooldown(time.Minute))...)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 30*time.Second)

	require.NotNil(t, res)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.ErrorIs(t, res.Err, context.Canceled)
	assert.Empty(t, res.Halt)
	assert.Zero(t, res.ReplanCount)
	assert.Equal(t, 1, res.ExecutionAttempts)
	assert.Empty(t, rp.received(), "the replanner is not asked")
	assert.Equal(t, map[string]any{"a": "a-out"}, res.Outputs())
}

func TestExecuteCancelledDuringRun(t *testing.T) {
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "b", "input": "B", "depends_on": ["a"]},
		{"id": "c", "input": "C", "depends_on": ["b"]}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWorkers().set("b", func(ctx context.Context, _ agent.Request) (agent.Result, error) {
		cancel()
		<-ctx.Done()
		return agent.Result{}, ctx.Err()
	})
	rp := newReplanner()

	res, err := executor.Execute(ctx, p, mission, w.options(executor.WithReplanner(rp))...)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.ErrorIs(t, res.Err, context.Canceled)
	assert.Empty(t, res.Halt)
	assert.Equal(t, map[string]any{"a": "a-out"}, res.Outputs(), "partial results are kept")
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, w.counts())
	assert.Empty(t, rp.received())
}

func TestExecuteCancelledDuringReplan(t *testing.T) {
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "x", "input": "X", "depends_on": ["a"], "on_failure": "replan"}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWorkers().set("x", fail(errBoom))
	rp := newReplanner(reply{plan: mustPlan(t, `{"tasks": [{"id": "a", "input": "A"}]}`)})
	rp.hook = func(context.Context) { cancel() }

	res, err := executor.Execute(ctx, p, mission, w.options(executor.WithReplanner(rp))...)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.Empty(t, res.Halt)
	assert.Zero(t, res.ReplanCount)
	assert.Equal(t, 1, res.ExecutionAttempts)
	assert.Equal(t, map[string]any{"a": "a-out"}, res.Outputs())
}

// TestExecuteRunnerSetupError: an error of the runner before any task
// starts is returned as it is.
func TestExecuteRunnerSetupError(t *testing.T) {
	p := mustPlan(t, `{"tasks": [{"id": "a", "input": "A"}]}`)
	w := newWorkers()
	res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithRunner(runner.WithConcurrency(0)))...)
	require.ErrorIs(t, err, runner.ErrInvalidOption)
	require.NotNil(t, res)
	assert.Zero(t, res.ExecutionAttempts)
	assert.Empty(t, w.counts())
}

// TestExecuteRegistryTools: with a registry, plan agents may use only its
// tools; without one, tools are not checked.
func TestExecuteRegistryTools(t *testing.T) {
	p := mustPlan(t, `{
		"agents": {"shell": {"prompt": "You run commands.", "tools": ["rm"]}},
		"tasks": [{"id": "a", "input": "A"}]}`)
	run := func(opts ...executor.Option) (*executor.Result, error) {
		return executor.Execute(context.Background(), p, mission, newWorkers().options(opts...)...)
	}

	res, err := run()
	require.NoError(t, err, "tools are not checked without a catalog")
	assert.Equal(t, runner.StatusCompleted, res.Status)

	reg := registry.New()
	require.NoError(t, reg.RegisterTool("search", registry.Tool{Run: func(context.Context, json.RawMessage) (string, error) { return "", nil }}))
	_, err = run(executor.WithRegistry(reg))
	var refused *executor.RefusedError
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, critic.CheckUnknownTool, refused.Report.Issues[0].Check)
}

// TestExecuteRegistryWorker: a registry worker given to both the runner and
// the critic runs; a precondition that fails is classified
// precondition_failed, and, when that class does not halt, the repair plan
// is checked against the registry too.
func TestExecuteRegistryWorker(t *testing.T) {
	w := newWorkers()
	reg := registry.New()
	require.NoError(t, reg.Register("git", registry.Worker{
		Description:   "clones repositories",
		Preconditions: []string{`(if (starts-with? data/input "https://") true "the input is not a URL")`},
		Agent:         agent.Func(w.run),
	}))
	p := mustPlan(t, `{"tasks": [{"id": "clone", "agent": "git", "input": "example.org/repo", "on_failure": "replan"}]}`)
	fixed := mustPlan(t, `{"tasks": [{"id": "clone2", "agent": "git", "input": "https://example.org/repo"}]}`)
	unknown := mustPlan(t, `{"tasks": [{"id": "clone2", "agent": "svn", "input": "https://example.org/repo"}]}`)
	opts := func(rp *replanner) []executor.Option {
		return []executor.Option{
			executor.WithRegistry(reg),
			executor.WithRunner(runner.WithBackoff(runner.Backoff{})),
			executor.WithReplanner(rp),
			executor.WithoutHaltOn(runner.ClassPrecondition),
		}
	}

	rp := newReplanner(reply{plan: fixed})
	res, err := executor.Execute(context.Background(), p, mission, opts(rp)...)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, map[string]int{"clone2": 1}, w.counts(), "the precondition kept the worker from starting")
	require.Len(t, res.History, 1)
	assert.Equal(t, string(runner.ClassPrecondition), res.History[0].Class)
	assert.Contains(t, res.History[0].Diagnosis, "the input is not a URL")

	rp = newReplanner(reply{plan: unknown})
	res, err = executor.Execute(context.Background(), p, mission, opts(rp)...)
	require.NoError(t, err)
	assert.Equal(t, executor.HaltReplanFailed, res.Halt)
	assert.ErrorIs(t, res.Err, executor.ErrRefused)
	assert.ErrorContains(t, res.Err, critic.CheckUnknownWorker)
}

// A Go agent given with WithAgent under its own name runs through Execute:
// the critic knows it as a worker.
func TestWithAgentNamesAWorker(t *testing.T) {
	var calls atomic.Int32
	lookup := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		calls.Add(1)
		return agent.Result{Output: "found"}, nil
	})
	tk := plan.NewTask("find", "Find it")
	tk.Agent = "lookup"
	res, err := executor.Execute(context.Background(), &plan.Plan{Tasks: []plan.Task{tk}}, "find it", executor.WithAgent("lookup", lookup))
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, int32(1), calls.Load())
}

// TestExecuteSharesPredicates: the critic and the runner compile the
// plan's predicates in the set WithPredicates gives, each distinct one
// once; the set's own options apply to them.
func TestExecuteSharesPredicates(t *testing.T) {
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "input": "A", "verification": "(= data/result \"ok\")"},
		{"id": "b", "input": "B", "verification": "(= data/result \"ok\")", "depends_on": ["a"]}]}`)
	w := newWorkers().set("a", output("ok")).set("b", output("ok"))
	set := verify.NewSet()
	res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithPredicates(set))...)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, 1, set.Len(), "one distinct predicate, compiled once for the critic and the runner")

	tiny := verify.NewSet(verify.WithMaxNodes(2))
	_, err = executor.Execute(context.Background(), p, mission, newWorkers().options(executor.WithPredicates(tiny))...)
	var refused *executor.RefusedError
	require.ErrorAs(t, err, &refused, "the critic compiles with the set's options")
	assert.Equal(t, critic.CheckInvalidPredicate, refused.Report.Issues[0].Check)
}

func TestExecuteRefusesAnUnsafeRunID(t *testing.T) {
	p := mustPlan(t, `{"tasks": [{"id": "a", "input": "A"}]}`)
	w := newWorkers()
	for _, id := range []string{"x\x1b[2J", strings.Repeat("a", runner.MaxRunIDLength+1)} {
		_, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(newReplanner()), executor.WithRunID(id))...)
		assert.ErrorIs(t, err, runner.ErrInvalidRunID, "%q", id)
	}
	assert.Empty(t, w.counts(), "nothing ran")
}
