// Package storetest is the conformance kit of [store.Store]: the behaviour
// every implementation must have, as tests. An implementation runs it from
// its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { ... })
//	}
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/store"
)

// Run runs the conformance tests, each a subtest, against the stores open
// returns. open gets the subtest's t and returns an empty store of its own;
// called again with the same t after that store was closed, it must return
// a store on the same data (the tests of durability do that). open should
// close its store in t.Cleanup: the tests close some of them first, so
// Close must accept a second call.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		test func(*testing.T, func(*testing.T) store.Store)
	}{
		{"CreateAndLoad", testCreateAndLoad},
		{"CreateDefaults", testCreateDefaults},
		{"CreateWithPlan", testCreateWithPlan},
		{"DuplicateRun", testDuplicateRun},
		{"UnknownRun", testUnknownRun},
		{"BadInput", testBadInput},
		{"List", testList},
		{"Runs", testRuns},
		{"RunsPaged", testRunsPaged},
		{"CommitUpserts", testCommitUpserts},
		{"PlanVersions", testPlanVersions},
		{"PlanVersionsRefused", testPlanVersionsRefused},
		{"TaskVersions", testTaskVersions},
		{"Batch", testBatch},
		{"BatchIsAtomic", testBatchIsAtomic},
		{"LatestPlanInList", testLatestPlanInList},
		{"SurvivesReopen", testSurvivesReopen},
		{"EventsInOrder", testEventsInOrder},
		{"ExchangesInOrder", testExchangesInOrder},
		{"Status", testStatus},
		{"RunsAreSeparate", testRunsAreSeparate},
		{"ConcurrentWrites", testConcurrentWrites},
		{"LargeOutput", testLargeOutput},
		{"Unicode", testUnicode},
		{"Lease", testLease},
		{"LeaseTakeover", testLeaseTakeover},
		{"LeaseRace", testLeaseRace},
		{"Processes", testProcesses},
		{"EventsAfter", testEventsAfter},
		{"DeleteRun", testDeleteRun},
		{"CancelRequest", testCancelRequest},
		{"Outcomes", testOutcomes},
		{"PlanCache", testPlanCache},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open) })
	}
}

var ctx = context.Background()

// timeSlack is how far a stored time may be from the time given: stores
// may keep microseconds only.
const timeSlack = time.Microsecond

func sameTime(t *testing.T, want, got time.Time, what string) {
	t.Helper()
	if want.IsZero() {
		assert.True(t, got.IsZero(), "%s: want the zero time, got %s", what, got)
		return
	}
	assert.WithinDuration(t, want, got, timeSlack, what)
}

func planJSON(ids ...string) json.RawMessage {
	type task struct {
		ID    string `json:"id"`
		Agent string `json:"agent"`
		Input string `json:"input"`
	}
	p := struct {
		Tasks []task `json:"tasks"`
	}{Tasks: []task{}}
	for _, id := range ids {
		p.Tasks = append(p.Tasks, task{ID: id, Agent: "worker", Input: "do " + id})
	}
	b, _ := json.Marshal(p)
	return b
}

func newRun(id string) store.Run {
	return store.Run{
		ID:      id,
		Plan:    planJSON("a", "b", "c"),
		Mission: "mission of " + id,
		Spec:    json.RawMessage(`{"version":1,"concurrency":4,"registry":"reg.yaml"}`),
		Created: time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC),
	}
}

func create(t *testing.T, s store.Store, r store.Run) {
	t.Helper()
	require.NoError(t, s.CreateRun(ctx, r))
}

func load(t *testing.T, s store.Store, id string) *store.Record {
	t.Helper()
	rec, err := s.Load(ctx, id)
	require.NoError(t, err)
	require.NotNil(t, rec)
	return rec
}

func jsonEq(t *testing.T, want, got json.RawMessage, what string) {
	t.Helper()
	if want == nil {
		assert.Nil(t, got, what)
		return
	}
	require.NotNil(t, got, what)
	assert.JSONEq(t, string(want), string(got), what)
}

func testCreateAndLoad(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	r := newRun("run-1")
	create(t, s, r)
	rec := load(t, s, "run-1")
	assert.Equal(t, "run-1", rec.ID)
	jsonEq(t, r.Plan, rec.Plan, "plan")
	jsonEq(t, r.Spec, rec.Spec, "spec")
	assert.Equal(t, r.Mission, rec.Mission)
	sameTime(t, r.Created, rec.Created, "created")
	assert.Equal(t, store.StatusRunning, rec.Status)
	assert.Empty(t, rec.Error)
	assert.False(t, rec.Updated.Before(rec.Created.Add(-timeSlack)), "updated %s before created %s", rec.Updated, rec.Created)
	checkPlans(t, []store.PlanVersion{{Version: 0, Plan: r.Plan, Committed: r.Created}}, rec.Plans)
	assert.Equal(t, 3, rec.TaskCount, "the tasks of the plan, counted")
	assert.Equal(t, 3, rec.Plans[0].TaskCount, "the tasks of version 0, counted")
	assert.Empty(t, rec.Tasks)
	assert.Empty(t, rec.Commits)
	assert.Empty(t, rec.Events)
	assert.Empty(t, rec.Exchanges)
	jsonEq(t, r.Plan, rec.LatestPlan(), "the latest plan of a run that adopted no other")
}

// A run created with a plan has it as its plan version 0, committed with
// it, and counted as the caller counted it; it goes on from version 1, and
// keeps its plan through changes of status and a reopen.
func testCreateWithPlan(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	r := newRun("run")
	r.TaskCount = 3
	create(t, s, r)
	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, 3, list[0].Total)
	err = s.CommitPlan(ctx, "run", store.PlanVersion{Version: 2, Plan: planJSON("a")})
	require.Error(t, err, "version 0 is committed: the next is 1")
	assert.Contains(t, err.Error(), "version 2")
	require.NoError(t, s.SetStatus(ctx, "run", "failed", "boom"))
	v1 := store.PlanVersion{Version: 1, Plan: planJSON("a", "fix-b"), TaskCount: 2, Trial: json.RawMessage(`{}`), Committed: r.Created.Add(time.Minute)}
	require.NoError(t, s.CommitPlan(ctx, "run", v1))
	require.NoError(t, s.SetStatus(ctx, "run", store.StatusRunning, ""))
	require.NoError(t, s.Close())
	s = open(t)
	rec := load(t, s, "run")
	jsonEq(t, r.Plan, rec.Plan, "the plan the run started with")
	checkPlans(t, []store.PlanVersion{{Version: 0, Plan: r.Plan, Committed: r.Created}, v1}, rec.Plans)
	assert.Equal(t, []int{3, 2}, []int{rec.Plans[0].TaskCount, rec.Plans[1].TaskCount})
	list, err = s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, 2, list[0].Total, "the tasks of the latest plan")
}

func testCreateDefaults(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	before := time.Now()
	create(t, s, store.Run{ID: "bare"})
	rec := load(t, s, "bare")
	assert.Nil(t, rec.Plan)
	assert.Nil(t, rec.Spec)
	assert.Empty(t, rec.Mission)
	assert.WithinDuration(t, before, rec.Created, time.Minute, "a zero Created is the current time")
	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, 0, list[0].Total)
}

func testDuplicateRun(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("dup"))
	other := newRun("dup")
	other.Mission = "another"
	err := s.CreateRun(ctx, other)
	require.ErrorIs(t, err, store.ErrExists)
	assert.Contains(t, err.Error(), "dup", "the error names the run")
	assert.Equal(t, "mission of dup", load(t, s, "dup").Mission, "the first run is kept")
}

