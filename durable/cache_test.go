package durable_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

const countPlan = `{"route": "plan", "plan": {"tasks": [{"id": "a", "agent": "wc", "input": "one two"}]}}`

// prompts is a scripted planner that answers every planning request with
// answer and keeps the prompts.
type prompts struct {
	mu     sync.Mutex
	answer string
	got    []string
}

func (m *prompts) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if req.Schema == nil || req.Schema.Name != metaplanner.SchemaName {
		return llm.Response{}, fmt.Errorf("unexpected request")
	}
	m.got = append(m.got, req.Messages[len(req.Messages)-1].Content)
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: m.answer}, FinishReason: "stop"}, nil
}

func (m *prompts) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.got)
}

func TestPlanCache(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	m := &prompts{answer: countPlan}
	digest := "sha256:one"
	catalog := durable.WithCatalog(func(context.Context, string) (*registry.Registry, string, error) {
		reg := registry.New()
		require.NoError(t, reg.Register("wc", registry.Worker{Agent: w.agent(), Outputs: []string{"words", "task"}}))
		return reg, digest, nil
	})
	var brief bool
	start := func(mission string, mode durable.PlanCache, opts ...durable.Option) (*durable.Outcome, []runner.Event) {
		t.Helper()
		var events []runner.Event
		o := runner.ObserverFunc(func(e runner.Event) {
			if e.Kind == durable.EventPlanned || e.Kind == durable.EventPlanCached {
				events = append(events, e)
			}
		})
		spec := durable.Spec{Mission: mission, Catalog: "words.yaml", Replan: durable.ReplanDefaults(), LLM: durable.LLMSpec{Brief: brief}}
		out, err := durable.Start(context.Background(), s, spec, append([]durable.Option{catalog,
			durable.WithLLM(func(string, bool) (llm.Client, error) { return m, nil }), durable.WithPlanCache(mode), durable.WithObserver(o)}, opts...)...)
		require.NoError(t, err)
		require.Equal(t, durable.StatusCompleted, out.Status, "%v", out.Result.Err)
		return out, events
	}

	start("Count two words", durable.CacheReuse)
	assert.Equal(t, 1, m.calls(), "the first run plans")

	out, events := start("  Count   two words ", durable.CacheReuse)
	assert.Equal(t, 1, m.calls(), "the same mission, normalised, reuses the plan")
	require.Len(t, events, 1)
	assert.Equal(t, durable.EventPlanCached, events[0].Kind)
	assert.Equal(t, 1, events[0].Tasks)
	require.NotNil(t, out.Planned)
	assert.Zero(t, out.Planned.Attempts, "no request sent")
	assert.Equal(t, "a", out.Plan.Tasks[0].ID)

	rep, err := durable.Replay(context.Background(), s, out.RunID, catalog)
	require.NoError(t, err)
	assert.True(t, rep.Identical, "a run of a cached plan replays without the planner: %q", rep.Differences)
	assert.Equal(t, 1, m.calls())

	start("Count two words", durable.CacheRefresh)
	assert.Equal(t, 2, m.calls(), "a refresh plans again")

	start("Count three words", durable.CacheReuse)
	assert.Equal(t, 3, m.calls(), "another mission plans")
	start("count TWO words", durable.CacheReuse)
	assert.Equal(t, 4, m.calls(), "case is kept: another mission plans")
	brief = true
	start("Count three words", durable.CacheReuse)
	assert.Equal(t, 5, m.calls(), "brief prompts write other plans: the cached plan is not theirs")
	brief = false

	start("Count two words", durable.CacheOff)
	assert.Equal(t, 6, m.calls(), "without the cache, every run plans")

	digest = "sha256:two"
	start("Count two words", durable.CacheReuse)
	assert.Equal(t, 7, m.calls(), "the catalog changed: the cached plan is not for it")
	start("Count two words", durable.CacheReuse)
	assert.Equal(t, 7, m.calls(), "the plan of the new catalog is cached")

	start("Count two words", durable.CacheReuse, durable.WithAgent("extra", w.agent()))
	assert.Equal(t, 8, m.calls(), "another Go worker is another catalog")
}

// A plan is cached only once a run of it completed; a cached plan meets
// the critic's gate again.
func TestPlanCacheKeepsCompletedPlans(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	w.fail["a"] = true
	m := &prompts{answer: countPlan}
	run := func(gate string) (*durable.Outcome, error) {
		spec := durable.Spec{Mission: "count two words", Replan: &durable.ReplanSpec{MaxReplans: 1}}
		if gate != "" {
			spec.Gate = "warning"
		}
		return durable.Start(context.Background(), s, spec, durable.WithAgent("wc", w.agent()),
			durable.WithLLM(func(string, bool) (llm.Client, error) { return m, nil }), durable.WithPlanCache(durable.CacheReuse))
	}
	_, _ = run("")
	asked := m.calls()
	_, _ = run("")
	assert.Greater(t, m.calls(), asked, "the failed run's plan was not cached")

	w.fail["a"] = false
	m.answer = `{"route": "plan", "plan": {"tasks": [{"id": "a", "agent": "wc", "input": "Search the web for two words"}]}}`
	out, err := run("")
	require.NoError(t, err)
	require.Equal(t, durable.StatusCompleted, out.Status)
	asked = m.calls()
	_, err = run("warning")
	assert.Equal(t, asked, m.calls(), "the cached plan was taken")
	var refused *executor.RefusedError
	assert.ErrorAs(t, err, &refused, "and refused by a stricter gate")
}

// WithMemory shows the planner how the journal's earlier runs fared.
func TestMemory(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	m := &prompts{answer: countPlan}
	start := func(opts ...durable.Option) *durable.Outcome {
		spec := durable.Spec{Mission: "count two words", Replan: durable.ReplanDefaults()}
		out, err := durable.Start(context.Background(), s, spec, append([]durable.Option{durable.WithAgent("wc", w.agent()),
			durable.WithLLM(func(string, bool) (llm.Client, error) { return m, nil })}, opts...)...)
		require.NoError(t, err)
		return out
	}
	start()
	out := start(durable.WithMemory(10))
	require.Len(t, m.got, 2)

	// The journal keeps what the planner was shown: a replay asks the
	// journaled exchange the same, whatever ran since.
	start()
	run, err := durable.Load(context.Background(), s, out.RunID)
	require.NoError(t, err)
	require.NotNil(t, run.Spec.Memory)
	assert.Equal(t, 1, run.Spec.Memory.Runs)
	rep, err := durable.Replay(context.Background(), s, out.RunID, durable.WithAgent("wc", w.agent()))
	require.NoError(t, err)
	assert.True(t, rep.Identical, "a run planned with memory replays: %q", rep.Differences)
	require.Len(t, m.got, 3, "the replay asks no model")
	assert.NotContains(t, m.got[0], `<data source="memory">`)
	assert.Contains(t, m.got[1], `<data source="memory">`)
	assert.Contains(t, m.got[1], "Over the last 1 runs:\n- agent wc: 1 of 1 tasks done (100%)")
	assert.False(t, strings.Contains(m.got[1], "tool "), "no tools ran")
}
