package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/llmtest"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/dagent-dev/dagent/telemetry"
)

// parse parses a plan written as JSON.
func parse(t *testing.T, src string) *plan.Plan {
	t.Helper()
	p, err := plan.Parse([]byte(src))
	require.NoError(t, err)
	return p
}

// spanOf is an agent that answers the id of the span in its context: the
// span of its attempt.
var spanOf = agent.Func(func(ctx context.Context, _ agent.Request) (agent.Result, error) {
	return agent.Result{Output: trace.SpanContextFromContext(ctx).SpanID().String()}, nil
})

// runPlan runs p with obs and opts, immediate retries, and the agent w.
func runPlan(t *testing.T, obs runner.Observer, p *plan.Plan, w agent.Agent, opts ...runner.Option) *runner.Result {
	t.Helper()
	opts = append([]runner.Option{runner.WithAgent("w", w), runner.WithBackoff(runner.Backoff{}), runner.WithObserver(obs)}, opts...)
	res, err := runner.New(opts...).RunPlan(context.Background(), p, runner.WithRunID("r1"))
	require.NoError(t, err)
	return res
}

func TestPlanOfTwoPhases(t *testing.T) {
	h := newHarness(t)
	p := parse(t, `{"tasks": [
		{"id": "a", "agent": "w", "input": "x"},
		{"id": "b", "agent": "w", "input": "y"},
		{"id": "c", "agent": "w", "input": "z", "depends_on": ["a", "b"]}]}`)
	res := runPlan(t, h.obs, p, spanOf)
	require.Equal(t, runner.StatusCompleted, res.Status)

	spans := h.ended(t)
	assert.Equal(t, `dagent run
  phase 0
  phase 1
  task a
    attempt 1
  task b
    attempt 1
  task c
    attempt 1
`, tree(spans))
	run := one(t, spans, "dagent run", telemetry.AttrRunID.String("r1"), telemetry.AttrRunStatus.String("completed"))
	assert.Equal(t, codes.Unset, run.Status().Code)
	assert.False(t, run.Parent().IsValid(), "the run is the root of its trace")
	for _, id := range []string{"a", "b", "c"} {
		phase := 0
		if id == "c" {
			phase = 1
		}
		task := one(t, spans, "task "+id, telemetry.AttrRunID.String("r1"), telemetry.AttrTaskID.String(id),
			telemetry.AttrPhase.Int(phase), telemetry.AttrTaskStatus.String("done"), telemetry.AttrAttempts.Int(1))
		assert.True(t, childOf(task, run))
		attempt := one(t, spans, "attempt 1", telemetry.AttrTaskID.String(id), telemetry.AttrAttempt.Int(1))
		assert.True(t, childOf(attempt, task))
		// The agent ran in its attempt's span.
		assert.Equal(t, attempt.SpanContext().SpanID().String(), res.Tasks[id].Output)
		assert.False(t, attempt.StartTime().Before(task.StartTime()))
		assert.False(t, attempt.EndTime().After(task.EndTime()))
	}
	phase0, phase1 := one(t, spans, "phase 0"), one(t, spans, "phase 1")
	assert.True(t, childOf(phase0, run) && childOf(phase1, run))
	assert.False(t, phase1.StartTime().Before(phase0.EndTime()), "phase 1 starts when phase 0 has settled")
	assert.False(t, one(t, spans, "task c").StartTime().Before(one(t, spans, "task a").EndTime()))

	ms := h.metrics(t)
	assert.Equal(t, map[string]int64{"dagent.task.status=done": 3}, counts(t, ms, telemetry.MetricTasks))
	assert.Equal(t, map[string]int64{"dagent.run.status=completed": 1}, counts(t, ms, telemetry.MetricRuns))
	durations := histCounts[float64](t, ms, telemetry.MetricTaskDuration)
	assert.Equal(t, uint64(3), durations["dagent.task.status=done"].Count)
	runs := histCounts[float64](t, ms, telemetry.MetricRunDuration)
	assert.Equal(t, res.Duration.Seconds(), runs["dagent.run.status=completed"].Sum)
}

