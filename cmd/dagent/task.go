package main

import (
	"fmt"
	"github.com/dagent-dev/dagent/progress"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
)

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

// taskOf is task id of the run, or an error that lists the run's tasks.
func taskOf(r *durable.Run, id string) (durable.TaskView, *plan.Task, error) {
	v, ok := r.Tasks[id]
	if !ok {
		return v, nil, fmt.Errorf("run %s has no task %q; its tasks are %s", r.ID, id, strings.Join(r.Order, ", "))
	}
	return v, planTask(r, id), nil
}

// rendered is a task's input with its {{results...}} templates expanded
// from the outputs the run's journal holds, as the runner expands them:
// a task not done reads as "", a value missing as the template itself.
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

type jsonTask struct {
	RunID     string   `json:"run_id"`
	TaskID    string   `json:"task_id"`
	Agent     string   `json:"agent"`
	Type      string   `json:"type"`
	Input     string   `json:"input"`
	DependsOn []string `json:"depends_on"`
	jsonShowTask
	Events []jsonEvent `json:"events"`
}

func taskDoc(r *durable.Run, id string, noOutputs bool) (*jsonTask, error) {
	v, pt, err := taskOf(r, id)
	if err != nil {
		return nil, err
	}
	doc := &jsonTask{RunID: r.ID, TaskID: id, DependsOn: []string{}, Events: []jsonEvent{}, jsonShowTask: jsonShowTask{
		Status: v.Status, Attempts: v.Attempts, Output: outputOrNull(v.Output, noOutputs), Error: textOrNil(v.Error), Diagnosis: v.Diagnosis,
		Started: timeOrNil(v.Started), DurationMS: v.Duration.Milliseconds(), Usage: v.Tokens,
	}}
	if v.Committed {
		doc.Committed = timeOrNil(v.Task.Committed)
	}
	if pt != nil {
		doc.Agent, doc.Type, doc.Input = pt.Agent, string(pt.Type), rendered(r, pt.Input)
		doc.DependsOn = append(doc.DependsOn, pt.DependsOn...)
	}
	for _, e := range r.Record.Events {
		if e.TaskID == id {
			doc.Events = append(doc.Events, eventDoc(e))
		}
	}
	return doc, nil
}

func writeTask(w io.Writer, r *durable.Run, f showFlags) error {
	v, pt, err := taskOf(r, f.task)
	if err != nil {
		return err
	}
	status, live := liveStatus(string(r.Status), r.Record.Owner)
	fmt.Fprintf(w, "task %s of run %s  %s\n", f.task, r.ID, v.Status)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if pt != nil {
		if pt.Type == plan.TypeTask {
			fmt.Fprintf(tw, "agent\t%s\n", pt.Agent)
		} else {
			fmt.Fprintf(tw, "type\t%s\n", pt.Type)
		}
		if len(pt.DependsOn) > 0 {
			fmt.Fprintf(tw, "depends on\t%s\n", strings.Join(pt.DependsOn, ", "))
		}
	}
	fmt.Fprintf(tw, "attempts\t%d\n", v.Attempts)
	if !v.Started.IsZero() {
		fmt.Fprintf(tw, "started\t%s\n", stamp(v.Started, f.utc))
		fmt.Fprintf(tw, "duration\t%s\n", progress.Round(v.Duration))
	}
	if u := v.Tokens; u.Prompt+u.Completion > 0 {
		fmt.Fprintf(tw, "tokens\t%d prompt, %d completion\n", u.Prompt, u.Completion)
	}
	if why := taskWhy(v, live, status); why != "" && why != v.Diagnosis {
		fmt.Fprintf(tw, "error\t%s\n", why)
	}
	if v.Diagnosis != "" {
		fmt.Fprintf(tw, "diagnosis\t%s\n", v.Diagnosis)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if pt != nil && pt.Input != "" {
		fmt.Fprintf(w, "\n== input ==\n%s\n", strings.TrimRight(rendered(r, pt.Input), "\n"))
	}
	if out := v.Output; !f.noOutputs && len(out) > 0 && string(out) != "null" {
		fmt.Fprintf(w, "\n== output ==\n%s\n", strings.TrimRight(progress.Text(out), "\n"))
	}
	tl := timeline{runID: r.ID, utc: f.utc}
	header := false
	for _, e := range r.Record.Events {
		if e.TaskID != f.task {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nEVENTS\n")
			header = true
		}
		if err := tl.write(w, e); err != nil {
			return err
		}
	}
	return nil
}

// writeReviews prints each review a waiting run waits for — its prompt
// and the outputs it reviews — and the command that resumes the run.
func writeReviews(w io.Writer, r *durable.Run, noOutputs bool) {
	var waiting []string
	for _, id := range r.Order {
		if r.Tasks[id].Status == "waiting" {
			waiting = append(waiting, id)
		}
	}
	if len(waiting) == 0 {
		return
	}
	for _, id := range waiting {
		fmt.Fprintf(w, "\nreview %s waits for a decision:\n", id)
		pt := planTask(r, id)
		if pt == nil {
			continue
		}
		fmt.Fprintln(w, indent(rendered(r, pt.Input)))
		if noOutputs {
			continue
		}
		for _, dep := range pt.DependsOn {
			if out := r.Tasks[dep].Output; len(out) > 0 && string(out) != "null" {
				fmt.Fprintf(w, "  it reviews %s:\n%s\n", dep, indent(indent(progress.Text(out))))
			}
		}
	}
	cmd := "dagent resume " + r.ID
	for _, id := range waiting {
		cmd += " --review " + id + "=approve"
	}
	fmt.Fprintf(w, "\nTo resume, decide each review (=approve or =reject):\n  %s\nor pass --reviews decisions.json, which maps each review's task id to\n\"approve\", \"reject\" or {\"approved\": true, \"comment\": \"...\"}.\n", cmd)
}
