package durable_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

func taskIDs(p *plan.Plan) []string {
	var ids []string
	for _, t := range p.Tasks {
		ids = append(ids, t.ID)
	}
	return ids
}

// A journaled run keeps its plan once, as its plan version 0: the spec
// journaled beside it leaves the plan out, and the run reads back with
// the plan it started with.
func TestJournalKeepsThePlanOnce(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	p := mustPlan(t, chain)
	_, err := durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("wc", newWorkers().agent()), durable.WithRunID("r"))
	require.NoError(t, err)

	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	var spec map[string]any
	require.NoError(t, json.Unmarshal(rec.Spec, &spec))
	assert.Nil(t, spec["plan"], "the journaled spec has no plan")
	require.Len(t, rec.Plans, 1)
	canon, err := p.Canonical()
	require.NoError(t, err)
	assert.Equal(t, string(canon), string(rec.Plans[0].Plan), "version 0 is the plan")
	assert.Equal(t, 3, rec.Plans[0].TaskCount)

	r, err := durable.Load(ctx, s, "r")
	require.NoError(t, err)
	require.NotNil(t, r.Spec.Plan, "the run started with its plan, not from a mission")
	assert.Same(t, r.Plans[0], r.Spec.Plan, "read once")
	assert.Equal(t, []string{"a", "b", "c"}, taskIDs(r.Spec.Plan))
}

// A run journaled by a dagent that kept its plan three times — in the
// spec, in the run's row and as version 0 — or crashed before it
// committed version 0, or kept it in the run's row only beside a spec of
// before versioned specs, loads, resumes and replays as it did.
func TestOldLayoutRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dagent.db")
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	p := mustPlan(t, chain)
	canon, err := p.Canonical()
	require.NoError(t, err)
	spec, err := json.Marshal(durable.Spec{Plan: p, Runner: durable.RunnerSpec{Concurrency: 2}})
	require.NoError(t, err)
	require.Contains(t, string(spec), `"tasks"`, "the spec as such holds its plan")
	legacy := []byte(`{"concurrency": 2, "schedule": "phased"}`) // before versioned specs
	for _, id := range []string{"old", "old-crashed", "legacy"} {
		doc := spec
		if id == "legacy" {
			doc = legacy
		}
		require.NoError(t, s.CreateRun(ctx, store.Run{ID: id, Spec: doc, Mission: "count the words"}))
		_, err = db.Exec(`UPDATE runs SET plan = ?, total = 3 WHERE id = ?`, string(canon), id)
		require.NoError(t, err)
		require.NoError(t, s.CommitTask(ctx, id, store.Task{ID: "a", Status: "done", Attempts: 1, Output: json.RawMessage(`{"words":1,"task":"a"}`)}))
		require.NoError(t, s.SetStatus(ctx, id, string(durable.StatusCancelled), ""))
	}
	require.NoError(t, s.CommitPlan(ctx, "old", store.PlanVersion{Plan: canon}))

	for _, tc := range []struct {
		id       string
		versions int
	}{
		{"old", 1},
		{"old-crashed", 0}, // it died before it committed version 0
		{"legacy", 0},
	} {
		t.Run(tc.id, func(t *testing.T) {
			r, err := durable.Load(ctx, s, tc.id)
			require.NoError(t, err)
			require.NotNil(t, r.Spec.Plan)
			assert.Equal(t, []string{"a", "b", "c"}, taskIDs(r.Spec.Plan))
			assert.Equal(t, 2, r.Spec.Runner.Concurrency)
			assert.Len(t, r.Plans, tc.versions)
			assert.Equal(t, []string{"a", "b", "c"}, r.Order)
			assert.True(t, r.Tasks["a"].Committed)

			w := newWorkers()
			out, err := durable.Resume(ctx, s, tc.id, durable.WithAgent("wc", w.agent()))
			require.NoError(t, err)
			assert.Equal(t, durable.StatusCompleted, out.Status)
			assert.Equal(t, 0, w.count("a"), "a done task never runs again")
			assert.Equal(t, 2, w.total())

			r, err = durable.Load(ctx, s, tc.id)
			require.NoError(t, err)
			require.Len(t, r.Plans, 1, "version 0 is journaled")
			assert.Equal(t, []string{"a", "b", "c"}, taskIDs(r.Plans[0]))

			rep, err := durable.Replay(ctx, s, tc.id, durable.WithAgent("wc", w.agent()))
			require.NoError(t, err)
			assert.True(t, rep.Identical, "%v", rep.Differences)
		})
	}
	list, err := s.List(ctx)
	require.NoError(t, err)
	for _, sm := range list {
		assert.Equal(t, 3, sm.Total, sm.ID)
	}
}
