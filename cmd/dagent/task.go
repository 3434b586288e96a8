package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/progress"
)

func writeTask(w io.Writer, r *durable.Run, f showFlags) error {
	d, err := r.Task(f.task)
	if err != nil {
		return err
	}
	v, pt := d.TaskView, d.Plan
	status, live := r.Shown()
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
	if why := v.Why(status, live); why != "" && why != v.Diagnosis {
		fmt.Fprintf(tw, "error\t%s\n", why)
	}
	if v.Diagnosis != "" {
		fmt.Fprintf(tw, "diagnosis\t%s\n", v.Diagnosis)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if pt != nil && pt.Input != "" {
		fmt.Fprintf(w, "\n== input ==\n%s\n", strings.TrimRight(d.Input, "\n"))
	}
	if out := v.Output; !f.noOutputs && len(out) > 0 && string(out) != "null" {
		fmt.Fprintf(w, "\n== output ==\n%s\n", strings.TrimRight(progress.Text(out), "\n"))
	}
	if len(d.Events) > 0 {
		fmt.Fprintf(w, "\nEVENTS\n")
	}
	tl := timeline{runID: r.ID, utc: f.utc}
	for _, e := range d.Events {
		if err := tl.write(w, e); err != nil {
			return err
		}
	}
	return nil
}

// writeReviews prints each review a waiting run waits for — its prompt
// and the outputs it reviews — and the command that resumes the run.
func writeReviews(w io.Writer, r *durable.Run, noOutputs bool) {
	reviews := r.Reviews()
	if len(reviews) == 0 {
		return
	}
	for _, rv := range reviews {
		fmt.Fprintf(w, "\nreview %s waits for a decision:\n", rv.TaskID)
		if rv.Plan == nil {
			continue
		}
		fmt.Fprintln(w, indent(rv.Prompt))
		if noOutputs {
			continue
		}
		for _, up := range rv.Upstream {
			if out := up.Output; len(out) > 0 && string(out) != "null" {
				fmt.Fprintf(w, "  it reviews %s:\n%s\n", up.ID, indent(indent(progress.Text(out))))
			}
		}
	}
	cmd := "dagent resume " + r.ID
	for _, rv := range reviews {
		cmd += " --review " + rv.TaskID + "=approve"
	}
	fmt.Fprintf(w, "\nTo resume, decide each review (=approve or =reject):\n  %s\nor pass --reviews decisions.json, which maps each review's task id to\n\"approve\", \"reject\" or {\"approved\": true, \"comment\": \"...\"}.\n", cmd)
}
