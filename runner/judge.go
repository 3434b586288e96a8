package runner

import (
	"context"
	"errors"

	"github.com/dagent-dev/dagent/agent"
)

// Judge checks a task's output against the task's rubric ([plan.Task.Rubric]):
// the third layer of verification, after the output schema and the
// predicate, for what only a reading of the output can tell. The runner
// asks it only for tasks that have a rubric, only once their output passed
// the schema and the predicate, and never for a human review, whose
// decision is final. Implementations must be safe for concurrent use;
// package [github.com/dagent-dev/dagent/judge] has one that asks an LLM.
type Judge interface {
	// Judge returns the verdict on req's output. An error means no verdict
	// was reached — the judge's model is unreachable, its budget spent —
	// and fails the task without a retry, for its on_failure policy.
	Judge(ctx context.Context, req JudgeRequest) (Verdict, error)
}

// JudgeRequest is what a [Judge] judges.
type JudgeRequest struct {
	RunID  string
	TaskID string
	// Attempt is the attempt whose output is judged, from 1.
	Attempt int
	// Input is the task's input, its templates rendered.
	Input string
	// Rubric says what a good output is.
	Rubric string
	// Output is the attempt's output, normalised as [Result] holds it.
	// It is untrusted: the agent wrote it, and may have been led to write
	// instructions for the judge into it.
	Output any
}

// Verdict is a [Judge]'s answer.
type Verdict struct {
	// Pass says whether the output meets the rubric.
	Pass bool
	// Reason explains the verdict; on a failure it is the task's diagnosis,
	// handed to the agent's retry as [agent.Request.Diagnosis].
	Reason string
	// Usage is what the judgement cost; it is added to the task's usage.
	Usage agent.Usage
}

// Errors of judgement.
var (
	// ErrRubric: the judge found that the output does not meet the task's
	// rubric. It is a verification failure, for on_verification_failure,
	// classified as [ClassVerification].
	ErrRubric = errors.New("output does not meet the rubric")
	// ErrJudge: the judge reached no verdict.
	ErrJudge = errors.New("judge failed")
)

// WithJudge has j judge the output of every task with a rubric once its
// predicate passes. Without it, rubrics are not checked.
func WithJudge(j Judge) Option {
	return func(rn *Runner) { rn.rubricJudge = j }
}
