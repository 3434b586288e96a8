package runner

import (
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/plan"
)

// Errors Run returns before any task starts.
var (
	// ErrNoAgent: a task names an agent the runner cannot run — an LLM
	// agent of the plan without WithPlanAgents.
	ErrNoAgent = errors.New("no agent to run the task")
	// ErrUnknownTask: WithInitialResults or WithReviews names a task the
	// plan does not have, or a review for a task that is not a human review.
	ErrUnknownTask = errors.New("unknown task")
	// ErrInvalidOption: an option holds a value the runner cannot use.
	ErrInvalidOption = errors.New("invalid runner option")
)

// Errors a task fails with.
var (
	// ErrVerification: the output failed the task's verification predicate.
	ErrVerification = errors.New("verification failed")
	// ErrGateOutput: a synthesis gate produced an empty or too short output.
	ErrGateOutput = errors.New("gate check failed")
	// ErrRejected: a human reviewer rejected the task.
	ErrRejected = errors.New("rejected by the reviewer")
	// ErrOutputSchema: the output does not match the task's output_schema.
	ErrOutputSchema = errors.New("output does not match the output schema")
	// ErrMissingValue: a {{results...}} template or an inputs slot names a
	// value the upstream output does not have.
	ErrMissingValue = errors.New("missing upstream value")
	// ErrRequestTooLarge: the task's request would exceed the bound of
	// [WithMaxRequestBytes].
	ErrRequestTooLarge = errors.New("request too large")
	// ErrGateFailed: the task did not run because a synthesis gate upstream
	// of it failed.
	ErrGateFailed = errors.New("an upstream synthesis gate failed")
	// ErrAbandoned: the agent ignored the end of its context and was left
	// behind.
	ErrAbandoned = errors.New("agent did not return after its context ended")
	// ErrConditionNotMet: the task's when condition did not hold, so the
	// task was skipped and its agent never called. It is not a failure.
	ErrConditionNotMet = errors.New("condition not met")
	// ErrCondition: the task's when condition could not be evaluated (a
	// runtime error of the predicate), so the task failed without running.
	ErrCondition = errors.New("condition could not be evaluated")
)

// TaskError is a failure of one task: what halted a run or failed a gate,
// in Result.Err.
type TaskError struct {
	TaskID string
	Err    error
}

func (e *TaskError) Error() string { return fmt.Sprintf("task %s: %v", e.TaskID, e.Err) }
func (e *TaskError) Unwrap() error { return e.Err }

// PanicError is an agent's panic, turned into its task's failure.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("agent panicked: %v\n%s", e.Value, e.Stack)
}

// PredicateError is a predicate of a task — its verification or its when
// condition — that does not compile. It makes the plan invalid:
// errors.Is(err, [plan.ErrInvalid]) holds.
type PredicateError struct {
	TaskID string
	// Field is the task field that holds the predicate: "verification"
	// or "when". Empty means "verification".
	Field string
	Err   error
}

func (e *PredicateError) Error() string {
	field := e.Field
	if field == "" {
		field = "verification"
	}
	return fmt.Sprintf("task %s: %s: %v", e.TaskID, field, e.Err)
}

func (e *PredicateError) Unwrap() error { return e.Err }

// Is makes a predicate that does not compile an invalid plan.
func (e *PredicateError) Is(target error) bool { return target == plan.ErrInvalid }