func testUnknownRun(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("known"))
	_, err := s.Load(ctx, "nope")
	assert.ErrorIs(t, err, store.ErrNotFound, "Load")
	if err != nil {
		assert.Contains(t, err.Error(), "nope", "the error names the run")
	}
	assert.ErrorIs(t, s.CommitTask(ctx, "nope", store.Task{ID: "a", Status: "done"}), store.ErrNotFound, "CommitTask")
	assert.ErrorIs(t, s.CommitTask(ctx, "nope", store.Task{ID: "a", Version: 1, Status: "done"}), store.ErrNotFound, "CommitTask of version 1")
	assert.ErrorIs(t, s.CommitPlan(ctx, "nope", store.PlanVersion{Plan: planJSON("a")}), store.ErrNotFound, "CommitPlan")
	assert.ErrorIs(t, s.AppendEvents(ctx, "nope", []store.Event{{Kind: "run_started", Time: time.Now()}}), store.ErrNotFound, "AppendEvents")
	assert.ErrorIs(t, s.SetStatus(ctx, "nope", "completed", ""), store.ErrNotFound, "SetStatus")
	assert.ErrorIs(t, s.RecordExchange(ctx, "nope", "k", json.RawMessage(`{}`)), store.ErrNotFound, "RecordExchange")
	known := newRun("known")
	rec := load(t, s, "known")
	// Nothing leaked into another run: it has its own version 0 only.
	checkPlans(t, []store.PlanVersion{{Version: 0, Plan: known.Plan, Committed: known.Created}}, rec.Plans)
	assert.Empty(t, rec.Tasks, "nothing leaked into another run")
	assert.Empty(t, rec.Events)
}

func testBadInput(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	assert.Error(t, s.CreateRun(ctx, store.Run{ID: ""}), "a run needs an id")
	bad := newRun("bad")
	bad.Plan = json.RawMessage(`{"tasks": [`)
	assert.Error(t, s.CreateRun(ctx, bad), "a plan that is not JSON")
	bad.TaskCount = 3
	assert.Error(t, s.CreateRun(ctx, bad), "a plan that is not JSON, its tasks counted")
	bad.Plan, bad.TaskCount = planJSON("a"), -1
	assert.Error(t, s.CreateRun(ctx, bad), "a negative count of tasks")
	_, err := s.Load(ctx, "bad")
	assert.ErrorIs(t, err, store.ErrNotFound, "a refused run is not created")
	create(t, s, newRun("good"))
	assert.Error(t, s.CommitTask(ctx, "good", store.Task{ID: "a", Status: "done", Output: json.RawMessage(`{oops`)}), "an output that is not JSON")
	assert.Error(t, s.CommitTask(ctx, "good", store.Task{Status: "done"}), "a task needs an id")
	assert.Error(t, s.RecordExchange(ctx, "good", "k", json.RawMessage(`nope`)), "an exchange that is not JSON")
	assert.Empty(t, load(t, s, "good").Tasks)
}

func testList(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	list, err := s.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"r-old", "r-mid", "r-new"} {
		r := newRun(id)
		r.Created = t0.Add(time.Duration(i) * time.Hour)
		if id == "r-mid" {
			r.Plan = planJSON("x", "y")
		}
		create(t, s, r)
	}
	require.NoError(t, s.CommitTask(ctx, "r-new", store.Task{ID: "a", Status: "done", Attempts: 1, Output: json.RawMessage(`1`)}))
	require.NoError(t, s.CommitTask(ctx, "r-new", store.Task{ID: "b", Status: "done", Attempts: 1, Output: json.RawMessage(`2`)}))
	require.NoError(t, s.CommitTask(ctx, "r-new", store.Task{ID: "c", Status: "failed", Attempts: 3, Error: "boom"}))
	require.NoError(t, s.CommitTask(ctx, "r-old", store.Task{ID: "a", Status: "done", Attempts: 1}))
	require.NoError(t, s.SetStatus(ctx, "r-new", "failed", "boom"))

	list, err = s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 3)
	var ids []string
	for _, sm := range list {
		ids = append(ids, sm.ID)
	}
	assert.Equal(t, []string{"r-new", "r-mid", "r-old"}, ids, "newest first")
	byID := map[string]store.Summary{}
	for _, sm := range list {
		byID[sm.ID] = sm
	}
	assert.Equal(t, 2, byID["r-new"].Done)
	assert.Equal(t, 3, byID["r-new"].Total)
	assert.Equal(t, "failed", byID["r-new"].Status)
	assert.Equal(t, 1, byID["r-old"].Done)
	assert.Equal(t, 0, byID["r-mid"].Done)
	assert.Equal(t, 2, byID["r-mid"].Total)
	assert.Equal(t, store.StatusRunning, byID["r-mid"].Status)
	assert.Equal(t, "mission of r-mid", byID["r-mid"].Mission)
	sameTime(t, t0.Add(2*time.Hour), byID["r-new"].Created, "created")
	assert.False(t, byID["r-new"].Updated.IsZero())
	assert.NotEmpty(t, byID["r-old"].PlanHash)
	assert.Equal(t, byID["r-old"].PlanHash, byID["r-new"].PlanHash, "same plan, same hash")
	assert.NotEqual(t, byID["r-old"].PlanHash, byID["r-mid"].PlanHash, "another plan, another hash")
}

// Runs selects runs by status, id prefix, last update and id, and
// returns what List does of them.
func testRuns(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	list, total, err := s.Runs(ctx, store.RunQuery{Statuses: []string{"failed"}})
	require.NoError(t, err)
	assert.Empty(t, list)
	assert.Zero(t, total, "an empty store")

	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"a-1", "a-2", "b-1", "b-2", "c-1"} {
		r := newRun(id)
		r.Created = t0.Add(time.Duration(i) * time.Hour)
		create(t, s, r)
	}
	require.NoError(t, s.SetStatus(ctx, "a-2", "failed", "boom"))
	require.NoError(t, s.SetStatus(ctx, "b-2", "completed", ""))
	require.NoError(t, s.SetStatus(ctx, "c-1", "failed", "boom"))
	// A commit updates a run as a change of its status does.
	require.NoError(t, s.CommitTask(ctx, "b-1", store.Task{ID: "a", Status: "done", Committed: t0.Add(100 * time.Hour)}))
	require.NoError(t, s.CommitPlan(ctx, "a-1", store.PlanVersion{Version: 1, Plan: planJSON("a", "b"), Committed: t0.Add(10 * time.Hour)}))
	require.NoError(t, s.Acquire(ctx, "a-1", owner("o"), nil))

	all, err := s.List(ctx)
	require.NoError(t, err)
	byID := map[string]store.Summary{}
	for _, sm := range all {
		byID[sm.ID] = sm
	}
	tests := []struct {
		name string
		q    store.RunQuery
		want []string
	}{
		{"all", store.RunQuery{}, []string{"c-1", "b-2", "b-1", "a-2", "a-1"}},
		{"a status", store.RunQuery{Statuses: []string{"failed"}}, []string{"c-1", "a-2"}},
		{"statuses", store.RunQuery{Statuses: []string{"running", "completed"}}, []string{"b-2", "b-1", "a-1"}},
		{"a status no run has", store.RunQuery{Statuses: []string{"waiting"}}, nil},
		{"a prefix", store.RunQuery{Prefix: "b-"}, []string{"b-2", "b-1"}},
		{"a whole id", store.RunQuery{Prefix: "a-1"}, []string{"a-1"}},
		{"a prefix no id has", store.RunQuery{Prefix: "a-1x"}, nil},
		{"updated before", store.RunQuery{UpdatedBefore: t0.Add(50 * time.Hour)}, []string{"a-1"}},
		{"updated before, by a commit", store.RunQuery{UpdatedBefore: t0.Add(101 * time.Hour)}, []string{"b-1", "a-1"}},
		{"updated after", store.RunQuery{UpdatedAfter: t0.Add(50 * time.Hour)}, []string{"c-1", "b-2", "b-1", "a-2"}},
		{"updated after, by a commit", store.RunQuery{UpdatedAfter: t0.Add(99 * time.Hour), UpdatedBefore: t0.Add(101 * time.Hour)}, []string{"b-1"}},
		{"updated after, by a plan version", store.RunQuery{UpdatedAfter: t0.Add(5 * time.Hour), UpdatedBefore: t0.Add(50 * time.Hour)}, []string{"a-1"}},
		{"updated after the last update", store.RunQuery{UpdatedAfter: time.Now().Add(time.Hour)}, nil},
		{"excluded", store.RunQuery{Exclude: []string{"c-1", "a-1", "nope"}}, []string{"b-2", "b-1", "a-2"}},
		{"by id", store.RunQuery{IDs: []string{"a-1", "nope", "c-1"}}, []string{"c-1", "a-1"}},
		{"by id, excluded", store.RunQuery{IDs: []string{"a-1", "c-1"}, Exclude: []string{"a-1"}}, []string{"c-1"}},
		{"by id, no run", store.RunQuery{IDs: []string{"a-"}}, nil},
		{"all of them", store.RunQuery{Statuses: []string{"failed", "running"}, Prefix: "a", Exclude: []string{"a-1"}}, []string{"a-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := s.Runs(ctx, tt.q)
			require.NoError(t, err)
			var ids []string
			for _, sm := range got {
				ids = append(ids, sm.ID)
				assert.Equal(t, byID[sm.ID], sm, "a run's summary is List's")
			}
			assert.Equal(t, tt.want, ids)
			assert.Equal(t, len(tt.want), total)
		})
	}
	got, _, err := s.Runs(ctx, store.RunQuery{Prefix: "a-1"})
	require.NoError(t, err)
	require.NotNil(t, got[0].Owner, "with its owner")
	assert.Equal(t, "o", got[0].Owner.ID)

	for _, q := range []store.RunQuery{{Limit: -1}, {Offset: -1}} {
		_, _, err := s.Runs(ctx, q)
		assert.Error(t, err, "%+v", q)
	}
}

