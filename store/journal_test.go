package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// calls counts an agent's runs by task.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[id]++
}

func (c *calls) get(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[id]
}

// timeline records the events an observer sees.
type timeline struct {
	mu     sync.Mutex
	events []string
}

func (tl *timeline) Observe(e runner.Event) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.events = append(tl.events, string(e.Kind)+":"+e.TaskID)
}

func kinds(events []store.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Kind+":"+e.TaskID)
	}
	return out
}

// reviewPlan: a → b; c fails and is skipped; d after b and c; r reviews d.
func reviewPlan() *plan.Plan {
	mk := func(id string, deps ...string) plan.Task {
		t := plan.NewTask(id, "do "+id)
		t.Agent = "go"
		t.DependsOn = deps
		return t
	}
	c := mk("c")
	c.OnFailure = plan.PolicySkip
	c.Critical = false
	r := plan.NewTask("r", "Is d right?")
	r.Type = plan.TypeHumanReview
	r.DependsOn = []string{"d"}
	return &plan.Plan{Tasks: []plan.Task{mk("a"), mk("b", "a"), c, mk("d", "b", "c"), r}}
}

func createRun(t *testing.T, s store.Store, id string, p *plan.Plan) {
	t.Helper()
	canon, err := p.Canonical()
	require.NoError(t, err)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: id, Plan: canon, Mission: "test"}))
}

// A real run journaled: every final state is in the database, with the
// event timeline and the status; Resume gives back the outputs, and a
// resumed run finishes without running a done task again.
func TestJournalRun(t *testing.T) {
	checkIntegrity(t)
	s := open(t)
	p := reviewPlan()
	const id = "run-1"
	createRun(t, s, id, p)
	var n calls
	var seenByD *store.Record
	worker := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		n.add(req.TaskID)
		switch req.TaskID {
		case "c":
			return agent.Result{}, errors.New("c is broken")
		case "d":
			// b is durable before its dependents start.
			rec, err := s.Load(ctx, id)
			if err != nil {
				return agent.Result{}, err
			}
			seenByD = rec
		}
		return agent.Result{Output: map[string]any{"task": req.TaskID, "n": 1.5, "list": []any{"x", 2}}, Usage: agent.Usage{PromptTokens: 3, CompletionTokens: 2}}, nil
	})
	j := store.NewJournal(s, id)
	tl := &timeline{}
	rn := runner.New(runner.WithAgent("go", worker), runner.WithJournal(j), runner.WithObserver(j), runner.WithObserver(tl),
		runner.WithBackoff(runner.Backoff{}))
	res, err := rn.RunPlan(ctx, p, runner.WithRunID(id))
	require.NoError(t, err)
	require.NoError(t, j.Err())
	require.Equal(t, runner.StatusWaiting, res.Status)

	require.NotNil(t, seenByD)
	assert.Equal(t, "done", seenByD.Tasks["b"].Status, "b was committed before d started")
	assert.Equal(t, "skipped", seenByD.Tasks["c"].Status, "c was committed before d started")

	rec, err := s.Load(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "waiting", rec.Status)
	require.Len(t, rec.Tasks, 5)
	for tid, tr := range res.Tasks {
		got := rec.Tasks[tid]
		assert.Equal(t, string(tr.Status), got.Status, tid)
		assert.Equal(t, tr.Attempts, got.Attempts, tid)
		if tr.Status == runner.TaskDone {
			want, err := json.Marshal(tr.Output)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got.Output), tid)
			assert.Equal(t, store.Usage{Prompt: 3, Completion: 2}, got.Tokens, tid)
			assert.False(t, got.Started.IsZero(), tid)
		}
	}
	assert.Contains(t, rec.Tasks["c"].Error, "c is broken")
	assert.Equal(t, tl.events, kinds(rec.Events), "the timeline is the runner's, in order")
	assert.Equal(t, "run_finished", rec.Events[len(rec.Events)-1].Kind)
	var fin store.EventData
	require.NoError(t, json.Unmarshal(rec.Events[len(rec.Events)-1].Data, &fin))
	assert.Equal(t, "waiting", fin.Status)
	assert.Equal(t, store.Usage{Prompt: 9, Completion: 6}, fin.Usage)

	outputs, waiting, err := store.Resume(rec)
	require.NoError(t, err)
	assert.Equal(t, []string{"r"}, waiting)
	want, err := json.Marshal(res.Outputs())
	require.NoError(t, err)
	got, err := json.Marshal(outputs)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got), "Resume gives back the outputs as the run had them")
	assert.Equal(t, json.Number("1.5"), outputs["a"].(map[string]any)["n"], "numbers come back as json.Number")

	// Resume with the review approved, journaling into the same run.
	j2 := store.NewJournal(s, id)
	tl2 := &timeline{}
	rn2 := runner.New(runner.WithAgent("go", worker), runner.WithJournal(j2), runner.WithObserver(j2), runner.WithObserver(tl2),
		runner.WithBackoff(runner.Backoff{}))
	res2, err := rn2.RunPlan(ctx, p, runner.WithRunID(id),
		runner.WithInitialResults(outputs), runner.WithReviews(map[string]runner.Decision{"r": runner.Approve()}))
	require.NoError(t, err)
	require.NoError(t, j2.Err())
	assert.Equal(t, runner.StatusCompleted, res2.Status)
	for _, tid := range []string{"a", "b", "d"} {
		assert.Equal(t, 1, n.get(tid), "done task %s is never run again", tid)
	}
	rec, err = s.Load(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "completed", rec.Status)
	assert.Equal(t, "done", rec.Tasks["r"].Status)
	assert.JSONEq(t, `"approve"`, string(rec.Tasks["r"].Output))
	assert.Equal(t, append(append([]string{}, tl.events...), tl2.events...), kinds(rec.Events), "the resumed run's events follow the first run's")
	for i, e := range rec.Events {
		assert.Equal(t, i+1, e.Seq)
	}
}