func TestRetriedTaskWithFailedPredicate(t *testing.T) {
	h := newHarness(t)
	p := parse(t, `{"tasks": [{"id": "x", "agent": "w", "input": "x", "verification": "(= data/result \"good\")",
		"on_verification_failure": "retry", "max_retries": 2}]}`)
	w := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		if req.Attempt == 1 {
			return agent.Result{Output: "bad"}, nil
		}
		return agent.Result{Output: "good"}, nil
	})
	res := runPlan(t, h.obs, p, w)
	require.Equal(t, runner.StatusCompleted, res.Status)

	spans := h.ended(t)
	assert.Equal(t, `dagent run
  phase 0
  task x
    attempt 1
    attempt 2
    verify
    verify
`, tree(spans))
	task := one(t, spans, "task x", telemetry.AttrTaskStatus.String("done"), telemetry.AttrAttempts.Int(2))
	assert.Equal(t, codes.Unset, task.Status().Code)
	a1, a2 := one(t, spans, "attempt 1"), one(t, spans, "attempt 2")
	failed := one(t, spans, "verify", telemetry.AttrAttempt.Int(1), telemetry.AttrPassed.Bool(false))
	passed := one(t, spans, "verify", telemetry.AttrAttempt.Int(2), telemetry.AttrPassed.Bool(true))
	for _, s := range []sdktrace.ReadOnlySpan{a1, a2, failed, passed} {
		assert.True(t, childOf(s, task), "%s is the task's", s.Name())
	}
	// The attempts succeeded: the output of the first failed its check.
	assert.Equal(t, codes.Unset, a1.Status().Code)
	assert.Equal(t, codes.Error, failed.Status().Code)
	assert.Contains(t, failed.Status().Description, `predicate returned false: (= data/result "good")`)
	assert.Equal(t, codes.Unset, passed.Status().Code)
	// One after the other: attempt, check, attempt, check.
	order := []sdktrace.ReadOnlySpan{a1, failed, a2, passed}
	for k := 1; k < len(order); k++ {
		assert.False(t, order[k].StartTime().Before(order[k-1].EndTime()), "%s before %s", order[k-1].Name(), order[k].Name())
	}

	ms := h.metrics(t)
	assert.Equal(t, map[string]int64{"": 1}, counts(t, ms, telemetry.MetricTaskRetries))
	assert.Equal(t, map[string]int64{"dagent.task.status=done": 1}, counts(t, ms, telemetry.MetricTasks))
}

// The output schema's check and a synthesis gate's are verify spans, as
// the predicate's is: the attempt whose agent answered succeeded, and its
// output failed its check.
func TestSchemaAndGateChecksAreVerifySpans(t *testing.T) {
	for _, tt := range []struct {
		name, task, bad, good, says string
	}{
		{"output schema", `{"id": "x", "agent": "w", "input": "x", "output_schema": {"type": "object", "required": ["n"]}, "max_retries": 1}`,
			`{"m": 1}`, `{"n": 1}`, "the output does not match the task's output_schema"},
		{"synthesis gate", `{"id": "x", "type": "synthesis_gate", "agent": "w", "input": "x", "max_retries": 1}`,
			`""`, `"the findings agree"`, "the synthesis gate's output is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			p := parse(t, `{"tasks": [`+tt.task+`]}`)
			w := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
				out := tt.good
				if req.Attempt == 1 {
					out = tt.bad
				}
				var v any
				require.NoError(t, json.Unmarshal([]byte(out), &v))
				return agent.Result{Output: v}, nil
			})
			res := runPlan(t, h.obs, p, w)
			require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Err)

			spans := h.ended(t)
			assert.Equal(t, "dagent run\n  phase 0\n  task x\n    attempt 1\n    attempt 2\n    verify\n    verify\n", tree(spans))
			a1 := one(t, spans, "attempt 1")
			assert.Equal(t, codes.Unset, a1.Status().Code, "the agent of attempt 1 succeeded")
			failed := one(t, spans, "verify", telemetry.AttrAttempt.Int(1), telemetry.AttrPassed.Bool(false))
			assert.Equal(t, codes.Error, failed.Status().Code)
			assert.Contains(t, failed.Status().Description, tt.says)
			passed := one(t, spans, "verify", telemetry.AttrAttempt.Int(2), telemetry.AttrPassed.Bool(true))
			assert.Equal(t, codes.Unset, passed.Status().Code)
			assert.False(t, failed.StartTime().Before(a1.EndTime()))
		})
	}
}

