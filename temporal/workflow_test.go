package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	sdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// mustPlan parses a plan for a test.
func mustPlan(t *testing.T, doc string) *plan.Plan {
	t.Helper()
	p, err := plan.Parse([]byte(doc))
	require.NoError(t, err)
	return p
}

// env is a test workflow environment with the workflow and the
// activities of reg registered.
func env(t *testing.T, reg *registry.Registry, opts ...Option) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	e := quietSuite().NewTestWorkflowEnvironment()
	Register(e, NewActivities(reg, opts...))
	return e
}

// outcome is the result of the finished workflow of e.
func outcome(t *testing.T, e *testsuite.TestWorkflowEnvironment) *Outcome {
	t.Helper()
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var o Outcome
	require.NoError(t, e.GetWorkflowResult(&o))
	require.NotNil(t, o.Run)
	return &o
}

func echo(out any) agent.Agent {
	return agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{Output: out}, nil })
}

// workers builds a registry of named agents.
func workers(t *testing.T, agents map[string]agent.Agent) *registry.Registry {
	t.Helper()
	reg := registry.New()
	for name, a := range agents {
		require.NoError(t, reg.Register(name, registry.Worker{Agent: a}))
	}
	return reg
}

func TestWorkflowRetriesAndVerifies(t *testing.T) {
	var calls atomic.Int32
	flaky := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		switch calls.Add(1) {
		case 1:
			return agent.Result{}, errors.New("flaked")
		case 2:
			return agent.Result{Output: map[string]any{"n": 1}}, nil
		}
		assert.NotEmpty(t, req.Diagnosis, "a retry is told why")
		return agent.Result{Output: map[string]any{"n": 3}}, nil
	})
	e := env(t, workers(t, map[string]agent.Agent{"flaky": flaky, "echo": echo("done")}))
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "agent": "flaky", "input": "count", "on_failure": "retry", "max_retries": 3,
		 "verification": "(> (get data/result \"n\") 2)", "on_verification_failure": "retry"},
		{"id": "b", "agent": "echo", "input": "after", "depends_on": ["a"]}]}`)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "r1", Spec: durable.Spec{Plan: p}})
	o := outcome(t, e)
	assert.Equal(t, runner.StatusCompleted, o.Run.Status)
	assert.Equal(t, 3, o.Run.Tasks["a"].Attempts)
	assert.Equal(t, "done", o.Run.Tasks["b"].Output)
	assert.Equal(t, "r1", o.Run.RunID)
}

func TestWorkflowGateFails(t *testing.T) {
	e := env(t, workers(t, map[string]agent.Agent{"empty": echo(""), "echo": echo("x")}))
	p := mustPlan(t, `{"tasks": [
		{"id": "g", "agent": "empty", "input": "sum up", "type": "synthesis_gate"},
		{"id": "after", "agent": "echo", "input": "go", "depends_on": ["g"]}]}`)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "r2", Spec: durable.Spec{Plan: p}})
	o := outcome(t, e)
	assert.Equal(t, runner.StatusFailed, o.Run.Status)
	assert.Equal(t, runner.TaskFailed, o.Run.Tasks["g"].Status)
	assert.Equal(t, runner.ClassVerification, o.Run.Tasks["g"].Class)
	assert.Equal(t, runner.TaskSkipped, o.Run.Tasks["after"].Status)
	assert.Equal(t, runner.ClassGateFailed, o.Run.Tasks["after"].Class)
}

func TestWorkflowReviewBySignal(t *testing.T) {
	e := env(t, workers(t, map[string]agent.Agent{"echo": echo("draft")}))
	p := mustPlan(t, `{"tasks": [
		{"id": "draft", "agent": "echo", "input": "write"},
		{"id": "ok", "type": "human_review", "input": "approve {{results.draft}}?", "depends_on": ["draft"]},
		{"id": "publish", "agent": "echo", "input": "ship", "depends_on": ["ok"]}]}`)
	var waiting *Snapshot
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryTasks)
		require.NoError(t, err)
		require.NoError(t, v.Get(&waiting))
		rv, err := NewReview("ok", runner.Approve())
		require.NoError(t, err)
		e.SignalWorkflow(SignalReview, rv)
	}, time.Hour)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "r3", Spec: durable.Spec{Plan: p}})
	o := outcome(t, e)
	assert.Equal(t, runner.StatusCompleted, o.Run.Status)
	assert.Equal(t, "approve", o.Run.Tasks["ok"].Output)
	assert.Equal(t, runner.TaskDone, o.Run.Tasks["publish"].Status)
	assert.Equal(t, 1, o.Run.Tasks["draft"].Attempts, "the draft keeps the run that made it")

	require.NotNil(t, waiting)
	assert.Equal(t, "waiting", waiting.Status)
	require.Len(t, waiting.PendingReviews, 1)
	assert.Equal(t, "ok", waiting.PendingReviews[0].TaskID)
	require.Len(t, waiting.Tasks, 3)
	assert.Equal(t, TaskState{ID: "draft", Status: runner.TaskDone, Attempts: 1, Output: "draft"}, waiting.Tasks[0])
	assert.Equal(t, runner.TaskWaiting, waiting.Tasks[1].Status)
	assert.Equal(t, runner.TaskPending, waiting.Tasks[2].Status)

	v, err := e.QueryWorkflow(QueryTasks)
	require.NoError(t, err)
	var end Snapshot
	require.NoError(t, v.Get(&end))
	assert.Equal(t, "completed", end.Status)
}

func TestWorkflowEndWaiting(t *testing.T) {
	e := env(t, workers(t, map[string]agent.Agent{"echo": echo("draft")}))
	p := mustPlan(t, `{"tasks": [
		{"id": "draft", "agent": "echo", "input": "write"},
		{"id": "ok", "type": "human_review", "input": "approve?", "depends_on": ["draft"]}]}`)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "r4", Spec: durable.Spec{Plan: p}, EndWaiting: true})
	o := outcome(t, e)
	assert.Equal(t, runner.StatusWaiting, o.Run.Status)
	require.Len(t, o.Run.PendingReviews, 1)
}

func TestWorkflowCancelled(t *testing.T) {
	fails := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, errors.New("no") })
	e := env(t, workers(t, map[string]agent.Agent{"fails": fails, "echo": echo("x")}))
	p := mustPlan(t, `{"tasks": [
		{"id": "ok", "agent": "echo", "input": "x"},
		{"id": "a", "agent": "fails", "input": "x", "on_failure": "retry", "max_retries": 5}]}`)
	e.RegisterDelayedCallback(e.CancelWorkflow, 10*time.Minute)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "r5", Spec: durable.Spec{Plan: p}, Backoff: &runner.Backoff{Initial: time.Hour}})
	o := outcome(t, e)
	assert.Equal(t, runner.StatusFailed, o.Run.Status)
	require.Error(t, o.Run.Err)
	assert.Contains(t, o.Run.Err.Error(), context.Canceled.Error())
	assert.Equal(t, runner.TaskDone, o.Run.Tasks["ok"].Status, "finished tasks are kept")
	assert.Equal(t, 1, o.Run.Tasks["a"].Attempts)
}

func TestWorkflowInvalidInput(t *testing.T) {
	for name, in := range map[string]Input{
		"bad run id": {RunID: "a b", Spec: durable.Spec{Plan: mustPlan(t, `{"tasks":[{"id":"a","agent":"echo","input":"x"}]}`)}},
		"unknown agent slot": {RunID: "r", Spec: durable.Spec{Plan: mustPlan(t, `{"tasks":[{"id":"a","agent":"echo","input":"x"},
			{"id":"b","agent":"echo","input":"y","depends_on":["a"],"inputs":{"v":{"from":"a","slot":"s"}}}]}`)}},
	} {
		t.Run(name, func(t *testing.T) {
			reg := registry.New()
			require.NoError(t, reg.Register("echo", registry.Worker{Agent: echo("x"), Outputs: []string{"text"}}))
			e := env(t, reg)
			e.ExecuteWorkflow(WorkflowName, in)
			require.True(t, e.IsWorkflowCompleted())
			err := e.GetWorkflowError()
			require.Error(t, err)
			assert.Contains(t, err.Error(), ErrInvalidInput.Error())
			var app *sdk.ApplicationError
			require.ErrorAs(t, err, &app)
			assert.Equal(t, InvalidInputType, app.Type())
		})
	}
}

func TestWorkflowRepairsTheTail(t *testing.T) {
	broken := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, errors.New("broken for good")
	})
	var fixedIn string
	fixer := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		fixedIn = req.RunID
		return agent.Result{Output: "fixed"}, nil
	})
	p := mustPlan(t, `{"mission": "ship it", "tasks": [
		{"id": "a", "agent": "echo", "input": "start"},
		{"id": "b", "agent": "broken", "input": "go", "depends_on": ["a"], "on_failure": "replan"}]}`)
	repaired := mustPlan(t, `{"mission": "ship it", "tasks": [
		{"id": "a", "agent": "echo", "input": "start"},
		{"id": "c", "agent": "fixer", "input": "go", "depends_on": ["a"]}]}`)
	var asked RepairRequest
	spec := durable.Spec{Plan: p, Replan: durable.ReplanDefaults()}
	spec.Replan.Cooldown = time.Minute
	var kinds []runner.EventKind
	w := &Workflow{Observe: func(e runner.Event) { kinds = append(kinds, e.Kind) }}
	e := quietSuite().NewTestWorkflowEnvironment()
	w.Register(e)
	NewActivities(workers(t, map[string]agent.Agent{"echo": echo("a"), "broken": broken, "fixer": fixer})).Register(e)
	// Once an activity has a mock, a call no mock matches panics rather
	// than falling through to the registered activity: one mock matches
	// every call, and answers with a func.
	e.OnActivity(ActivityRepair, mock.Anything, mock.Anything).Return(func(_ context.Context, in RepairRequest) (RepairReply, error) {
		asked = in
		return RepairReply{Plan: repaired, Reason: "use the fixer", Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5}, Calls: 1}, nil
	})
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "rp", Spec: spec})
	o := outcome(t, e)
	require.NotNil(t, o.Execution)
	assert.Equal(t, runner.StatusCompleted, o.Run.Status)
	assert.Equal(t, 1, o.Execution.ReplanCount)
	assert.Equal(t, 2, o.Execution.ExecutionAttempts)
	assert.Equal(t, "fixed", o.Run.Tasks["c"].Output)
	assert.Equal(t, runner.TaskFailed, o.Run.Tasks["b"].Status)
	assert.Equal(t, 1, o.Run.Tasks["a"].Attempts, "a is carried over, not run again")
	assert.Equal(t, "rp.1", fixedIn, "the repair runs as base.1")
	require.Len(t, o.Execution.History, 1)
	assert.Equal(t, "b", o.Execution.History[0].TaskID)
	assert.Equal(t, "use the fixer", o.Execution.History[0].Reason)
	assert.Equal(t, 15, o.Execution.Usage.Total())
	assert.Equal(t, "b", asked.Failure.TaskID)
	assert.Equal(t, "ship it", asked.Mission)
	assert.Equal(t, map[string]any{"a": "a"}, asked.Completed)
	assert.Contains(t, kinds, executor.EventRepairAdopted)

	raw, err := json.Marshal(o)
	require.NoError(t, err)
	want, err := o.Execution.MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(raw), "a replanning run's outcome is the executor's result form")
	var back Outcome
	require.NoError(t, json.Unmarshal(raw, &back))
	require.NotNil(t, back.Execution)
	assert.Equal(t, 1, back.Execution.ReplanCount)
	assert.Equal(t, "c", o.Execution.Plan.Tasks[1].ID, "the plan that ran last")
}

func TestWorkflowWallTimeBudget(t *testing.T) {
	fails := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, errors.New("no") })
	e := env(t, workers(t, map[string]agent.Agent{"fails": fails, "echo": echo("x")}))
	p := mustPlan(t, `{"mission": "m", "tasks": [
		{"id": "ok", "agent": "echo", "input": "x"},
		{"id": "a", "agent": "fails", "input": "x", "on_failure": "retry", "max_retries": 5}]}`)
	spec := durable.Spec{Plan: p, Replan: durable.ReplanDefaults()}
	spec.Budget.MaxDuration = time.Hour
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "wall", Spec: spec, Backoff: &runner.Backoff{Initial: 2 * time.Hour}})
	o := outcome(t, e)
	require.NotNil(t, o.Execution)
	assert.Equal(t, runner.StatusFailed, o.Run.Status)
	assert.Equal(t, executor.HaltBudget, o.Execution.Halt)
	assert.Equal(t, runner.TaskDone, o.Run.Tasks["ok"].Status)
	assert.Less(t, o.Run.Duration, 2*time.Hour, "the budget's timer ends the backoff")
}

func TestWorkflowQueryWhileRunning(t *testing.T) {
	fails := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, errors.New("flaked")
	})
	e := env(t, workers(t, map[string]agent.Agent{"fails": fails, "echo": echo("x")}))
	p := mustPlan(t, `{"tasks": [
		{"id": "ok", "agent": "echo", "input": "x"},
		{"id": "a", "agent": "fails", "input": "x", "on_failure": "retry", "max_retries": 1}]}`)
	var mid Snapshot
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(QueryTasks)
		require.NoError(t, err)
		require.NoError(t, v.Get(&mid))
	}, 30*time.Minute)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "q", Spec: durable.Spec{Plan: p}, Backoff: &runner.Backoff{Initial: time.Hour}})
	outcome(t, e)
	assert.Equal(t, "running", mid.Status)
	require.Len(t, mid.Tasks, 2)
	assert.Equal(t, TaskState{ID: "ok", Status: runner.TaskDone, Attempts: 1, Output: "x"}, mid.Tasks[0])
	assert.Equal(t, runner.TaskRunning, mid.Tasks[1].Status, "a waits for its retry")
	assert.Equal(t, 1, mid.Tasks[1].Attempts)
}

func TestWorkflowDeadlineOfAPlainRun(t *testing.T) {
	fails := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, errors.New("no") })
	e := env(t, workers(t, map[string]agent.Agent{"fails": fails}))
	p := mustPlan(t, `{"tasks": [{"id": "a", "agent": "fails", "input": "x", "on_failure": "retry", "max_retries": 5}]}`)
	spec := durable.Spec{Plan: p}
	spec.Budget.MaxDuration = time.Hour
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "deadline", Spec: spec, Backoff: &runner.Backoff{Initial: 2 * time.Hour}})
	o := outcome(t, e)
	assert.Nil(t, o.Execution)
	assert.Equal(t, runner.StatusFailed, o.Run.Status)
	assert.Contains(t, o.Run.Err.Error(), context.DeadlineExceeded.Error())

	raw, err := json.Marshal(o)
	require.NoError(t, err)
	want, err := o.Run.MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(raw), "a plain run's outcome is the runner's result form")
}

// A predicate that would run for minutes must not hold a workflow task past
// the SDK's deadlock detector, which would fail the task for good: the
// workflow's predicates have a step bound, so the verification fails the
// task as a predicate error and the workflow completes.
func TestWorkflowLongPredicateFailsTheTask(t *testing.T) {
	big := make([]any, 20_000)
	for i := range big {
		big[i] = i
	}
	e := env(t, workers(t, map[string]agent.Agent{"big": echo(big)}))
	p := mustPlan(t, `{"tasks": [
		{"id": "a", "agent": "big", "input": "numbers",
		 "verification": "(every? (fn [x] (> (count (sort data/result)) 0)) data/result)"}]}`)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "r-long", Spec: durable.Spec{Plan: p}})
	o := outcome(t, e)
	assert.Equal(t, runner.StatusFailed, o.Run.Status)
	a := o.Run.Tasks["a"]
	assert.Equal(t, runner.TaskFailed, a.Status)
	assert.Equal(t, runner.ClassAgentError, a.Class, "a predicate error, not a failed verdict")
	assert.Contains(t, a.Diagnosis, "verification: 1:27: (sort data/result): predicate timed out: step budget exceeded")
}
