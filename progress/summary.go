package progress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// ErrIncomplete is the error of [WriteSummary] given no plan or no result.
var ErrIncomplete = errors.New("progress: a summary needs a plan and a result")

// Summary is what [WriteSummary] prints: how a run of a plan ended.
type Summary struct {
	// Plan is the plan that ran (the last repair, for an execution that
	// replanned); its tasks come first in the table, and the outputs of
	// its final tasks — those nothing depends on — are printed. Required.
	Plan *plan.Plan
	// Result is the run's result. Required.
	Result *runner.Result
	// Execution is the execution of a plan that replans, nil for one that
	// does not: the summary then counts its replans and says why it
	// stopped replanning.
	Execution *executor.Result
	// ReviewHint, when the run waits for review, is printed after the
	// prompts of the pending reviews: how to decide them.
	ReviewHint string
	// HaltReason explains an execution's halt; nil is [HaltReason].
	HaltReason func(halt string) string
}

// WriteSummary prints s: a table of the run's tasks (status, attempts,
// duration, diagnosis), the prompts of the pending reviews, the outputs of
// the plan's final tasks that are done, and a closing line: "completed in
// 1.2s" (with how many tasks produced output when not all did), "waiting for review after …", "failed after …: why". Tasks of the
// result that s.Plan does not have (those of earlier plans a replan
// dropped) come last, marked "(replaced)". Everything is made visible. A
// summary without a plan or a result is [ErrIncomplete], except that of an
// execution in rounds that ended before its first plan.
func WriteSummary(w io.Writer, s Summary) error {
	if s.Plan == nil && (s.Execution == nil || s.Execution.Rounds > 0 || s.Execution.Halt == "") || s.Result == nil {
		return ErrIncomplete
	}
	vw := prose.NewWriter(w)
	if err := writeSummary(vw, s); err != nil {
		return err
	}
	return vw.Flush()
}

func writeSummary(w io.Writer, s Summary) error {
	p, res := s.Plan, s.Result
	if p == nil {
		// An execution in rounds that halted before its first round ran.
		p = &plan.Plan{}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tATTEMPTS\tDURATION\tDIAGNOSIS")
	row := func(t *runner.TaskResult, name string) {
		why := t.Diagnosis
		if why == "" && t.Status != runner.TaskDone {
			why = errString(t.Err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", name, t.Status, t.Attempts, Round(t.Duration), prose.Excerpt(why, 80))
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
	if len(res.PendingReviews) > 0 && s.ReviewHint != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(s.ReviewHint, "\n"))
	}
	shown := finals(p)
	if x := s.Execution; x != nil && len(x.Deliverable) > 0 {
		shown = x.Deliverable
	}
	for _, id := range shown {
		if t := res.Tasks[id]; t != nil && t.Status == runner.TaskDone {
			fmt.Fprintf(w, "\n== %s ==\n%s\n", id, strings.TrimRight(Text(t.Output), "\n"))
		}
	}
	fmt.Fprintln(w)
	after, and := "", ""
	if x := s.Execution; x != nil {
		if x.Halt != "" {
			reason := s.HaltReason
			if reason == nil {
				reason = HaltReason
			}
			what := "replanning"
			if x.Rounds > 0 || x.Halt == executor.HaltMaxRounds {
				what = "rounds"
			}
			fmt.Fprintf(w, "%s halted (%s): %s\n", what, x.Halt, reason(x.Halt))
		}
		if x.ReplanCount > 0 {
			after, and = " after "+prose.Plural(x.ReplanCount, "replan"), " and "+prose.Plural(x.ReplanCount, "replan")
		}
		if x.Rounds > 0 {
			after, and = " in "+prose.Plural(x.Rounds, "round"), " and "+prose.Plural(x.Rounds, "round")
		}
	}
	var err error
	switch res.Status {
	case runner.StatusCompleted:
		_, err = fmt.Fprintf(w, "completed in %s%s%s\n", Round(res.Duration), after, produced(p, res))
	case runner.StatusWaiting:
		_, err = fmt.Fprintf(w, "waiting for review after %s%s\n", Round(res.Duration), and)
	case runner.StatusReplanRequired:
		_, err = fmt.Fprintf(w, "replan required by task %s%s: %s\n", res.Replan.TaskID, after, prose.Excerpt(res.Replan.Diagnosis, 200))
	default:
		_, err = fmt.Fprintf(w, "failed after %s%s: %s\n", Round(res.Duration), and, prose.Excerpt(errString(res.Err), 200))
	}
	return err
}

// produced says, for a completed run, how many of the tasks of p produced
// an output when some did not: their failures were skipped by their
// policies, and "completed" alone would hide that little or nothing came
// of the run. Empty when every task is done.
func produced(p *plan.Plan, res *runner.Result) string {
	done := 0
	for i := range p.Tasks {
		if t := res.Tasks[p.Tasks[i].ID]; t != nil && t.Status == runner.TaskDone {
			done++
		}
	}
	if done == len(p.Tasks) {
		return ""
	}
	return fmt.Sprintf(": %d of %d tasks produced output", done, len(p.Tasks))
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

// Text is an output as people read it: a string as it is, anything else
// as indented JSON.
func Text(v any) string {
	if raw, ok := v.(json.RawMessage); ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
