package durable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dagent-dev/dagent/store"
)

// ErrPruneLive: [Prune] was asked to delete running runs; a run a live
// process owns is never deleted.
var ErrPruneLive = errors.New("a run a live process owns is never deleted")

// PruneQuery selects the runs [Prune] deletes.
type PruneQuery struct {
	// Before keeps the runs last updated ([Summary.Updated]) before it;
	// it must be given.
	Before time.Time
	// Statuses keeps the runs shown with one of these statuses (see
	// [ShownStatuses]); none: [EndedStatuses]. Interrupted runs are
	// deleted only when asked for; running ones never are.
	Statuses []Status
	// DryRun selects the runs and deletes none: the result lists those
	// that would be deleted, and the store is not written.
	DryRun bool
}

// Pruned is a run [Prune] deleted, or would delete.
type Pruned struct {
	ID      string    `json:"id"`
	Status  Status    `json:"status"` // as shown
	Updated time.Time `json:"updated"`
}

// PruneResult is what [Prune] did.
type PruneResult struct {
	// Deleted lists the runs deleted (with DryRun, those that would be),
	// newest first; empty, never nil, when none was.
	Deleted []Pruned
	// Kept counts the runs selected that a process took over meanwhile —
	// it resumed them — and that were kept.
	Kept int
}

// Prune deletes from s the runs q selects, each with all it holds
// ([store.Store.DeleteRun]). A run a live process owns is never deleted:
// one selected is left out, and one a process resumes between the
// selection and its deletion is kept (the store checks its owner in the
// deleting transaction) and counted in Kept. A run deleted meanwhile by
// another process is left out. Asking for running runs is refused with
// [ErrPruneLive], an unknown status with [ErrUnknownStatus].
func Prune(ctx context.Context, s store.Store, q PruneQuery) (*PruneResult, error) {
	if q.Before.IsZero() {
		return nil, errors.New("prune: no time given: the runs last updated before when?")
	}
	statuses := q.Statuses
	if len(statuses) == 0 {
		statuses = EndedStatuses()
	}
	if slices.Contains(statuses, StatusRunning) {
		return nil, fmt.Errorf("prune: status %s: %w", StatusRunning, ErrPruneLive)
	}
	page, err := list(ctx, s, store.RunQuery{UpdatedBefore: q.Before}, statuses)
	if err != nil {
		return nil, err
	}
	dead := func(o store.Owner) bool { return !Alive(o, DefaultStaleAfter) }
	res := &PruneResult{Deleted: []Pruned{}}
	for _, r := range page.Runs {
		if r.Live {
			continue
		}
		if !q.DryRun {
			err := s.DeleteRun(ctx, r.ID, dead)
			switch {
			case errors.Is(err, store.ErrNotFound):
				continue
			case errors.Is(err, store.ErrOwned):
				res.Kept++
				continue
			case err != nil:
				return nil, err
			}
		}
		res.Deleted = append(res.Deleted, Pruned{ID: r.ID, Status: r.Status, Updated: r.Updated})
	}
	return res, nil
}
