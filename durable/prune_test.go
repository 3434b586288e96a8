package durable_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/store"
)

func TestPrune(t *testing.T) {
	ctx := context.Background()
	// Every run of statusJournal but the ended ones, whose status was
	// set now, was last updated in 2025.
	late := time.Date(2025, 1, 1, 1, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		q        durable.PruneQuery
		deleted  []string
		statuses []durable.Status
	}{
		{"ended, by default", durable.PruneQuery{Before: time.Now().Add(time.Hour)}, []string{"completed", "failed", "waiting", "replan", "cancelled"},
			[]durable.Status{"completed", "failed", "waiting", "replan_required", "cancelled"}},
		{"none updated before", durable.PruneQuery{Before: time.Now().Add(-time.Hour)}, []string{}, nil},
		{"interrupted", durable.PruneQuery{Before: late, Statuses: []durable.Status{durable.StatusInterrupted}}, []string{"dead", "orphan"},
			[]durable.Status{"interrupted", "interrupted"}},
		{"interrupted and failed", durable.PruneQuery{Before: time.Now().Add(time.Hour), Statuses: []durable.Status{durable.StatusFailed, durable.StatusInterrupted}},
			[]string{"dead", "orphan", "failed"}, nil},
	}
	for _, tt := range tests {
		for _, dry := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/dry run %v", tt.name, dry), func(t *testing.T) {
				s, _ := statusJournal(t)
				q := tt.q
				q.DryRun = dry
				res, err := durable.Prune(ctx, s, q)
				require.NoError(t, err)
				ids := []string{}
				var statuses []durable.Status
				for _, r := range res.Deleted {
					ids = append(ids, r.ID)
					statuses = append(statuses, r.Status)
					assert.True(t, r.Updated.Before(q.Before), r.ID)
				}
				assert.Equal(t, tt.deleted, ids)
				if tt.statuses != nil {
					assert.Equal(t, tt.statuses, statuses)
				}
				assert.Zero(t, res.Kept)
				left, err := s.List(ctx)
				require.NoError(t, err)
				want := 8
				if !dry {
					want -= len(tt.deleted)
				}
				assert.Len(t, left, want, "dry run %v", dry)
				assert.Equal(t, "live", left[0].ID, "a live run is never deleted")
			})
		}
	}

	s, _ := statusJournal(t)
	_, err := durable.Prune(ctx, s, durable.PruneQuery{Before: time.Now(), Statuses: []durable.Status{durable.StatusRunning}})
	assert.ErrorIs(t, err, durable.ErrPruneLive)
	_, err = durable.Prune(ctx, s, durable.PruneQuery{Before: time.Now(), Statuses: []durable.Status{"gone"}})
	assert.ErrorIs(t, err, durable.ErrUnknownStatus)
	_, err = durable.Prune(ctx, s, durable.PruneQuery{})
	assert.ErrorContains(t, err, "no time given")
}

// racingStore resumes or deletes runs between Prune's selection and its
// deletions, as another process would.
type racingStore struct {
	*store.SQLite
	resumed, deleted string
	owner            store.Owner
}

func (r *racingStore) DeleteRun(ctx context.Context, id string, dead func(store.Owner) bool) error {
	switch id {
	case r.resumed:
		if err := r.Acquire(ctx, id, r.owner, nil); err != nil {
			return err
		}
	case r.deleted:
		if err := r.SQLite.DeleteRun(ctx, id, nil); err != nil {
			return err
		}
	}
	return r.SQLite.DeleteRun(ctx, id, dead)
}

// A run resumed meanwhile is kept and counted; one deleted meanwhile is
// left out.
func TestPruneRaces(t *testing.T) {
	ctx := context.Background()
	s, alive := statusJournal(t)
	alive.ID = "resumer"
	rs := &racingStore{SQLite: s, resumed: "failed", deleted: "waiting", owner: alive}
	res, err := durable.Prune(ctx, rs, durable.PruneQuery{Before: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	var ids []string
	for _, r := range res.Deleted {
		ids = append(ids, r.ID)
	}
	assert.Equal(t, []string{"completed", "replan", "cancelled"}, ids)
	assert.Equal(t, 1, res.Kept)
	rec, err := s.Load(ctx, "failed")
	require.NoError(t, err)
	assert.Equal(t, "resumer", rec.Owner.ID)
	assert.Equal(t, os.Getppid(), rec.Owner.PID)
}