func TestFailedTaskHasItsClass(t *testing.T) {
	h := newHarness(t)
	p := parse(t, `{"tasks": [{"id": "y", "agent": "w", "input": "x", "on_failure": "stop", "critical": true}]}`)
	w := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, fmt.Errorf("%w: the report has no findings", agent.ErrInvalidOutput)
	})
	res := runPlan(t, h.obs, p, w)
	require.Equal(t, runner.StatusFailed, res.Status)

	spans := h.ended(t)
	assert.Equal(t, "dagent run\n  phase 0\n  task y\n    attempt 1\n", tree(spans))
	task := one(t, spans, "task y", telemetry.AttrTaskStatus.String("failed"), telemetry.AttrFailureClass.String("invalid_output"))
	assert.Equal(t, codes.Error, task.Status().Code)
	assert.Contains(t, task.Status().Description, "the report has no findings")
	attempt := one(t, spans, "attempt 1", telemetry.AttrFailureClass.String("invalid_output"))
	assert.Equal(t, codes.Error, attempt.Status().Code)
	run := one(t, spans, "dagent run", telemetry.AttrRunStatus.String("failed"))
	assert.Equal(t, codes.Error, run.Status().Code)

	ms := h.metrics(t)
	assert.Equal(t, map[string]int64{"dagent.failure.class=invalid_output,dagent.task.status=failed": 1}, counts(t, ms, telemetry.MetricTasks))
	assert.Equal(t, map[string]int64{"dagent.run.status=failed": 1}, counts(t, ms, telemetry.MetricRuns))
}

func TestLLMCallIsAChildOfItsAttempt(t *testing.T) {
	h := newHarness(t)
	srv := llmtest.Start(t, "test-model-2025", func(map[string]any) (string, error) { return `{"summary": "fine"}`, nil })
	c, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), Model: "test-model", MaxRetries: -1})
	require.NoError(t, err)
	p := parse(t, `{"agents": {"writer": {"prompt": "You write summaries."}},
		"tasks": [{"id": "sum", "agent": "writer", "input": "Summarise"}]}`)
	res := runPlan(t, h.obs, p, spanOf, runner.WithPlanAgents(llmagent.Agents(h.obs.Client(c, "openai"), nil, "")))
	require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Err)

	spans := h.ended(t)
	assert.Equal(t, "dagent run\n  phase 0\n  task sum\n    attempt 1\n      chat test-model\n", tree(spans))
	chat := one(t, spans, "chat test-model",
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.request.model", "test-model"),
		attribute.String("gen_ai.response.model", "test-model-2025"),
		attribute.Int("gen_ai.usage.input_tokens", llmtest.PromptTokens),
		attribute.Int("gen_ai.usage.output_tokens", llmtest.CompletionTokens),
		attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop"}))
	assert.Equal(t, trace.SpanKindClient, chat.SpanKind())
	assert.True(t, childOf(chat, one(t, spans, "attempt 1")))
	for _, kv := range chat.Attributes() {
		assert.NotContains(t, kv.Value.Emit(), "Summarise", "the prompt is not recorded (%s)", kv.Key)
		assert.NotContains(t, kv.Value.Emit(), "fine", "the answer is not recorded (%s)", kv.Key)
	}
	one(t, spans, "task sum", telemetry.AttrInputTokens.Int(llmtest.PromptTokens), telemetry.AttrOutputTokens.Int(llmtest.CompletionTokens))

	ms := h.metrics(t)
	model := "gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=test-model,gen_ai.response.model=test-model-2025"
	usage := histCounts[int64](t, ms, telemetry.MetricTokenUsage)
	assert.Equal(t, int64(llmtest.PromptTokens), usage[model+",gen_ai.token.type=input"].Sum)
	assert.Equal(t, int64(llmtest.CompletionTokens), usage[model+",gen_ai.token.type=output"].Sum)
	assert.Equal(t, uint64(1), histCounts[float64](t, ms, telemetry.MetricOperationDuration)[model].Count)
	assert.Equal(t, map[string]int64{model: 1}, counts(t, ms, telemetry.MetricLLMCalls))
	assert.Equal(t, map[string]int64{"gen_ai.token.type=input": llmtest.PromptTokens, "gen_ai.token.type=output": llmtest.CompletionTokens},
		counts(t, ms, telemetry.MetricTaskTokens))
}

