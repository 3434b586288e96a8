package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "dagent.db"))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func mustPlan(t *testing.T, src string) *plan.Plan {
	t.Helper()
	p, err := plan.Parse([]byte(src))
	require.NoError(t, err)
	return p
}

// workers counts the calls of each task; a task's worker may be told to
// fail, or to stop the run (a crash) on its first call.
type workers struct {
	mu    sync.Mutex
	calls map[string]int
	keys  []string
	fail  map[string]bool
	crash map[string]context.CancelFunc
}

func newWorkers() *workers {
	return &workers{calls: map[string]int{}, fail: map[string]bool{}, crash: map[string]context.CancelFunc{}}
}

func (w *workers) agent() agent.Agent {
	return agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		w.mu.Lock()
		w.calls[req.TaskID]++
		w.keys = append(w.keys, req.IdempotencyKey)
		cancel := w.crash[req.TaskID]
		delete(w.crash, req.TaskID)
		fail := w.fail[req.TaskID]
		w.mu.Unlock()
		if cancel != nil {
			cancel()
			<-ctx.Done()
			return agent.Result{}, ctx.Err()
		}
		if fail {
			return agent.Result{}, errors.New("disk full")
		}
		return agent.Result{Output: map[string]any{"words": len(strings.Fields(req.Input)), "task": req.TaskID}}, nil
	})
}

func (w *workers) count(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[id]
}

func (w *workers) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, c := range w.calls {
		n += c
	}
	return n
}

// planner is a scripted LLM: the planner's requests get the next answer.
type planner struct {
	mu      sync.Mutex
	answers []string
	asked   int
}

func (m *planner) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if req.Schema == nil || req.Schema.Name != metaplanner.SchemaName || m.asked >= len(m.answers) {
		return llm.Response{}, errors.New("unexpected request")
	}
	m.asked++
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: m.answers[m.asked-1]}, FinishReason: "stop", Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5}}, nil
}

func (m *planner) client() durable.ClientFunc {
	return func(string, bool) (llm.Client, error) { return m, nil }
}

const chain = `{"mission": "count the words", "tasks": [
	{"id": "a", "agent": "wc", "input": "one"},
	{"id": "b", "agent": "wc", "input": "one two", "depends_on": ["a"]},
	{"id": "c", "agent": "wc", "input": "one two three", "depends_on": ["b"]}]}`

func TestStartJournalsTheRun(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	spec := durable.Spec{Plan: mustPlan(t, chain), Runner: durable.RunnerSpec{Concurrency: 2}}
	out, err := durable.Start(context.Background(), s, spec, durable.WithAgent("wc", w.agent()), durable.WithRunID("r1"))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	assert.Equal(t, "r1", out.RunID)
	assert.Nil(t, out.Execution, "a run that does not replan has no execution")

	r, err := durable.Load(context.Background(), s, "r")
	require.NoError(t, err, "a prefix names the one run")
	assert.Equal(t, durable.StatusCompleted, r.Status)
	assert.Equal(t, 2, r.Spec.Runner.Concurrency)
	require.Len(t, r.Plans, 1, "the first plan is journaled as version 0")
	assert.Equal(t, []string{"a", "b", "c"}, r.Order)
	for _, id := range r.Order {
		assert.True(t, r.Tasks[id].Committed)
		assert.Equal(t, "done", r.Tasks[id].Status)
	}
	assert.Equal(t, []string{"r1/a/1", "r1/b/1", "r1/c/1"}, w.keys)
}

// A start that runs nothing leaves no run in the journal.
func TestStartLeavesNoRunBehind(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		spec durable.Spec
		is   error
	}{
		{"invalid plan", durable.Spec{Plan: mustPlan(t, `{"tasks": [{"id": "a", "agent": "grep", "input": "x"}]}`)}, plan.ErrInvalid},
		{"no LLM", durable.Spec{Plan: mustPlan(t, `{"tasks": [{"id": "a", "input": "say hi"}]}`)}, durable.ErrNoLLM},
		{"no LLM to plan", durable.Spec{Mission: "say hi", Replan: durable.ReplanDefaults()}, durable.ErrNoLLM},
		{"bad spec", durable.Spec{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t)
			_, err := durable.Start(ctx, s, tt.spec, durable.WithAgent("wc", newWorkers().agent()))
			require.Error(t, err)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			runs, err := s.List(ctx)
			require.NoError(t, err)
			assert.Empty(t, runs)
		})
	}
}

