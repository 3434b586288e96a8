package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// progress prints one line per event of a run as it goes, with the time
// since the run started: the text format of dagent run and resume. It is
// an observer: the runner waits for it before Run returns, and the
// executor's events come between the runs.
type progress struct {
	w     io.Writer
	start time.Time
	// announce prints the run's id, once, before the first line.
	announce func()
}

func (p *progress) Observe(e runner.Event) {
	switch e.Kind {
	case executor.EventReplanRequested, executor.EventHalted:
		return // the next line, or the summary, says it
	case durable.EventPlanned:
		p.announce()
		fmt.Fprintln(p.w, eventLine(e))
		return
	case runner.EventRunStarted:
		p.start = e.Time
		p.announce()
	}
	fmt.Fprintf(p.w, "%8s  %s\n", round(e.Time.Sub(p.start)), eventLine(e))
}

// eventLine describes an event of a run in one line: as the progress of
// dagent run prints it, and as dagent show prints a journaled one.
func eventLine(e runner.Event) string {
	switch e.Kind {
	case runner.EventRunStarted:
		return "run " + e.RunID + " started"
	case runner.EventRunFinished:
		return "run " + string(e.Status)
	case runner.EventPhaseStarted:
		return fmt.Sprintf("phase %d started", e.Phase)
	case runner.EventPhaseFinished:
		return fmt.Sprintf("phase %d settled in %s", e.Phase, round(e.Duration))
	case runner.EventTaskStarted:
		return e.TaskID + ": started"
	case runner.EventTaskVerified:
		switch {
		case e.Err != nil:
			return e.TaskID + ": verification error: " + prose.Excerpt(e.Err.Error(), 100)
		case e.Passed:
			return e.TaskID + ": verification passed"
		}
		return e.TaskID + ": verification failed: " + prose.Excerpt(e.Diagnosis, 100)
	case runner.EventTaskRetried:
		return fmt.Sprintf("%s: retry %d after: %s", e.TaskID, e.Attempt-1, prose.Excerpt(e.Diagnosis, 100))
	case runner.EventTaskFinished:
		return fmt.Sprintf("%s: done in %s", e.TaskID, round(e.Duration))
	case runner.EventTaskFailed:
		return e.TaskID + ": failed: " + prose.Excerpt(errString(e.Err), 100)
	case runner.EventTaskSkipped:
		return e.TaskID + ": skipped: " + prose.Excerpt(errString(e.Err), 100)
	case runner.EventTaskWaiting:
		return e.TaskID + ": waiting for review"
	case durable.EventPlanned:
		return fmt.Sprintf("planned %s in %s", prose.Plural(e.Tasks, "task"), prose.Plural(e.Attempt, "attempt"))
	case executor.EventReplanRequested:
		return fmt.Sprintf("replan requested after %s failed (%s)", e.TaskID, failureWhy(e))
	case executor.EventRepairAdopted:
		return fmt.Sprintf("replan %d after %s failed (%s): %s added", e.Version, e.TaskID, failureWhy(e), prose.Plural(e.NewTasks, "task"))
	case executor.EventReplanFailed:
		return fmt.Sprintf("replan after %s failed (%s): no repair plan: %s", e.TaskID, failureWhy(e), prose.Excerpt(errString(e.Err), 200))
	case executor.EventHalted:
		return fmt.Sprintf("replanning halted (%s): %s", e.Halt, haltReason(e.Halt))
	}
	if e.TaskID != "" {
		return e.TaskID + ": " + string(e.Kind)
	}
	return string(e.Kind)
}

// failureWhy is the class and diagnosis of the failure an executor's event
// is about.
func failureWhy(e runner.Event) string {
	why := string(e.Class)
	if e.Diagnosis != "" {
		why += ": " + prose.Excerpt(e.Diagnosis, 100)
	}
	return why
}

