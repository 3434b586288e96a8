package executor

import (
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/runner"
)

// Halts: why replanning stopped before the plan completed.
const (
	HaltMaxReplans          = "max_replans"
	HaltMaxReplansPerTask   = "max_replans_per_task"
	HaltSameFailure         = "same_failure"
	HaltConsecutiveFailures = "consecutive_failures"
	HaltBudget              = "budget_exceeded"
	HaltReplanFailed        = "replan_failed"
	// HaltToolRefused and HaltPrecondition are the halts of a failure of
	// the classes that halt by default ([DefaultHaltClasses]); a failure
	// of any class [WithHaltOn] names halts with the class as its halt.
	HaltToolRefused  = string(runner.ClassToolRefused)
	HaltPrecondition = string(runner.ClassPrecondition)
	// HaltFlakyStreak: the tasks that finished last, in a row, each
	// passed only on a retry after an error or a timeout; the failures
	// come from an unreliable worker or service, which a new plan does
	// not repair.
	HaltFlakyStreak = "flaky_streak"
	// HaltPlanGrowth: a repair plan grew past the bound on the tasks it
	// may add to the plan the execution started with.
	HaltPlanGrowth = "plan_growth"
	// HaltMaxRounds: the round budget of [WithRounds] is spent and the
	// round planner still answered continue.
	HaltMaxRounds = "max_rounds"
	// HaltGaveUp: the planner answered that the mission cannot be
	// reached: a repair that gives up ([Repair.GaveUp]) or a round
	// planner's failed ([RoundFailed]); the cause is a *[GaveUpError].
	HaltGaveUp = "gave_up"
)

// GaveUpError is the cause of a [HaltGaveUp] halt: the planner's reason
// for giving up.
type GaveUpError struct {
	Reason string
}

func (e *GaveUpError) Error() string { return "the planner gave up: " + e.Reason }

// ErrHalted: the execution stopped replanning at a limit, a budget, a
// failure of a class that halts, or a replan that gave no repair; a
// *[HaltError] says which.
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
	// a repair (a *[RefusedError]) with [HaltReplanFailed], how much the
	// repair grew with [HaltPlanGrowth], the end of the wall time, or the
	// error of the run that failed. Nil when the run asked for a replan
	// and a limit refused it.
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
	case e.Err != nil && (e.Halt == HaltReplanFailed || e.Halt == HaltPlanGrowth || detail == ""):
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
		if e.Failure.TaskID == "" {
			// A round planner's answer, or a repair after no task failed.
			why = "no usable plan from the planner"
		}
	case HaltGaveUp:
		why = "the planner gave up"
		if e.Failure.TaskID != "" {
			why += " after " + task
		}
	case HaltBudget:
		why = task + " and the budget is spent"
	case HaltFlakyStreak:
		why = task + " after too many tasks in a row passed only on a retry"
	case HaltPlanGrowth:
		why = task + " and its repair grew too much"
	case HaltMaxRounds:
		why = "the round budget is spent and the planner would go on"
		if e.Failure.TaskID != "" {
			why += " after " + task
		}
		return fmt.Sprintf("%s (%s): %s", ErrHalted, e.Halt, why)
	default:
		// A class that halts ([WithHaltOn]).
		why = task + " with class " + e.Halt + ", which halts the execution"
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
