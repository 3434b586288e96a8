package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// progress prints one line per state change of a run, with the time since
// the run started, and one per repair of an execution that replans. It is
// an observer: it runs on its own goroutine and the runner waits for it
// before Run returns; the executor's events come between the runs.
type progress struct {
	w     io.Writer
	start time.Time
	// announce, when set, is called before the first line of a run.
	announce func()
}

func (p *progress) Observe(e runner.Event) {
	if e.Kind == runner.EventRunStarted {
		p.start = e.Time
		if p.announce != nil {
			p.announce()
		}
	}
	var line string
	switch e.Kind {
	case runner.EventRunStarted:
		line = "run " + e.RunID + " started"
	case runner.EventRunFinished:
		line = "run " + string(e.Status)
	case runner.EventPhaseStarted:
		line = fmt.Sprintf("phase %d started", e.Phase)
	case runner.EventPhaseFinished:
		line = fmt.Sprintf("phase %d settled in %s", e.Phase, round(e.Duration))
	case runner.EventTaskStarted:
		line = e.TaskID + ": started"
	case runner.EventTaskVerified:
		switch {
		case e.Err != nil:
			line = e.TaskID + ": verification error: " + oneLine(e.Err.Error(), 100)
		case e.Passed:
			line = e.TaskID + ": verification passed"
		default:
			line = e.TaskID + ": verification failed: " + oneLine(e.Diagnosis, 100)
		}
	case runner.EventTaskRetried:
		line = fmt.Sprintf("%s: retry %d after: %s", e.TaskID, e.Attempt-1, oneLine(e.Diagnosis, 100))
	case runner.EventTaskFinished:
		line = fmt.Sprintf("%s: done in %s", e.TaskID, round(e.Duration))
	case runner.EventTaskFailed:
		line = e.TaskID + ": failed: " + oneLine(errString(e.Err), 100)
	case runner.EventTaskSkipped:
		line = e.TaskID + ": skipped: " + oneLine(errString(e.Err), 100)
	case runner.EventTaskWaiting:
		line = e.TaskID + ": waiting for review"
	case executor.EventRepairAdopted:
		line = fmt.Sprintf("replan %d after %s failed (%s): %s added", e.Version, e.TaskID, failureWhy(e), prose.Plural(e.NewTasks, "task"))
	case executor.EventReplanFailed:
		line = fmt.Sprintf("replan after %s failed (%s): no repair plan: %s", e.TaskID, failureWhy(e), oneLine(errString(e.Err), 200))
	default:
		return
	}
	fmt.Fprintf(p.w, "%8s  %s\n", round(e.Time.Sub(p.start)), line)
}

// failureWhy is the class and diagnosis of the failure an executor's event
// is about.
func failureWhy(e runner.Event) string {
	why := string(e.Class)
	if e.Diagnosis != "" {
		why += ": " + oneLine(e.Diagnosis, 100)
	}
	return why
}

// summaryExtra is what a summary of a run that replanned adds.
type summaryExtra struct {
	replans int
	halt    string
	// journaled is the run's id when dagent resume can continue it.
	journaled string
}

// writeSummary prints the table of tasks, the pending reviews, the outputs
// of the plan's final tasks and how the run ended. Tasks of res that p
// does not have (those of earlier plans a replan dropped) come last.
func writeSummary(w io.Writer, p *plan.Plan, res *runner.Result, x summaryExtra) error {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tATTEMPTS\tDURATION\tDIAGNOSIS")
	row := func(t *runner.TaskResult, name string) {
		why := t.Diagnosis
		if why == "" && t.Status != runner.TaskDone {
			why = errString(t.Err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", name, t.Status, t.Attempts, round(t.Duration), oneLine(why, 80))
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
	case len(res.PendingReviews) > 0 && x.journaled != "":
		fmt.Fprintf(w, "\nTo resume, decide each review:\n  dagent resume %s --review %s=approve\n(or =reject), or pass --reviews decisions.json, which maps each review's\ntask id to \"approve\", \"reject\" or {\"approved\": true, \"comment\": \"...\"}.\n", x.journaled, res.PendingReviews[0].TaskID)
	case len(res.PendingReviews) > 0:
		fmt.Fprintf(w, "\nTo resume, run with --format json > run.json, then again with\n  --initial-results run.json --reviews decisions.json\nwhere decisions.json maps each review's task id to \"approve\", \"reject\" or\n{\"approved\": true, \"comment\": \"...\"}.\n")
	}
	for _, id := range finals(p) {
		if t := res.Tasks[id]; t.Status == runner.TaskDone {
			fmt.Fprintf(w, "\n== %s ==\n%s\n", id, strings.TrimRight(textOf(t.Output), "\n"))
		}
	}
	fmt.Fprintln(w)
	if x.halt != "" {
		fmt.Fprintf(w, "replanning halted (%s): %s\n", x.halt, haltReason(x.halt))
	}
	after, and := "", ""
	if x.replans > 0 {
		after, and = " after "+prose.Plural(x.replans, "replan"), " and "+prose.Plural(x.replans, "replan")
	}
	switch res.Status {
	case runner.StatusCompleted:
		fmt.Fprintf(w, "completed in %s%s\n", round(res.Duration), after)
	case runner.StatusWaiting:
		fmt.Fprintf(w, "waiting for review after %s%s\n", round(res.Duration), and)
	case runner.StatusReplanRequired:
		fmt.Fprintf(w, "replan required by task %s%s: %s\n", res.Replan.TaskID, after, oneLine(res.Replan.Diagnosis, 200))
	default:
		fmt.Fprintf(w, "failed after %s%s: %s\n", round(res.Duration), and, oneLine(errString(res.Err), 200))
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

func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// oneLine keeps the first line of s, cut to n characters.
func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
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
