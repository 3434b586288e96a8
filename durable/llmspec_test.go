package durable_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// loopModel calls the lookup tool on every turn, and records the
// temperature of each request.
type loopModel struct {
	mu    sync.Mutex
	temps []*float64
}

func (m *loopModel) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	m.temps = append(m.temps, req.Temperature)
	m.mu.Unlock()
	call := llm.ToolCall{ID: "call", Name: "lookup", Arguments: `{}`}
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}}, FinishReason: "tool_calls"}, nil
}

func (m *loopModel) temperatures() []*float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.temps
}

// The spec's temperature and bound on turns reach the plan's LLM agents,
// in the run and in its resumption, which reads them from the journal.
func TestSpecLLMSettingsReachTheAgents(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	reg := registry.New()
	require.NoError(t, reg.RegisterTool("lookup", registry.Tool{Description: "Looks a fact up",
		Run: func(context.Context, json.RawMessage) (string, error) { return "nothing", nil }}))
	catalog := durable.WithCatalog(func(context.Context, string) (*registry.Registry, string, error) { return reg, "", nil })
	p := mustPlan(t, `{"agents": {"researcher": {"prompt": "You look facts up.", "tools": ["lookup"]}},
		"tasks": [{"id": "ask", "agent": "researcher", "input": "What is it?", "max_retries": 0}]}`)
	temp := 0.25
	spec := durable.Spec{Plan: p, Catalog: "facts", LLM: durable.LLMSpec{Temperature: &temp, MaxTurns: 2}}

	m := &loopModel{}
	model := durable.WithLLM(func(string, bool) (llm.Client, error) { return m, nil })
	out, err := durable.Start(ctx, s, spec, catalog, model, durable.WithRunID("llm"))
	require.NoError(t, err)
	require.Equal(t, durable.StatusFailed, out.Status)
	assert.ErrorIs(t, out.Result.Tasks["ask"].Err, llmagent.ErrMaxTurns)
	require.Len(t, m.temperatures(), 3, "the first call, two turns of tools, then the bound")
	for _, got := range m.temperatures() {
		require.NotNil(t, got)
		assert.InDelta(t, temp, *got, 1e-9)
	}

	r, err := durable.Load(ctx, s, "llm")
	require.NoError(t, err)
	assert.Equal(t, spec.LLM, r.Spec.LLM)

	m = &loopModel{}
	model = durable.WithLLM(func(string, bool) (llm.Client, error) { return m, nil })
	out, err = durable.Resume(ctx, s, "llm", catalog, model)
	require.NoError(t, err)
	require.Equal(t, durable.StatusFailed, out.Status)
	assert.ErrorIs(t, out.Result.Tasks["ask"].Err, llmagent.ErrMaxTurns)
	require.Len(t, m.temperatures(), 3, "the resumed run keeps the bound")
	assert.InDelta(t, temp, *m.temperatures()[0], 1e-9)
}

// grownRepair adds two tasks to replanPlan.
const grownRepair = `{"route": "plan", "plan": {"mission": "count the words", "tasks": [
	{"id": "fetch", "agent": "wc", "input": "one two"},
	{"id": "count2", "agent": "wc", "input": "one two three", "depends_on": ["fetch"]},
	{"id": "check", "agent": "wc", "input": "check", "depends_on": ["count2"]},
	{"id": "report", "agent": "wc", "input": "report", "depends_on": ["check"]}]}}`

// The spec's bound on plan growth reaches the executor; a spec without
// one, as an earlier dagent wrote it, does not halt on growth.
func TestSpecPlanGrowth(t *testing.T) {
	tests := []struct {
		name   string
		replan durable.ReplanSpec
		halt   string
		status durable.Status
	}{
		{"bounded", durable.ReplanSpec{MaxReplans: 5, MaxReplansPerTask: 3, MaxPlanGrowth: 1}, executor.HaltPlanGrowth, durable.StatusFailed},
		{"within the bound", durable.ReplanSpec{MaxReplans: 5, MaxReplansPerTask: 3, MaxPlanGrowth: 2}, "", durable.StatusCompleted},
		{"no bound", durable.ReplanSpec{MaxReplans: 5, MaxReplansPerTask: 3}, "", durable.StatusCompleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t)
			w := newWorkers()
			w.fail["count"] = true
			m := &planner{answers: []string{grownRepair}}
			spec := durable.Spec{Plan: mustPlan(t, replanPlan), Replan: &tt.replan}
			out, err := durable.Start(context.Background(), s, spec, durable.WithAgent("wc", w.agent()), durable.WithLLM(m.client()), durable.WithRunID("g"))
			require.NoError(t, err)
			assert.Equal(t, tt.status, out.Status, "%v", out.Result.Err)
			assert.Equal(t, tt.halt, out.Execution.Halt)
		})
	}
}

// tokenModel answers every request at once, at ten tokens a call.
type tokenModel struct{ calls int }

func (m *tokenModel) Complete(context.Context, llm.Request) (llm.Response, error) {
	m.calls++
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "done"}, FinishReason: "stop",
		Usage: llm.Usage{PromptTokens: 7, CompletionTokens: 3}}, nil
}

// A resumed run's LLM budget goes on from what the run spent before it
// stopped: the calls and tokens the journal's exchanges hold.
func TestResumeKeepsTheBudgetSpent(t *testing.T) {
	tests := []struct {
		name   string
		budget executor.Budget
	}{
		{"calls", executor.Budget{MaxCalls: 1}},
		{"tokens", executor.Budget{MaxTokens: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t)
			catalog := durable.WithCatalog(func(context.Context, string) (*registry.Registry, string, error) { return registry.New(), "", nil })
			p := mustPlan(t, `{"agents": {"writer": {"prompt": "You write."}}, "tasks": [
				{"id": "a", "agent": "writer", "input": "Write.", "max_retries": 0},
				{"id": "ok", "type": "human_review", "input": "Fine?", "depends_on": ["a"]},
				{"id": "b", "agent": "writer", "input": "Write more.", "depends_on": ["ok"], "max_retries": 0}]}`)
			spec := durable.Spec{Plan: p, Catalog: "none", Budget: tt.budget}

			m := &tokenModel{}
			model := durable.WithLLM(func(string, bool) (llm.Client, error) { return m, nil })
			out, err := durable.Start(ctx, s, spec, catalog, model, durable.WithRunID("spent"))
			require.NoError(t, err)
			require.Equal(t, durable.StatusWaiting, out.Status)
			require.Equal(t, 1, m.calls)

			m = &tokenModel{}
			model = durable.WithLLM(func(string, bool) (llm.Client, error) { return m, nil })
			out, err = durable.Resume(ctx, s, "spent", catalog, model,
				durable.WithReviews(map[string]runner.Decision{"ok": runner.Approve()}))
			require.NoError(t, err)
			require.Equal(t, durable.StatusFailed, out.Status)
			assert.ErrorIs(t, out.Result.Tasks["b"].Err, llm.ErrBudgetExceeded)
			assert.Zero(t, m.calls, "the budget was spent before the resume")
		})
	}
}
