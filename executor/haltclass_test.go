package executor_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// TestExecuteHaltOnClass: a failure of a class that halts ends the
// execution with the class as its halt, and the replanner is never asked;
// by default tool_refused and precondition_failed halt, and the options
// change which classes do, in order.
func TestExecuteHaltOnClass(t *testing.T) {
	refused := fail(fmt.Errorf("llm agent: %w: rm", agent.ErrToolRefused))
	reported := fail(&agent.FailureReport{Class: "sandbox_violation", Message: "wrote outside its directory", Suggestion: "give it a scratch directory"})
	tests := []struct {
		name  string
		agent behaviour
		opts  []executor.Option
		halt  string // "" when the failure goes to the replanner
	}{
		{name: "tool refused halts by default", agent: refused, halt: executor.HaltToolRefused},
		{name: "tool refused replanned when not halting", agent: refused, opts: []executor.Option{executor.WithoutHaltOn(runner.ClassToolRefused)}},
		{name: "agent error replanned by default", agent: fail(errBoom)},
		{name: "agent error halts when asked", agent: fail(errBoom), opts: []executor.Option{executor.WithHaltOn(runner.ClassAgentError)}, halt: "agent_error"},
		{name: "reported class halts when asked", agent: reported, opts: []executor.Option{executor.WithHaltOn("sandbox_violation")}, halt: "sandbox_violation"},
		{name: "reported class replanned by default", agent: reported},
		{name: "later option wins", agent: refused, opts: []executor.Option{
			executor.WithoutHaltOn(runner.ClassToolRefused), executor.WithHaltOn(runner.ClassToolRefused),
		}, halt: executor.HaltToolRefused},
		{name: "no class halts", agent: refused, opts: []executor.Option{executor.WithoutHaltOn(executor.DefaultHaltClasses()...)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkers().set("x", tt.agent)
			rp := newReplanner(reply{plan: mustPlan(t, onlyY)})
			var events []runner.Event
			opts := append([]executor.Option{
				executor.WithReplanner(rp),
				executor.WithObserver(runner.ObserverFunc(func(ev runner.Event) { events = append(events, ev) })),
			}, tt.opts...)

			res, err := executor.Execute(context.Background(), mustPlan(t, onlyX), mission, w.options(opts...)...)
			require.NoError(t, err)
			if tt.halt == "" {
				assert.Equal(t, runner.StatusCompleted, res.Status)
				assert.Len(t, rp.received(), 1)
				assert.Empty(t, res.Halt)
				return
			}
			assert.Equal(t, runner.StatusFailed, res.Status)
			assert.Equal(t, tt.halt, res.Halt)
			assert.Empty(t, rp.received(), "a class that halts never reaches the replanner")
			assert.Zero(t, res.ReplanCount)
			var he *executor.HaltError
			require.ErrorAs(t, res.Err, &he)
			assert.ErrorIs(t, res.Err, executor.ErrHalted)
			assert.Equal(t, tt.halt, he.Halt)
			assert.Equal(t, "x", he.Failure.TaskID)
			assert.Equal(t, tt.halt, he.Failure.Class)
			assert.Contains(t, he.Error(), "task x failed with class "+tt.halt+", which halts the execution")
			last := events[len(events)-1]
			assert.Equal(t, executor.EventHalted, last.Kind)
			assert.Equal(t, tt.halt, last.Halt)
			assert.Equal(t, runner.Class(tt.halt), last.Class)
		})
	}
}

// TestExecuteHaltOnPrecondition: a registry worker whose precondition
// fails halts the execution with precondition_failed by default; the
// worker never starts.
func TestExecuteHaltOnPrecondition(t *testing.T) {
	w := newWorkers()
	reg := registry.New()
	require.NoError(t, reg.Register("git", registry.Worker{
		Preconditions: []string{`(if (starts-with? data/input "https://") true "the input is not a URL")`},
		Agent:         agent.Func(w.run),
	}))
	p := mustPlan(t, `{"tasks": [{"id": "clone", "agent": "git", "input": "example.org/repo", "on_failure": "replan"}]}`)
	rp := newReplanner(reply{plan: mustPlan(t, onlyY)})

	res, err := executor.Execute(context.Background(), p, mission, executor.WithRegistry(reg), executor.WithReplanner(rp))
	require.NoError(t, err)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.Equal(t, executor.HaltPrecondition, res.Halt)
	assert.Empty(t, rp.received())
	assert.Empty(t, w.counts(), "the precondition kept the worker from starting")
	assert.ErrorContains(t, res.Err, "the input is not a URL")
}

// TestExecuteWorkerReport: the class and suggestion of a worker's failure
// report reach the replanner's Failure.
func TestExecuteWorkerReport(t *testing.T) {
	w := newWorkers().set("x", fail(fmt.Errorf("worker: %w", &agent.FailureReport{Class: "rate_limited", Message: "429 from the API", Suggestion: "wait a minute"})))
	rp := newReplanner(reply{plan: mustPlan(t, onlyY)})

	res, err := executor.Execute(context.Background(), mustPlan(t, onlyX), mission, w.options(executor.WithReplanner(rp))...)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	got := rp.received()
	require.Len(t, got, 1)
	assert.Equal(t, "rate_limited", got[0].failure.Class)
	assert.Equal(t, "wait a minute", got[0].failure.Suggestion)
	assert.Contains(t, got[0].failure.Diagnosis, "429 from the API")
}

// A failure of a class that halts is not retried first: the retry would
// give an agent led by planted text another go.
func TestHaltClassNotRetried(t *testing.T) {
	refused := fail(fmt.Errorf("llm agent: %w: rm", agent.ErrToolRefused))
	retried := `{"tasks": [{"id": "x", "input": "X", "on_failure": "retry", "max_retries": 2}]}`
	for _, tt := range []struct {
		name  string
		opts  []executor.Option
		calls int
	}{
		{name: "halting by default", calls: 1},
		{name: "not halting", opts: []executor.Option{executor.WithoutHaltOn(runner.ClassToolRefused)}, calls: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkers().set("x", refused)
			opts := append([]executor.Option{executor.WithRunner(runner.WithBackoff(runner.Backoff{}))}, tt.opts...)
			res, err := executor.Execute(context.Background(), mustPlan(t, retried), mission, w.options(opts...)...)
			require.NoError(t, err)
			assert.Equal(t, runner.StatusFailed, res.Status)
			assert.Equal(t, tt.calls, w.counts()["x"])
		})
	}
}

// A failure of a class that halts halts the execution also when another
// task's failure is the one that ended the run: the planner never sees a
// run in which an agent's tool calls were refused.
func TestHaltClassOfAnyFailedTask(t *testing.T) {
	two := `{"tasks": [{"id": "x", "input": "X", "on_failure": "replan"}, {"id": "y", "input": "Y", "critical": false, "on_failure": "skip"}]}`
	w := newWorkers().set("x", fail(errBoom)).set("y", fail(fmt.Errorf("llm agent: %w: rm", agent.ErrToolRefused)))
	rp := newReplanner(reply{plan: mustPlan(t, onlyY)})
	res, err := executor.Execute(context.Background(), mustPlan(t, two), mission, w.options(executor.WithReplanner(rp))...)
	require.NoError(t, err)
	assert.Equal(t, executor.HaltToolRefused, res.Halt)
	assert.Empty(t, rp.received(), "the replanner is never asked")
	var he *executor.HaltError
	require.ErrorAs(t, res.Err, &he)
	assert.Equal(t, "y", he.Failure.TaskID)
	assert.Equal(t, 1, w.counts()["y"], "y never runs again")
}