// Runs returns a page of the runs it selects, and counts all of them.
func testRunsPaged(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var newest []string
	for i := range 25 {
		r := newRun(fmt.Sprintf("r%02d", i))
		r.Created = t0.Add(time.Duration(i) * time.Minute)
		create(t, s, r)
		if i%2 == 1 {
			require.NoError(t, s.SetStatus(ctx, r.ID, "failed", ""))
		}
		newest = append([]string{r.ID}, newest...)
	}
	// Runs created at the same time come by id, the greatest first.
	for _, id := range []string{"s1", "s2"} {
		r := newRun(id)
		r.Created = t0.Add(time.Hour)
		create(t, s, r)
	}
	newest = append([]string{"s2", "s1"}, newest...)
	page := func(q store.RunQuery) ([]string, int) {
		t.Helper()
		got, total, err := s.Runs(ctx, q)
		require.NoError(t, err)
		ids := []string{}
		for _, sm := range got {
			ids = append(ids, sm.ID)
		}
		return ids, total
	}
	for _, tt := range []struct {
		limit, offset int
		want          []string
	}{
		{10, 0, newest[:10]},
		{10, 10, newest[10:20]},
		{10, 20, newest[20:]},
		{10, 27, []string{}},
		{10, 100, []string{}},
		{0, 5, newest[5:]},
		{0, 0, newest},
		{1, 1, newest[1:2]},
	} {
		ids, total := page(store.RunQuery{Limit: tt.limit, Offset: tt.offset})
		assert.Equal(t, tt.want, ids, "limit %d offset %d", tt.limit, tt.offset)
		assert.Equal(t, len(newest), total, "every run counts, whatever the page")
	}
	ids, total := page(store.RunQuery{Statuses: []string{"failed"}, Limit: 3, Offset: 2})
	assert.Equal(t, []string{"r19", "r17", "r15"}, ids)
	assert.Equal(t, 12, total, "the runs of the status count")
}

func testCommitUpserts(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("run"))
	started := time.Date(2025, 3, 1, 12, 0, 1, 500000000, time.UTC)
	first := store.Task{
		ID: "a", Status: "waiting", Attempts: 1, Output: json.RawMessage(`{"draft":true}`),
		Diagnosis: "needs a look", Started: started, Duration: 1500 * time.Millisecond,
		Tokens: store.Usage{Prompt: 10, Completion: 5}, Committed: started.Add(2 * time.Second),
	}
	require.NoError(t, s.CommitTask(ctx, "run", first))
	got := load(t, s, "run").Tasks["a"]
	checkTask(t, first, got)

	second := store.Task{
		ID: "a", Status: "done", Attempts: 2, Output: json.RawMessage(`{"items":[1,2,3],"note":"ok"}`),
		Error: "", Diagnosis: "", Started: started, Duration: 3 * time.Second,
		Tokens: store.Usage{Prompt: 30, Completion: 12},
	}
	before := time.Now()
	require.NoError(t, s.CommitTask(ctx, "run", second))
	rec := load(t, s, "run")
	require.Len(t, rec.Tasks, 1, "a later commit replaces the task")
	got = rec.Tasks["a"]
	second.Committed = got.Committed
	checkTask(t, second, got)
	assert.WithinDuration(t, before, got.Committed, time.Minute, "a zero Committed is the current time")

	failed := store.Task{ID: "b", Status: "failed", Attempts: 3, Error: "exit status 1: no such file", Diagnosis: "the command failed"}
	require.NoError(t, s.CommitTask(ctx, "run", failed))
	got = load(t, s, "run").Tasks["b"]
	failed.Committed = got.Committed
	checkTask(t, failed, got)
	assert.Nil(t, got.Output, "no output is nil, not JSON null")
	assert.True(t, got.Started.IsZero())
}

func checkTask(t *testing.T, want, got store.Task) {
	t.Helper()
	assert.Equal(t, want.ID, got.ID, "id")
	assert.Equal(t, want.Version, got.Version, "version")
	assert.Equal(t, want.Status, got.Status, "status")
	assert.Equal(t, want.Attempts, got.Attempts, "attempts")
	jsonEq(t, want.Output, got.Output, "output")
	assert.Equal(t, want.Error, got.Error, "error")
	assert.Equal(t, want.Diagnosis, got.Diagnosis, "diagnosis")
	sameTime(t, want.Started, got.Started, "started")
	assert.Equal(t, want.Duration, got.Duration, "duration")
	assert.Equal(t, want.Tokens, got.Tokens, "tokens")
	sameTime(t, want.Committed, got.Committed, "committed")
}

func testSurvivesReopen(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("run"))
	task := store.Task{ID: "a", Status: "done", Attempts: 1, Output: json.RawMessage(`{"n":42}`), Committed: time.Now()}
	require.NoError(t, s.CommitTask(ctx, "run", task))
	require.NoError(t, s.AppendEvents(ctx, "run", []store.Event{{Kind: "run_started", Time: time.Now()}, {Kind: "task_started", TaskID: "a", Time: time.Now()}}))
	require.NoError(t, s.RecordExchange(ctx, "run", "k1", json.RawMessage(`{"key":"k1"}`)))
	require.NoError(t, s.SetStatus(ctx, "run", "waiting", ""))
	want := load(t, s, "run")
	require.NoError(t, s.Close())

	s2 := open(t)
	got := load(t, s2, "run")
	assert.Equal(t, want.Status, got.Status)
	require.Contains(t, got.Tasks, "a")
	checkTask(t, want.Tasks["a"], got.Tasks["a"])
	require.Len(t, got.Events, 2)
	assert.Equal(t, "task_started", got.Events[1].Kind)
	require.Len(t, got.Exchanges, 1)
	// The reopened store goes on where the first left off.
	require.NoError(t, s2.AppendEvents(ctx, "run", []store.Event{{Kind: "run_finished", Time: time.Now()}}))
	require.NoError(t, s2.RecordExchange(ctx, "run", "k2", json.RawMessage(`{"key":"k2"}`)))
	got = load(t, s2, "run")
	require.Len(t, got.Events, 3)
	assert.Equal(t, 3, got.Events[2].Seq)
	require.Len(t, got.Exchanges, 2)
	assert.Equal(t, 2, got.Exchanges[1].Seq)
}