// A failing run: the error and status reach the database.
func TestJournalFailedRun(t *testing.T) {
	s := open(t)
	p := &plan.Plan{Tasks: []plan.Task{plan.NewTask("a", "x"), plan.NewTask("b", "y")}}
	p.Tasks[0].Agent, p.Tasks[1].Agent = "go", "go"
	p.Tasks[1].DependsOn = []string{"a"}
	p.Tasks[0].OnFailure = plan.PolicyStop
	createRun(t, s, "r", p)
	j := store.NewJournal(s, "r")
	rn := runner.New(runner.WithAgent("go", agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, errors.New("no luck ✗")
	})), runner.WithJournal(j), runner.WithObserver(j))
	res, err := rn.RunPlan(ctx, p, runner.WithRunID("r"))
	require.NoError(t, err)
	require.NoError(t, j.Err())
	require.Equal(t, runner.StatusFailed, res.Status)
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, "failed", rec.Status)
	assert.Contains(t, rec.Error, "no luck ✗")
	assert.Equal(t, "failed", rec.Tasks["a"].Status)
	assert.NotContains(t, rec.Tasks, "b", "a task that never ran has no final state")
	outputs, waiting, err := store.Resume(rec)
	require.NoError(t, err)
	assert.Empty(t, outputs)
	assert.Empty(t, waiting)
}

// failingStore fails the writes it is told to.
type failingStore struct {
	store.Store
	failEvents, failCommits, failExchanges, failPlans bool
}

func (f *failingStore) CommitPlan(ctx context.Context, runID string, v store.PlanVersion) error {
	if f.failPlans {
		return errors.New("disk full")
	}
	return f.Store.CommitPlan(ctx, runID, v)
}

func (f *failingStore) AppendEvents(ctx context.Context, runID string, events []store.Event) error {
	if f.failEvents {
		return errors.New("disk full")
	}
	return f.Store.AppendEvents(ctx, runID, events)
}

func (f *failingStore) CommitTask(ctx context.Context, runID string, t store.Task) error {
	if f.failCommits {
		return errors.New("disk full")
	}
	return f.Store.CommitTask(ctx, runID, t)
}

func (f *failingStore) CommitBatch(ctx context.Context, runID string, b store.Batch) error {
	if f.failEvents && len(b.Events) > 0 || f.failCommits && len(b.Tasks) > 0 {
		return errors.New("disk full")
	}
	return f.Store.CommitBatch(ctx, runID, b)
}

func (f *failingStore) RecordExchange(ctx context.Context, runID, key string, x json.RawMessage) error {
	if f.failExchanges {
		return errors.New("disk full")
	}
	return f.Store.RecordExchange(ctx, runID, key, x)
}

func onePlan() *plan.Plan {
	t := plan.NewTask("a", "x")
	t.Agent = "go"
	return &plan.Plan{Tasks: []plan.Task{t}}
}

var okAgent = agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
	return agent.Result{Output: "ok " + req.TaskID}, nil
})

// Events that cannot be written show in Err; the run itself goes on.
func TestJournalErrOnEvents(t *testing.T) {
	s := open(t)
	createRun(t, s, "r", onePlan())
	j := store.NewJournal(&failingStore{Store: s, failEvents: true}, "r")
	res, err := runner.New(runner.WithAgent("go", okAgent), runner.WithJournal(j), runner.WithObserver(j)).RunPlan(ctx, onePlan())
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	require.Error(t, j.Err())
	assert.Contains(t, j.Err().Error(), "disk full")
}