func TestLLMCallFailure(t *testing.T) {
	h := newHarness(t)
	srv := llmtest.Start(t, "m", func(map[string]any) (string, error) { return "", errors.New("no such model") })
	c, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), MaxRetries: -1})
	require.NoError(t, err)
	_, err = h.obs.Client(c, "openai").Complete(context.Background(), llmRequest("m"))
	require.Error(t, err)

	chat := one(t, h.ended(t), "chat m", attribute.String("error.type", "400"))
	assert.Equal(t, codes.Error, chat.Status().Code)
	assert.Contains(t, chat.Status().Description, "no such model")
	ms := h.metrics(t)
	assert.Equal(t, map[string]int64{"error.type=400,gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=m": 1},
		counts(t, ms, telemetry.MetricLLMCalls))
}

// llmRequest is a request to model m.
func llmRequest(m string) llm.Request {
	return llm.Request{Model: m, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
}

// replanner answers the failure of a task with a plan of one task that
// succeeds, or fails when it has no answer.
func replanner(answer string) executor.ReplannerFunc {
	return func(context.Context, string, map[string]any, executor.Failure, []executor.Trial) (*executor.Repair, error) {
		if answer == "" {
			return nil, errors.New("the model gave no plan")
		}
		p, err := plan.Parse([]byte(answer))
		return &executor.Repair{Plan: p}, err
	}
}

func TestReplanningRunIsOneTrace(t *testing.T) {
	h := newHarness(t)
	p := parse(t, `{"tasks": [{"id": "a", "agent": "w", "input": "x", "on_failure": "replan"}]}`)
	w := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		if req.TaskID == "a" {
			return agent.Result{}, errors.New("the source is gone")
		}
		return agent.Result{Output: "ok"}, nil
	})
	res, err := executor.Execute(context.Background(), p, "mission", executor.WithAgent("w", w), executor.WithRunID("x1"),
		executor.WithReplanner(replanner(`{"tasks": [{"id": "b", "agent": "w", "input": "y"}]}`)), executor.WithObserver(h.obs))
	require.NoError(t, err)
	require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Err)

	spans := h.ended(t)
	assert.Equal(t, `dagent run
  dagent run
    phase 0
    task b
      attempt 1
  phase 0
  replan
  task a
    attempt 1
`, tree(spans))
	root := one(t, spans, "dagent run", telemetry.AttrRunID.String("x1"), telemetry.AttrRunStatus.String("replan_required"))
	repair := one(t, spans, "dagent run", telemetry.AttrRunID.String("x1.1"), telemetry.AttrRunStatus.String("completed"))
	replan := one(t, spans, "replan", telemetry.AttrTaskID.String("a"), telemetry.AttrFailureClass.String("agent_error"),
		telemetry.AttrPlanVersion.Int(1), telemetry.AttrPlanTasks.Int(1), telemetry.AttrPlanNewTasks.Int(1), telemetry.AttrReplanOutcome.String("adopted"))
	assert.True(t, childOf(replan, root))
	assert.True(t, childOf(repair, root))
	assert.False(t, replan.StartTime().Before(root.EndTime()))
	assert.False(t, repair.StartTime().Before(replan.EndTime()))

	ms := h.metrics(t)
	assert.Equal(t, map[string]int64{"dagent.replan.outcome=adopted": 1}, counts(t, ms, telemetry.MetricReplans))
	assert.Equal(t, map[string]int64{"dagent.run.status=replan_required": 1, "dagent.run.status=completed": 1}, counts(t, ms, telemetry.MetricRuns))
}