func testEventsInOrder(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("run"))
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var want []store.Event
	for i := range 10 {
		e := store.Event{Seq: 99, Kind: fmt.Sprintf("kind_%d", i), Time: t0.Add(time.Duration(i) * time.Millisecond)}
		if i%2 == 1 {
			e.TaskID = fmt.Sprintf("t%d", i)
			e.Data = json.RawMessage(fmt.Sprintf(`{"attempt":%d,"error":"e%d"}`, i, i))
		}
		want = append(want, e)
	}
	require.NoError(t, s.AppendEvents(ctx, "run", want[:3]))
	require.NoError(t, s.AppendEvents(ctx, "run", nil), "an empty batch")
	require.NoError(t, s.AppendEvents(ctx, "run", want[3:4]))
	require.NoError(t, s.AppendEvents(ctx, "run", want[4:]))
	got := load(t, s, "run").Events
	require.Len(t, got, len(want))
	for i, e := range got {
		assert.Equal(t, i+1, e.Seq, "the store numbers events from 1")
		assert.Equal(t, want[i].Kind, e.Kind)
		assert.Equal(t, want[i].TaskID, e.TaskID)
		sameTime(t, want[i].Time, e.Time, "event time")
		jsonEq(t, want[i].Data, e.Data, "event data")
	}
}

func testExchangesInOrder(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("run"))
	keys := []string{"k1", "k2", "k1", "k3", "k1"}
	for i, k := range keys {
		require.NoError(t, s.RecordExchange(ctx, "run", k, json.RawMessage(fmt.Sprintf(`{"key":%q,"n":%d}`, k, i))))
	}
	got := load(t, s, "run").Exchanges
	require.Len(t, got, len(keys))
	for i, x := range got {
		assert.Equal(t, i+1, x.Seq)
		assert.Equal(t, keys[i], x.Key)
		jsonEq(t, json.RawMessage(fmt.Sprintf(`{"key":%q,"n":%d}`, keys[i], i)), x.Exchange, "exchange")
	}
}

func testStatus(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	r := newRun("run")
	r.Created = time.Now().Add(-time.Hour)
	create(t, s, r)
	require.NoError(t, s.SetStatus(ctx, "run", "failed", "task b: boom"))
	rec := load(t, s, "run")
	assert.Equal(t, "failed", rec.Status)
	assert.Equal(t, "task b: boom", rec.Error)
	assert.WithinDuration(t, time.Now(), rec.Updated, time.Minute, "updated when the status changed")
	require.NoError(t, s.SetStatus(ctx, "run", "completed", ""))
	rec = load(t, s, "run")
	assert.Equal(t, "completed", rec.Status)
	assert.Empty(t, rec.Error, "the error goes with the status")
	assert.Error(t, s.SetStatus(ctx, "run", "", ""), "a status is needed")
}

func testRunsAreSeparate(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("one"))
	create(t, s, newRun("two"))
	require.NoError(t, s.CommitTask(ctx, "one", store.Task{ID: "a", Status: "done", Output: json.RawMessage(`"one"`)}))
	require.NoError(t, s.CommitTask(ctx, "two", store.Task{ID: "a", Status: "done", Output: json.RawMessage(`"two"`)}))
	require.NoError(t, s.AppendEvents(ctx, "one", []store.Event{{Kind: "run_started", Time: time.Now()}}))
	require.NoError(t, s.AppendEvents(ctx, "two", []store.Event{{Kind: "run_started", Time: time.Now()}, {Kind: "run_finished", Time: time.Now()}}))
	require.NoError(t, s.RecordExchange(ctx, "two", "k", json.RawMessage(`{}`)))
	one, two := load(t, s, "one"), load(t, s, "two")
	jsonEq(t, json.RawMessage(`"one"`), one.Tasks["a"].Output, "run one's task")
	jsonEq(t, json.RawMessage(`"two"`), two.Tasks["a"].Output, "run two's task")
	assert.Len(t, one.Events, 1)
	assert.Len(t, two.Events, 2)
	assert.Equal(t, 1, two.Events[0].Seq, "each run numbers its own events")
	assert.Empty(t, one.Exchanges)
	assert.Len(t, two.Exchanges, 1)
}

