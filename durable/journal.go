package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// journal journals one run. [journal.begin] puts the run in the store and
// takes its lease before the run's first side effect — before the planner
// is asked, before any task starts — and after the checks that refuse a
// run, so that a run refused (its plan is invalid, it needs an LLM and has
// none) leaves nothing behind, and a run whose workers started is in the
// journal whatever moment its process dies at.
type journal struct {
	s     store.Store
	fs    fenced // s, for the run's writes
	j     *store.Journal
	runID string
	c     config
	procs atomic.Bool // a program was recorded: forget it when the run ends

	mu      sync.Mutex
	create  *store.Run     // the run to create; nil: it is journaled already, and leased
	created *plan.Plan     // the plan create holds, which the store keeps as its version 0
	seed    map[string]any // outputs to commit as done when it begins
	// decided are the review decisions a start or a resume goes on with,
	// journaled when it begins.
	decided  []store.Event
	lease    atomic.Pointer[lease]
	lost     context.CancelCauseFunc // ends the run when its lease is lost
	begun    bool
	beginErr error
	procErr  error // the first failure to record a program
}

// newJournal journals run id in s: a new run when create is set, else the
// continuation of the journaled run id, whose lease ls is. The initial
// outputs are committed as done tasks that took no attempt when the run
// begins, so that a resume finds them too.
func newJournal(s store.Store, id string, c config, create *store.Run, ls *lease, seed map[string]any, version int) *journal {
	jr := &journal{s: s, runID: id, c: c, create: create, seed: seed}
	if ls != nil {
		jr.lease.Store(ls)
	}
	jr.fs = fenced{Store: s, jr: jr}
	jr.j = store.NewJournal(jr.fs, id)
	jr.j.SetVersion(version)
	return jr
}

// settings is the spec the journal keeps of a run: the plan is kept once,
// as the run's plan version 0, so the spec beside it leaves it out.
func settings(spec Spec) (json.RawMessage, error) {
	spec.Plan = nil
	return json.Marshal(spec)
}

// keepSpec replaces the spec a new run is created with by spec, before the
// run begins: what the run learns before its first side effect, such as
// the memory its planner is shown, is kept with it.
func (jr *journal) keepSpec(spec Spec) error {
	raw, err := settings(spec)
	if err != nil {
		return err
	}
	jr.mu.Lock()
	defer jr.mu.Unlock()
	if jr.create == nil || jr.begun {
		return fmt.Errorf("durable: run %s: the spec is kept once the run began", jr.runID)
	}
	jr.create.Spec = raw
	return nil
}

// watch ends the run, through lost, if another process takes it over.
func (jr *journal) watch(lost context.CancelCauseFunc) {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	jr.lost = lost
	if ls := jr.lease.Load(); ls != nil {
		ls.beat(lost)
	}
}

// begin puts the run in the store and takes its lease, once: a new run is
// created with its first plan (nil: none yet), committed as its plan
// version 0 unless the run was created with it; a journaled one is marked
// running again. The initial outputs are committed then.
func (jr *journal) begin(ctx context.Context, first *plan.Plan) error {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	if jr.begun || jr.beginErr != nil {
		return jr.beginErr
	}
	ctx = context.WithoutCancel(ctx)
	err := func() error {
		if jr.create != nil {
			if err := jr.s.CreateRun(ctx, *jr.create); err != nil {
				if errors.Is(err, store.ErrExists) {
					return fmt.Errorf("%w: run %s was started by another process at the same time", ErrRunExists, jr.runID)
				}
				return err
			}
			ls, err := takeLease(ctx, jr.s, jr.runID, jr.c)
			if err != nil {
				return err
			}
			jr.lease.Store(ls)
			if jr.lost != nil {
				ls.beat(jr.lost)
			}
		} else {
			if err := jr.s.SetStatus(ctx, jr.runID, string(StatusRunning), ""); err != nil {
				return err
			}
		}
		if len(jr.decided) > 0 {
			now := time.Now()
			for k := range jr.decided {
				jr.decided[k].Time = now
			}
			if err := jr.s.AppendEvents(ctx, jr.runID, jr.decided); err != nil {
				return fmt.Errorf("record the review decisions: %w", err)
			}
		}
		if first != nil && (jr.create == nil || first != jr.created) {
			if err := jr.j.CommitPlan(ctx, executor.PlanCommit{Plan: first}); err != nil {
				return err
			}
		}
		for _, id := range slices.Sorted(maps.Keys(jr.seed)) {
			raw, err := json.Marshal(jr.seed[id])
			if err != nil {
				return fmt.Errorf("initial result for %s: %w", id, err)
			}
			if err := jr.s.CommitTask(ctx, jr.runID, store.Task{ID: id, Status: string(runner.TaskDone), Output: raw}); err != nil {
				return err
			}
		}
		return nil
	}()
	jr.begun, jr.beginErr = err == nil, err
	return err
}

