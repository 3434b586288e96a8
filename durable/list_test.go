package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// statusJournal holds a run of each status, newest first: live (running,
// its owner alive), dead (running, its owner's process ended), orphan
// (running, no owner), then completed, failed, waiting, replan and
// cancelled runs, each made a minute before the one above.
func statusJournal(t *testing.T) (*sqlite.Store, store.Owner) {
	t.Helper()
	ctx := context.Background()
	s := openStore(t)
	host, err := os.Hostname()
	require.NoError(t, err)
	alive := store.Owner{ID: "alive", PID: os.Getppid(), Host: host, Started: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC), Heartbeat: time.Date(2025, 1, 2, 0, 1, 0, 0, time.UTC)}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := []struct {
		id     string
		status durable.Status
		owner  *store.Owner
	}{
		{"cancelled", durable.StatusCancelled, nil},
		{"replan", durable.StatusReplanRequired, nil},
		{"waiting", durable.StatusWaiting, nil},
		{"failed", durable.StatusFailed, nil},
		{"completed", durable.StatusCompleted, nil},
		{"orphan", durable.StatusRunning, nil},
		{"dead", durable.StatusRunning, &store.Owner{ID: "dead", PID: deadPID(t), Host: host}},
		{"live", durable.StatusRunning, &alive},
	}
	for i, r := range runs {
		require.NoError(t, s.CreateRun(ctx, store.Run{ID: r.id, Mission: "mission " + r.id, Plan: json.RawMessage(`{"tasks": [{"id": "a"}, {"id": "b"}]}`), Created: t0.Add(time.Duration(i) * time.Minute)}))
		require.NoError(t, s.CommitTask(ctx, r.id, store.Task{ID: "a", Status: "done", Committed: t0.Add(time.Duration(i)*time.Minute + time.Second)}))
		if r.status != durable.StatusRunning {
			require.NoError(t, s.SetStatus(ctx, r.id, string(r.status), ""))
		}
		if r.owner != nil {
			require.NoError(t, s.Acquire(ctx, r.id, *r.owner, nil))
		}
	}
	return s, alive
}

func TestList(t *testing.T) {
	ctx := context.Background()
	s, _ := statusJournal(t)
	newest := []string{"live", "dead", "orphan", "completed", "failed", "waiting", "replan", "cancelled"}
	tests := []struct {
		name     string
		q        durable.Query
		want     []string
		total    int
		statuses []durable.Status // shown, of want
	}{
		{"all", durable.Query{}, newest, 8, []durable.Status{"running", "interrupted", "interrupted", "completed", "failed", "waiting", "replan_required", "cancelled"}},
		{"running, live only", durable.Query{Statuses: []durable.Status{durable.StatusRunning}}, []string{"live"}, 1, nil},
		{"interrupted", durable.Query{Statuses: []durable.Status{durable.StatusInterrupted}}, []string{"dead", "orphan"}, 2, nil},
		{"running and interrupted", durable.Query{Statuses: []durable.Status{durable.StatusInterrupted, durable.StatusRunning}}, []string{"live", "dead", "orphan"}, 3, nil},
		{"interrupted and ended", durable.Query{Statuses: []durable.Status{durable.StatusFailed, durable.StatusInterrupted, durable.StatusCancelled}}, []string{"dead", "orphan", "failed", "cancelled"}, 4, nil},
		{"running and ended", durable.Query{Statuses: []durable.Status{durable.StatusRunning, durable.StatusWaiting}}, []string{"live", "waiting"}, 2, nil},
		{"a status no run has", durable.Query{Statuses: []durable.Status{durable.StatusCompleted, durable.StatusCompleted}}, []string{"completed"}, 1, nil},
		{"a page", durable.Query{Limit: 3, Offset: 2}, newest[2:5], 8, nil},
		{"a page of a status split in Go", durable.Query{Statuses: []durable.Status{durable.StatusInterrupted, durable.StatusReplanRequired}, Limit: 2, Offset: 1}, []string{"orphan", "replan"}, 3, nil},
		{"past the last page", durable.Query{Limit: 3, Offset: 8}, []string{}, 8, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := durable.List(ctx, s, tt.q)
			require.NoError(t, err)
			ids := []string{}
			for _, r := range page.Runs {
				ids = append(ids, r.ID)
				if len(tt.q.Statuses) > 0 {
					assert.Contains(t, tt.q.Statuses, r.Status, r.ID)
				}
			}
			assert.Equal(t, tt.want, ids)
			assert.Equal(t, tt.total, page.Total)
			if tt.statuses != nil {
				var got []durable.Status
				for _, r := range page.Runs {
					got = append(got, r.Status)
				}
				assert.Equal(t, tt.statuses, got)
			}
		})
	}

	_, err := durable.List(ctx, s, durable.Query{Statuses: []durable.Status{"lost"}})
	require.ErrorIs(t, err, durable.ErrUnknownStatus)
	assert.EqualError(t, err, `unknown status "lost"; use one of running, interrupted, completed, failed, waiting, replan_required, cancelled`)
	_, err = durable.List(ctx, s, durable.Query{Limit: -1})
	assert.Error(t, err)
}