// A run stopped in the middle resumes where it stopped: the done task
// never runs again, the one in flight runs again under its idempotency
// key, and the rest run.
func TestResumeRunsWhatIsLeft(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.crash["b"] = cancel
	spec := durable.Spec{Plan: mustPlan(t, chain)}
	out, err := durable.Start(ctx, s, spec, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, durable.StatusCancelled, out.Status)

	r, err := durable.Load(context.Background(), s, "r")
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCancelled, r.Status)

	out, err = durable.Resume(context.Background(), s, "r", durable.WithAgent("wc", w.agent()))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	assert.Equal(t, 1, w.count("a"), "a done task never runs again")
	assert.Equal(t, 2, w.count("b"), "the task in flight runs again")
	assert.Equal(t, 1, w.count("c"))
	assert.Equal(t, []string{"r/a/1", "r/b/1", "r/b/1", "r/c/1"}, w.keys, "the same idempotency keys")

	again, err := durable.Resume(context.Background(), s, "r")
	require.NoError(t, err, "a completed run needs nothing: not even its workers")
	assert.Equal(t, durable.StatusCompleted, again.Status)
	assert.Equal(t, map[string]any{"words": jsonNumber("3"), "task": "c"}, again.Result.Tasks["c"].Output)
}

func TestResumeReviews(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	p := mustPlan(t, `{"tasks": [
		{"id": "draft", "agent": "wc", "input": "a draft"},
		{"id": "check", "type": "human_review", "input": "Is the draft right?", "depends_on": ["draft"]},
		{"id": "send", "agent": "wc", "input": "send it", "depends_on": ["check"]}]}`)
	out, err := durable.Start(context.Background(), s, durable.Spec{Plan: p}, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"))
	require.NoError(t, err)
	require.Equal(t, durable.StatusWaiting, out.Status)

	_, err = durable.Resume(context.Background(), s, "r", durable.WithReviews(map[string]runner.Decision{"draft": {Approved: true}}))
	require.ErrorIs(t, err, durable.ErrNotResumable, "draft is no review")

	out, err = durable.Resume(context.Background(), s, "r", durable.WithAgent("wc", w.agent()),
		durable.WithReviews(map[string]runner.Decision{"check": {Approved: true}}))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	assert.Equal(t, 1, w.count("draft"))
	assert.Equal(t, 1, w.count("send"))
}

const (
	replanPlan = `{"mission": "count the words", "tasks": [
		{"id": "fetch", "agent": "wc", "input": "one two"},
		{"id": "count", "agent": "wc", "input": "one two three", "depends_on": ["fetch"], "on_failure": "replan"}]}`
	repairAnswer = `{"route": "plan", "plan": {"mission": "count the words", "tasks": [
		{"id": "fetch", "agent": "wc", "input": "one two"},
		{"id": "count2", "agent": "wc", "input": "one two three", "depends_on": ["fetch"]},
		{"id": "report", "agent": "wc", "input": "report", "depends_on": ["count2"]}]}}`
)

// A run that replans and stops in the middle of its repair resumes from the
// repair plan, with its history: no finished task runs again.
func TestResumeReplanningRun(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	w.fail["count"] = true
	m := &planner{answers: []string{repairAnswer}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.crash["count2"] = cancel
	spec := durable.Spec{Plan: mustPlan(t, replanPlan), Replan: durable.ReplanDefaults()}
	var kinds []string
	var mu sync.Mutex
	o := runner.ObserverFunc(func(e runner.Event) {
		if e.Kind == executor.EventRepairAdopted || e.Kind == runner.EventRunStarted {
			mu.Lock()
			kinds = append(kinds, fmt.Sprintf("%s %s v%d", e.Kind, e.RunID, e.Version))
			mu.Unlock()
		}
	})
	out, err := durable.Start(ctx, s, spec, durable.WithAgent("wc", w.agent()), durable.WithLLM(m.client()),
		durable.WithRunID("x"), durable.WithObserver(o))
	require.Error(t, err, "%v", out.Result.Err)
	assert.Equal(t, durable.StatusCancelled, out.Status)
	assert.Equal(t, []string{"run_started x v0", "repair_adopted x v1", "run_started x.1 v0"}, kinds)

	r, err := durable.Load(context.Background(), s, "x")
	require.NoError(t, err)
	require.Len(t, r.Plans, 2, "the repair was journaled before it ran")
	require.Len(t, r.History, 1)
	assert.Equal(t, "count", r.History[0].TaskID)
	assert.Equal(t, []string{"fetch", "count2", "report", "count"}, r.Order, "the current plan first, then the tasks of earlier plans")

	out, err = durable.Resume(context.Background(), s, "x", durable.WithAgent("wc", w.agent()), durable.WithLLM(m.client()))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status, "%v", out.Result.Err)
	require.NotNil(t, out.Execution)
	assert.Equal(t, 1, out.Execution.ReplanCount, "the history counts")
	assert.Equal(t, 1, w.count("fetch"), "finished before the repair: never again")
	assert.Equal(t, 1, w.count("count"), "the failed task of version 0 is not run again")
	assert.Equal(t, 2, w.count("count2"), "in flight when the run stopped")
	assert.Equal(t, 1, w.count("report"))
	assert.Equal(t, 1, m.asked, "no second repair")
	assert.Contains(t, w.keys, "x.1/count2/1")
	assert.Equal(t, "x.1/count2/1", w.keys[len(w.keys)-2], "the repair's run goes on under its id")

	rec, err := s.Load(context.Background(), "x")
	require.NoError(t, err)
	versions := map[string]int{}
	for _, c := range rec.Commits {
		versions[c.ID] = c.Version
	}
	assert.Equal(t, map[string]int{"fetch": 0, "count": 0, "count2": 1, "report": 1}, versions)
}

// A halted execution ends failed, with the halt, and the journal says so.
func TestHaltedRunFails(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	w.fail["count"] = true
	m := &planner{}
	spec := durable.Spec{Plan: mustPlan(t, replanPlan), Replan: &durable.ReplanSpec{}}
	out, err := durable.Start(context.Background(), s, spec, durable.WithAgent("wc", w.agent()), durable.WithLLM(m.client()), durable.WithRunID("h"))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusFailed, out.Status)
	assert.ErrorIs(t, out.Result.Err, executor.ErrHalted)
	r, err := durable.Load(context.Background(), s, "h")
	require.NoError(t, err)
	assert.Equal(t, durable.StatusFailed, r.Status)
	assert.Contains(t, r.Error, "replanning halted (max_replans)")
}