func testConcurrentWrites(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	const runs, workers, tasks = 2, 8, 25
	for r := range runs {
		create(t, s, newRun(fmt.Sprintf("run-%d", r)))
	}
	var wg sync.WaitGroup
	errs := make(chan error, runs*(workers*tasks*3+tasks*2))
	for r := range runs {
		runID := fmt.Sprintf("run-%d", r)
		for w := range workers {
			wg.Go(func() {
				for k := range tasks {
					id := fmt.Sprintf("w%d-t%d", w, k)
					out := json.RawMessage(fmt.Sprintf(`{"worker":%d,"task":%d}`, w, k))
					errs <- s.CommitTask(ctx, runID, store.Task{ID: id, Status: "done", Attempts: 1, Output: out})
					errs <- s.AppendEvents(ctx, runID, []store.Event{
						{Kind: "task_started", TaskID: id, Time: time.Now()},
						{Kind: "task_finished", TaskID: id, Time: time.Now()},
					})
					errs <- s.RecordExchange(ctx, runID, id, json.RawMessage(`{"task":"`+id+`"}`))
				}
			})
		}
		wg.Go(func() {
			for range tasks {
				_, err := s.Load(ctx, runID)
				errs <- err
				_, err = s.List(ctx)
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for r := range runs {
		rec := load(t, s, fmt.Sprintf("run-%d", r))
		assert.Len(t, rec.Tasks, workers*tasks)
		require.Len(t, rec.Events, 2*workers*tasks)
		require.Len(t, rec.Exchanges, workers*tasks)
		started := map[string]bool{}
		for i, e := range rec.Events {
			assert.Equal(t, i+1, e.Seq)
			// A batch stays together and in order.
			switch e.Kind {
			case "task_started":
				started[e.TaskID] = true
			case "task_finished":
				assert.True(t, started[e.TaskID], "%s finished before it started", e.TaskID)
			}
		}
		for i, x := range rec.Exchanges {
			assert.Equal(t, i+1, x.Seq)
		}
	}
}

func testLargeOutput(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("run"))
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	out, err := json.Marshal(map[string]string{"blob": big})
	require.NoError(t, err)
	require.NoError(t, s.CommitTask(ctx, "run", store.Task{ID: "big", Status: "done", Attempts: 1, Output: out}))
	got := load(t, s, "run").Tasks["big"]
	var v map[string]string
	require.NoError(t, json.Unmarshal(got.Output, &v))
	assert.Len(t, v["blob"], 1<<20)
	assert.True(t, v["blob"] == big, "the output comes back whole")
	exchange, err := json.Marshal(map[string]string{"response": big})
	require.NoError(t, err)
	require.NoError(t, s.RecordExchange(ctx, "run", "k", exchange))
	assert.Len(t, load(t, s, "run").Exchanges[0].Exchange, len(exchange))
}

func testUnicode(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	const id = "ラン-🚀-ü"
	r := newRun(id)
	r.Mission = "Résumé des 数据 — “quotes” 🧪"
	r.Plan = planJSON("タスク", "naïve")
	create(t, s, r)
	out := json.RawMessage(`{"text":"Grüße, 世界 🌍","esc":"tab\there \u0000 nul","emoji":"👩‍👩‍👧"}`)
	require.NoError(t, s.CommitTask(ctx, id, store.Task{ID: "タスク", Status: "done", Attempts: 1, Output: out, Diagnosis: "ça va ✓"}))
	require.NoError(t, s.CommitTask(ctx, id, store.Task{ID: "naïve", Status: "failed", Attempts: 1, Error: "échec: 失敗"}))
	require.NoError(t, s.AppendEvents(ctx, id, []store.Event{{Kind: "task_started", TaskID: "タスク", Time: time.Now(), Data: json.RawMessage(`{"diagnosis":"🙂"}`)}}))
	rec := load(t, s, id)
	assert.Equal(t, id, rec.ID)
	assert.Equal(t, r.Mission, rec.Mission)
	jsonEq(t, r.Plan, rec.Plan, "plan")
	jsonEq(t, out, rec.Tasks["タスク"].Output, "output")
	assert.Equal(t, "ça va ✓", rec.Tasks["タスク"].Diagnosis)
	assert.Equal(t, "échec: 失敗", rec.Tasks["naïve"].Error)
	assert.Equal(t, "タスク", rec.Events[0].TaskID)
	jsonEq(t, json.RawMessage(`{"diagnosis":"🙂"}`), rec.Events[0].Data, "event data")
	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, id, list[0].ID)
	assert.Equal(t, 1, list[0].Done)
	assert.Equal(t, 2, list[0].Total)
}

func checkPlans(t *testing.T, want, got []store.PlanVersion) {
	t.Helper()
	require.Len(t, got, len(want), "plan versions")
	for i := range want {
		assert.Equal(t, want[i].Version, got[i].Version, "version")
		jsonEq(t, want[i].Plan, got[i].Plan, fmt.Sprintf("plan of version %d", want[i].Version))
		jsonEq(t, want[i].Trial, got[i].Trial, fmt.Sprintf("trial of version %d", want[i].Version))
		sameTime(t, want[i].Committed, got[i].Committed, fmt.Sprintf("committed of version %d", want[i].Version))
	}
}

// A replanning run's plan versions come back by version; committing a
// version again replaces it and leaves the others; they survive a reopen.
func testPlanVersions(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	r := newRun("run")
	create(t, s, r)
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	want := []store.PlanVersion{
		{Version: 0, Plan: r.Plan, Committed: t0},
		{Version: 1, Plan: planJSON("a", "b", "c", "fix-b"), Trial: json.RawMessage(`{"failed":"b","reason":"timeout"}`), Committed: t0.Add(time.Minute)},
		{Version: 2, Plan: planJSON("a", "fix-b2"), Trial: json.RawMessage(`{"failed":"fix-b","n":2}`), Committed: t0.Add(2 * time.Minute)},
	}
	for _, v := range want {
		require.NoError(t, s.CommitPlan(ctx, "run", v))
	}
	rec := load(t, s, "run")
	checkPlans(t, want, rec.Plans)
	jsonEq(t, r.Plan, rec.Plan, "the plan the run started with is kept")
	jsonEq(t, want[2].Plan, rec.LatestPlan(), "the latest plan")
	assert.False(t, rec.Updated.Before(want[2].Committed.Add(-timeSlack)), "updated %s before the last plan version %s", rec.Updated, want[2].Committed)

	again := store.PlanVersion{Version: 1, Plan: planJSON("a", "b", "c", "fix-b-again"), Trial: json.RawMessage(`{"failed":"b","reason":"again"}`)}
	before := time.Now()
	require.NoError(t, s.CommitPlan(ctx, "run", again))
	rec = load(t, s, "run")
	require.Len(t, rec.Plans, 3, "committing a version again replaces it")
	assert.WithinDuration(t, before, rec.Plans[1].Committed, time.Minute, "a zero Committed is the current time")
	again.Committed = rec.Plans[1].Committed
	checkPlans(t, []store.PlanVersion{want[0], again, want[2]}, rec.Plans)

	require.NoError(t, s.Close())
	s2 := open(t)
	checkPlans(t, []store.PlanVersion{want[0], again, want[2]}, load(t, s2, "run").Plans)
	require.NoError(t, s2.CommitPlan(ctx, "run", store.PlanVersion{Version: 3, Plan: planJSON("z")}), "the reopened store goes on from the last version")
	assert.Len(t, load(t, s2, "run").Plans, 4)
}

// A plan version out of sequence, negative, without a plan or with JSON
// that is not is refused, and changes nothing.
func testPlanVersionsRefused(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	// Created without a plan: it has no version 0 yet.
	create(t, s, store.Run{ID: "run"})
	tests := []struct {
		name string
		v    store.PlanVersion
	}{
		{"the first version is 0", store.PlanVersion{Version: 1, Plan: planJSON("a")}},
		{"negative", store.PlanVersion{Version: -1, Plan: planJSON("a")}},
		{"no plan", store.PlanVersion{Version: 0}},
		{"a plan that is not JSON", store.PlanVersion{Version: 0, Plan: json.RawMessage(`{"tasks": [`)}},
		{"a trial that is not JSON", store.PlanVersion{Version: 0, Plan: planJSON("a"), Trial: json.RawMessage(`nope`)}},
	}
	for _, tc := range tests {
		err := s.CommitPlan(ctx, "run", tc.v)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), `"run"`, "%s: the error names the run", tc.name)
		assert.NotErrorIs(t, err, store.ErrNotFound, tc.name)
	}
	assert.Empty(t, load(t, s, "run").Plans)
	require.NoError(t, s.CommitPlan(ctx, "run", store.PlanVersion{Version: 0, Plan: planJSON("a")}))
	require.NoError(t, s.CommitPlan(ctx, "run", store.PlanVersion{Version: 1, Plan: planJSON("a", "b")}))
	err := s.CommitPlan(ctx, "run", store.PlanVersion{Version: 3, Plan: planJSON("a")})
	require.Error(t, err, "a gap in the versions")
	assert.Contains(t, err.Error(), "version 3")
	assert.Len(t, load(t, s, "run").Plans, 2)
	assert.Error(t, s.CommitTask(ctx, "run", store.Task{ID: "a", Version: -1, Status: "done"}), "a task of a negative version")
}

// Every committed state is kept, one per task and version: Tasks holds each
// task's state of its highest version, Commits all of them by version then
// task id, and a commit replaces the state of its task and version only.
func testTaskVersions(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("run"))
	commits := []store.Task{
		{ID: "c", Version: 0, Status: "waiting", Attempts: 1},
		{ID: "a", Version: 0, Status: "done", Attempts: 1, Output: json.RawMessage(`"a0"`)},
		{ID: "b", Version: 0, Status: "failed", Attempts: 3, Error: "timeout"},
		{ID: "d", Version: 1, Status: "done", Attempts: 1, Output: json.RawMessage(`"d1"`)},
		{ID: "b", Version: 1, Status: "done", Attempts: 1, Output: json.RawMessage(`"b1"`)},
		{ID: "a", Version: 2, Status: "failed", Attempts: 2, Error: "boom"},
	}
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range commits {
		commits[i].Committed = t0.Add(time.Duration(i) * time.Second)
		require.NoError(t, s.CommitTask(ctx, "run", commits[i]))
	}
	c0, a0, b0, d1, b1, a2 := commits[0], commits[1], commits[2], commits[3], commits[4], commits[5]
	check := func(wantCommits []store.Task, wantTasks map[string]store.Task) {
		t.Helper()
		rec := load(t, s, "run")
		require.Len(t, rec.Commits, len(wantCommits))
		for i := range wantCommits {
			checkTask(t, wantCommits[i], rec.Commits[i])
		}
		require.Len(t, rec.Tasks, len(wantTasks))
		for id, want := range wantTasks {
			checkTask(t, want, rec.Tasks[id])
		}
	}
	latest := map[string]store.Task{"a": a2, "b": b1, "c": c0, "d": d1}
	check([]store.Task{a0, b0, c0, b1, d1, a2}, latest)

	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, 2, list[0].Done, "tasks whose latest state is done: b and d, not a")

	b0again := store.Task{ID: "b", Version: 0, Status: "done", Attempts: 4, Output: json.RawMessage(`"b0"`), Committed: t0.Add(time.Hour)}
	require.NoError(t, s.CommitTask(ctx, "run", b0again))
	check([]store.Task{a0, b0again, c0, b1, d1, a2}, latest)
	c1 := store.Task{ID: "c", Version: 1, Status: "done", Attempts: 1, Output: json.RawMessage(`"c1"`), Committed: t0.Add(2 * time.Hour)}
	require.NoError(t, s.CommitTask(ctx, "run", c1))
	check([]store.Task{a0, b0again, c0, b1, c1, d1, a2}, map[string]store.Task{"a": a2, "b": b1, "c": c1, "d": d1})
	list, err = s.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, list[0].Done)
}

