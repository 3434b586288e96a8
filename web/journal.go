package web

import (
	"context"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/store"
)

// What the pages read of the journal beyond durable.Load.

// statusInterrupted is the status shown of a run whose process died while
// it ran: the journal holds it as running.
const statusInterrupted = "interrupted"

// statuses are the statuses a run is shown with, in the order the filter
// offers them.
var statuses = []string{
	store.StatusRunning, statusInterrupted, string(durable.StatusWaiting), string(durable.StatusCompleted),
	string(durable.StatusFailed), string(durable.StatusReplanRequired), string(durable.StatusCancelled),
}

// shown is the status a run is shown with: a run the journal holds as
// running whose owner is not alive is interrupted.
func shown(status string, owner *store.Owner) string {
	if status == store.StatusRunning && (owner == nil || !durable.Alive(*owner, durable.DefaultStaleAfter)) {
		return statusInterrupted
	}
	return status
}

// summary is a run of the runs page.
type summary struct {
	store.Summary
	Shown string
}

// listRuns returns the runs of the statuses given (any, for none), newest
// first, from the offset-th on, at most limit of them, and how many there
// are.
func listRuns(ctx context.Context, s store.Store, of []string, limit, offset int) ([]summary, int, error) {
	all, err := s.List(ctx)
	if err != nil {
		return nil, 0, err
	}
	var page []summary
	n := 0
	for _, r := range all {
		st := shown(r.Status, r.Owner)
		if len(of) > 0 && !slices.Contains(of, st) {
			continue
		}
		if n >= offset && len(page) < limit {
			page = append(page, summary{r, st})
		}
		n++
	}
	return page, n, nil
}

// planTask is the task id of the run's latest plan that has it, nil when
// none has.
func planTask(r *durable.Run, id string) *plan.Task {
	plans := r.Plans
	if len(plans) == 0 && r.Spec.Plan != nil {
		plans = []*plan.Plan{r.Spec.Plan}
	}
	for _, p := range slices.Backward(plans) {
		for i := range p.Tasks {
			if p.Tasks[i].ID == id {
				return &p.Tasks[i]
			}
		}
	}
	return nil
}

// rendered is a task's input with its {{results...}} templates expanded
// from the outputs the run's journal holds, as the runner expands them.
func rendered(r *durable.Run, input string) string {
	var b strings.Builder
	last := 0
	isTask := func(id string) bool { _, ok := r.Tasks[id]; return ok }
	for ref := range plan.ResultRefs(input, isTask) {
		b.WriteString(input[last:ref.Start])
		last = ref.End
		v, ok := r.Tasks[ref.Task]
		if !ok || len(v.Output) == 0 {
			continue
		}
		out, err := jsonv.DecodeBytes(v.Output)
		if err != nil {
			b.WriteString(input[ref.Start:ref.End])
			continue
		}
		if val, ok := jsonv.Lookup(out, ref.Path); ok {
			b.WriteString(jsonv.Text(val))
		} else {
			b.WriteString(input[ref.Start:ref.End])
		}
	}
	b.WriteString(input[last:])
	return b.String()
}
