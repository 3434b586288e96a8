package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// Run is a journaled run, read once: its spec and plans parsed, its tasks
// projected from the committed states and the events.
type Run struct {
	ID      string
	Status  Status
	Error   string
	Created time.Time
	// Updated is when the status last changed or a task was committed.
	Updated time.Time
	Spec    Spec
	// Plans are the plans the run adopted, by version: the first at 0, the
	// k-th repair at k. Empty when the run never got to a plan.
	Plans []*plan.Plan
	// History lists the repairs, in order: the trial that led to each
	// plan version after the first.
	History []executor.Trial
	// Order lists the ids of Tasks: the current plan's in plan order, then
	// those of earlier plans, then any other committed task, by id.
	Order []string
	// Tasks holds the view of every task of every plan, by id.
	Tasks map[string]TaskView
	// Record is the run as the store holds it: events and LLM exchanges.
	Record *store.Record
}

// TaskView is a task of a journaled run as the journal knows it.
type TaskView struct {
	store.Task
	// Committed says the state is a committed final state. A task with
	// none takes its status from the events of the run's last (re)start:
	// skipped, running (in flight when it stopped; a resume runs it
	// again), or pending.
	Committed bool
}

// Plan is the plan the run runs now: the last version it adopted, else
// the spec's; nil when the run never got to a plan.
func (r *Run) Plan() *plan.Plan {
	if n := len(r.Plans); n > 0 {
		return r.Plans[n-1]
	}
	return r.Spec.Plan
}

// Load reads the journaled run id from s, or the one run whose id begins
// with id. It fails with [store.ErrNotFound] when there is none, and with
// an [*AmbiguousIDError] that names some of them when id begins several.
func Load(ctx context.Context, s store.Store, id string) (*Run, error) {
	rec, err := s.Load(ctx, id)
	if errors.Is(err, store.ErrNotFound) && id != "" {
		rec, err = loadPrefix(ctx, s, id)
	}
	if err != nil {
		return nil, err
	}
	return view(rec)
}

func loadPrefix(ctx context.Context, s store.Store, prefix string) (*store.Record, error) {
	runs, n, err := s.Runs(ctx, store.RunQuery{Prefix: prefix, Limit: 2})
	if err != nil {
		return nil, err
	}
	switch n {
	case 0:
		return nil, fmt.Errorf("no run %s in the journal: %w", prefix, store.ErrNotFound)
	case 1:
		return s.Load(ctx, runs[0].ID)
	}
	return nil, &AmbiguousIDError{Prefix: prefix, Runs: n, IDs: []string{runs[0].ID, runs[1].ID}}
}

// AmbiguousIDError is the error of [Load] given the beginning of several
// runs' ids.
type AmbiguousIDError struct {
	Prefix string
	// Runs counts the runs whose ids begin with Prefix; IDs are two of
	// them, the newest.
	Runs int
	IDs  []string
}

func (e *AmbiguousIDError) Error() string {
	return fmt.Sprintf("%q is the beginning of %d runs' ids (%s, ...); give more of it", e.Prefix, e.Runs, strings.Join(e.IDs, ", "))
}

// view reads rec: its spec and plans once, and its task views.
func view(rec *store.Record) (*Run, error) {
	r := &Run{ID: rec.ID, Status: Status(rec.Status), Error: rec.Error, Created: rec.Created, Updated: rec.Updated, Record: rec}
	if len(rec.Spec) > 0 {
		if err := json.Unmarshal(rec.Spec, &r.Spec); err != nil {
			return nil, fmt.Errorf("run %s: %w", rec.ID, err)
		}
	}
	if r.Spec.Mission == "" {
		r.Spec.Mission = rec.Mission
	}
	for _, v := range rec.Plans {
		p, err := plan.Parse(v.Plan)
		if err != nil {
			return nil, fmt.Errorf("run %s: plan version %d: %w", rec.ID, v.Version, err)
		}
		r.Plans = append(r.Plans, p)
		if v.Version == 0 {
			continue
		}
		var t executor.Trial
		if len(v.Trial) > 0 {
			if err := json.Unmarshal(v.Trial, &t); err != nil {
				return nil, fmt.Errorf("run %s: plan version %d: its trial: %w", rec.ID, v.Version, err)
			}
		}
		r.History = append(r.History, t)
	}
	switch {
	case r.Spec.Plan != nil || len(rec.Plan) == 0 || string(rec.Plan) == "null":
	case len(r.Plans) > 0 && bytes.Equal(rec.Plan, rec.Plans[0].Plan):
		// The journal keeps the plan a run starts with as its version 0
		// only, which was read once above.
		r.Spec.Plan = r.Plans[0]
	default:
		// A run journaled before versioned specs keeps its plan apart.
		p, err := plan.Parse(rec.Plan)
		if err != nil {
			return nil, fmt.Errorf("run %s: its plan: %w", rec.ID, err)
		}
		r.Spec.Plan = p
	}
	r.Order, r.Tasks = r.taskViews()
	return r, nil
}

// taskViews projects the committed states and the events into a view of
// every task.
func (r *Run) taskViews() ([]string, map[string]TaskView) {
	var order []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			order = append(order, id)
		}
	}
	plans := slices.Clone(r.Plans)
	if len(plans) == 0 && r.Spec.Plan != nil {
		plans = append(plans, r.Spec.Plan)
	}
	for i := len(plans) - 1; i >= 0; i-- {
		for _, t := range plans[i].Tasks {
			add(t.ID)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.Record.Tasks)) {
		add(id)
	}
	derived := map[string]string{}
	for _, e := range r.Record.Events {
		switch runner.EventKind(e.Kind) {
		case runner.EventRunStarted:
			clear(derived)
		case runner.EventTaskStarted, runner.EventTaskRetried:
			derived[e.TaskID] = string(runner.TaskRunning)
		case runner.EventTaskSkipped:
			derived[e.TaskID] = string(runner.TaskSkipped)
		case runner.EventTaskFinished, runner.EventTaskFailed, runner.EventTaskWaiting:
			delete(derived, e.TaskID) // committed, or lost with the process
		}
	}
	views := make(map[string]TaskView, len(order))
	for _, id := range order {
		if t, ok := r.Record.Tasks[id]; ok {
			views[id] = TaskView{Task: t, Committed: true}
			continue
		}
		status := derived[id]
		if status == "" {
			status = string(runner.TaskPending)
		}
		views[id] = TaskView{Task: store.Task{ID: id, Status: status}}
	}
	return order, views
}

// outcome is the run as it ended, rebuilt from the journal.
func (r *Run) outcome() (*Outcome, error) {
	res := &runner.Result{RunID: r.ID, Status: runner.Status(r.Status), Tasks: map[string]*runner.TaskResult{}, Started: r.Created, Duration: r.Updated.Sub(r.Created)}
	if r.Error != "" {
		res.Err = errors.New(r.Error)
	}
	for id, v := range r.Tasks {
		t := &runner.TaskResult{ID: id, Status: runner.TaskStatus(v.Status), Attempts: v.Attempts, Diagnosis: v.Diagnosis, Started: v.Started, Duration: v.Duration}
		if v.Error != "" {
			t.Err = errors.New(v.Error)
		}
		var err error
		if t.Output, err = decodeOutput(v.Output); err != nil {
			return nil, fmt.Errorf("run %s: task %s: %w", r.ID, id, err)
		}
		res.Tasks[id] = t
	}
	return &Outcome{RunID: r.ID, Status: r.Status, Result: res, Plan: r.Plan()}, nil
}