// Replay runs the orchestration again without side effects: no worker
// runs, unless asked for.
func TestReplay(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	w.fail["count"] = true
	m := &planner{answers: []string{repairAnswer}}
	spec := durable.Spec{Plan: mustPlan(t, replanPlan), Replan: durable.ReplanDefaults()}
	out, err := durable.Start(context.Background(), s, spec, durable.WithAgent("wc", w.agent()), durable.WithLLM(m.client()), durable.WithRunID("p"))
	require.NoError(t, err)
	require.Equal(t, durable.StatusCompleted, out.Status, "%v", out.Result.Err)
	ran := w.total()

	rep, err := durable.Replay(context.Background(), s, "p", durable.WithAgent("wc", w.agent()))
	require.NoError(t, err)
	assert.True(t, rep.Identical, "%q", rep.Differences)
	assert.Equal(t, durable.StatusCompleted, rep.Status)
	assert.Equal(t, 1, rep.Exchanges)
	assert.Zero(t, rep.WorkersRerun)
	assert.Equal(t, ran, w.total(), "no worker ran")
	assert.Equal(t, 1, m.asked, "the planner was answered from the journal")
	assert.Equal(t, 1, rep.Outcome.Execution.ReplanCount, "the repair was replayed")

	rep, err = durable.Replay(context.Background(), s, "p", durable.WithAgent("wc", w.agent()), durable.WithRerunWorkers())
	require.NoError(t, err)
	assert.True(t, rep.Identical, "%q", rep.Differences)
	assert.Equal(t, 4, rep.WorkersRerun, "fetch, count, count2, report")
	assert.Equal(t, ran+4, w.total())
}

