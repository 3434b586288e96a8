package temporal

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/runner"
)

// sent is the end of an [UpdateReview]: whether it ended, and its
// refusal (nil: the run took the decision).
type sent struct {
	ended   bool
	refusal error
}

// update sends the review of id with decision d as [UpdateReview]; the
// environment ends it later, in the returned value.
func update(t *testing.T, e *testsuite.TestWorkflowEnvironment, id string, d runner.Decision) *sent {
	t.Helper()
	rv, err := NewReview(id, d)
	require.NoError(t, err)
	s := &sent{}
	e.UpdateWorkflow(UpdateReview, "", &testsuite.TestUpdateCallback{
		OnAccept:   func() {},
		OnReject:   func(err error) { s.ended, s.refusal = true, err },
		OnComplete: func(_ any, err error) { s.ended, s.refusal = true, err },
	}, rv)
	return s
}

func TestWorkflowRefusesStrayDecisions(t *testing.T) {
	e := env(t, workers(t, map[string]agent.Agent{"echo": echo("draft")}))
	p := mustPlan(t, `{"tasks": [
		{"id": "draft", "agent": "echo", "input": "write"},
		{"id": "ok", "type": "human_review", "input": "approve {{results.draft}}?", "depends_on": ["draft"]},
		{"id": "later", "type": "human_review", "input": "again?", "depends_on": ["ok"]},
		{"id": "publish", "agent": "echo", "input": "ship", "depends_on": ["later"]}]}`)
	var stray, notReview, later, ok, again *sent
	e.RegisterDelayedCallback(func() {
		stray = update(t, e, "nosuch", runner.Approve())
		notReview = update(t, e, "draft", runner.Approve())
		later = update(t, e, "later", runner.Approve())
	}, time.Minute)
	e.RegisterDelayedCallback(func() {
		rv, err := NewReview("nosuch", runner.Approve())
		require.NoError(t, err)
		e.SignalWorkflow(SignalReview, rv) // dropped, not fatal
		again = update(t, e, "later", runner.Reject("too late"))
		ok = update(t, e, "ok", runner.Approve())
	}, time.Hour)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "stray", Spec: durable.Spec{Plan: p}})
	o := outcome(t, e)
	assert.Equal(t, runner.StatusCompleted, o.Run.Status)
	assert.Equal(t, "approve", o.Run.Tasks["ok"].Output)
	assert.Equal(t, "approve", o.Run.Tasks["later"].Output, "a review not reached yet takes its decision, and the first decision stands")
	assert.Equal(t, runner.TaskDone, o.Run.Tasks["publish"].Status)

	for _, s := range []*sent{later, ok} {
		require.NotNil(t, s)
		assert.True(t, s.ended)
		assert.NoError(t, s.refusal)
	}
	for want, s := range map[string]*sent{
		`review of "nosuch": the run's plan has no such task`:                  stray,
		`review of "draft": the task is not a human_review (its type is task)`: notReview,
		`review of "later": the task is decided already`:                       again,
	} {
		require.NotNil(t, s, want)
		require.True(t, s.ended, want)
		require.Error(t, s.refusal, want)
		assert.Contains(t, s.refusal.Error(), want)
	}
}

func TestWorkflowRefusesStrayInitialReview(t *testing.T) {
	e := env(t, workers(t, map[string]agent.Agent{"echo": echo("draft")}))
	p := mustPlan(t, `{"tasks": [{"id": "draft", "agent": "echo", "input": "write"}]}`)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "stray-in", Spec: durable.Spec{Plan: p}, Reviews: []Review{{TaskID: "nosuch", Approved: true}}})
	err := e.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), ErrInvalidInput.Error())
	assert.Contains(t, err.Error(), `review of "nosuch"`)
}

// A decided review that the repair plan leaves out does not stop the
// next plan version from running.
func TestWorkflowRepairDropsADecidedReview(t *testing.T) {
	broken := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, errors.New("broken for good")
	})
	p := mustPlan(t, `{"mission": "ship it", "tasks": [
		{"id": "a", "agent": "echo", "input": "start"},
		{"id": "ok", "type": "human_review", "input": "go on?", "depends_on": ["a"]},
		{"id": "b", "agent": "broken", "input": "go", "depends_on": ["ok"], "on_failure": "replan"}]}`)
	repaired := mustPlan(t, `{"mission": "ship it", "tasks": [
		{"id": "a", "agent": "echo", "input": "start"},
		{"id": "c", "agent": "echo", "input": "go", "depends_on": ["a"]}]}`)
	e := env(t, workers(t, map[string]agent.Agent{"echo": echo("a"), "broken": broken}))
	e.OnActivity(ActivityRepair, mock.Anything, mock.Anything).Return(RepairReply{Plan: repaired, Reason: "skip the review"}, nil)
	var decided *sent
	e.RegisterDelayedCallback(func() { decided = update(t, e, "ok", runner.Approve()) }, time.Minute)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "drop", Spec: durable.Spec{Plan: p, Replan: durable.ReplanDefaults()}})
	o := outcome(t, e)
	require.NotNil(t, o.Execution)
	assert.Equal(t, runner.StatusCompleted, o.Run.Status)
	assert.Equal(t, 1, o.Execution.ReplanCount)
	assert.Equal(t, "a", o.Run.Tasks["c"].Output)
	require.NotNil(t, decided)
	assert.NoError(t, decided.refusal)
}
