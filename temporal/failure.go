package temporal

import (
	"context"
	"errors"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// Failure is an error of an activity as data, so that it crosses from the
// worker to the workflow: what [runner.Classify] and the runner's retry
// rule need of it, read where the error was born.
type Failure struct {
	Class   runner.Class `json:"class"`
	Message string       `json:"message"`
	// CannotStart: the agent could not be started ([agent.ErrCannotStart]),
	// which no retry mends.
	CannotStart bool `json:"cannot_start,omitempty"`
	// TimedOut: the attempt's timeout ended it.
	TimedOut bool `json:"timed_out,omitempty"`
	// Report is the worker's own account of its failure, if it gave one.
	Report *agent.FailureReport `json:"report,omitempty"`
}

// failureOf is the Failure of err.
func failureOf(err error, timedOut bool) *Failure {
	f := &Failure{Class: runner.Classify(err), Message: err.Error(), CannotStart: errors.Is(err, agent.ErrCannotStart), TimedOut: timedOut}
	var rep *agent.FailureReport
	if errors.As(err, &rep) {
		cp := *rep
		f.Report = &cp
	}
	return f
}

// Err is the error f stands for: a *[RemoteError].
func (f *Failure) Err() error {
	if f == nil {
		return nil
	}
	return &RemoteError{Failure: *f}
}

// RemoteError is an error rebuilt on the workflow's side from the
// [Failure] an activity reported. Its text is the original's, and
// errors.Is and errors.As match what its class stands for — the sentinel
// of the class ([runner.ErrVerification], [context.DeadlineExceeded] for a
// timeout, [agent.ErrInvalidOutput], [registry.ErrPrecondition],
// [agent.ErrToolRefused], [llm.ErrBudgetExceeded], ...), a
// *[runner.PanicError] for a panic, [agent.ErrCannotStart], and the
// worker's *[agent.FailureReport] — so that [runner.Classify] gives it
// the class it had where it was born.
type RemoteError struct{ Failure }

func (e *RemoteError) Error() string { return e.Message }

// sentinels are the errors a class stands for.
var sentinels = map[runner.Class]error{
	runner.ClassConditionNotMet: runner.ErrConditionNotMet,
	runner.ClassCondition:       runner.ErrCondition,
	runner.ClassTimeout:         context.DeadlineExceeded,
	runner.ClassVerification:    runner.ErrVerification,
	runner.ClassInvalidOutput:   agent.ErrInvalidOutput,
	runner.ClassPrecondition:    registry.ErrPrecondition,
	runner.ClassToolRefused:     agent.ErrToolRefused,
	runner.ClassBudget:          llm.ErrBudgetExceeded,
	runner.ClassRejected:        runner.ErrRejected,
	runner.ClassGateFailed:      runner.ErrGateFailed,
}

// Is matches the sentinel of e's class, and [agent.ErrCannotStart] when
// the agent could not start.
func (e *RemoteError) Is(target error) bool {
	if e.CannotStart && target == agent.ErrCannotStart {
		return true
	}
	s, ok := sentinels[e.Class]
	return ok && target == s
}

// As sets a **[runner.PanicError] to the panic of a panicked attempt, its
// value the message.
func (e *RemoteError) As(target any) bool {
	p, ok := target.(**runner.PanicError)
	if !ok || e.Class != runner.ClassPanic {
		return false
	}
	*p = &runner.PanicError{Value: e.Message}
	return true
}

// Unwrap is the worker's report, which errors.As finds.
func (e *RemoteError) Unwrap() error {
	if e.Report == nil {
		return nil
	}
	return e.Report
}
