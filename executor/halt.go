package executor

import (
	"errors"
	"fmt"
)

// Halts: why replanning stopped before the plan completed.
const (
	HaltMaxReplans          = "max_replans"
	HaltMaxReplansPerTask   = "max_replans_per_task"
	HaltSameFailure         = "same_failure"
	HaltConsecutiveFailures = "consecutive_failures"
	HaltBudget              = "budget_exceeded"
	HaltReplanFailed        = "replan_failed"
	// HaltGaveUp: the replanner answered that no repair can reach the
	// mission ([Repair.GaveUp]); the cause is a *[GaveUpError].
	HaltGaveUp = "gave_up"
)

// GaveUpError is the cause of a [HaltGaveUp] halt: the replanner's reason
// for giving up.
type GaveUpError struct {
	Reason string
}

func (e *GaveUpError) Error() string { return "the replanner gave up: " + e.Reason }

// ErrHalted: the execution stopped replanning at a limit, a budget, or a
// replan that gave no repair; a *[HaltError] says which.
var ErrHalted = errors.New("replanning halted")

// HaltError is the Err of the result of an execution that halted, whose
// status is failed: the halt, the failure it stopped at, and what caused
// it, if an error did.
type HaltError struct {
	// Halt is one of the halts, such as [HaltSameFailure].
	Halt string
	// Failure is the failure replanning stopped at; its TaskID is empty
	// when the wall time ran out with no task failed.
	Failure Failure
	// Err is the cause: the replanner's error or the critic's refusal of
	// a repair (a *[RefusedError]) with [HaltReplanFailed], the end of the
	// wall time, or the error of the run that failed. Nil when the run
	// asked for a replan and a limit refused it.
	Err error
}

func (e *HaltError) Error() string {
	task := "the run failed"
	if e.Failure.TaskID != "" {
		task = "task " + e.Failure.TaskID + " failed"
	}
	detail := e.Failure.Diagnosis
	var gaveUp *GaveUpError
	switch {
	case errors.As(e.Err, &gaveUp):
		detail = gaveUp.Reason
	case e.Err != nil && (e.Halt == HaltReplanFailed || detail == ""):
		detail = e.Err.Error()
	}
	var why string
	switch e.Halt {
	case HaltSameFailure:
		why = task + " the same way twice"
	case HaltMaxReplans:
		why = task + " and no replan is left"
	case HaltMaxReplansPerTask:
		why = task + " and no replan of it is left"
	case HaltConsecutiveFailures:
		why = task + " and too many executions in a row finished no new task"
	case HaltReplanFailed:
		why = "no repair plan after " + task
	case HaltGaveUp:
		why = "the replanner gave up after " + task
	case HaltBudget:
		why = task + " and the budget is spent"
	default:
		why = task
	}
	if e.Failure.TaskID == "" && e.Halt != HaltReplanFailed && e.Halt != HaltGaveUp && detail != "" {
		// No task failed: the cause, such as the end of the wall time, is
		// the reason.
		return fmt.Sprintf("%s (%s): %s", ErrHalted, e.Halt, detail)
	}
	if detail != "" {
		why += ": " + detail
	}
	return fmt.Sprintf("%s (%s): %s", ErrHalted, e.Halt, why)
}

// Unwrap returns [ErrHalted] and the cause, when there is one.
func (e *HaltError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrHalted}
	}
	return []error{ErrHalted, e.Err}
}
