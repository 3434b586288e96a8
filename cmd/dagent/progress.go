package main

import (
	"fmt"
	"io"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/progress"
	"github.com/dagent-dev/dagent/runner"
)

// words are the CLI's words for events: a halt is explained with the
// flags that set the limits.
var words = progress.Words{HaltReason: haltReason}

// eventLine describes an event of a run in one line: as the progress of
// dagent run prints it, and as dagent show prints a journaled one. The
// reuse of a cached plan says how to plan again.
func eventLine(e runner.Event) string {
	line := words.Line(e)
	if e.Kind == durable.EventPlanCached {
		line += " (--no-cache plans again)"
	}
	return line
}

// writeSummary prints the summary of out with [progress.WriteSummary]:
// its table, its pending reviews and how to decide them, the outputs of
// the final tasks of the plan that ran last and how the run ended.
// journaled says dagent resume can continue the run.
func writeSummary(w io.Writer, out *durable.Outcome, journaled bool) error {
	s := progress.Summary{Plan: out.Plan, Result: out.Result, Execution: out.Execution, HaltReason: haltReason}
	if journaled && len(out.Result.PendingReviews) > 0 {
		s.ReviewHint = fmt.Sprintf("To resume, decide each review:\n  dagent resume %s --review %s=approve\n(or =reject), or pass --reviews decisions.json, which maps each review's\ntask id to \"approve\", \"reject\" or {\"approved\": true, \"comment\": \"...\"}.", out.RunID, out.Result.PendingReviews[0].TaskID)
	} else {
		s.ReviewHint = "To resume, run with --format json > run.json, then again with\n  --initial-results run.json --reviews decisions.json\nwhere decisions.json maps each review's task id to \"approve\", \"reject\" or\n{\"approved\": true, \"comment\": \"...\"}."
	}
	return progress.WriteSummary(w, s)
}

// haltReason explains a halt of the executor, naming the flags that set
// its limits.
func haltReason(halt string) string {
	switch halt {
	case executor.HaltMaxReplans:
		return "the replans reached --max-replans"
	case executor.HaltMaxReplansPerTask:
		return "a task's replans reached --max-replans-per-task"
	case executor.HaltBudget:
		return "the LLM budget (--max-tokens, --max-llm-calls) is spent"
	case executor.HaltConsecutiveFailures:
		return "executions in a row finished no new task (--max-consecutive-failures)"
	case executor.HaltFlakyStreak:
		return "tasks in a row passed only on a retry (--max-flaky-streak)"
	case executor.HaltPlanGrowth:
		return "a repair plan grew past --max-plan-growth"
	}
	return progress.HaltReason(halt)
}
