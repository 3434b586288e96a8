package durable_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/runner"
)

// roundModel is a scripted LLM of round answers; crashAt, when set, is
// the request (from 1) that stops the run instead of answering.
type roundModel struct {
	mu      sync.Mutex
	answers []string
	asked   int
	crashAt int
	crash   context.CancelFunc
}

func (m *roundModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if req.Schema == nil || req.Schema.Name != metaplanner.RoundSchemaName || m.asked >= len(m.answers) {
		return llm.Response{}, errors.New("unexpected request")
	}
	m.asked++
	if m.asked == m.crashAt {
		m.crashAt, m.asked = 0, m.asked-1
		m.crash()
		return llm.Response{}, ctx.Err()
	}
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: m.answers[m.asked-1]}, FinishReason: "stop", Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5}}, nil
}

func (m *roundModel) client() durable.ClientFunc {
	return func(string, bool) (llm.Client, error) { return m, nil }
}

// A run in rounds that stops between two rounds — round 2 ran, the
// planner had not answered — resumes at round 2's plan version: nothing
// runs again, and the planner is asked for round 3.
func TestResumeRoundsBetweenRounds(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &roundModel{answers: []string{
		`{"action": "continue", "tasks": [{"id": "a", "agent": "wc", "input": "one"}]}`,
		`{"action": "continue", "tasks": [{"id": "b", "agent": "wc", "input": "one two", "inputs": {"prev": {"from": "a"}}}]}`,
		`{"action": "done", "deliverable": ["b"]}`,
	}, crashAt: 3, crash: cancel}
	spec := durable.Spec{Mission: "count the words", Rounds: 4}
	require.NoError(t, spec.Check())
	out, err := durable.Start(ctx, s, spec, durable.WithAgent("wc", w.agent()), durable.WithLLM(m.client()), durable.WithRunID("rr"))
	require.Error(t, err)
	assert.Equal(t, durable.StatusCancelled, out.Status)

	r, err := durable.Load(context.Background(), s, "rr")
	require.NoError(t, err)
	assert.Equal(t, 4, r.Spec.Rounds, "the spec keeps the round budget")
	require.Len(t, r.Plans, 2, "one plan version a round")
	require.Len(t, r.History, 1)
	assert.Equal(t, 2, r.History[0].Round)
	assert.Equal(t, 1, r.History[0].NewTaskCount)

	out, err = durable.Resume(context.Background(), s, "rr", durable.WithAgent("wc", w.agent()), durable.WithLLM(m.client()))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status, "%v", out.Result.Err)
	require.NotNil(t, out.Execution)
	assert.Equal(t, []string{"b"}, out.Execution.Deliverable)
	assert.Equal(t, 2, out.Execution.Rounds)
	assert.Equal(t, 1, w.count("a"), "completed tasks never run again")
	assert.Equal(t, 1, w.count("b"))
	assert.Equal(t, 3, m.asked)
}

// A run in rounds that stops inside a round resumes it: the task that was
// in flight runs again under the round's run id, the others do not.
func TestResumeRoundsInARound(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.crash["b"] = cancel
	m := &roundModel{answers: []string{
		`{"action": "continue", "tasks": [{"id": "a", "agent": "wc", "input": "one"}]}`,
		`{"action": "continue", "tasks": [{"id": "b", "agent": "wc", "input": "one two", "depends_on": ["a"]}]}`,
		`{"action": "failed", "reason": "b says too little"}`,
	}}
	_, err := durable.Start(ctx, s, durable.Spec{Mission: "count the words", Rounds: 3}, durable.WithAgent("wc", w.agent()), durable.WithLLM(m.client()), durable.WithRunID("ri"))
	require.Error(t, err)

	out, err := durable.Resume(context.Background(), s, "ri", durable.WithAgent("wc", w.agent()), durable.WithLLM(m.client()))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusFailed, out.Status)
	assert.Equal(t, executor.HaltGaveUp, out.Execution.Halt)
	assert.Equal(t, 1, w.count("a"))
	assert.Equal(t, 2, w.count("b"))
	assert.Equal(t, "ri.1/b/1", w.keys[len(w.keys)-1], "the round's run goes on under its id")
}

func TestSpecRoundsCheck(t *testing.T) {
	for _, tc := range []struct {
		spec durable.Spec
		want string
	}{
		{durable.Spec{Mission: "m", Rounds: -1}, "rounds is -1"},
		{durable.Spec{Mission: "m", Rounds: 2, Replan: durable.ReplanDefaults()}, "a run in rounds makes no repair"},
		{durable.Spec{Mission: "m", Rounds: 2, Replan: &durable.ReplanSpec{MaxPlanGrowth: 3}}, "its replan holds only the halts"},
		{durable.Spec{Plan: mustPlan(t, `{"tasks": [{"id": "a"}]}`), Rounds: 2}, "a run in rounds needs a mission"},
	} {
		assert.ErrorContains(t, tc.spec.Check(), tc.want)
	}
}

// A run in rounds halts on the classes its spec's replan names, as a run
// that replans does; the spec keeps them, so that a resume does too.
func TestRoundsHaltOn(t *testing.T) {
	s := openStore(t)
	limited := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, &agent.FailureReport{Class: "rate_limited", Message: "429"}
	})
	m := &roundModel{answers: []string{
		`{"action": "continue", "tasks": [{"id": "a", "agent": "api", "input": "x"}]}`,
		`{"action": "continue", "tasks": [{"id": "b", "agent": "api", "input": "y"}]}`,
	}}
	spec := durable.Spec{Mission: "call the API", Rounds: 3, Replan: &durable.ReplanSpec{HaltOn: []runner.Class{"rate_limited"}}}
	require.NoError(t, spec.Check())
	out, err := durable.Start(context.Background(), s, spec, durable.WithAgent("api", limited), durable.WithLLM(m.client()))
	require.NoError(t, err)
	require.NotNil(t, out.Execution)
	assert.Equal(t, "rate_limited", out.Execution.Halt)
	assert.Equal(t, 1, m.asked, "the planner never sees the round")
	r, err := durable.Load(context.Background(), s, out.RunID)
	require.NoError(t, err)
	require.NotNil(t, r.Spec.Replan)
	assert.Equal(t, []runner.Class{"rate_limited"}, r.Spec.Replan.HaltOn)
}
