package durable_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/golden"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/store"
)

// docT0 is when the run of docJournal started.
var docT0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// docJournal journals, with fixed times, a run that repaired its plan and
// then stopped: its process died with a task in flight and a review
// waiting for a decision. Its first plan fetches, tries a flaky task and
// summarises; the repair drops the flaky task and adds the review.
func docJournal(t *testing.T) *store.SQLite {
	t.Helper()
	ctx := context.Background()
	s := openStore(t)
	first := mustPlan(t, `{"mission": "Summarise the <news> & more", "tasks": [
		{"id": "fetch", "agent": "http", "input": "get the news"},
		{"id": "flaky", "agent": "http", "input": "get more", "on_failure": "replan"},
		{"id": "summary", "agent": "writer", "input": "Summarise {{results.fetch.title}}", "depends_on": ["fetch", "flaky"]}]}`)
	repair := mustPlan(t, `{"mission": "Summarise the <news> & more", "tasks": [
		{"id": "fetch", "agent": "http", "input": "get the news"},
		{"id": "summary", "agent": "writer", "input": "Summarise {{results.fetch.title}} ({{results.fetch.words}} words)", "depends_on": ["fetch"]},
		{"id": "check", "type": "human_review", "input": "Is \"{{results.fetch.title}}\" right?", "depends_on": ["fetch"]},
		{"id": "publish", "agent": "writer", "input": "publish", "depends_on": ["summary", "check"]}]}`)
	spec, err := json.Marshal(durable.Spec{Mission: first.Mission, Catalog: "registry.yaml", Runner: durable.RunnerSpec{Concurrency: 2}})
	require.NoError(t, err)
	canon, err := first.Canonical()
	require.NoError(t, err)
	at := func(s int) time.Time { return docT0.Add(time.Duration(s) * time.Second) }
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r1", Plan: canon, Mission: first.Mission, Spec: spec, Created: docT0}))
	data := func(d store.EventData) json.RawMessage {
		b, err := json.Marshal(d)
		require.NoError(t, err)
		return b
	}
	require.NoError(t, s.CommitBatch(ctx, "r1", store.Batch{
		Tasks: []store.Task{
			{ID: "fetch", Status: "done", Attempts: 1, Output: json.RawMessage(`{"title": "<b>Rain</b> & sun", "words": 120}`), Started: at(1), Duration: 1500 * time.Millisecond, Tokens: store.Usage{Prompt: 10, Completion: 5}, Committed: at(3)},
			{ID: "flaky", Status: "failed", Attempts: 2, Error: "timeout after 1s", Diagnosis: "the server is slow", Started: at(1), Duration: 2 * time.Second, Committed: at(3)},
		},
		Events: []store.Event{
			{Kind: "run_started", Time: at(0), Data: data(store.EventData{RunID: "r1"})},
			{Kind: "task_started", Time: at(1), TaskID: "fetch", Data: data(store.EventData{Attempt: 1})},
			{Kind: "task_started", Time: at(1), TaskID: "flaky", Data: data(store.EventData{Attempt: 1})},
			{Kind: "task_finished", Time: at(2), TaskID: "fetch", Data: data(store.EventData{Attempt: 1, Duration: 1500 * time.Millisecond, Usage: store.Usage{Prompt: 10, Completion: 5}})},
			{Kind: "task_retried", Time: at(2), TaskID: "flaky", Data: data(store.EventData{Attempt: 2, Error: "timeout after 1s", Diagnosis: "the server is slow"})},
			{Kind: "task_failed", Time: at(3), TaskID: "flaky", Data: data(store.EventData{Attempt: 2, Error: "timeout after 1s", Class: "timeout"})},
			{Kind: "run_finished", Time: at(3), Data: data(store.EventData{Status: "replan_required", Error: "task flaky failed"})},
			{Kind: "repair_adopted", Time: at(4), Data: data(store.EventData{Version: 1, Tasks: 4, NewTasks: 2})},
			{Kind: "run_started", Time: at(4), Data: data(store.EventData{RunID: "r1.1"})},
			{Kind: "task_started", Time: at(5), TaskID: "summary", Data: data(store.EventData{Attempt: 1})},
			{Kind: "task_waiting", Time: at(5), TaskID: "check"},
		},
	}))
	canon, err = repair.Canonical()
	require.NoError(t, err)
	trial, err := json.Marshal(executor.Trial{Attempt: 1, TaskID: "flaky", Class: "timeout", Diagnosis: "the server is slow", NewTaskCount: 2})
	require.NoError(t, err)
	require.NoError(t, s.CommitPlan(ctx, "r1", store.PlanVersion{Version: 1, Plan: canon, Trial: trial, Committed: at(4)}))
	require.NoError(t, s.CommitTask(ctx, "r1", store.Task{ID: "check", Version: 1, Status: "waiting", Committed: at(5)}))
	require.NoError(t, s.RecordExchange(ctx, "r1", "k1", json.RawMessage(`{"key": "k1"}`)))
	return s
}