// List counts and hashes the run's latest plan version.
func testLatestPlanInList(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	replanned, started, other := newRun("replanned"), newRun("started"), newRun("other")
	replanned.Created, started.Created, other.Created = t0, t0.Add(time.Hour), t0.Add(2*time.Hour)
	other.Plan = planJSON("a", "fix-b", "d", "e")
	for _, r := range []store.Run{replanned, started, other} {
		create(t, s, r)
	}
	summaries := func() map[string]store.Summary {
		t.Helper()
		list, err := s.List(ctx)
		require.NoError(t, err)
		m := map[string]store.Summary{}
		for _, sm := range list {
			m[sm.ID] = sm
		}
		return m
	}
	sm := summaries()
	assert.Equal(t, sm["replanned"].PlanHash, sm["started"].PlanHash)
	assert.Equal(t, 3, sm["replanned"].Total)

	require.NoError(t, s.CommitPlan(ctx, "replanned", store.PlanVersion{Version: 0, Plan: replanned.Plan}))
	sm = summaries()
	assert.Equal(t, sm["started"].PlanHash, sm["replanned"].PlanHash, "version 0 is the same plan")
	require.NoError(t, s.CommitPlan(ctx, "replanned", store.PlanVersion{Version: 1, Plan: planJSON("a", "fix-b"), Trial: json.RawMessage(`{}`)}))
	require.NoError(t, s.CommitPlan(ctx, "replanned", store.PlanVersion{Version: 2, Plan: other.Plan, Trial: json.RawMessage(`{}`)}))
	sm = summaries()
	assert.Equal(t, 4, sm["replanned"].Total, "the tasks of the latest plan")
	assert.Equal(t, sm["other"].PlanHash, sm["replanned"].PlanHash, "the hash of the latest plan")
	assert.NotEqual(t, sm["started"].PlanHash, sm["replanned"].PlanHash)
	assert.Equal(t, 3, sm["started"].Total, "other runs are untouched")
	assert.False(t, sm["replanned"].Updated.Before(sm["replanned"].Created))
}

// A batch commits its tasks as CommitTask would, in order (a later state of
// a task and version replaces an earlier one), and appends its events after
// the run's last one, in order, whatever its size.
func testBatch(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("run"))
	require.NoError(t, s.AppendEvents(ctx, "run", []store.Event{{Kind: "run_started", Time: time.Now()}}))
	require.NoError(t, s.CommitBatch(ctx, "run", store.Batch{}), "an empty batch")
	const n = 137 // not a round number of anything
	var b store.Batch
	for i := range n {
		id := fmt.Sprintf("t%03d", i)
		b.Tasks = append(b.Tasks, store.Task{ID: id, Status: "done", Attempts: 1, Output: json.RawMessage(fmt.Sprint(i))})
		b.Events = append(b.Events, store.Event{Kind: "task_finished", TaskID: id, Time: time.Now()})
	}
	again := store.Task{ID: "t005", Status: "failed", Attempts: 2, Error: "boom", Committed: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	b.Tasks = append(b.Tasks, again, store.Task{ID: "t005", Version: 1, Status: "done", Output: json.RawMessage(`"v1"`)})
	require.NoError(t, s.CommitBatch(ctx, "run", b))
	require.NoError(t, s.CommitBatch(ctx, "run", store.Batch{Events: []store.Event{{Kind: "run_finished", Time: time.Now()}}}), "events alone")
	require.NoError(t, s.CommitBatch(ctx, "run", store.Batch{Tasks: []store.Task{{ID: "last", Status: "done"}}}), "tasks alone")

	rec := load(t, s, "run")
	assert.Len(t, rec.Tasks, n+1)
	assert.Len(t, rec.Commits, n+2, "every task of version 0, t005 of version 1, last")
	jsonEq(t, json.RawMessage(`42`), rec.Tasks["t042"].Output, "t042")
	jsonEq(t, json.RawMessage(`"v1"`), rec.Tasks["t005"].Output, "t005's latest version")
	for _, c := range rec.Commits {
		if c.ID == "t005" && c.Version == 0 {
			checkTask(t, again, c)
		}
	}
	require.Len(t, rec.Events, n+2)
	for i, e := range rec.Events {
		assert.Equal(t, i+1, e.Seq)
		switch {
		case i == 0:
			assert.Equal(t, "run_started", e.Kind)
		case i == n+1:
			assert.Equal(t, "run_finished", e.Kind)
		default:
			assert.Equal(t, fmt.Sprintf("t%03d", i-1), e.TaskID, "events in order")
		}
	}
	assert.ErrorIs(t, s.CommitBatch(ctx, "nope", store.Batch{Tasks: []store.Task{{ID: "a", Status: "done"}}}), store.ErrNotFound, "tasks of an unknown run")
	assert.ErrorIs(t, s.CommitBatch(ctx, "nope", store.Batch{Events: []store.Event{{Kind: "run_started"}}}), store.ErrNotFound, "events of an unknown run")
}

// A batch is recorded whole or not at all.
func testBatchIsAtomic(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("run"))
	good := store.Task{ID: "a", Status: "done", Output: json.RawMessage(`1`)}
	ev := store.Event{Kind: "task_finished", TaskID: "a", Time: time.Now()}
	tests := map[string]store.Batch{
		"an output that is not JSON":  {Tasks: []store.Task{good, {ID: "b", Status: "done", Output: json.RawMessage(`{oops`)}}, Events: []store.Event{ev}},
		"a task without an id":        {Tasks: []store.Task{good, {Status: "done"}}, Events: []store.Event{ev}},
		"a negative version":          {Tasks: []store.Task{good, {ID: "b", Version: -1, Status: "done"}}},
		"an event without a kind":     {Tasks: []store.Task{good}, Events: []store.Event{ev, {TaskID: "a"}}},
		"event data that is not JSON": {Tasks: []store.Task{good}, Events: []store.Event{{Kind: "x", Data: json.RawMessage(`nope`)}}},
	}
	for name, b := range tests {
		err := s.CommitBatch(ctx, "run", b)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), `"run"`, "%s: the error names the run", name)
	}
	rec := load(t, s, "run")
	assert.Empty(t, rec.Tasks, "nothing of a refused batch is recorded")
	assert.Empty(t, rec.Events, "nothing of a refused batch is recorded")
}