// A summary is what the journal holds of the run, with its status shown
// and its owner; its JSON form is an element of dagent runs --format json.
func TestSummary(t *testing.T) {
	ctx := context.Background()
	s, alive := statusJournal(t)
	page, err := durable.List(ctx, s, durable.Query{Limit: 3})
	require.NoError(t, err)
	live, dead, orphan := page.Runs[0], page.Runs[1], page.Runs[2]
	assert.Equal(t, durable.Summary{
		ID: "live", Created: time.Date(2025, 1, 1, 0, 7, 0, 0, time.UTC), Updated: time.Date(2025, 1, 1, 0, 7, 1, 0, time.UTC),
		Status: durable.StatusRunning, Journaled: durable.StatusRunning, Live: true,
		Owner: &durable.Owner{PID: alive.PID, Host: alive.Host, Started: alive.Started, Heartbeat: alive.Heartbeat},
		Done:  1, Total: 2, Mission: "mission live", PlanHash: live.PlanHash,
	}, normalized(live))
	assert.Len(t, live.PlanHash, 12)
	assert.Equal(t, durable.StatusInterrupted, dead.Status)
	assert.Equal(t, durable.StatusRunning, dead.Journaled)
	assert.False(t, dead.Live)
	assert.NotNil(t, dead.Owner, "a dead owner is shown")
	assert.Nil(t, orphan.Owner)

	b, err := json.Marshal(normalized(orphan))
	require.NoError(t, err)
	assert.JSONEq(t, fmt.Sprintf(`{"id": "orphan", "created": "2025-01-01T00:05:00Z", "updated": "2025-01-01T00:05:01Z",
		"status": "running", "live": false, "owner": null, "done": 1, "total": 2, "mission": "mission orphan", "plan_hash": %q}`, orphan.PlanHash), string(b))
	b, err = json.Marshal(normalized(live))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, map[string]any{"pid": float64(alive.PID), "host": alive.Host, "started": "2025-01-02T00:00:00Z", "heartbeat": "2025-01-02T00:01:00Z"}, doc["owner"])
}

// normalized is r with its times in UTC, as they were given.
func normalized(r durable.Summary) durable.Summary {
	r.Created, r.Updated = r.Created.UTC(), r.Updated.UTC()
	if r.Owner != nil {
		o := *r.Owner
		o.Started, o.Heartbeat = o.Started.UTC(), o.Heartbeat.UTC()
		r.Owner = &o
	}
	return r
}

func TestShown(t *testing.T) {
	ctx := context.Background()
	s, _ := statusJournal(t)
	for id, want := range map[string]struct {
		status durable.Status
		live   bool
	}{
		"live":      {durable.StatusRunning, true},
		"dead":      {durable.StatusInterrupted, false},
		"orphan":    {durable.StatusInterrupted, false},
		"waiting":   {durable.StatusWaiting, false},
		"cancelled": {durable.StatusCancelled, false},
	} {
		r, err := durable.Load(ctx, s, id)
		require.NoError(t, err)
		status, live := r.Shown()
		assert.Equal(t, want.status, status, id)
		assert.Equal(t, want.live, live, id)
	}
}

func TestParseStatus(t *testing.T) {
	for _, st := range durable.ShownStatuses() {
		got, err := durable.ParseStatus(string(st))
		require.NoError(t, err)
		assert.Equal(t, st, got)
	}
	_, err := durable.ParseStatus("Running")
	assert.ErrorIs(t, err, durable.ErrUnknownStatus, "statuses are lower-case")
	assert.Equal(t, []durable.Status{"completed", "failed", "waiting", "replan_required", "cancelled"}, durable.EndedStatuses())
}

// A run is loaded by the beginning of its id when that names one run.
func TestLoadByPrefix(t *testing.T) {
	ctx := context.Background()
	s, _ := statusJournal(t)
	r, err := durable.Load(ctx, s, "wai")
	require.NoError(t, err)
	assert.Equal(t, "waiting", r.ID)
	_, err = durable.Load(ctx, s, "zzz")
	assert.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "wait-2", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}))
	_, err = durable.Load(ctx, s, "wai")
	assert.EqualError(t, err, `"wai" is the beginning of 2 runs' ids (wait-2, waiting, ...); give more of it`)
	var ambiguous *durable.AmbiguousIDError
	require.ErrorAs(t, err, &ambiguous)
	assert.Equal(t, durable.AmbiguousIDError{Prefix: "wai", Runs: 2, IDs: []string{"wait-2", "waiting"}}, *ambiguous)
}