// A replay that takes another path than the run says where.
func TestReplayDiverges(t *testing.T) {
	s := openStore(t)
	reg := registry.New()
	w := newWorkers()
	require.NoError(t, reg.Register("wc", registry.Worker{Agent: w.agent(), Outputs: []string{"words", "task"}}))
	catalog := func(reg *registry.Registry) durable.Option {
		return durable.WithCatalog(func(_ context.Context, name string) (*registry.Registry, string, error) {
			assert.Equal(t, "words.yaml", name)
			return reg, "", nil
		})
	}
	spec := durable.Spec{Plan: mustPlan(t, chain), Catalog: "words.yaml"}
	_, err := durable.Start(context.Background(), s, spec, catalog(reg), durable.WithRunID("d"))
	require.NoError(t, err)

	// The catalog changed: the worker now has a precondition that fails.
	strict := registry.New()
	require.NoError(t, strict.Register("wc", registry.Worker{Agent: w.agent(), Outputs: []string{"words", "task"},
		Preconditions: []string{`(if (= data/input "one two") "two words are not enough" true)`}}))
	rep, err := durable.Replay(context.Background(), s, "d", catalog(strict))
	require.NoError(t, err)
	assert.False(t, rep.Identical)
	assert.Equal(t, durable.StatusFailed, rep.Status)
	assert.Contains(t, rep.Differences, "the run failed; it was completed")
	assert.Contains(t, rep.Differences, "task b is failed; it was done")
	assert.Equal(t, 3, w.total(), "the replay ran no worker")
}

func jsonNumber(s string) any { return json.Number(s) }

// A run from a mission journals the plan the planner wrote as its first
// version, and tells its observers.
func TestStartPlansTheMission(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	m := &planner{answers: []string{`{"route": "plan", "plan": {"tasks": [{"id": "a", "agent": "wc", "input": "one two"}]}}`}}
	var planned []runner.Event
	o := runner.ObserverFunc(func(e runner.Event) {
		if e.Kind == durable.EventPlanned {
			planned = append(planned, e)
		}
	})
	spec := durable.Spec{Mission: "count two words", Replan: durable.ReplanDefaults()}
	out, err := durable.Start(context.Background(), s, spec, durable.WithAgent("wc", w.agent()), durable.WithLLM(m.client()),
		durable.WithObserver(o), durable.WithRunID("m"))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	require.NotNil(t, out.Planned)
	require.Len(t, planned, 1)
	assert.Equal(t, 1, planned[0].Tasks)
	assert.Equal(t, 1, planned[0].Attempt)

	r, err := durable.Load(context.Background(), s, "m")
	require.NoError(t, err)
	assert.Nil(t, r.Spec.Plan, "the spec is what the run started from")
	require.Len(t, r.Plans, 1)
	assert.Equal(t, "a", r.Plans[0].Tasks[0].ID)
	assert.Equal(t, "count two words", r.Spec.Mission)
}