// A commit that fails halts the run (the runner's ErrJournal).
func TestJournalCommitFailureHalts(t *testing.T) {
	s := open(t)
	createRun(t, s, "r", onePlan())
	j := store.NewJournal(&failingStore{Store: s, failCommits: true}, "r")
	res, err := runner.New(runner.WithAgent("go", okAgent), runner.WithJournal(j)).RunPlan(ctx, onePlan())
	require.NoError(t, err)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.ErrorIs(t, res.Tasks["a"].Err, runner.ErrJournal)
}

func TestJournalCommitRefusesWhatIsNotJSON(t *testing.T) {
	s := open(t)
	createRun(t, s, "r", onePlan())
	j := store.NewJournal(s, "r")
	err := j.Commit(ctx, runner.Commit{TaskID: "a", Status: runner.TaskDone, Output: make(chan int)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"a"`)
	require.NoError(t, j.Commit(ctx, runner.Commit{TaskID: "a", Status: runner.TaskDone, Output: map[string]any{"html": "<b>&</b>"}}))
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, `{"html":"<b>&</b>"}`, string(rec.Tasks["a"].Output), "no HTML escaping")
}

func TestJournalUnknownRun(t *testing.T) {
	s := open(t)
	j := store.NewJournal(s, "nope")
	assert.ErrorIs(t, j.Commit(ctx, runner.Commit{TaskID: "a", Status: runner.TaskDone}), store.ErrNotFound)
	j.Observe(runner.Event{Kind: runner.EventRunFinished, Status: runner.StatusCompleted})
	assert.ErrorIs(t, j.Err(), store.ErrNotFound)
}

// A journal commits tasks as version 0's until a plan version is committed
// through it, then as that version's; a plan version it fails to commit
// does not become its version.
func TestJournalCommitPlan(t *testing.T) {
	s := open(t)
	first := onePlan()
	// Created without its plan, which would be its version 0.
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r", Mission: "test"}))
	fs := &failingStore{Store: s}
	j := store.NewJournal(fs, "r")
	run := func(p *plan.Plan) {
		t.Helper()
		res, err := runner.New(runner.WithAgent("go", okAgent), runner.WithJournal(j), runner.WithObserver(j)).RunPlan(ctx, p)
		require.NoError(t, err)
		require.Equal(t, runner.StatusCompleted, res.Status)
	}
	run(first)

	repair := &plan.Plan{Tasks: append(first.Tasks, plan.NewTask("b", "y"))}
	repair.Tasks[1].Agent = "go"
	trial := &executor.Trial{Attempt: 1, TaskID: "a", Class: "agent_error", Diagnosis: "add b"}
	second := executor.PlanCommit{Version: 1, Plan: repair, Trial: trial}
	err := j.CommitPlan(ctx, second)
	require.Error(t, err, "no version 0 yet")
	assert.Contains(t, err.Error(), "the first is 0")
	require.NoError(t, j.CommitPlan(ctx, executor.PlanCommit{Plan: first}))
	fs.failPlans = true
	require.Error(t, j.CommitPlan(ctx, second))
	fs.failPlans = false
	run(first) // still version 0's
	require.NoError(t, j.CommitPlan(ctx, second))
	run(repair)

	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	require.Len(t, rec.Plans, 2)
	assert.Equal(t, 1, rec.Plans[1].Version)
	assert.JSONEq(t, `{"attempt":1,"task_id":"a","class":"agent_error","diagnosis":"add b","output":"","new_task_count":0}`, string(rec.Plans[1].Trial))
	assert.Nil(t, rec.Plans[0].Trial)
	var got []string
	for _, c := range rec.Commits {
		got = append(got, fmt.Sprintf("%s@%d", c.ID, c.Version))
	}
	assert.Equal(t, []string{"a@0", "a@1", "b@1"}, got)
	assert.Equal(t, 1, rec.Tasks["a"].Version)
}

// fakeLLM answers by the last user message; "again" answers differently
// each time; "bad" is a 400; "flaky" a 503 (not recorded); "empty" an
// empty response.
type fakeLLM struct {
	mu    sync.Mutex
	again int
}

func (f *fakeLLM) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	msg := req.Messages[len(req.Messages)-1].Content
	switch msg {
	case "bad":
		return llm.Response{}, &llm.APIError{Status: 400, Message: "bad request", Type: "invalid_request_error"}
	case "flaky":
		return llm.Response{}, &llm.APIError{Status: 503, Message: "overloaded"}
	case "empty":
		return llm.Response{FinishReason: "stop"}, fmt.Errorf("%w: no choices", llm.ErrEmptyResponse)
	case "again":
		f.mu.Lock()
		f.again++
		n := f.again
		f.mu.Unlock()
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("answer %d", n)}}, nil
	}
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "echo: " + msg}, Usage: llm.Usage{PromptTokens: 5, CompletionTokens: 3}, Model: "fake"}, nil
}

func ask(msg string) llm.Request {
	return llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: msg}}}
}

// Every exchange is stored under its key and replays in order; a request
// never recorded fails loudly.
func TestRecordLLMAndReplay(t *testing.T) {
	s := open(t)
	createRun(t, s, "r", onePlan())
	j := store.NewJournal(s, "r")
	c := j.RecordLLM(&fakeLLM{})
	for _, m := range []string{"hello", "again", "again", "bad", "flaky", "empty", "again", "héllo <wörld> 🌍"} {
		_, _ = c.Complete(ctx, ask(m))
	}
	require.NoError(t, j.Err())
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	require.Len(t, rec.Exchanges, 7, "the 503 is not recorded")
	key, err := llm.RequestKey(ask("hello"))
	require.NoError(t, err)
	assert.Equal(t, key, rec.Exchanges[0].Key)
	var line map[string]any
	require.NoError(t, json.Unmarshal(rec.Exchanges[0].Exchange, &line))
	assert.Equal(t, key, line["key"])
	assert.Contains(t, line, "request")
	assert.Contains(t, line, "response")

	rp, err := store.Replayer(rec)
	require.NoError(t, err)
	resp, err := rp.Complete(ctx, ask("hello"))
	require.NoError(t, err)
	assert.Equal(t, "echo: hello", resp.Message.Content)
	assert.Equal(t, llm.Usage{PromptTokens: 5, CompletionTokens: 3}, resp.Usage)
	for _, want := range []string{"answer 1", "answer 2", "answer 3", "answer 3"} {
		resp, err := rp.Complete(ctx, ask("again"))
		require.NoError(t, err)
		assert.Equal(t, want, resp.Message.Content, "repeated requests replay in recorded order, then the last")
	}
	_, err = rp.Complete(ctx, ask("bad"))
	var ae *llm.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 400, ae.Status)
	_, err = rp.Complete(ctx, ask("empty"))
	assert.ErrorIs(t, err, llm.ErrEmptyResponse)
	resp, err = rp.Complete(ctx, ask("héllo <wörld> 🌍"))
	require.NoError(t, err)
	assert.Equal(t, "echo: héllo <wörld> 🌍", resp.Message.Content)
	_, err = rp.Complete(ctx, ask("flaky"))
	assert.ErrorIs(t, err, llm.ErrNotRecorded)
	_, err = rp.Complete(ctx, ask("never asked"))
	require.ErrorIs(t, err, llm.ErrNotRecorded)
	assert.Contains(t, err.Error(), "never asked")
}

func TestRecordLLMStoreFailure(t *testing.T) {
	s := open(t)
	createRun(t, s, "r", onePlan())
	j := store.NewJournal(&failingStore{Store: s, failExchanges: true}, "r")
	resp, err := j.RecordLLM(&fakeLLM{}).Complete(ctx, ask("hello"))
	require.Error(t, err, "an exchange that cannot be kept is an error")
	assert.Equal(t, "echo: hello", resp.Message.Content, "with the answer")
	assert.Error(t, j.Err())
}

func TestReplayerRefusesABadExchange(t *testing.T) {
	rec := &store.Record{Run: store.Run{ID: "r"}, Exchanges: []store.Exchange{{Seq: 1, Key: "k", Exchange: json.RawMessage(`{"key":"k"}`)}}}
	_, err := store.Replayer(rec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"r"`)
}

func TestResumeOrderAndErrors(t *testing.T) {
	p, err := reviewPlan().Canonical()
	require.NoError(t, err)
	rec := &store.Record{Run: store.Run{ID: "r", Plan: p}, Tasks: map[string]store.Task{
		"r":     {ID: "r", Status: "waiting"},
		"b":     {ID: "b", Status: "waiting"},
		"zz":    {ID: "zz", Status: "waiting"}, // not in the plan: last
		"a":     {ID: "a", Status: "done", Output: json.RawMessage(`{"n":12345678901234567890,"f":1.5}`)},
		"c":     {ID: "c", Status: "skipped"},
		"d":     {ID: "d", Status: "failed", Output: json.RawMessage(`"last try"`)},
		"empty": {ID: "empty", Status: "done"},
	}}
	outputs, waiting, err := store.Resume(rec)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "r", "zz"}, waiting)
	assert.Equal(t, map[string]any{
		"a":     map[string]any{"n": json.Number("12345678901234567890"), "f": json.Number("1.5")},
		"empty": nil,
	}, outputs)

	// Waiting tasks come in the order of the latest plan version.
	rec.Plans = []store.PlanVersion{{Version: 0, Plan: p}, {Version: 1, Plan: json.RawMessage(`{"tasks":[{"id":"zz"},{"id":"r"}]}`)}}
	_, waiting, err = store.Resume(rec)
	require.NoError(t, err)
	assert.Equal(t, []string{"zz", "r", "b"}, waiting)

	rec.Tasks["a"] = store.Task{ID: "a", Status: "done", Output: json.RawMessage(`{broken`)}
	_, _, err = store.Resume(rec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"a"`)
}

// The journal writes events while the run goes on, not only at its end.
func TestJournalWritesEventsAsTheyCome(t *testing.T) {
	s := open(t)
	p := &plan.Plan{}
	for i := range 3 {
		task := plan.NewTask(fmt.Sprintf("t%d", i), "x")
		task.Agent = "go"
		if i > 0 {
			task.DependsOn = []string{fmt.Sprintf("t%d", i-1)}
		}
		p.Tasks = append(p.Tasks, task)
	}
	createRun(t, s, "r", p)
	var seen int
	slow := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		if req.TaskID == "t2" {
			require.Eventually(t, func() bool {
				rec, err := s.Load(ctx, "r")
				if err == nil {
					seen = len(rec.Events)
				}
				return seen >= 6
			}, 5*time.Second, 5*time.Millisecond)
		}
		return agent.Result{Output: 1}, nil
	})
	j := store.NewJournal(s, "r")
	_, err := runner.New(runner.WithAgent("go", slow), runner.WithJournal(j), runner.WithObserver(j)).RunPlan(ctx, p)
	require.NoError(t, err)
	require.NoError(t, j.Err())
	assert.GreaterOrEqual(t, seen, 6, "run and phase events and t0, t1's events were written while t2 ran")
}

// An event read back from the journal is the runner's event it was
// journaled from, the executor's fields and the run of a repair included.
func TestEventRunnerRoundTrip(t *testing.T) {
	s := open(t)
	createRun(t, s, "r", onePlan())
	j := store.NewJournal(s, "r")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sent := []runner.Event{
		{Kind: executor.EventRepairAdopted, Time: at, RunID: "r", TaskID: "a", Class: runner.ClassTimeout, Diagnosis: "slow", Version: 2, Tasks: 5, NewTasks: 2},
		{Kind: runner.EventTaskFailed, Time: at, RunID: "r.2", TaskID: "b", Attempt: 3, Err: fmt.Errorf("%w: not on brand", runner.ErrRejected), Usage: agent.Usage{PromptTokens: 4, CompletionTokens: 1}},
		{Kind: runner.EventTaskSkipped, Time: at, RunID: "r", TaskID: "c", Err: fmt.Errorf("%w: predicate returned false", runner.ErrConditionNotMet), Diagnosis: "predicate returned false"},
		{Kind: executor.EventHalted, Time: at, RunID: "r", Halt: executor.HaltSameFailure, Err: errors.New("replanning halted")},
		{Kind: runner.EventRunFinished, Time: at, RunID: "r.2", Status: runner.StatusFailed, Duration: time.Second},
	}
	for _, e := range sent {
		j.Observe(e)
	}
	require.NoError(t, j.Err())
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	require.Len(t, rec.Events, len(sent))
	assert.Contains(t, string(rec.Events[1].Data), `"class":"rejected"`, "a task's failure is journaled with its class")
	assert.Contains(t, string(rec.Events[2].Data), `"class":"condition_not_met"`, "a task's skip is journaled with its class")
	for i, e := range rec.Events {
		got, err := e.Runner("r")
		require.NoError(t, err)
		got.Time = got.Time.UTC()
		want := sent[i]
		// The error comes back as its text, and its class.
		if want.Err != nil {
			require.Error(t, got.Err)
			assert.Equal(t, want.Err.Error(), got.Err.Error())
			assert.Equal(t, runner.Classify(want.Err), runner.Classify(got.Err), "the class of %s's error", want.Kind)
			want.Err, got.Err = nil, nil
		}
		assert.Equal(t, want, got)
	}
	_, err = store.Event{Seq: 9, Data: []byte("{")}.Runner("r")
	assert.ErrorContains(t, err, "event 9")
}