func owner(id string) store.Owner {
	return store.Owner{ID: id, PID: 4242, Host: "host-" + id, Started: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// A run has at most one owner: the lease is taken, held against others,
// refreshed, and given up.
func testLease(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("r"))
	assert.Nil(t, load(t, s, "r").Owner, "a new run has no owner")
	err := s.Acquire(ctx, "nope", owner("a"), nil)
	assert.ErrorIs(t, err, store.ErrNotFound)

	a, b := owner("a"), owner("b")
	require.NoError(t, s.Acquire(ctx, "r", a, nil))
	got := load(t, s, "r").Owner
	require.NotNil(t, got)
	assert.Equal(t, a.ID, got.ID)
	assert.Equal(t, a.PID, got.PID)
	assert.Equal(t, a.Host, got.Host)
	sameTime(t, a.Started, got.Started, "started")
	assert.WithinDuration(t, time.Now(), got.Heartbeat, time.Minute, "a zero heartbeat is now")
	require.NoError(t, s.Acquire(ctx, "r", a, nil), "an owner takes its own run again")

	err = s.Acquire(ctx, "r", b, nil)
	require.ErrorIs(t, err, store.ErrOwned)
	var owned *store.OwnedError
	require.ErrorAs(t, err, &owned)
	assert.Equal(t, "r", owned.RunID)
	assert.Equal(t, a.ID, owned.Owner.ID)
	assert.ErrorIs(t, s.Acquire(ctx, "r", b, func(store.Owner) bool { return false }), store.ErrOwned)
	assert.Equal(t, a.ID, load(t, s, "r").Owner.ID, "a refusal changes nothing")

	before := load(t, s, "r").Owner.Heartbeat
	time.Sleep(2 * time.Millisecond)
	require.NoError(t, s.Heartbeat(ctx, "r", a))
	assert.True(t, load(t, s, "r").Owner.Heartbeat.After(before), "the heartbeat moves on")
	assert.ErrorIs(t, s.Heartbeat(ctx, "r", b), store.ErrNotOwner)

	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.NotNil(t, list[0].Owner)
	assert.Equal(t, a.ID, list[0].Owner.ID)

	require.NoError(t, s.Release(ctx, "r", b), "releasing a lease one does not hold does nothing")
	assert.NotNil(t, load(t, s, "r").Owner)
	require.NoError(t, s.Release(ctx, "r", a))
	assert.Nil(t, load(t, s, "r").Owner)
	list, err = s.List(ctx)
	require.NoError(t, err)
	assert.Nil(t, list[0].Owner)
	require.NoError(t, s.Acquire(ctx, "r", b, nil), "a released run is free")
}

// An owner that dead reports dead is replaced; the replaced one's
// heartbeat then fails, and its release leaves the new owner in place.
func testLeaseTakeover(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("r"))
	a, b := owner("a"), owner("b")
	require.NoError(t, s.Acquire(ctx, "r", a, nil))
	var asked []string
	require.NoError(t, s.Acquire(ctx, "r", b, func(o store.Owner) bool {
		asked = append(asked, o.ID)
		return o.ID == "a"
	}))
	assert.Equal(t, []string{"a"}, asked, "dead is asked about the owner")
	assert.Equal(t, "b", load(t, s, "r").Owner.ID)
	assert.ErrorIs(t, s.Heartbeat(ctx, "r", a), store.ErrNotOwner)
	require.NoError(t, s.Release(ctx, "r", a))
	assert.Equal(t, "b", load(t, s, "r").Owner.ID)
}

// Of owners acquiring one run at once, one gets it.
func testLeaseRace(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("r"))
	const n = 8
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs <- s.Acquire(ctx, "r", owner(fmt.Sprint(i)), nil) })
	}
	wg.Wait()
	close(errs)
	won := 0
	for err := range errs {
		if err == nil {
			won++
			continue
		}
		assert.ErrorIs(t, err, store.ErrOwned)
	}
	assert.Equal(t, 1, won)
}

// The processes of a run are recorded in order, durably, apart from other
// runs', and forgotten all at once.
func testProcesses(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("r"))
	create(t, s, newRun("other"))
	assert.Empty(t, load(t, s, "r").Processes, "a new run has no processes")
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	first := store.Process{TaskID: "a", Attempt: 1, Key: "r/a/1", PGID: 4242, Host: "h", BootID: "b-1", Start: 1 << 40, Recorded: at}
	second := store.Process{TaskID: "b", Attempt: 2, Key: "r/b/2", PGID: 17, Host: "h"}
	require.NoError(t, s.RecordProcess(ctx, "r", first))
	require.NoError(t, s.RecordProcess(ctx, "r", second))
	require.NoError(t, s.RecordProcess(ctx, "other", first))
	assert.ErrorIs(t, s.RecordProcess(ctx, "nope", first), store.ErrNotFound)
	assert.ErrorIs(t, s.ForgetProcesses(ctx, "nope"), store.ErrNotFound)

	require.NoError(t, s.Close())
	s = open(t)
	got := load(t, s, "r").Processes
	require.Len(t, got, 2)
	sameTime(t, first.Recorded, got[0].Recorded, "recorded")
	assert.WithinDuration(t, time.Now(), got[1].Recorded, time.Minute, "a zero time is now")
	got[0].Recorded, got[1].Recorded, second.Recorded = first.Recorded, time.Time{}, time.Time{}
	assert.Equal(t, []store.Process{first, second}, got)

	require.NoError(t, s.ForgetProcesses(ctx, "r"))
	assert.Empty(t, load(t, s, "r").Processes)
	assert.Len(t, load(t, s, "other").Processes, 1, "another run's processes are kept")
	require.NoError(t, s.ForgetProcesses(ctx, "r"), "forgetting nothing is no error")
}

// A reader of a run's events reads those after the last it saw, whatever
// the transactions that appended them.
func testEventsAfter(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("r"))
	create(t, s, newRun("other"))
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	ev := func(kind string) store.Event {
		return store.Event{Kind: kind, Time: at, TaskID: "a", Data: json.RawMessage(`{"n":1}`)}
	}
	got, err := s.EventsAfter(ctx, "r", 0)
	require.NoError(t, err)
	assert.Empty(t, got, "a new run has no events")
	require.NoError(t, s.AppendEvents(ctx, "r", []store.Event{ev("e1"), ev("e2"), ev("e3")}))
	require.NoError(t, s.AppendEvents(ctx, "other", []store.Event{ev("x")}))
	require.NoError(t, s.CommitBatch(ctx, "r", store.Batch{Events: []store.Event{ev("e4"), ev("e5")}}))
	for _, tc := range []struct {
		after int
		want  []string
	}{
		{0, []string{"e1", "e2", "e3", "e4", "e5"}},
		{1, []string{"e2", "e3", "e4", "e5"}},
		{3, []string{"e4", "e5"}},
		{4, []string{"e5"}},
		{5, nil},
		{9, nil},
	} {
		got, err := s.EventsAfter(ctx, "r", tc.after)
		require.NoError(t, err)
		var kinds []string
		for k, e := range got {
			kinds = append(kinds, e.Kind)
			assert.Equal(t, tc.after+k+1, e.Seq, "after %d", tc.after)
			assert.Equal(t, "a", e.TaskID)
			jsonEq(t, json.RawMessage(`{"n":1}`), e.Data, "data")
			sameTime(t, at, e.Time, "time")
		}
		assert.Equal(t, tc.want, kinds, "after %d", tc.after)
	}
	_, err = s.EventsAfter(ctx, "nope", 0)
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// A run is deleted with all it holds, unless a live owner holds it.
func testDeleteRun(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("r"))
	create(t, s, newRun("kept"))
	require.NoError(t, s.CommitPlan(ctx, "r", store.PlanVersion{Plan: planJSON("a")}))
	require.NoError(t, s.CommitTask(ctx, "r", store.Task{ID: "a", Status: "done", Output: json.RawMessage(`1`)}))
	require.NoError(t, s.AppendEvents(ctx, "r", []store.Event{{Kind: "run_started", Time: time.Now()}}))
	require.NoError(t, s.RecordExchange(ctx, "r", "k", json.RawMessage(`{}`)))
	require.NoError(t, s.RecordProcess(ctx, "r", store.Process{TaskID: "a", Attempt: 1, PGID: 7, Host: "h"}))
	a := owner("a")
	require.NoError(t, s.Acquire(ctx, "r", a, nil))

	err := s.DeleteRun(ctx, "r", nil)
	var owned *store.OwnedError
	require.ErrorAs(t, err, &owned, "a run with an owner is kept")
	assert.Equal(t, a.ID, owned.Owner.ID)
	assert.ErrorIs(t, s.DeleteRun(ctx, "r", func(store.Owner) bool { return false }), store.ErrOwned)
	assert.Equal(t, a.ID, load(t, s, "r").Owner.ID, "a refusal changes nothing")

	require.NoError(t, s.DeleteRun(ctx, "r", func(o store.Owner) bool { return o.ID == a.ID }), "a dead owner's run is deleted")
	_, err = s.Load(ctx, "r")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.EventsAfter(ctx, "r", 0)
	assert.ErrorIs(t, err, store.ErrNotFound)
	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "kept", list[0].ID)
	assert.ErrorIs(t, s.DeleteRun(ctx, "r", nil), store.ErrNotFound)

	// Created anew without a plan: a plan version would be the deleted run's.
	create(t, s, store.Run{ID: "r"})
	rec := load(t, s, "r")
	assert.Empty(t, rec.Plans, "nothing of the deleted run is left")
	assert.Empty(t, rec.Tasks)
	assert.Empty(t, rec.Events)
	assert.Empty(t, rec.Exchanges)
	assert.Empty(t, rec.Processes)
	assert.Nil(t, rec.Owner)
	require.NoError(t, s.DeleteRun(ctx, "r", nil), "a run without an owner is deleted")
}

