package executor

import (
	"encoding/json"
	"fmt"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// resultDoc is what the JSON form of a Result adds to a run's. The order
// of its fields is the order of the keys in the document.
type resultDoc struct {
	ReplanCount       int        `json:"replan_count"`
	ExecutionAttempts int        `json:"execution_attempts"`
	Usage             llm.Usage  `json:"usage"`
	ReplanHistory     []Trial    `json:"replan_history"`
	Halt              *string    `json:"halt"`
	Plan              *plan.Plan `json:"plan"`
	Rounds            int        `json:"rounds,omitempty"`
	Deliverable       []string   `json:"deliverable,omitempty"`
}

// MarshalJSON writes r in the JSON form of a run's result
// ([runner.Result.MarshalJSON]) of its embedded run result, followed by
// what replanning adds:
//
//	"replan_count", "execution_attempts",
//	"usage": {"prompt_tokens", "completion_tokens"},
//	"replan_history": [{"attempt", "task_id", "class", "diagnosis",
//	                    "output", "new_task_count"}],
//	"halt": null or one of the halts (HaltMaxReplans, ...),
//	"plan": the canonical plan that ran last, or null,
//	"rounds", "deliverable": of an execution in rounds, left out
//	                         otherwise
//
// The critic's Report is not written.
func (r Result) MarshalJSON() ([]byte, error) {
	run, err := r.Result.MarshalJSON()
	if err != nil {
		return nil, err
	}
	doc := resultDoc{
		ReplanCount:       r.ReplanCount,
		ExecutionAttempts: r.ExecutionAttempts,
		Usage:             r.Usage,
		ReplanHistory:     append([]Trial{}, r.History...),
		Plan:              r.Plan,
		Rounds:            r.Rounds,
		Deliverable:       r.Deliverable,
	}
	if r.Halt != "" {
		doc.Halt = &r.Halt
	}
	more, err := jsonv.Marshal(doc)
	if err != nil {
		return nil, err
	}
	// Both are objects with keys: one object is the first without its
	// closing brace and the second without its opening one.
	out := append(run[:len(run)-1:len(run)-1], ',')
	return append(out, more[1:]...), nil
}

// UnmarshalJSON reads r from the JSON form [Result.MarshalJSON] writes,
// the run's part as [runner.Result.UnmarshalJSON] reads it (errors come
// back as their text), the plan as [plan.Parse] reads it.
func (r *Result) UnmarshalJSON(data []byte) error {
	var run runner.Result
	if err := json.Unmarshal(data, &run); err != nil {
		return err
	}
	var doc resultDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("execution result: %w", err)
	}
	run.Usage = doc.Usage
	*r = Result{
		Result: run, Plan: doc.Plan, ReplanCount: doc.ReplanCount, ExecutionAttempts: doc.ExecutionAttempts,
		History: doc.ReplanHistory, Rounds: doc.Rounds, Deliverable: doc.Deliverable,
	}
	if doc.Halt != nil {
		r.Halt = *doc.Halt
	}
	return nil
}
