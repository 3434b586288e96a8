package runner

import (
	"time"

	"github.com/dagent-dev/dagent/agent"
)

// Status is the outcome of a run.
type Status string

// Run statuses.
const (
	// StatusCompleted: every task is done or was skipped.
	StatusCompleted Status = "completed"
	// StatusFailed: a failure halted the run, a synthesis gate failed, or
	// the run was cancelled. Result.Err says which.
	StatusFailed Status = "failed"
	// StatusWaiting: a human review waits for a decision; nothing failed.
	StatusWaiting Status = "waiting"
	// StatusReplanRequired: a task's policy asked for a new plan of the
	// tail; Result.Replan carries what the meta-planner needs.
	StatusReplanRequired Status = "replan_required"
)

// TaskStatus is the state of one task.
type TaskStatus string

// Task states: pending → running → done | failed | skipped | waiting.
const (
	// TaskPending: the task has not started, and will not in this run if
	// the run is over.
	TaskPending TaskStatus = "pending"
	// TaskRunning: an attempt is under way or a retry is due.
	TaskRunning TaskStatus = "running"
	// TaskDone: the task has its output.
	TaskDone TaskStatus = "done"
	// TaskFailed: the task failed for good and halted the run, asked for a
	// replan, or was a synthesis gate.
	TaskFailed TaskStatus = "failed"
	// TaskSkipped: the task failed and its policy let the run go on, it
	// is downstream of a failed synthesis gate, or its when condition did
	// not hold. Err says why.
	TaskSkipped TaskStatus = "skipped"
	// TaskWaiting: a human review waits for a decision.
	TaskWaiting TaskStatus = "waiting"
)

// Result is the outcome of Run. Every finished task's output is in it,
// whatever the status.
type Result struct {
	RunID  string
	Status Status
	// Err says why a failed run failed: the failure that halted it, the
	// synthesis gate that failed, or the context's error. Nil otherwise.
	Err error
	// Tasks holds every task of the plan by id.
	Tasks map[string]*TaskResult
	// PendingReviews lists the human reviews waiting for a decision, in
	// plan order.
	PendingReviews []PendingReview
	// Replan is set when Status is StatusReplanRequired.
	Replan *ReplanRequest
	// Started is when the run started; Duration how long it took.
	Started  time.Time
	Duration time.Duration
	// Usage is the LLM token usage of every attempt of the run.
	Usage agent.Usage
}

// TaskResult is the outcome of one task.
type TaskResult struct {
	ID     string
	Status TaskStatus
	// Attempts counts the attempts made; 0 for a task that never ran or
	// whose output came from WithInitialResults.
	Attempts int
	// Output is set when Status is TaskDone; for a failed task it holds the
	// last output that failed verification, if any.
	Output any
	// Err is the last failure of a failed or skipped task, or why a task
	// was skipped without running.
	Err error
	// Class is the kind of failure of a failed or skipped task (see
	// Classify); empty for the others.
	Class Class
	// Diagnosis says why a failed or skipped task failed: its final
	// attempt's verification diagnosis or error text. Empty for a task that
	// is done, whatever its earlier attempts said.
	Diagnosis string
	// Started is when the first attempt started; Duration runs from there
	// to the task's final state.
	Started  time.Time
	Duration time.Duration
	Usage    agent.Usage
}

// PendingReview is a human review waiting for a decision.
type PendingReview struct {
	TaskID string
	// Prompt is the review task's input, templates expanded.
	Prompt string
	// Upstream holds the outputs of the review's direct dependencies: what
	// the reviewer is asked to judge.
	Upstream map[string]any
}

// ReplanRequest is what a run that needs a new plan hands to the
// meta-planner.
type ReplanRequest struct {
	// TaskID is the task whose policy asked for the replan.
	TaskID string
	// Output is that task's last output, nil when it failed with an error.
	Output any
	// Diagnosis says why the task failed.
	Diagnosis string
	// Completed lists the tasks that are done, in plan order; their outputs
	// are in Result.Tasks and must not be run again.
	Completed []string
}

// Outputs returns the outputs of the tasks that are done, by id: what
// WithInitialResults takes to resume the run.
func (r *Result) Outputs() map[string]any {
	out := make(map[string]any, len(r.Tasks))
	for id, t := range r.Tasks {
		if t.Status == TaskDone {
			out[id] = t.Output
		}
	}
	return out
}
