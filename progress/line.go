package progress

import (
	"fmt"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/runner"
)

// The events of package durable, named by their kinds: package durable
// is a larger thing than a view of its events needs to link.
const (
	// A run that starts from a mission had its plan from the planner:
	// Tasks counts its tasks, Attempt the planner's attempts.
	eventPlanned runner.EventKind = "mission_planned"
	// It took the plan the journal cached for the mission: Tasks counts
	// its tasks.
	eventPlanCached runner.EventKind = "mission_plan_cached"
)

// Line describes an event of a run in one line, as [Printer] prints it
// after the time: "fetch: done in 1.2s", "phase 1 started". It describes
// the events of packages runner, executor and durable; another kind is
// named as it is. Messages are cut to their first line and a hundred or
// so characters. The line is not made visible: a host that prints it on
// a terminal escapes its control characters, as Printer does.
func Line(e runner.Event) string { return Words{}.Line(e) }

// Words describe events as [Line] does, in a host's words where it has
// its own: the dagent command explains a halt with the flags that set its
// limits.
type Words struct {
	// HaltReason explains why an executor stopped replanning, from the
	// Halt of its halt event; nil is [HaltReason].
	HaltReason func(halt string) string
}

// Line describes e in one line, as the package's [Line] does, in w's
// words.
func (w Words) Line(e runner.Event) string {
	switch e.Kind {
	case runner.EventRunStarted:
		return "run " + e.RunID + " started"
	case runner.EventRunFinished:
		return "run " + string(e.Status)
	case runner.EventPhaseStarted:
		return fmt.Sprintf("phase %d started", e.Phase)
	case runner.EventPhaseFinished:
		return fmt.Sprintf("phase %d settled in %s", e.Phase, Round(e.Duration))
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
		return fmt.Sprintf("%s: done in %s", e.TaskID, Round(e.Duration))
	case runner.EventTaskFailed:
		return e.TaskID + ": failed: " + prose.Excerpt(errString(e.Err), 100)
	case runner.EventTaskSkipped:
		return e.TaskID + ": skipped: " + prose.Excerpt(errString(e.Err), 100)
	case runner.EventTaskWaiting:
		return e.TaskID + ": waiting for review"
	case executor.EventReplanRequested:
		return fmt.Sprintf("replan requested after %s failed (%s)", e.TaskID, failureWhy(e))
	case executor.EventRepairAdopted:
		return fmt.Sprintf("replan %d after %s failed (%s): %s added", e.Version, e.TaskID, failureWhy(e), prose.Plural(e.NewTasks, "task"))
	case executor.EventReplanFailed:
		if e.TaskID == "" {
			return "no usable plan from the planner: " + prose.Excerpt(errString(e.Err), 200)
		}
		return fmt.Sprintf("replan after %s failed (%s): no repair plan: %s", e.TaskID, failureWhy(e), prose.Excerpt(errString(e.Err), 200))
	case executor.EventHalted:
		reason := w.HaltReason
		if reason == nil {
			reason = HaltReason
		}
		return fmt.Sprintf("replanning halted (%s): %s", e.Halt, reason(e.Halt))
	case executor.EventRoundRequested:
		if e.Attempt <= 1 {
			return "asking the planner for round 1"
		}
		return fmt.Sprintf("round %d ran: asking the planner what next", e.Attempt-1)
	case executor.EventRoundAdopted:
		return fmt.Sprintf("round %d planned: %s added", e.Attempt, prose.Plural(e.NewTasks, "task"))
	case executor.EventRoundsDone:
		return fmt.Sprintf("the planner is done after round %d", e.Attempt-1)
	case eventPlanned:
		return fmt.Sprintf("planned %s in %s", prose.Plural(e.Tasks, "task"), prose.Plural(e.Attempt, "attempt"))
	case eventPlanCached:
		return "reused the cached plan of " + prose.Plural(e.Tasks, "task")
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

// HaltReason explains why an executor stopped replanning, one of the
// executor's Halt values, in words; another value is the class of a
// failure that halted it.
func HaltReason(halt string) string {
	switch halt {
	case executor.HaltMaxReplans:
		return "the replans reached their limit"
	case executor.HaltMaxReplansPerTask:
		return "a task's replans reached their limit"
	case executor.HaltSameFailure:
		return "a task failed the same way as before a replan"
	case executor.HaltConsecutiveFailures:
		return "executions in a row finished no new task"
	case executor.HaltBudget:
		return "the LLM budget is spent"
	case executor.HaltReplanFailed:
		return "the planner gave no repair plan"
	case executor.HaltToolRefused:
		return "an agent kept calling tools it may not use, perhaps told to by its data"
	case executor.HaltPrecondition:
		return "a worker's precondition did not hold"
	case executor.HaltFlakyStreak:
		return "tasks in a row passed only on a retry"
	case executor.HaltPlanGrowth:
		return "a repair plan grew past its limit"
	case executor.HaltMaxRounds:
		return "the rounds reached their limit"
	case executor.HaltGaveUp:
		return "the planner gave up"
	}
	// Any other halt is a failure class that halts (executor.WithHaltOn).
	return "a task failed with class " + halt + ", which halts"
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