func TestHaltedExecution(t *testing.T) {
	h := newHarness(t)
	p := parse(t, `{"tasks": [{"id": "a", "agent": "w", "input": "x", "on_failure": "replan"}]}`)
	w := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, errors.New("down") })
	res, err := executor.Execute(context.Background(), p, "mission", executor.WithAgent("w", w), executor.WithRunID("x2"),
		executor.WithReplanner(replanner("")), executor.WithObserver(h.obs))
	require.NoError(t, err)
	require.Equal(t, runner.StatusFailed, res.Status)

	spans := h.ended(t)
	assert.Equal(t, "dagent run\n  halt\n  phase 0\n  replan\n  task a\n    attempt 1\n", tree(spans))
	replan := one(t, spans, "replan", telemetry.AttrReplanOutcome.String("failed"))
	assert.Equal(t, codes.Error, replan.Status().Code)
	assert.Contains(t, replan.Status().Description, "the model gave no plan")
	halt := one(t, spans, "halt", telemetry.AttrTaskID.String("a"), telemetry.AttrHalt.String(res.Halt))
	assert.Equal(t, codes.Error, halt.Status().Code)
	assert.Equal(t, map[string]int64{"dagent.replan.outcome=failed": 1}, counts(t, h.metrics(t), telemetry.MetricReplans))
}

func TestRoundsAreOneTrace(t *testing.T) {
	h := newHarness(t)
	rounds := executor.RoundPlannerFunc(func(_ context.Context, _ string, s executor.RoundState) (*executor.RoundAnswer, error) {
		if s.Round == 1 {
			a := plan.NewTask("a", "x")
			a.Agent = "w"
			return &executor.RoundAnswer{Action: executor.RoundContinue, Tasks: []plan.Task{a}}, nil
		}
		return &executor.RoundAnswer{Action: executor.RoundDone, Deliverable: []string{"a"}}, nil
	})
	res, err := executor.ExecuteRounds(context.Background(), "mission", executor.WithAgent("w", spanOf), executor.WithRunID("x3"),
		executor.WithRounds(3, rounds), executor.WithObserver(h.obs))
	require.NoError(t, err)
	require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Err)

	spans := h.ended(t)
	assert.Equal(t, "round 1\n  dagent run\n    phase 0\n    task a\n      attempt 1\n  round 2\n", tree(spans))
	first := one(t, spans, "round 1", telemetry.AttrRound.Int(1), telemetry.AttrPlanVersion.Int(0), telemetry.AttrPlanTasks.Int(1))
	assert.True(t, childOf(one(t, spans, "dagent run", telemetry.AttrRunID.String("x3")), first))
}