// writeSummary prints the table of out's tasks, the pending reviews, the
// outputs of the final tasks of the plan that ran last and how the run
// ended. Tasks that plan does not have (those of earlier plans a replan
// dropped) come last. journaled says dagent resume can continue the run.
func writeSummary(w io.Writer, out *durable.Outcome, journaled bool) error {
	p, res := out.Plan, out.Result
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tATTEMPTS\tDURATION\tDIAGNOSIS")
	row := func(t *runner.TaskResult, name string) {
		why := t.Diagnosis
		if why == "" && t.Status != runner.TaskDone {
			why = errString(t.Err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", name, t.Status, t.Attempts, round(t.Duration), prose.Excerpt(why, 80))
	}
	inPlan := make(map[string]bool, len(p.Tasks))
	for i := range p.Tasks {
		inPlan[p.Tasks[i].ID] = true
		if t := res.Tasks[p.Tasks[i].ID]; t != nil {
			row(t, t.ID)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(res.Tasks)) {
		if !inPlan[id] {
			row(res.Tasks[id], id+" (replaced)")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range res.PendingReviews {
		fmt.Fprintf(w, "\nreview %s waits for a decision:\n%s\n", r.TaskID, indent(r.Prompt))
	}
	switch {
	case len(res.PendingReviews) > 0 && journaled:
		fmt.Fprintf(w, "\nTo resume, decide each review:\n  dagent resume %s --review %s=approve\n(or =reject), or pass --reviews decisions.json, which maps each review's\ntask id to \"approve\", \"reject\" or {\"approved\": true, \"comment\": \"...\"}.\n", out.RunID, res.PendingReviews[0].TaskID)
	case len(res.PendingReviews) > 0:
		fmt.Fprintf(w, "\nTo resume, run with --format json > run.json, then again with\n  --initial-results run.json --reviews decisions.json\nwhere decisions.json maps each review's task id to \"approve\", \"reject\" or\n{\"approved\": true, \"comment\": \"...\"}.\n")
	}
	for _, id := range finals(p) {
		if t := res.Tasks[id]; t != nil && t.Status == runner.TaskDone {
			fmt.Fprintf(w, "\n== %s ==\n%s\n", id, strings.TrimRight(textOf(t.Output), "\n"))
		}
	}
	fmt.Fprintln(w)
	after, and := "", ""
	if x := out.Execution; x != nil {
		if x.Halt != "" {
			fmt.Fprintf(w, "replanning halted (%s): %s\n", x.Halt, haltReason(x.Halt))
		}
		if x.ReplanCount > 0 {
			after, and = " after "+prose.Plural(x.ReplanCount, "replan"), " and "+prose.Plural(x.ReplanCount, "replan")
		}
	}
	switch res.Status {
	case runner.StatusCompleted:
		fmt.Fprintf(w, "completed in %s%s%s\n", round(res.Duration), after, produced(p, res))
	case runner.StatusWaiting:
		fmt.Fprintf(w, "waiting for review after %s%s\n", round(res.Duration), and)
	case runner.StatusReplanRequired:
		fmt.Fprintf(w, "replan required by task %s%s: %s\n", res.Replan.TaskID, after, prose.Excerpt(res.Replan.Diagnosis, 200))
	default:
		fmt.Fprintf(w, "failed after %s%s: %s\n", round(res.Duration), and, prose.Excerpt(errString(res.Err), 200))
	}
	return nil
}

// finals lists the tasks nothing depends on, in plan order: the plan's
// results.
func finals(p *plan.Plan) []string {
	used := make(map[string]bool)
	for i := range p.Tasks {
		for _, d := range p.Tasks[i].DependsOn {
			used[d] = true
		}
	}
	var out []string
	for i := range p.Tasks {
		if !used[p.Tasks[i].ID] {
			out = append(out, p.Tasks[i].ID)
		}
	}
	return out
}

// haltReason explains a halt of the executor.
func haltReason(halt string) string {
	switch halt {
	case executor.HaltMaxReplans:
		return "the replans reached --max-replans"
	case executor.HaltMaxReplansPerTask:
		return "a task's replans reached --max-replans-per-task"
	case executor.HaltSameFailure:
		return "a task failed the same way as before a replan"
	case executor.HaltConsecutiveFailures:
		return "executions in a row finished no new task"
	case executor.HaltBudget:
		return "the LLM budget (--max-tokens, --max-llm-calls) is spent"
	case executor.HaltReplanFailed:
		return "the planner gave no repair plan"
	}
	return halt
}