// A cancel is requested of the run's owner, which sees it until the run
// is acquired again.
func testCancelRequest(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	create(t, s, newRun("r"))
	create(t, s, newRun("other"))
	a, b := owner("a"), owner("b")
	assert.ErrorIs(t, s.RequestCancel(ctx, "r", a), store.ErrNotOwner, "a run without an owner")
	require.NoError(t, s.Acquire(ctx, "r", a, nil))
	require.NoError(t, s.Acquire(ctx, "other", b, nil))
	req, err := s.CancelRequested(ctx, "r", a)
	require.NoError(t, err)
	assert.False(t, req)
	assert.ErrorIs(t, s.RequestCancel(ctx, "r", b), store.ErrNotOwner, "b does not own r")

	require.NoError(t, s.RequestCancel(ctx, "r", a))
	require.NoError(t, s.RequestCancel(ctx, "r", a), "a second request is one")
	req, err = s.CancelRequested(ctx, "r", a)
	require.NoError(t, err)
	assert.True(t, req)
	req, err = s.CancelRequested(ctx, "other", b)
	require.NoError(t, err)
	assert.False(t, req, "the request is for one run")
	require.NoError(t, s.Heartbeat(ctx, "r", a))
	req, err = s.CancelRequested(ctx, "r", a)
	require.NoError(t, err)
	assert.True(t, req, "a heartbeat keeps the request")

	_, err = s.CancelRequested(ctx, "r", b)
	assert.ErrorIs(t, err, store.ErrNotOwner)
	require.NoError(t, s.Acquire(ctx, "r", b, func(store.Owner) bool { return true }))
	req, err = s.CancelRequested(ctx, "r", b)
	require.NoError(t, err)
	assert.False(t, req, "a new owner starts without the request")
	_, err = s.CancelRequested(ctx, "r", a)
	assert.ErrorIs(t, err, store.ErrNotOwner, "the replaced owner")

	_, err = s.CancelRequested(ctx, "nope", a)
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.ErrorIs(t, s.RequestCancel(ctx, "nope", a), store.ErrNotFound)
}

// Outcomes reads the newest runs' task states with their agents, tools and
// failure classes.
func testOutcomes(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	got, err := s.Outcomes(ctx, 5)
	require.NoError(t, err)
	assert.Empty(t, got, "no runs")

	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	old := newRun("old")
	old.Created = base
	create(t, s, old)
	require.NoError(t, s.CommitTask(ctx, "old", store.Task{ID: "a", Status: "failed", Error: "boom"}))

	mid := newRun("mid")
	mid.Created = base.Add(time.Hour)
	create(t, s, mid)
	require.NoError(t, s.CommitTask(ctx, "mid", store.Task{ID: "a", Status: "done"}))
	v1 := json.RawMessage(`{"agents": {"writer": {"prompt": "write", "tools": ["search", "fetch"]}},
		"tasks": [{"id": "a", "agent": "worker", "input": "x"}, {"id": "w", "agent": "writer", "input": "y"}]}`)
	require.NoError(t, s.CommitPlan(ctx, "mid", store.PlanVersion{Version: 1, Plan: v1}))
	require.NoError(t, s.CommitBatch(ctx, "mid", store.Batch{
		Tasks: []store.Task{{ID: "w", Version: 1, Status: "failed", Error: "slow"}, {ID: "b", Version: 1, Status: "skipped"}},
		Events: []store.Event{
			{Kind: "task_failed", TaskID: "w", Data: json.RawMessage(`{"error": "slow", "class": "timeout"}`)},
			{Kind: "task_skipped", TaskID: "b"},
		},
	}))

	fresh := newRun("new")
	fresh.Created = base.Add(2 * time.Hour)
	create(t, s, fresh)

	got, err = s.Outcomes(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, []store.TaskOutcome{
		{RunID: "mid", TaskID: "a", Agent: "worker", Status: "done"},
		{RunID: "mid", Version: 1, TaskID: "b", Status: "skipped"},
		{RunID: "mid", Version: 1, TaskID: "w", Agent: "writer", Tools: []string{"search", "fetch"}, Status: "failed", Class: "timeout", Error: "slow"},
	}, got, "the two newest runs, new first; old is beyond them")

	got, err = s.Outcomes(ctx, 10)
	require.NoError(t, err)
	require.Len(t, got, 4)
	assert.Equal(t, store.TaskOutcome{RunID: "old", TaskID: "a", Agent: "worker", Status: "failed", Error: "boom"}, got[3])

	got, err = s.Outcomes(ctx, 0)
	require.NoError(t, err)
	assert.Empty(t, got, "no runs asked for")
}

// A cached plan is found under its key until another replaces it.
func testPlanCache(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	_, err := s.CachedPlan(ctx, "k")
	assert.ErrorIs(t, err, store.ErrNotCached)

	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	require.NoError(t, s.CachePlan(ctx, store.CachedPlan{Key: "k", Mission: "m", Plan: planJSON("a"), RunID: "r1", Stored: at}))
	got, err := s.CachedPlan(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "k", got.Key)
	assert.Equal(t, "m", got.Mission)
	assert.Equal(t, "r1", got.RunID)
	jsonEq(t, planJSON("a"), got.Plan, "plan")
	sameTime(t, at, got.Stored, "stored")

	require.NoError(t, s.CachePlan(ctx, store.CachedPlan{Key: "k", Mission: "m", Plan: planJSON("b"), RunID: "r2"}))
	got, err = s.CachedPlan(ctx, "k")
	require.NoError(t, err)
	jsonEq(t, planJSON("b"), got.Plan, "the later plan replaces the earlier")
	assert.Equal(t, "r2", got.RunID)
	assert.False(t, got.Stored.IsZero(), "stored now")

	_, err = s.CachedPlan(ctx, "other")
	assert.ErrorIs(t, err, store.ErrNotCached, "another key")
	assert.Error(t, s.CachePlan(ctx, store.CachedPlan{Plan: planJSON("a")}), "no key")
	assert.Error(t, s.CachePlan(ctx, store.CachedPlan{Key: "k", Plan: json.RawMessage(`{`)}), "not JSON")

	s.Close()
	s = open(t)
	got, err = s.CachedPlan(ctx, "k")
	require.NoError(t, err, "survives reopening")
	jsonEq(t, planJSON("b"), got.Plan, "plan after reopening")
}
