package temporal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/runner"
)

// Names of the workflow, its signal, update and query, and its activities. A
// worker registers them under these names ([RegisterWorkflow],
// [Activities.Register]); a client reaches them by these names alone, so
// that it needs no worker code.
const (
	// WorkflowName is the workflow type of a dagent run.
	WorkflowName = "dagent.Run"
	// SignalReview carries a [Review]: a person's decision on a
	// human_review task.
	SignalReview = "review"
	// UpdateReview carries a [Review] as an update, whose sender learns
	// whether the run took it: a decision on a task that is not a
	// human_review of the run's current plan, or on one decided already,
	// is refused ([Decide]). [SignalReview] drops such a decision.
	UpdateReview = "decide"
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
	// ActivityPlan asks the worker's planner for the plan of a mission
	// ([PlanRequest]).
	ActivityPlan = "dagent.Plan"
	// ActivityRound asks the worker's planner for the next round of a
	// mission planned in rounds ([RoundRequest]).
	ActivityRound = "dagent.Round"
)

// Input is what a run's workflow starts from: the run's id, which is also
// the workflow id, and its [durable.Spec] in the spec's own JSON form.
// The other fields are optional.
type Input struct {
	RunID string       `json:"run_id"`
	Spec  durable.Spec `json:"spec"`
	// Initial is a JSON object of task outputs by task id: those tasks
	// are done and do not run ([runner.WithInitialResults]).
	Initial json.RawMessage `json:"initial,omitempty"`
	// Reviews are decisions known when the run starts
	// ([runner.WithReviews]).
	Reviews []Review `json:"reviews,omitempty"`
	// Backoff spaces the retries of a task; nil is
	// [runner.DefaultBackoff].
	Backoff *runner.Backoff `json:"backoff,omitempty"`
	// NoRetry names failure classes never retried
	// ([runner.WithoutRetryOn]).
	NoRetry []runner.Class `json:"no_retry,omitempty"`
	// MaxRequestBytes bounds a request's size
	// ([runner.WithMaxRequestBytes]); on Temporal it is at most
	// [MaxOutputBytes], which 0 and values below 0 stand for.
	MaxRequestBytes int64 `json:"max_request_bytes,omitempty"`
	// HeartbeatTimeout is how long an attempt's worker may go without a
	// heartbeat before the attempt is deemed lost with it and made again
	// on another worker; 0 is [DefaultHeartbeatTimeout]. An attempt
	// heartbeats every third of it when the workers' interval
	// ([WithHeartbeat]) is longer.
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
	// EndWaiting ends the workflow when the run waits for reviews, with
	// its waiting result, as dagent run does; a new run given the
	// decisions (Reviews) and the results so far (Initial) goes on. By
	// default the workflow waits for the decisions ([UpdateReview]).
	EndWaiting bool `json:"end_waiting,omitempty"`
}

// Review is the payload of [UpdateReview] and [SignalReview]: the
// decision on the human_review task TaskID.
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
	// status — or the planner's route ("synthesis", "clarify") when the
	// planner of its mission gave no plan to run.
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
	// Planned is the planner's answer of a run that started from a
	// mission and ran no plan — a direct answer, a question, no valid
	// plan — and PlanError the planner's error, if any; Run is then nil.
	Planned   *metaplanner.Result
	PlanError string
}

// MarshalJSON writes o as [executor.Result.MarshalJSON] writes Execution
// when o has one, else as [runner.Result.MarshalJSON] writes Run; an
// outcome of the planner alone as dagent plan --format json writes it.
func (o Outcome) MarshalJSON() ([]byte, error) {
	switch {
	case o.Run == nil && o.Planned != nil:
		return o.marshalPlanning()
	case o.Execution != nil:
		return o.Execution.MarshalJSON()
	case o.Run != nil:
		return o.Run.MarshalJSON()
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads o from any form [Outcome.MarshalJSON] writes: a
// document with "replan_count" is an execution's, one with "route" the
// planner's.
func (o *Outcome) UnmarshalJSON(data []byte) error {
	var head struct {
		ReplanCount *int    `json:"replan_count"`
		Route       *string `json:"route"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("outcome: %w", err)
	}
	if head.Route != nil {
		return o.unmarshalPlanning(data)
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

// exact decodes data into v with the numbers of its JSON-shaped values
// kept exact, as [json.Number], as dagent keeps them in process.
func exact(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// wireRequest is an [agent.Request] as an attempt's activity carries it:
// its empty fields left out. A conversion between the two types checks
// that they keep the same fields.
type wireRequest struct {
	RunID          string          `json:"run_id"`
	TaskID         string          `json:"task_id"`
	Agent          string          `json:"agent"`
	Input          string          `json:"input,omitempty"`
	Template       string          `json:"template,omitempty"`
	Refs           map[string]any  `json:"refs,omitempty"`
	Attempt        int             `json:"attempt"`
	Diagnosis      string          `json:"diagnosis,omitempty"`
	Failure        agent.Failure   `json:"failure,omitempty"`
	Depends        map[string]any  `json:"depends,omitempty"`
	Skipped        []string        `json:"skipped,omitempty"`
	Inputs         map[string]any  `json:"inputs,omitempty"`
	Params         map[string]any  `json:"params,omitempty"`
	OutputSchema   json.RawMessage `json:"output_schema,omitempty"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
}

// idempotencyKey is the key of attempt n of task id in run runID, which
// the runner gives every attempt.
func idempotencyKey(runID, id string, n int) string {
	return runID + "/" + id + "/" + strconv.Itoa(n)
}

// MarshalJSON writes r with its request's empty fields left out, and its
// idempotency key too when it is the one [AttemptRequest.UnmarshalJSON]
// derives: an attempt's payload is recorded in the run's history, once
// per attempt.
func (r AttemptRequest) MarshalJSON() ([]byte, error) {
	type plain AttemptRequest
	w := struct {
		plain
		Request wireRequest `json:"request"`
	}{plain(r), wireRequest(r.Request)}
	if w.Request.IdempotencyKey == idempotencyKey(r.Request.RunID, r.Request.TaskID, r.Request.Attempt) {
		w.Request.IdempotencyKey = ""
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads r keeping the numbers of the request's values exact.
// A request without dependencies gets an empty Depends, one without an
// idempotency key the runner's "<run id>/<task id>/<attempt>".
func (r *AttemptRequest) UnmarshalJSON(data []byte) error {
	type plain AttemptRequest
	var w struct {
		plain
		Request wireRequest `json:"request"`
	}
	if err := exact(data, &w); err != nil {
		return err
	}
	*r = AttemptRequest(w.plain)
	r.Request = agent.Request(w.Request)
	if r.Request.Depends == nil {
		r.Request.Depends = map[string]any{}
	}
	if r.Request.IdempotencyKey == "" {
		r.Request.IdempotencyKey = idempotencyKey(r.Request.RunID, r.Request.TaskID, r.Request.Attempt)
	}
	return nil
}

// UnmarshalJSON reads r keeping the numbers of the output exact.
func (r *JudgeRequest) UnmarshalJSON(data []byte) error {
	type plain JudgeRequest
	return exact(data, (*plain)(r))
}

// UnmarshalJSON reads r keeping the numbers of the results exact.
func (r *RepairRequest) UnmarshalJSON(data []byte) error {
	type plain RepairRequest
	return exact(data, (*plain)(r))
}

// UnmarshalJSON reads s keeping the numbers of the outputs exact.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	type plain Snapshot
	return exact(data, (*plain)(s))
}
