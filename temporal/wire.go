package temporal

import (
	"encoding/json"
	"fmt"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/runner"
)

// Names of the workflow, its signal and query, and its activities. A
// worker registers them under these names ([RegisterWorkflow],
// [Activities.Register]); a client reaches them by these names alone, so
// that it needs no worker code.
const (
	// WorkflowName is the workflow type of a dagent run.
	WorkflowName = "dagent.Run"
	// SignalReview carries a [Review]: a person's decision on a
	// human_review task.
	SignalReview = "review"
	// QueryTasks answers a [Snapshot] of the run.
	QueryTasks = "tasks"

	// ActivityCatalog answers the worker's [Catalog].
	ActivityCatalog = "dagent.Catalog"
	// ActivityAttempt makes one attempt of a task ([AttemptRequest]).
	ActivityAttempt = "dagent.Attempt"
	// ActivityJudge has the worker's judge judge a rubric ([JudgeRequest]).
	ActivityJudge = "dagent.Judge"
	// ActivityRepair asks the worker's planner for a repair plan
	// ([RepairRequest]).
	ActivityRepair = "dagent.Repair"
)

// Input is what a run's workflow starts from: the run's id, which is also
// the workflow id, and its [durable.Spec] in the spec's own JSON form.
type Input struct {
	RunID string       `json:"run_id"`
	Spec  durable.Spec `json:"spec"`
}

// Review is the payload of [SignalReview]: the decision on the
// human_review task TaskID.
type Review struct {
	TaskID   string `json:"task_id"`
	Approved bool   `json:"approved"`
	Comment  string `json:"comment,omitempty"`
	// Output becomes the task's output when the review is approved.
	Output json.RawMessage `json:"output,omitempty"`
}

// NewReview is the signal payload of d on task id. An output that is not
// JSON is an error.
func NewReview(id string, d runner.Decision) (Review, error) {
	r := Review{TaskID: id, Approved: d.Approved, Comment: d.Comment}
	if d.Output != nil {
		raw, err := jsonv.Marshal(d.Output)
		if err != nil {
			return Review{}, fmt.Errorf("review of %s: output: %w", id, err)
		}
		r.Output = raw
	}
	return r, nil
}

// Decision is the runner's form of r; numbers of its output are kept
// exact as [json.Number].
func (r Review) Decision() (runner.Decision, error) {
	d := runner.Decision{Approved: r.Approved, Comment: r.Comment}
	if len(r.Output) > 0 {
		v, err := jsonv.DecodeBytes(r.Output)
		if err != nil {
			return runner.Decision{}, fmt.Errorf("review of %s: output: %w", r.TaskID, err)
		}
		d.Output = v
	}
	return d, nil
}

// Snapshot is the answer of [QueryTasks]: where the run is now.
type Snapshot struct {
	RunID string `json:"run_id"`
	// Version counts the plan versions adopted after the first: 0 until
	// a repair, then the run's id is RunID.Version.
	Version int `json:"version"`
	// Status is "running" while tasks run, "waiting" while the workflow
	// waits for the decisions of PendingReviews, then the run's final
	// status.
	Status string `json:"status"`
	// PendingReviews are the reviews the workflow waits for.
	PendingReviews []runner.PendingReview `json:"pending_reviews"`
	// Tasks are the tasks of the current plan version, in plan order.
	Tasks []TaskState `json:"tasks"`
}

// TaskState is one task of a [Snapshot].
type TaskState struct {
	ID        string            `json:"id"`
	Status    runner.TaskStatus `json:"status"`
	Attempts  int               `json:"attempts"`
	Class     runner.Class      `json:"class,omitempty"`
	Error     string            `json:"error,omitempty"`
	Diagnosis string            `json:"diagnosis,omitempty"`
	Output    any               `json:"output"`
}

// Outcome is the workflow's result: the run's result in the JSON form
// dagent run --format json prints for it — a [runner.Result] for a run
// that does not replan, an [executor.Result] for one that does — which
// dagent run --initial-results reads back.
type Outcome struct {
	// Run is the result of the run, of its last plan version for a run
	// that replans.
	Run *runner.Result
	// Execution is the whole execution of a run that replans; its Result
	// is Run. Nil for a run that does not replan.
	Execution *executor.Result
}

// MarshalJSON writes o as [executor.Result.MarshalJSON] writes Execution
// when o has one, else as [runner.Result.MarshalJSON] writes Run.
func (o Outcome) MarshalJSON() ([]byte, error) {
	switch {
	case o.Execution != nil:
		return o.Execution.MarshalJSON()
	case o.Run != nil:
		return o.Run.MarshalJSON()
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads o from either form [Outcome.MarshalJSON] writes: a
// document with "replan_count" is an execution's.
func (o *Outcome) UnmarshalJSON(data []byte) error {
	var head struct {
		ReplanCount *int `json:"replan_count"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("outcome: %w", err)
	}
	if head.ReplanCount != nil {
		var ex executor.Result
		if err := ex.UnmarshalJSON(data); err != nil {
			return fmt.Errorf("outcome: %w", err)
		}
		*o = Outcome{Run: &ex.Result, Execution: &ex}
		return nil
	}
	var r runner.Result
	if err := r.UnmarshalJSON(data); err != nil {
		return fmt.Errorf("outcome: %w", err)
	}
	*o = Outcome{Run: &r}
	return nil
}
