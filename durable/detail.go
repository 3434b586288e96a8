package durable

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// UnknownTaskError is [Run.Task] asked for a task the run does not have.
type UnknownTaskError struct {
	RunID, TaskID string
	// Tasks are the run's tasks, as [Run.Order] lists them.
	Tasks []string
}

func (e *UnknownTaskError) Error() string {
	return fmt.Sprintf("run %s has no task %q; its tasks are %s", e.RunID, e.TaskID, strings.Join(e.Tasks, ", "))
}

// TaskDetail is one task of a journaled run with what explains it: the
// task as its plan gives it, its input as the run gave it, the tasks it
// depends on and its events.
type TaskDetail struct {
	RunID string
	TaskView
	// Plan is the task in the latest of the run's plans that has it; nil
	// when none has (a task only the journal knows).
	Plan *plan.Task
	// Input is the task's input with its {{results...}} templates expanded
	// from the outputs the journal holds, as the runner expands them: a
	// task not done reads as "", a value missing as the template itself.
	// "" when Plan is nil.
	Input string
	// Upstream are the tasks it depends on, in the order of its
	// depends_on, with their outputs.
	Upstream []TaskView
	// Events are the run's events about the task, in order: its starts,
	// retries, verdicts and end, of every (re)start of the run.
	Events []store.Event
}

// Task returns task id of r in detail. A task r does not have is an
// [*UnknownTaskError], which lists those it has.
func (r *Run) Task(id string) (*TaskDetail, error) {
	v, ok := r.Tasks[id]
	if !ok {
		return nil, &UnknownTaskError{RunID: r.ID, TaskID: id, Tasks: r.Order}
	}
	d := &TaskDetail{RunID: r.ID, TaskView: v, Plan: r.planTask(id)}
	if d.Plan != nil {
		d.Input = r.render(d.Plan.Input)
		d.Upstream = r.views(d.Plan.DependsOn)
	}
	for _, e := range r.Record.Events {
		if e.TaskID == id {
			d.Events = append(d.Events, e)
		}
	}
	return d, nil
}

// TaskDetailDoc is a task of a run as one JSON document: the document of
// dagent show RUN --task ID --format json.
type TaskDetailDoc struct {
	RunID     string   `json:"run_id"`
	TaskID    string   `json:"task_id"`
	Agent     string   `json:"agent"`
	Type      string   `json:"type"`
	Input     string   `json:"input"` // as TaskDetail.Input
	DependsOn []string `json:"depends_on"`
	TaskDoc
	Events []EventDoc `json:"events"`
}

// Document returns d as one JSON document.
func (d *TaskDetail) Document(o DocOptions) TaskDetailDoc {
	doc := TaskDetailDoc{RunID: d.RunID, TaskID: d.ID, DependsOn: []string{}, Events: []EventDoc{}, TaskDoc: d.TaskView.doc(o)}
	if pt := d.Plan; pt != nil {
		doc.Agent, doc.Type, doc.Input = pt.Agent, string(pt.Type), d.Input
		doc.DependsOn = append(doc.DependsOn, pt.DependsOn...)
	}
	for _, e := range d.Events {
		doc.Events = append(doc.Events, NewEventDoc(e))
	}
	return doc
}

// Review is a human review a waiting run waits for.
type Review struct {
	TaskID string
	// Plan is the review task in the latest of the run's plans that has
	// it; nil when none has.
	Plan *plan.Task
	// Prompt is what the review asks: its input, expanded as
	// [TaskDetail.Input] is.
	Prompt string
	// Upstream are the tasks it reviews — those it depends on — with
	// their outputs.
	Upstream []TaskView
}

// Reviews returns the reviews r waits for — its tasks waiting for a
// decision — in the order of [Run.Order]; none when r waits for none.
// [WithReviews] decides them when the run is resumed.
func (r *Run) Reviews() []Review {
	var out []Review
	for _, id := range r.Order {
		if r.Tasks[id].Status != string(runner.TaskWaiting) {
			continue
		}
		rv := Review{TaskID: id, Plan: r.planTask(id)}
		if rv.Plan != nil {
			rv.Prompt = r.render(rv.Plan.Input)
			rv.Upstream = r.views(rv.Plan.DependsOn)
		}
		out = append(out, rv)
	}
	return out
}

// Why is what to say of task v of a run shown with status and live (see
// [Run.Shown]): its diagnosis; else its error, unless it is done; and for
// a task in flight, that it runs, or that a resume runs it again.
func (v TaskView) Why(status Status, live bool) string {
	why := v.Diagnosis
	if why == "" && v.Status != string(runner.TaskDone) {
		why = v.Error
	}
	if !v.Committed && v.Status == string(runner.TaskRunning) {
		switch {
		case live:
			why = "running"
		case status == StatusInterrupted:
			why = "in flight when the process died; a resume runs it again"
		default:
			why = "in flight when the run stopped; a resume runs it again"
		}
	}
	return why
}

// planTask is task id of the run's latest plan that has it, nil when none
// has.
func (r *Run) planTask(id string) *plan.Task {
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

// views are the views of the tasks ids, in order; a task the run does not
// have is pending.
func (r *Run) views(ids []string) []TaskView {
	out := make([]TaskView, 0, len(ids))
	for _, id := range ids {
		v, ok := r.Tasks[id]
		if !ok {
			v = TaskView{Task: store.Task{ID: id, Status: string(runner.TaskPending)}}
		}
		out = append(out, v)
	}
	return out
}

// render is input with its {{results...}} templates expanded from the
// outputs the run's journal holds, as the runner expands them: a task not
// done reads as "", a value missing as the template itself.
func (r *Run) render(input string) string {
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
