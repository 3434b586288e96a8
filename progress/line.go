package progress

import (
	"fmt"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/runner"
)

// Line describes an event of a run in one line, as [Printer] prints it
// after the time: "fetch: done in 1.2s", "phase 1 started". Messages are
// cut to their first line and a hundred or so characters. The line is not
// made visible: a host that prints it on a terminal escapes its control
// characters, as Printer does.
func Line(e runner.Event) string {
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
		return fmt.Sprintf("replan after %s failed (%s): no repair plan: %s", e.TaskID, failureWhy(e), prose.Excerpt(errString(e.Err), 200))
	case executor.EventHalted:
		return fmt.Sprintf("replanning halted (%s): %s", e.Halt, HaltReason(e.Halt))
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
// executor's Halt values, in words; another value is returned as it is.
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
	case executor.HaltGaveUp:
		return "the planner gave up"
	}
	return halt
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
