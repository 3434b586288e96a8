package executor_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/runner"
)

// failNumbered fails with a new diagnosis on every call, so that no two
// failures are the same.
func failNumbered() behaviour {
	var n atomic.Int64
	return func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, fmt.Errorf("failure #%d", n.Add(1))
	}
}

// failSpending fails with errBoom having spent n completion tokens.
func failSpending(n int) behaviour {
	return func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{Usage: llm.Usage{CompletionTokens: n}}, errBoom
	}
}

// waitForEnd blocks until its context ends: a slow agent.
func waitForEnd(ctx context.Context, _ agent.Request) (agent.Result, error) {
	<-ctx.Done()
	return agent.Result{}, ctx.Err()
}

// flakyOnce fails the first call with errBoom and passes the others.
func flakyOnce() behaviour {
	var n atomic.Int64
	return func(_ context.Context, req agent.Request) (agent.Result, error) {
		if n.Add(1) == 1 {
			return agent.Result{}, errBoom
		}
		return agent.Result{Output: req.TaskID + "-out"}, nil
	}
}

// wrongOnce answers "bad" the first time and "ok" after.
func wrongOnce() behaviour {
	var n atomic.Int64
	return func(context.Context, agent.Request) (agent.Result, error) {
		if n.Add(1) == 1 {
			return agent.Result{Output: "bad"}, nil
		}
		return agent.Result{Output: "ok"}, nil
	}
}

// slowOnce outlasts its timeout the first time and answers after.
func slowOnce() behaviour {
	var n atomic.Int64
	return func(ctx context.Context, req agent.Request) (agent.Result, error) {
		if n.Add(1) == 1 {
			return waitForEnd(ctx, req)
		}
		return agent.Result{Output: req.TaskID + "-out"}, nil
	}
}

// flakyChain runs the flaky tasks of ids one after the other, each
// retried once, then x, which asks for a replan when it fails.
func flakyChain(ids ...string) string {
	src := `{"tasks": [`
	prev := ""
	for _, id := range ids {
		dep := "[]"
		if prev != "" {
			dep = `["` + prev + `"]`
		}
		src += fmt.Sprintf(`{"id": %q, "input": "do", "on_failure": "retry", "max_retries": 1, "depends_on": %s},`, id, dep)
		prev = id
	}
	return src + fmt.Sprintf(`{"id": "x", "input": "X", "on_failure": "replan", "depends_on": [%q]}]}`, prev)
}

const (
	// xGrown: onlyX grown by two tasks.
	xGrown = `{"tasks": [
		{"id": "x", "input": "X", "on_failure": "replan"},
		{"id": "b", "input": "B"},
		{"id": "c", "input": "C", "depends_on": ["b"]}]}`
	onlyX = `{"tasks": [{"id": "x", "input": "X", "on_failure": "replan"}]}`
	onlyY = `{"tasks": [{"id": "y", "input": "Y", "on_failure": "replan"}]}`
	onlyZ = `{"tasks": [{"id": "z", "input": "Z", "on_failure": "replan"}]}`
	// aThenX: a is done before x fails, so the run makes progress.
	aThenX = `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "x", "input": "X", "depends_on": ["a"], "on_failure": "replan"}]}`
	aThenY = `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "y", "input": "Y", "depends_on": ["a"], "on_failure": "replan"}]}`
	aThenZ = `{"tasks": [
		{"id": "a", "input": "A"},
		{"id": "z", "input": "Z", "depends_on": ["a"], "on_failure": "replan"}]}`
	cycle = `{"tasks": [
		{"id": "p", "input": "P", "depends_on": ["q"]},
		{"id": "q", "input": "Q", "depends_on": ["p"]}]}`
)