func TestMetricsOfJournaledEvents(t *testing.T) {
	live, later := newHarness(t), newHarness(t)
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "dagent.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	p := parse(t, `{"tasks": [
		{"id": "a", "agent": "w", "input": "x", "verification": "(= data/result \"good\")", "on_verification_failure": "retry", "max_retries": 1},
		{"id": "b", "agent": "w", "input": "y", "on_failure": "stop", "critical": true},
		{"id": "c", "agent": "w", "input": "z", "depends_on": ["a"]},
		{"id": "n", "agent": "w", "input": "q", "when": "false"}]}`)
	canonical, err := p.Canonical()
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r1", Plan: canonical}))
	j := store.NewJournal(s, "r1")
	b := make(chan struct{})
	w := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		switch {
		case req.TaskID == "b":
			<-b // after a is done: c does not start
			return agent.Result{}, fmt.Errorf("%w: empty", agent.ErrInvalidOutput)
		case req.Attempt == 1:
			return agent.Result{Output: "bad", Usage: agent.Usage{PromptTokens: 7, CompletionTokens: 3}}, nil
		}
		defer close(b)
		return agent.Result{Output: "good", Usage: agent.Usage{PromptTokens: 5, CompletionTokens: 1}}, nil
	})
	res := runPlan(t, live.obs, p, w, runner.WithJournal(j), runner.WithObserver(j))
	require.Equal(t, runner.StatusFailed, res.Status)

	evs, err := s.EventsAfter(ctx, "r1", 0)
	require.NoError(t, err)
	for _, e := range evs {
		ev, err := e.Runner("r1")
		require.NoError(t, err)
		later.obs.Observe(ev)
	}

	now, then := live.metrics(t), later.metrics(t)
	for _, name := range []string{telemetry.MetricTasks, telemetry.MetricTaskRetries, telemetry.MetricTaskTokens, telemetry.MetricRuns} {
		assert.Equal(t, counts(t, now, name), counts(t, then, name), name)
	}
	assert.Equal(t, map[string]int64{"dagent.task.status=done": 1, "dagent.failure.class=invalid_output,dagent.task.status=failed": 1,
		"dagent.failure.class=condition_not_met,dagent.task.status=skipped": 1}, counts(t, then, telemetry.MetricTasks))
	assert.Equal(t, map[string]int64{"gen_ai.token.type=input": 12, "gen_ai.token.type=output": 4}, counts(t, then, telemetry.MetricTaskTokens))
	for _, name := range []string{telemetry.MetricTaskDuration, telemetry.MetricRunDuration} {
		liveH, laterH := histCounts[float64](t, now, name), histCounts[float64](t, then, name)
		require.NotEmpty(t, laterH, name)
		for k, dp := range liveH {
			assert.Equal(t, dp.Count, laterH[k].Count, "%s %s", name, k)
			assert.Equal(t, dp.Sum, laterH[k].Sum, "%s %s: the durations are the events'", name, k)
			assert.Equal(t, dp.BucketCounts, laterH[k].BucketCounts, "%s %s", name, k)
		}
	}
}

// A run that waits for review and is resumed counts once, when it ends,
// and its review once, when it is decided: waiting is a pause.
func TestRunThatWaitsCountsOnce(t *testing.T) {
	h := newHarness(t)
	p := parse(t, `{"tasks": [
		{"id": "draft", "agent": "w", "input": "x"},
		{"id": "ok", "type": "human_review", "input": "Send it?", "depends_on": ["draft"]},
		{"id": "send", "agent": "w", "input": "y", "depends_on": ["ok"]}]}`)
	echo := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: req.Input}, nil
	})
	first := runPlan(t, h.obs, p, echo)
	require.Equal(t, runner.StatusWaiting, first.Status)
	ms := h.metrics(t)
	assert.Equal(t, map[string]int64{"dagent.task.status=done": 1}, counts(t, ms, telemetry.MetricTasks))
	assert.NotContains(t, ms, telemetry.MetricRuns, "a run that waits has not ended")
	assert.NotContains(t, ms, telemetry.MetricRunDuration)

	res, err := runner.New(runner.WithAgent("w", echo), runner.WithObserver(h.obs)).RunPlan(context.Background(), p, runner.WithRunID("r1"),
		runner.WithInitialResults(map[string]any{"draft": first.Tasks["draft"].Output}), runner.WithReviews(map[string]runner.Decision{"ok": runner.Approve()}))
	require.NoError(t, err)
	require.Equal(t, runner.StatusCompleted, res.Status)
	ms = h.metrics(t)
	assert.Equal(t, map[string]int64{"dagent.task.status=done": 3}, counts(t, ms, telemetry.MetricTasks), "each task once")
	assert.Equal(t, map[string]int64{"dagent.run.status=completed": 1}, counts(t, ms, telemetry.MetricRuns), "the run once")
	assert.Len(t, histCounts[float64](t, ms, telemetry.MetricRunDuration), 1)
}
