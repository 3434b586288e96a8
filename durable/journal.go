package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// journal journals one run. The run is written to the store when it first
// has something to keep — its first plan, event, task or LLM exchange — so
// that a start that runs nothing (the plan was refused, no LLM is
// configured) leaves no run behind.
type journal struct {
	s store.Store
	j *store.Journal

	mu       sync.Mutex
	create   *store.Run     // the run to create; nil: it is journaled already
	seed     map[string]any // outputs to commit as done when it starts
	first    *plan.Plan     // the first plan, to commit when it starts
	started  bool           // the run is in the store, and marked running
	startErr error
}

// newJournal journals run id in s: a new run when create is set, else the
// continuation of the journaled run id. The outputs of initial are committed
// as done tasks that took no attempt when the run is first written, so
// that a resume finds them too.
func newJournal(s store.Store, id string, create *store.Run, initial map[string]any, version int) *journal {
	jr := &journal{s: s, create: create, seed: initial}
	jr.j = store.NewJournal(lazyStore{Store: s, jr: jr}, id)
	jr.j.SetVersion(version)
	return jr
}

// start puts the run in the store, once.
func (jr *journal) start(ctx context.Context, runID string) error {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	if jr.started || jr.startErr != nil {
		return jr.startErr
	}
	ctx = context.WithoutCancel(ctx)
	err := func() error {
		if jr.create != nil {
			if err := jr.s.CreateRun(ctx, *jr.create); err != nil {
				return err
			}
		} else if err := jr.s.SetStatus(ctx, runID, string(StatusRunning), ""); err != nil {
			return err
		}
		if jr.first != nil {
			raw, err := jr.first.Canonical()
			if err != nil {
				return err
			}
			if err := jr.s.CommitPlan(ctx, runID, store.PlanVersion{Plan: raw}); err != nil {
				return err
			}
		}
		for _, id := range slices.Sorted(maps.Keys(jr.seed)) {
			raw, err := json.Marshal(jr.seed[id])
			if err != nil {
				return fmt.Errorf("initial result for %s: %w", id, err)
			}
			if err := jr.s.CommitTask(ctx, runID, store.Task{ID: id, Status: string(runner.TaskDone), Output: raw}); err != nil {
				return err
			}
		}
		return nil
	}()
	jr.started, jr.startErr = err == nil, err
	return err
}

// CommitPlan implements [executor.Journal]. The first plan is committed
// when the run is first written, so that a plan the runner refuses leaves
// no run behind; a repair is committed at once, durably.
func (jr *journal) CommitPlan(ctx context.Context, c executor.PlanCommit) error {
	if c.Version == 0 {
		jr.mu.Lock()
		started := jr.started
		if !started {
			jr.first = c.Plan
		}
		jr.mu.Unlock()
		if !started {
			return nil
		}
	}
	return jr.j.CommitPlan(ctx, c)
}

// finish records how the run ended, when it is in the store: status and
// the error's text. It returns the first error of journaling the run.
func (jr *journal) finish(ctx context.Context, runID string, status Status, text string) error {
	jr.mu.Lock()
	started, startErr := jr.started, jr.startErr
	jr.mu.Unlock()
	if startErr != nil || !started {
		return startErr
	}
	if err := jr.s.SetStatus(context.WithoutCancel(ctx), runID, string(status), text); err != nil {
		return err
	}
	return jr.j.Err()
}

// lazyStore is the store the journal writes to: it puts the run in the
// store before the run's first write.
type lazyStore struct {
	store.Store
	jr *journal
}

func (l lazyStore) AppendEvents(ctx context.Context, runID string, events []store.Event) error {
	if err := l.jr.start(ctx, runID); err != nil {
		return err
	}
	return l.Store.AppendEvents(ctx, runID, events)
}

func (l lazyStore) CommitTask(ctx context.Context, runID string, t store.Task) error {
	if err := l.jr.start(ctx, runID); err != nil {
		return err
	}
	return l.Store.CommitTask(ctx, runID, t)
}

func (l lazyStore) CommitBatch(ctx context.Context, runID string, b store.Batch) error {
	if err := l.jr.start(ctx, runID); err != nil {
		return err
	}
	return l.Store.CommitBatch(ctx, runID, b)
}

func (l lazyStore) CommitPlan(ctx context.Context, runID string, v store.PlanVersion) error {
	if err := l.jr.start(ctx, runID); err != nil {
		return err
	}
	return l.Store.CommitPlan(ctx, runID, v)
}

func (l lazyStore) SetStatus(ctx context.Context, runID, status, errText string) error {
	if err := l.jr.start(ctx, runID); err != nil {
		return err
	}
	return l.Store.SetStatus(ctx, runID, status, errText)
}

func (l lazyStore) RecordExchange(ctx context.Context, runID, key string, exchange json.RawMessage) error {
	if err := l.jr.start(ctx, runID); err != nil {
		return err
	}
	return l.Store.RecordExchange(ctx, runID, key, exchange)
}