// inUTC is doc with its times in UTC: the store gives them in the local
// time zone, which the goldens must not depend on.
func inUTC(doc *durable.RunDoc) {
	doc.Created, doc.Updated = doc.Created.UTC(), doc.Updated.UTC()
	for id, td := range doc.Tasks {
		td.Started, td.Committed = ptrUTC(td.Started), ptrUTC(td.Committed)
		doc.Tasks[id] = td
	}
	for i := range doc.Events {
		doc.Events[i].Time = doc.Events[i].Time.UTC()
	}
}

func ptrUTC(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// encode is v as dagent prints a JSON document.
func encode(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, jsonv.EncodeIndent(&b, v, "  "))
	return b.Bytes()
}

// The run document pins the form of dagent show --format json.
func TestRunDocument(t *testing.T) {
	r, err := durable.Load(context.Background(), docJournal(t), "r1")
	require.NoError(t, err)
	for _, tc := range []struct {
		golden string
		o      durable.DocOptions
	}{
		{"testdata/show.golden.json", durable.DocOptions{}},
		{"testdata/show-no-outputs.golden.json", durable.DocOptions{NoOutputs: true}},
	} {
		doc := r.Document(tc.o)
		inUTC(&doc)
		golden.Check(t, tc.golden, encode(t, doc))
	}
	doc := r.Document(durable.DocOptions{})
	assert.Equal(t, durable.StatusRunning, doc.Status, "the journal's")
	assert.False(t, doc.Live)
	assert.Nil(t, doc.Owner)
	assert.Equal(t, 1, doc.Exchanges)
	var options struct {
		Plan json.RawMessage `json:"plan"`
	}
	require.NoError(t, json.Unmarshal(doc.Options, &options))
	first, err := r.Plans[0].Canonical()
	require.NoError(t, err)
	assert.JSONEq(t, string(first), string(options.Plan), "the options hold the plan the run started with")
}

func TestTaskDocument(t *testing.T) {
	r, err := durable.Load(context.Background(), docJournal(t), "r1")
	require.NoError(t, err)
	for _, tc := range []struct{ id, golden string }{
		{"summary", "testdata/task-summary.golden.json"},
		{"flaky", "testdata/task-flaky.golden.json"},
	} {
		d, err := r.Task(tc.id)
		require.NoError(t, err)
		doc := d.Document(durable.DocOptions{})
		doc.Started, doc.Committed = ptrUTC(doc.Started), ptrUTC(doc.Committed)
		for i := range doc.Events {
			doc.Events[i].Time = doc.Events[i].Time.UTC()
		}
		golden.Check(t, tc.golden, encode(t, doc))
	}
	d, err := r.Task("fetch")
	require.NoError(t, err)
	doc := d.Document(durable.DocOptions{NoOutputs: true})
	assert.Equal(t, json.RawMessage("null"), doc.Output, "left out")
	assert.Equal(t, []string{}, doc.DependsOn, "an empty list, not null")
}