// A start under the id of a run of the same plan goes on with it; under
// the id of another plan's run, it is refused.
func TestStartUnderAJournaledID(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	p := mustPlan(t, `{"tasks": [
		{"id": "draft", "agent": "wc", "input": "a draft"},
		{"id": "check", "type": "human_review", "input": "Is the draft right?", "depends_on": ["draft"]}]}`)
	_, err := durable.Start(context.Background(), s, durable.Spec{Plan: p}, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"))
	require.NoError(t, err)

	out, err := durable.Start(context.Background(), s, durable.Spec{Plan: p}, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"),
		durable.WithInitialResults(map[string]any{"draft": "a draft"}),
		durable.WithReviews(map[string]runner.Decision{"check": {Approved: true}}))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	assert.Equal(t, 1, w.count("draft"))

	_, err = durable.Start(context.Background(), s, durable.Spec{Plan: mustPlan(t, chain)}, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"))
	assert.ErrorIs(t, err, durable.ErrRunExists)
}

// toolModel is an LLM agent's model that calls the lookup tool once, then
// answers with what the tool said.
type toolModel struct{}

func (toolModel) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == llm.RoleTool {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "found: " + last.Content}, FinishReason: "stop"}, nil
	}
	call := llm.ToolCall{ID: "call-1", Name: "lookup", Arguments: `{"q": "capital of France"}`}
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}}, FinishReason: "tool_calls"}, nil
}

// A replay answers an LLM agent's tool calls from the journaled exchanges:
// the tool does not run again.
func TestReplayAnswersTools(t *testing.T) {
	s := openStore(t)
	reg := registry.New()
	calls := 0
	require.NoError(t, reg.RegisterTool("lookup", registry.Tool{Description: "Looks a fact up",
		Run: func(context.Context, json.RawMessage) (string, error) { calls++; return "Paris", nil }}))
	catalog := durable.WithCatalog(func(context.Context, string) (*registry.Registry, string, error) { return reg, "", nil })
	model := durable.WithLLM(func(string, bool) (llm.Client, error) { return toolModel{}, nil })
	p := mustPlan(t, `{"agents": {"researcher": {"prompt": "You look facts up.", "tools": ["lookup"]}},
		"tasks": [{"id": "ask", "agent": "researcher", "input": "What is the capital of France?"}]}`)
	out, err := durable.Start(context.Background(), s, durable.Spec{Plan: p, Catalog: "facts"}, catalog, model, durable.WithRunID("t"))
	require.NoError(t, err)
	require.Equal(t, durable.StatusCompleted, out.Status, "%v", out.Result.Err)
	assert.Contains(t, out.Result.Tasks["ask"].Output, "Paris")
	require.Equal(t, 1, calls)

	rep, err := durable.Replay(context.Background(), s, "t", catalog)
	require.NoError(t, err)
	assert.True(t, rep.Identical, "%q", rep.Differences)
	assert.Equal(t, 2, rep.Exchanges)
	assert.Equal(t, 1, calls, "the tool was answered from the journal")

	rep, err = durable.Replay(context.Background(), s, "t", catalog, durable.WithRerunWorkers())
	require.NoError(t, err)
	assert.True(t, rep.Identical, "%q", rep.Differences)
	assert.Equal(t, 1, rep.WorkersRerun)
	assert.Equal(t, 2, calls)
}

// A start under the id of a journaled run of the same plan continues it
// as a resume does: its done tasks keep their committed outputs and never
// run again.
func TestStartContinuesAsResumeDoes(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	w := newWorkers()
	w.fail["b"] = true
	spec := durable.Spec{Plan: mustPlan(t, chain)}
	out, err := durable.Start(ctx, s, spec, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"))
	require.NoError(t, err)
	require.Equal(t, durable.StatusFailed, out.Status)
	before, err := s.Load(ctx, "r")
	require.NoError(t, err)
	require.Equal(t, "done", before.Tasks["a"].Status)

	w.fail["b"] = false
	out, err = durable.Start(ctx, s, spec, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	assert.Equal(t, 1, w.count("a"), "a done task never runs again")
	assert.Equal(t, 2, w.count("b"))
	assert.Equal(t, 1, w.count("c"))
	after, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, before.Tasks["a"], after.Tasks["a"], "the committed output is kept as it was")

	calls := w.total()
	out, err = durable.Start(ctx, s, spec, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	assert.Equal(t, calls, w.total(), "a completed run runs nothing")
	again, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, after.Tasks, again.Tasks)
}