// CommitPlan implements [executor.Journal]. The first plan of a new run
// begins it: the executor commits it once the plan is checked and
// reviewed, before it runs.
func (jr *journal) CommitPlan(ctx context.Context, c executor.PlanCommit) error {
	jr.mu.Lock()
	begun := jr.begun
	jr.mu.Unlock()
	if !begun && c.Version == 0 {
		return jr.begin(ctx, c.Plan)
	}
	return jr.j.CommitPlan(ctx, c)
}

// finish records how the run ended, when it began — status and the
// error's text — forgets the programs its attempts started, which have all
// ended, and gives its lease up. It returns the first error of journaling
// the run.
func (jr *journal) finish(ctx context.Context, status Status, text string) error {
	jr.mu.Lock()
	begun, beginErr, procErr := jr.begun, jr.beginErr, jr.procErr
	jr.mu.Unlock()
	ls := jr.lease.Load()
	err := beginErr
	if begun {
		ctx := context.WithoutCancel(ctx)
		if err = ls.check(); err == nil && jr.procs.Load() {
			err = errors.Join(procErr, jr.s.ForgetProcesses(ctx, jr.runID))
		}
		if err == nil {
			err = jr.s.SetStatus(ctx, jr.runID, string(status), text)
		}
		if err == nil {
			err = jr.j.Err()
		}
	}
	if ls != nil {
		if rerr := ls.release(ctx); err == nil && !begun {
			err = rerr
		}
	}
	return err
}

// fenced is the store the journal writes to: once another process has
// taken the run over, the run's writes fail rather than mix with that
// process's.
type fenced struct {
	store.Store
	jr *journal
}

func (f fenced) check() error { return f.jr.lease.Load().check() }

func (f fenced) AppendEvents(ctx context.Context, runID string, events []store.Event) error {
	if err := f.check(); err != nil {
		return err
	}
	return f.Store.AppendEvents(ctx, runID, events)
}

func (f fenced) CommitTask(ctx context.Context, runID string, t store.Task) error {
	if err := f.check(); err != nil {
		return err
	}
	return f.Store.CommitTask(ctx, runID, t)
}

func (f fenced) CommitBatch(ctx context.Context, runID string, b store.Batch) error {
	if err := f.check(); err != nil {
		return err
	}
	return f.Store.CommitBatch(ctx, runID, b)
}

func (f fenced) CommitPlan(ctx context.Context, runID string, v store.PlanVersion) error {
	if err := f.check(); err != nil {
		return err
	}
	return f.Store.CommitPlan(ctx, runID, v)
}

func (f fenced) SetStatus(ctx context.Context, runID, status, errText string) error {
	if err := f.check(); err != nil {
		return err
	}
	return f.Store.SetStatus(ctx, runID, status, errText)
}

func (f fenced) RecordExchange(ctx context.Context, runID, key string, exchange json.RawMessage) error {
	if err := f.check(); err != nil {
		return err
	}
	return f.Store.RecordExchange(ctx, runID, key, exchange)
}

func (f fenced) RecordProcess(ctx context.Context, runID string, p store.Process) error {
	if err := f.check(); err != nil {
		return err
	}
	return f.Store.RecordProcess(ctx, runID, p)
}

func (f fenced) ForgetProcesses(ctx context.Context, runID string) error {
	if err := f.check(); err != nil {
		return err
	}
	return f.Store.ForgetProcesses(ctx, runID)
}