func TestExecuteHalts(t *testing.T) {
	tests := []struct {
		name    string
		plan    string
		workers map[string]behaviour
		repairs []string // the replanner's plans, in order
		replies []reply  // instead of repairs
		opts    []executor.Option
		meter   *meter // with budget
		budget  executor.Budget

		halt     string
		status   runner.Status
		replans  int
		attempts int
		calls    map[string]int // agent calls per task
		check    func(t *testing.T, res *executor.Result, rp *replanner)
	}{
		{
			name:    "max replans",
			plan:    onlyX,
			workers: map[string]behaviour{"x": failNumbered()},
			repairs: []string{onlyX, onlyX, onlyX},
			opts:    []executor.Option{executor.WithMaxReplans(2), executor.WithMaxConsecutiveFailures(10)},
			halt:    executor.HaltMaxReplans, status: runner.StatusFailed, replans: 2, attempts: 3,
			calls: map[string]int{"x": 3},
		},
		{
			name:    "no replans allowed",
			plan:    onlyX,
			workers: map[string]behaviour{"x": failNumbered()},
			repairs: []string{onlyX},
			opts:    []executor.Option{executor.WithMaxReplans(0)},
			halt:    executor.HaltMaxReplans, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"x": 1},
		},
		{
			name: "max replans per task",
			plan: onlyX,
			// x fails a new way each time; y's failures do not count
			// against x.
			workers: map[string]behaviour{"x": failNumbered(), "y": failNumbered()},
			repairs: []string{onlyY, onlyX, onlyX, onlyX},
			opts:    []executor.Option{executor.WithMaxReplansPerTask(2), executor.WithMaxConsecutiveFailures(10)},
			halt:    executor.HaltMaxReplansPerTask, status: runner.StatusFailed, replans: 3, attempts: 4,
			calls: map[string]int{"x": 3, "y": 1},
			check: func(t *testing.T, res *executor.Result, _ *replanner) {
				var tasks []string
				for _, tr := range res.History {
					tasks = append(tasks, tr.TaskID)
				}
				assert.Equal(t, []string{"x", "y", "x"}, tasks)
			},
		},
		{
			name:    "same failure twice",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom)},
			repairs: []string{onlyX, onlyX},
			halt:    executor.HaltSameFailure, status: runner.StatusFailed, replans: 1, attempts: 2,
			calls: map[string]int{"x": 2},
			check: func(t *testing.T, res *executor.Result, _ *replanner) {
				require.Len(t, res.History, 1)
				assert.Equal(t, "boom", res.History[0].Diagnosis)
			},
		},
		{
			name: "same task, same class, other diagnosis is not the same failure",
			plan: onlyX,
			workers: map[string]behaviour{"x": func() behaviour {
				n := 0
				return func(context.Context, agent.Request) (agent.Result, error) {
					n++
					if n <= 2 {
						return agent.Result{}, fmt.Errorf("boom %d", n)
					}
					return agent.Result{Output: "x"}, nil
				}
			}()},
			repairs: []string{onlyX, onlyX},
			status:  runner.StatusCompleted, replans: 2, attempts: 3,
			calls: map[string]int{"x": 3},
		},
		{
			name:    "same diagnosis on another task is not the same failure",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom), "y": fail(errBoom)},
			repairs: []string{onlyY, `{"tasks": [{"id": "done", "input": "D"}]}`},
			status:  runner.StatusCompleted, replans: 2, attempts: 3,
			calls: map[string]int{"x": 1, "y": 1, "done": 1},
		},
		{
			name:    "consecutive failures without progress",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom), "y": fail(errBoom), "z": fail(errBoom)},
			repairs: []string{onlyY, onlyZ},
			opts:    []executor.Option{executor.WithMaxConsecutiveFailures(2)},
			halt:    executor.HaltConsecutiveFailures, status: runner.StatusFailed, replans: 1, attempts: 2,
			calls: map[string]int{"x": 1, "y": 1},
		},
		{
			name:    "consecutive failures, default 3",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom), "y": fail(errBoom), "z": fail(errBoom)},
			repairs: []string{onlyY, onlyZ, onlyX},
			halt:    executor.HaltConsecutiveFailures, status: runner.StatusFailed, replans: 2, attempts: 3,
			calls: map[string]int{"x": 1, "y": 1, "z": 1},
		},
		{
			// The first run finishes a, so it is not a failure without
			// progress: the streak is y's and z's.
			name:    "a run that finishes a task breaks the streak",
			plan:    aThenX,
			workers: map[string]behaviour{"x": fail(errBoom), "y": fail(errBoom), "z": fail(errBoom)},
			repairs: []string{aThenY, aThenZ},
			opts:    []executor.Option{executor.WithMaxConsecutiveFailures(2)},
			halt:    executor.HaltConsecutiveFailures, status: runner.StatusFailed, replans: 2, attempts: 3,
			calls: map[string]int{"a": 1, "x": 1, "y": 1, "z": 1},
		},
		{
			name:    "token budget from the results",
			plan:    onlyX,
			workers: map[string]behaviour{"x": failSpending(100), "y": failSpending(100)},
			replies: []reply{
				{plan: mustPlan(t, onlyY), usage: llm.Usage{PromptTokens: 100}},
				{plan: mustPlan(t, onlyZ)},
			},
			opts: []executor.Option{executor.WithBudget(executor.Budget{MaxTokens: 250}, nil)},
			halt: executor.HaltBudget, status: runner.StatusFailed, replans: 1, attempts: 2,
			calls: map[string]int{"x": 1, "y": 1},
			check: func(t *testing.T, res *executor.Result, _ *replanner) {
				assert.Equal(t, 300, res.Usage.Total())
			},
		},
		{
			name:    "the replan itself spends the token budget",
			plan:    onlyX,
			workers: map[string]behaviour{"x": failSpending(100), "y": failSpending(100)},
			replies: []reply{{plan: mustPlan(t, onlyY), usage: llm.Usage{PromptTokens: 200}}},
			opts:    []executor.Option{executor.WithBudget(executor.Budget{MaxTokens: 250}, nil)},
			halt:    executor.HaltBudget, status: runner.StatusFailed, replans: 1, attempts: 1,
			calls: map[string]int{"x": 1},
		},
		{
			name:    "call budget from the meter",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom)},
			repairs: []string{onlyY},
			meter:   &meter{calls: 3},
			budget:  executor.Budget{MaxCalls: 3, MaxTokens: 1000},
			halt:    executor.HaltBudget, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"x": 1},
			check: func(t *testing.T, _ *executor.Result, rp *replanner) {
				assert.Empty(t, rp.received())
			},
		},
		{
			name:    "token budget from the meter",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom)},
			repairs: []string{onlyY},
			// The results spent nothing; the meter counts the tokens.
			meter:  &meter{usage: llm.Usage{PromptTokens: 900, CompletionTokens: 100}, calls: 1},
			budget: executor.Budget{MaxCalls: 3, MaxTokens: 1000},
			halt:   executor.HaltBudget, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"x": 1},
		},
		{
			name:    "a failure of class budget_exceeded",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(fmt.Errorf("calling the model: %w: 10 calls made", llm.ErrBudgetExceeded))},
			repairs: []string{onlyY},
			halt:    executor.HaltBudget, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"x": 1},
		},
		{
			name:    "wall time",
			plan:    aThenX,
			workers: map[string]behaviour{"x": waitForEnd},
			repairs: []string{onlyY},
			opts:    []executor.Option{executor.WithBudget(executor.Budget{MaxDuration: 50 * time.Millisecond}, nil)},
			halt:    executor.HaltBudget, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"a": 1, "x": 1},
			check: func(t *testing.T, res *executor.Result, rp *replanner) {
				assert.ErrorIs(t, res.Err, context.DeadlineExceeded)
				assert.GreaterOrEqual(t, res.Duration, 50*time.Millisecond)
				assert.Equal(t, map[string]any{"a": "a-out"}, res.Outputs())
				assert.Empty(t, rp.received())
			},
		},
		{
			name:    "replanner error",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom)},
			replies: []reply{{err: errExhausted}},
			halt:    executor.HaltReplanFailed, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"x": 1},
			check: func(t *testing.T, res *executor.Result, _ *replanner) {
				assert.ErrorIs(t, res.Err, errExhausted)
				assert.ErrorContains(t, res.Err, "task x")
			},
		},
		{
			name:    "replanner without a result",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom)},
			replies: []reply{{noResult: true}},
			halt:    executor.HaltReplanFailed, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"x": 1},
			check: func(t *testing.T, res *executor.Result, _ *replanner) {
				assert.ErrorContains(t, res.Err, "no plan")
			},
		},
		{
			name:    "replanner without a plan",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom)},
			replies: []reply{{plan: nil}},
			halt:    executor.HaltReplanFailed, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"x": 1},
			check: func(t *testing.T, res *executor.Result, _ *replanner) {
				assert.ErrorContains(t, res.Err, "no plan")
			},
		},
		{
			name: "flaky streak",
			plan: flakyChain("f1", "f2", "f3"),
			workers: map[string]behaviour{
				"f1": flakyOnce(), "f2": flakyOnce(), "f3": flakyOnce(), "x": fail(errBoom),
			},
			repairs: []string{onlyY},
			halt:    executor.HaltFlakyStreak, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"f1": 2, "f2": 2, "f3": 2, "x": 1},
			check: func(t *testing.T, res *executor.Result, rp *replanner) {
				assert.Empty(t, rp.received(), "no replan after a flaky streak")
				assert.ErrorContains(t, res.Err, "too many tasks in a row passed only on a retry")
			},
		},
		{
			name: "flaky streak over runs",
			plan: flakyChain("f1", "f2"),
			workers: map[string]behaviour{
				"f1": flakyOnce(), "f2": flakyOnce(), "f3": flakyOnce(), "x": fail(errBoom), "y": fail(errBoom),
			},
			// The repair's f3 is the third flaky task in a row.
			repairs: []string{`{"tasks": [
				{"id": "f1", "input": "do"}, {"id": "f2", "input": "do", "depends_on": ["f1"]},
				{"id": "f3", "input": "do", "on_failure": "retry", "max_retries": 1, "depends_on": ["f2"]},
				{"id": "y", "input": "Y", "on_failure": "replan", "depends_on": ["f3"]}]}`, onlyZ},
			halt: executor.HaltFlakyStreak, status: runner.StatusFailed, replans: 1, attempts: 2,
			calls: map[string]int{"f1": 2, "f2": 2, "f3": 2, "x": 1, "y": 1},
		},
		{
			name: "a first-attempt pass ends the flaky streak",
			plan: `{"tasks": [
				{"id": "f1", "input": "do", "on_failure": "retry", "max_retries": 1},
				{"id": "f2", "input": "do", "on_failure": "retry", "max_retries": 1, "depends_on": ["f1"]},
				{"id": "a", "input": "A", "depends_on": ["f2"]},
				{"id": "f3", "input": "do", "on_failure": "retry", "max_retries": 1, "depends_on": ["a"]},
				{"id": "x", "input": "X", "on_failure": "replan", "depends_on": ["f3"]}]}`,
			workers: map[string]behaviour{
				"f1": flakyOnce(), "f2": flakyOnce(), "f3": flakyOnce(), "x": fail(errBoom),
			},
			repairs: []string{onlyY},
			status:  runner.StatusCompleted, replans: 1, attempts: 2,
			calls: map[string]int{"f1": 2, "f2": 2, "a": 1, "f3": 2, "x": 1, "y": 1},
		},
		{
			name: "a retry after a failed verification is a correction, not flakiness",
			plan: `{"tasks": [
				{"id": "f1", "input": "do", "verification": "(= data/result \"ok\")", "max_retries": 1},
				{"id": "f2", "input": "do", "verification": "(= data/result \"ok\")", "max_retries": 1, "depends_on": ["f1"]},
				{"id": "f3", "input": "do", "verification": "(= data/result \"ok\")", "max_retries": 1, "depends_on": ["f2"]},
				{"id": "x", "input": "X", "on_failure": "replan", "depends_on": ["f3"]}]}`,
			workers: map[string]behaviour{
				"f1": wrongOnce(), "f2": wrongOnce(), "f3": wrongOnce(), "x": fail(errBoom),
			},
			repairs: []string{onlyY},
			status:  runner.StatusCompleted, replans: 1, attempts: 2,
			calls: map[string]int{"f1": 2, "f2": 2, "f3": 2, "x": 1, "y": 1},
		},
		{
			name: "a timeout is a transient failure",
			plan: `{"tasks": [
				{"id": "f1", "input": "do", "on_failure": "retry", "max_retries": 1, "timeout": "20ms"},
				{"id": "f2", "input": "do", "on_failure": "retry", "max_retries": 1, "depends_on": ["f1"]},
				{"id": "x", "input": "X", "on_failure": "replan", "depends_on": ["f2"]}]}`,
			workers: map[string]behaviour{"f1": slowOnce(), "f2": flakyOnce(), "x": fail(errBoom)},
			repairs: []string{onlyY},
			opts:    []executor.Option{executor.WithMaxFlakyStreak(2)},
			halt:    executor.HaltFlakyStreak, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"f1": 2, "f2": 2, "x": 1},
		},
		{
			name: "flaky streak halt turned off",
			plan: flakyChain("f1", "f2", "f3"),
			workers: map[string]behaviour{
				"f1": flakyOnce(), "f2": flakyOnce(), "f3": flakyOnce(), "x": fail(errBoom),
			},
			repairs: []string{onlyY},
			opts:    []executor.Option{executor.WithMaxFlakyStreak(0)},
			status:  runner.StatusCompleted, replans: 1, attempts: 2,
			calls: map[string]int{"f1": 2, "f2": 2, "f3": 2, "x": 1, "y": 1},
		},
		{
			name:    "plan growth",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom)},
			repairs: []string{xGrown},
			opts:    []executor.Option{executor.WithMaxPlanGrowth(1)},
			halt:    executor.HaltPlanGrowth, status: runner.StatusFailed, replans: 1, attempts: 1,
			calls: map[string]int{"x": 1},
			check: func(t *testing.T, res *executor.Result, _ *replanner) {
				assert.EqualError(t, res.Err, "replanning halted (plan_growth): task x failed and its repair grew too much: "+
					"the repair plan has 3 tasks, 2 more than the first plan; at most 1 more are allowed")
				var halted *executor.HaltError
				require.ErrorAs(t, res.Err, &halted)
				assert.EqualError(t, halted.Err, "the repair plan has 3 tasks, 2 more than the first plan; at most 1 more are allowed")
				assert.Equal(t, 2, res.History[0].NewTaskCount)
				assert.Len(t, res.Plan.Tasks, 1, "the grown repair never ran")
			},
		},
		{
			name:    "plan growth within the bound",
			plan:    onlyX,
			workers: map[string]behaviour{"x": flakyOnce()},
			repairs: []string{xGrown},
			opts:    []executor.Option{executor.WithMaxPlanGrowth(2)},
			status:  runner.StatusCompleted, replans: 1, attempts: 2,
			calls: map[string]int{"x": 2, "b": 1, "c": 1},
		},
		{
			name:    "plan growth halt turned off",
			plan:    onlyX,
			workers: map[string]behaviour{"x": flakyOnce()},
			repairs: []string{xGrown},
			opts:    []executor.Option{executor.WithMaxPlanGrowth(0)},
			status:  runner.StatusCompleted, replans: 1, attempts: 2,
			calls: map[string]int{"x": 2, "b": 1, "c": 1},
		},
		{
			name:    "repair plan refused by the critic",
			plan:    onlyX,
			workers: map[string]behaviour{"x": fail(errBoom)},
			repairs: []string{cycle},
			halt:    executor.HaltReplanFailed, status: runner.StatusFailed, replans: 0, attempts: 1,
			calls: map[string]int{"x": 1},
			check: func(t *testing.T, res *executor.Result, _ *replanner) {
				assert.ErrorIs(t, res.Err, executor.ErrRefused)
				var refused *executor.RefusedError
				require.ErrorAs(t, res.Err, &refused)
				assert.True(t, refused.Report.Has("critical"))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkers()
			for id, b := range tt.workers {
				w.set(id, b)
			}
			replies := tt.replies
			for _, src := range tt.repairs {
				replies = append(replies, reply{plan: mustPlan(t, src)})
			}
			rp := newReplanner(replies...)
			opts := append([]executor.Option{executor.WithReplanner(rp)}, tt.opts...)
			if tt.meter != nil {
				opts = append(opts, executor.WithBudget(tt.budget, tt.meter))
			}

			res, err := executor.Execute(context.Background(), mustPlan(t, tt.plan), mission, w.options(opts...)...)
			require.NoError(t, err)
			require.NotNil(t, res)

			assert.Equal(t, tt.halt, res.Halt)
			assert.Equal(t, tt.status, res.Status)
			assert.Equal(t, tt.replans, res.ReplanCount, "replans")
			assert.Len(t, res.History, tt.replans)
			assert.Equal(t, tt.attempts, res.ExecutionAttempts, "execution attempts")
			assert.Equal(t, tt.calls, w.counts(), "agent calls per task")
			for i, tr := range res.History {
				assert.Equal(t, i+1, tr.Attempt)
			}
			if tt.halt != "" {
				// A halted execution failed, and says why.
				assert.ErrorIs(t, res.Err, executor.ErrHalted)
				var halted *executor.HaltError
				require.ErrorAs(t, res.Err, &halted)
				assert.Equal(t, tt.halt, halted.Halt)
				assert.ErrorContains(t, res.Err, "replanning halted ("+tt.halt+")")
			} else {
				assert.NotErrorIs(t, res.Err, executor.ErrHalted)
			}
			if tt.check != nil {
				tt.check(t, res, rp)
			}
		})
	}
}

