package runner

import (
	"context"
	"errors"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/registry"
)

// Class is the kind of a task's failure, for whoever decides what to do
// next: a replanner, a report, a retry policy of the host.
type Class string

// Failure classes.
const (
	// ClassConditionNotMet: the task's when condition did not hold, so it
	// was skipped without running. The one class of a task that did not
	// fail.
	ClassConditionNotMet Class = "condition_not_met"
	// ClassCondition: the task's when condition could not be evaluated.
	ClassCondition Class = "condition_error"
	// ClassTimeout: an attempt outlasted its timeout.
	ClassTimeout Class = "timeout"
	// ClassVerification: the output failed the task's verification or its
	// judge's rubric, or a synthesis gate's output said nothing.
	ClassVerification Class = "verification_failed"
	// ClassInvalidOutput: the output is unusable: it does not match the
	// output_schema, lacks a value a dependent reads, is not the object a
	// worker with declared outputs must return, or the agent said so.
	ClassInvalidOutput Class = "invalid_output"
	// ClassPrecondition: a worker's precondition did not hold.
	ClassPrecondition Class = "precondition_failed"
	// ClassToolRefused: the agent's tool calls were refused.
	ClassToolRefused Class = "tool_refused"
	// ClassBudget: the LLM budget was spent.
	ClassBudget Class = "budget_exceeded"
	// ClassRejected: a human reviewer rejected the task.
	ClassRejected Class = "rejected"
	// ClassPanic: the agent panicked.
	ClassPanic Class = "panic"
	// ClassGateFailed: the task did not run because a synthesis gate
	// upstream of it failed.
	ClassGateFailed Class = "gate_failed"
	// ClassAgentError: any other error of the agent, or the run's
	// cancellation.
	ClassAgentError Class = "agent_error"
)

// Valid reports whether c is shaped like a class: a lower-case identifier
// ([agent.ValidClass]). Every class above is; a worker may report others
// ([agent.FailureReport]).
func (c Class) Valid() bool { return agent.ValidClass(string(c)) }

// runnerOnly are the classes only the runner gives: a worker that reports
// one is not believed, as a task skipped by its condition did not fail and
// a rejected review is a person's decision.
var runnerOnly = map[Class]bool{ClassConditionNotMet: true, ClassCondition: true, ClassRejected: true, ClassGateFailed: true}

// ClassError is a task's failure whose class is known already: one read
// back from a journal, which kept its text and its class ([Classify] of
// the error it was). Classify gives its Class, whatever Err says. An agent
// reports the class of its failure with an [agent.FailureReport].
type ClassError struct {
	Class Class
	Err   error
}

func (e *ClassError) Error() string { return e.Err.Error() }
func (e *ClassError) Unwrap() error { return e.Err }

// Classify names the kind of a task's failure err; "" for nil. A
// [*ClassError] in err's chain has the class it holds. Where err
// has several causes the first that applies in the order of the constants
// above wins, except that a spent budget wins over a timeout, and the
// class of a worker's [agent.FailureReport] wins over all but those two,
// unless it is one only the runner gives (a condition's, a review's, a
// gate's), which leaves the error its own class.
func Classify(err error) Class {
	var panicked *PanicError
	var report *agent.FailureReport
	var known *ClassError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &known) && known.Class != "":
		return known.Class
	case errors.Is(err, ErrConditionNotMet):
		return ClassConditionNotMet
	case errors.Is(err, ErrCondition):
		return ClassCondition
	case errors.Is(err, llm.ErrBudgetExceeded):
		return ClassBudget
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.As(err, &report) && agent.ValidClass(report.Class) && !runnerOnly[Class(report.Class)]:
		return Class(report.Class)
	}
	switch {
	case errors.Is(err, ErrVerification), errors.Is(err, ErrGateOutput), errors.Is(err, ErrRubric):
		return ClassVerification
	case errors.Is(err, ErrMissingValue), errors.Is(err, ErrOutputSchema), errors.Is(err, agent.ErrInvalidOutput):
		return ClassInvalidOutput
	case errors.Is(err, registry.ErrPrecondition):
		return ClassPrecondition
	case errors.Is(err, agent.ErrToolRefused):
		return ClassToolRefused
	case errors.Is(err, ErrRejected):
		return ClassRejected
	case errors.Is(err, ErrGateFailed):
		return ClassGateFailed
	case errors.As(err, &panicked):
		return ClassPanic
	}
	return ClassAgentError
}
