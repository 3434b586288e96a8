package executor

import (
	"context"

	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
)

// Replanner writes a repair plan of the unfinished tail of a plan after a
// failure; *[github.com/dagent-dev/dagent/metaplanner.Planner] is one.
//
// completed maps the ids of the tasks that are done to their results: a
// repair keeps each of them with its id, so that it does not run again;
// history lists the repairs tried before, oldest first. A Repair that
// gives up ([Repair.GaveUp]) ends the execution halted with [HaltGaveUp];
// any other Repair without a Plan, or an error, with [HaltReplanFailed];
// the Repair's Usage counts either way.
type Replanner interface {
	Repair(ctx context.Context, mission string, completed map[string]any, failure Failure, history []Trial) (*Repair, error)
}

// ReplannerFunc adapts a function to [Replanner].
type ReplannerFunc func(ctx context.Context, mission string, completed map[string]any, failure Failure, history []Trial) (*Repair, error)

// Repair calls f.
func (f ReplannerFunc) Repair(ctx context.Context, mission string, completed map[string]any, failure Failure, history []Trial) (*Repair, error) {
	return f(ctx, mission, completed, failure, history)
}

// Repair is a [Replanner]'s answer.
type Repair struct {
	// Plan is the repair plan; the executor checks and reviews it like the
	// plan it started with before it runs.
	Plan *plan.Plan
	// GaveUp says the replanner found no repair that can reach the
	// mission: the execution halts cleanly with [HaltGaveUp], Reason in
	// its error. Plan is ignored.
	GaveUp bool
	// Reason is the replanner's short rationale: why this repair, kept in
	// the [Trial] the journal records, or why it gave up.
	Reason string
	// Usage is what writing the repair spent.
	Usage llm.Usage
}

// Failure is what went wrong in a run: the plan that ran and the task that
// failed.
type Failure struct {
	// Plan is the plan that ran.
	Plan *plan.Plan `json:"plan,omitempty"`
	// TaskID is the task that failed; empty for a failure of the run as a
	// whole.
	TaskID string `json:"task_id,omitempty"`
	// Class is the failure's class, a [github.com/dagent-dev/dagent/runner.Class]
	// such as "timeout", "verification_failed", "agent_error",
	// "invalid_output", "tool_refused", "budget_exceeded" or "rejected", or
	// the class a worker reported ([github.com/dagent-dev/dagent/agent.FailureReport]).
	Class string `json:"class,omitempty"`
	// Diagnosis says why the task failed: the predicate's diagnosis, the
	// agent's error, the reviewer's reason.
	Diagnosis string `json:"diagnosis,omitempty"`
	// Suggestion is what the worker that failed suggests doing about it,
	// from its [github.com/dagent-dev/dagent/agent.FailureReport]; untrusted text, as the diagnosis is.
	Suggestion string `json:"suggestion,omitempty"`
	// Output is the task's last output, if any: a string, or any
	// JSON-shaped value, whole.
	Output any `json:"output,omitempty"`
}

// Trial is an earlier repair of the same execution: which task failed, how,
// and how large the repair plan was, so that a replanner does not repeat
// an approach that failed.
type Trial struct {
	// Attempt numbers the repairs from 1: the repair made the plan of
	// version Attempt.
	Attempt int `json:"attempt"`
	// Round is the round the plan of version Attempt is, in an execution
	// in rounds ([WithRounds]); TaskID, Class, Diagnosis and Output then
	// describe the first failure of the round before it, if any. 0 for a
	// repair.
	Round  int    `json:"round,omitempty"`
	TaskID string `json:"task_id"`
	Class  string `json:"class"`
	// Diagnosis is the failure's; Output the start of the failing output,
	// as text.
	Diagnosis string `json:"diagnosis"`
	Output    string `json:"output"`
	// NewTaskCount counts the tasks of the repair the failed plan did not
	// have ([NewTasks]).
	NewTaskCount int `json:"new_task_count"`
	// Reason is the replanner's rationale of the repair ([Repair.Reason]);
	// empty when it gave none.
	Reason string `json:"reason,omitempty"`
}

// NewTasks counts the tasks of repair that p does not have: what a repair
// added, as [Trial.NewTaskCount] records it. A nil p has no tasks.
func NewTasks(p, repair *plan.Plan) int {
	have := make(map[string]bool)
	if p != nil {
		for i := range p.Tasks {
			have[p.Tasks[i].ID] = true
		}
	}
	n := 0
	for i := range repair.Tasks {
		if !have[repair.Tasks[i].ID] {
			n++
		}
	}
	return n
}