// TestExecuteBudgetNotSpent: a budget that is not spent lets replanning go
// on; calls are not counted without a meter.
func TestExecuteBudgetNotSpent(t *testing.T) {
	w := newWorkers().set("x", failSpending(10))
	rp := newReplanner(reply{plan: mustPlan(t, `{"tasks": [{"id": "y", "input": "Y"}]}`)})
	res, err := executor.Execute(context.Background(), mustPlan(t, onlyX), mission, w.options(
		executor.WithReplanner(rp),
		executor.WithBudget(executor.Budget{MaxTokens: 1000, MaxCalls: 1, MaxDuration: time.Minute}, nil),
	)...)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Empty(t, res.Halt)
	assert.Equal(t, 1, res.ReplanCount)
}

// TestExecuteMeterBudget uses a real *llm.Meter: an agent whose model call
// is refused for the budget fails with class budget_exceeded, and the
// execution halts.
func TestExecuteMeterBudget(t *testing.T) {
	model := llm.ClientFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Content: "ok"}, Usage: llm.Usage{PromptTokens: 5}}, nil
	})
	m := llm.NewMeter(model, llm.Budget{MaxCalls: 1})
	w := newWorkers()
	ask := func(ctx context.Context, _ agent.Request) (agent.Result, error) {
		resp, err := m.Complete(ctx, llm.Request{})
		if err != nil {
			return agent.Result{}, err
		}
		return agent.Result{Output: resp.Message.Content, Usage: resp.Usage}, nil
	}
	w.set("a", ask).set("x", ask)
	rp := newReplanner(reply{plan: mustPlan(t, onlyY)})

	res, err := executor.Execute(context.Background(), mustPlan(t, aThenX), mission, w.options(
		executor.WithReplanner(rp),
		executor.WithBudget(executor.Budget{MaxCalls: 10}, m),
	)...)
	require.NoError(t, err)
	assert.Equal(t, executor.HaltBudget, res.Halt)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.ErrorIs(t, res.Err, executor.ErrHalted)
	assert.Equal(t, map[string]any{"a": "ok"}, res.Outputs())
	assert.ErrorIs(t, res.Tasks["x"].Err, llm.ErrBudgetExceeded)
	assert.Equal(t, runner.ClassBudget, res.Tasks["x"].Class)
	assert.Empty(t, rp.received())
}

// TestExecuteWallTimeCancelledByCaller: when the caller's context ends
// first, it is an error, not a halt.
func TestExecuteWallTimeCancelledByCaller(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWorkers().set("x", func(ctx context.Context, req agent.Request) (agent.Result, error) {
		cancel()
		return waitForEnd(ctx, req)
	})
	res, err := executor.Execute(ctx, mustPlan(t, onlyX), mission, w.options(
		executor.WithBudget(executor.Budget{MaxDuration: time.Minute}, nil))...)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	assert.Empty(t, res.Halt)
	assert.False(t, errors.Is(err, context.DeadlineExceeded))
}