func TestTaskDetail(t *testing.T) {
	r, err := durable.Load(context.Background(), docJournal(t), "r1")
	require.NoError(t, err)

	d, err := r.Task("summary")
	require.NoError(t, err)
	assert.Equal(t, "r1", d.RunID)
	assert.Equal(t, "running", d.Status, "in flight when the process died")
	assert.False(t, d.Committed)
	require.NotNil(t, d.Plan)
	assert.Equal(t, "Summarise {{results.fetch.title}} ({{results.fetch.words}} words)", d.Plan.Input, "the latest plan's task")
	assert.Equal(t, "Summarise <b>Rain</b> & sun (120 words)", d.Input, "rendered from the journal's outputs")
	require.Len(t, d.Upstream, 1)
	assert.Equal(t, "fetch", d.Upstream[0].ID)
	assert.JSONEq(t, `{"title": "<b>Rain</b> & sun", "words": 120}`, string(d.Upstream[0].Output))
	require.Len(t, d.Events, 1)
	assert.Equal(t, "task_started", d.Events[0].Kind)
	assert.Equal(t, "in flight when the process died; a resume runs it again", d.Why(r.Shown()))

	// A task only the first plan had, with its events of both attempts.
	d, err = r.Task("flaky")
	require.NoError(t, err)
	require.NotNil(t, d.Plan)
	assert.Equal(t, "get more", d.Input)
	assert.Empty(t, d.Upstream)
	var kinds []string
	for _, e := range d.Events {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []string{"task_started", "task_retried", "task_failed"}, kinds)
	assert.Equal(t, 2, d.Attempts)
	assert.Equal(t, 2*time.Second, d.Duration)
	assert.Equal(t, "the server is slow", d.Why(r.Shown()), "the diagnosis")

	d, err = r.Task("fetch")
	require.NoError(t, err)
	assert.Equal(t, store.Usage{Prompt: 10, Completion: 5}, d.Tokens)

	_, err = r.Task("nope")
	var unknown *durable.UnknownTaskError
	require.ErrorAs(t, err, &unknown)
	assert.Equal(t, []string{"fetch", "summary", "check", "publish", "flaky"}, unknown.Tasks)
	assert.EqualError(t, err, `run r1 has no task "nope"; its tasks are fetch, summary, check, publish, flaky`)
}

func TestReviews(t *testing.T) {
	ctx := context.Background()
	s := docJournal(t)
	r, err := durable.Load(ctx, s, "r1")
	require.NoError(t, err)
	reviews := r.Reviews()
	require.Len(t, reviews, 1)
	rv := reviews[0]
	assert.Equal(t, "check", rv.TaskID)
	require.NotNil(t, rv.Plan)
	assert.Equal(t, `Is "<b>Rain</b> & sun" right?`, rv.Prompt)
	require.Len(t, rv.Upstream, 1)
	assert.Equal(t, "fetch", rv.Upstream[0].ID)

	// Decided, the review no longer waits.
	require.NoError(t, s.CommitTask(ctx, "r1", store.Task{ID: "check", Version: 1, Status: "done", Committed: docT0.Add(time.Minute)}))
	r, err = durable.Load(ctx, s, "r1")
	require.NoError(t, err)
	assert.Empty(t, r.Reviews())
}

func TestWhy(t *testing.T) {
	inFlight := durable.TaskView{Task: store.Task{ID: "a", Status: "running"}}
	tests := []struct {
		name   string
		v      durable.TaskView
		status durable.Status
		live   bool
		want   string
	}{
		{"in flight, live", inFlight, durable.StatusRunning, true, "running"},
		{"in flight, process died", inFlight, durable.StatusInterrupted, false, "in flight when the process died; a resume runs it again"},
		{"in flight, run stopped", inFlight, durable.StatusCancelled, false, "in flight when the run stopped; a resume runs it again"},
		{"failed", durable.TaskView{Task: store.Task{Status: "failed", Error: "boom"}, Committed: true}, durable.StatusFailed, false, "boom"},
		{"diagnosed", durable.TaskView{Task: store.Task{Status: "failed", Error: "boom", Diagnosis: "too short"}, Committed: true}, durable.StatusFailed, false, "too short"},
		{"done, an error of a retry", durable.TaskView{Task: store.Task{Status: "done", Error: "once"}, Committed: true}, durable.StatusCompleted, false, ""},
		{"pending", durable.TaskView{Task: store.Task{Status: "pending"}}, durable.StatusRunning, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.v.Why(tt.status, tt.live))
		})
	}
}
