package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// RoundAction is a [RoundPlanner]'s decision after a round.
type RoundAction string

// Round actions.
const (
	// RoundContinue: run the answer's new tasks as the next round.
	RoundContinue RoundAction = "continue"
	// RoundDone: the mission is done; the answer's Deliverable names the
	// completed tasks whose results form it.
	RoundDone RoundAction = "done"
	// RoundFailed: the mission cannot be done; the answer's Reason says
	// why.
	RoundFailed RoundAction = "failed"
)

// DefaultMaxRounds is the round budget of [WithRounds] given 0.
const DefaultMaxRounds = 10

// ErrBadRound: a [RoundPlanner]'s answer cannot be acted on — an unknown
// action, a continue without tasks, a deliverable naming a task that is not
// completed.
var ErrBadRound = errors.New("bad round answer")

// RoundPlanner plans an execution in rounds ([WithRounds]); a
// *[github.com/dagent-dev/dagent/metaplanner.Planner] is one. Round is
// asked before the first round, with nothing completed, and after each
// round has run. An error, or an answer without a usable action, ends the
// execution halted with [HaltReplanFailed]; the answer's Usage counts
// either way.
type RoundPlanner interface {
	Round(ctx context.Context, mission string, state RoundState) (*RoundAnswer, error)
}

// RoundPlannerFunc adapts a function to [RoundPlanner].
type RoundPlannerFunc func(ctx context.Context, mission string, state RoundState) (*RoundAnswer, error)

// Round calls f.
func (f RoundPlannerFunc) Round(ctx context.Context, mission string, state RoundState) (*RoundAnswer, error) {
	return f(ctx, mission, state)
}

// RoundState is what a [RoundPlanner] sees before it answers.
type RoundState struct {
	// Round is the round the answer plans, from 1; MaxRounds the budget.
	// When Round is above MaxRounds the budget is spent: the answer must
	// be done or failed, and a continue halts with [HaltMaxRounds].
	Round, MaxRounds int
	// Plan is the plan of the round that ran last, nil before the first.
	Plan *plan.Plan
	// Completed maps the ids of the tasks done so far to their results;
	// they never run again, and new tasks may depend on them and wire
	// their results through inputs.
	Completed map[string]any
	// Failed lists the tasks of the last round that failed, in plan order.
	Failed []Failure
	// Pending lists the tasks of the last round that did not finish (their
	// upstream failed, or the run stopped), in plan order. They do not run
	// again unless the answer adds them anew.
	Pending []string
	// History lists the rounds so far, oldest first.
	History []Trial
}

// RoundAnswer is a [RoundPlanner]'s answer.
type RoundAnswer struct {
	Action RoundAction
	// Tasks are the new tasks of a continue; Agents the LLM sub-agents they
	// need that the plan does not define yet. The next round's plan is
	// [NextRound] of them.
	Tasks  []plan.Task
	Agents map[string]plan.Agent
	// Deliverable names the completed tasks whose results form the
	// deliverable of a done.
	Deliverable []string
	// Reason says why, for a failed answer above all.
	Reason string
	// Usage is what writing the answer spent.
	Usage llm.Usage
}

// NextRound is the plan of the round after p: the tasks of p that are
// completed, unchanged, then tasks; p's agents with agents added. A new
// task that wires an input from a task of the plan without depending on it
// depends on it, since the wire needs its result. The plan is not checked:
// a new task that reuses a completed task's id, or wires an unknown task,
// is found when it is.
func NextRound(p *plan.Plan, completed map[string]any, tasks []plan.Task, agents map[string]plan.Agent) *plan.Plan {
	next := &plan.Plan{}
	if p != nil {
		next.Mission = p.Mission
		next.Agents = maps.Clone(p.Agents)
		for _, t := range p.Tasks {
			if _, ok := completed[t.ID]; ok {
				next.Tasks = append(next.Tasks, t)
			}
		}
	}
	ids := make(map[string]bool)
	for _, t := range next.Tasks {
		ids[t.ID] = true
	}
	for _, t := range tasks {
		ids[t.ID] = true
	}
	for _, t := range tasks {
		t.DependsOn = slices.Clone(t.DependsOn)
		for _, name := range slices.Sorted(maps.Keys(t.Inputs)) {
			from := t.Inputs[name].From
			if ids[from] && from != t.ID && !slices.Contains(t.DependsOn, from) {
				t.DependsOn = append(t.DependsOn, from)
			}
		}
		next.Tasks = append(next.Tasks, t)
	}
	if len(agents) > 0 && next.Agents == nil {
		next.Agents = make(map[string]plan.Agent, len(agents))
	}
	for name, a := range agents {
		if _, ok := next.Agents[name]; !ok {
			next.Agents[name] = a
		}
	}
	return next
}

// Check reports what makes a unusable after a round whose completed tasks
// are completed: an unknown action, a continue without tasks, a done
// whose deliverable is empty or names a task that is not completed, a
// failed without a reason. The error matches [ErrBadRound].
func (a *RoundAnswer) Check(completed map[string]any) error {
	switch a.Action {
	case RoundContinue:
		if len(a.Tasks) == 0 {
			return fmt.Errorf("%w: continue with no new task", ErrBadRound)
		}
	case RoundDone:
		if len(a.Deliverable) == 0 {
			return fmt.Errorf("%w: done with no deliverable", ErrBadRound)
		}
		var missing []string
		for _, id := range a.Deliverable {
			if _, ok := completed[id]; !ok {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%w: the deliverable names %s, which %s not completed", ErrBadRound, strings.Join(missing, ", "), plural(len(missing), "is", "are"))
		}
	case RoundFailed:
		if strings.TrimSpace(a.Reason) == "" {
			return fmt.Errorf("%w: failed with no reason", ErrBadRound)
		}
	default:
		return fmt.Errorf("%w: action %q is not continue, done or failed", ErrBadRound, a.Action)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// WithRounds plans the execution in rounds with p instead of repairing
// it: p writes the tasks of the first round, and after each round has
// run, sees the completed results, the failures and the pending tasks,
// and answers continue (new tasks, the next round), done (the
// deliverable) or failed. Completed tasks never run again. Each round's
// plan is a plan version ([Journal]): version k is round k+1, with a
// [Trial] whose Round says so. maxRounds bounds the rounds (0:
// [DefaultMaxRounds]); when it is spent, p is asked once more for done or
// failed, and a continue halts with [HaltMaxRounds]. The budgets,
// [WithMaxConsecutiveFailures] (rounds in a row that complete no new
// task), [WithMaxFlakyStreak] and the classes that halt ([WithHaltOn],
// [DefaultHaltClasses]) apply: a round with such a failure halts before
// the planner sees it. The replanner and its other limits do not.
func WithRounds(maxRounds int, p RoundPlanner) Option {
	return func(c *config) {
		c.rounds = p
		c.maxRounds = maxRounds
		if c.maxRounds <= 0 {
			c.maxRounds = DefaultMaxRounds
		}
	}
}

// ExecuteRounds runs mission in rounds ([WithRounds], required): the
// round planner writes the first round's plan too. An execution whose
// planner gives up, or that halts, before a first plan ran has no Plan.
// Errors are as [Execute]'s.
func ExecuteRounds(ctx context.Context, mission string, opts ...Option) (*Result, error) {
	c := newConfig(opts)
	if c.rounds == nil {
		return nil, errors.New("executor: ExecuteRounds needs WithRounds")
	}
	return execute(ctx, mission, c, nil)
}

// roundLoop drives the execution in rounds: it runs each round's plan
// and asks the round planner as the Replanning decides.
func (e *execution) roundLoop(ctx context.Context) error {
	dec := e.Start()
	for {
		if dec.Step == StepRound {
			e.deliver(dec.Events)
			a, err := e.c.rounds.Round(ctx, e.mission, *dec.Round)
			if a != nil {
				e.Spend(a.Usage)
			}
			if ctx.Err() != nil && (err != nil || a == nil || a.Check(e.completed) != nil) {
				return e.cancelled(ctx)
			}
			var nd *plan.DAG
			var rep critic.Report
			if next := e.RoundPlan(e.mission, a); next != nil {
				nd, rep = e.check(next)
			}
			dec = e.Rounded(a, err, nd, rep)
		}
		e.deliver(dec.Events)
		if dec.Step != StepRun {
			return nil
		}
		run := e.Next()
		if run.Commit != nil && e.commit(ctx, *run.Commit) != nil {
			return nil
		}
		e.deliver(run.Events)
		rr, err := e.rn.Run(ctx, run.DAG, e.runOptions(run.ID, run.Initial)...)
		if rr == nil {
			return err
		}
		dec = e.Ran(rr, e.retries.take(), err)
		if err != nil {
			if ctx.Err() != nil && e.parent.Err() == nil {
				return e.cancelled(ctx) // the wall-time budget is spent
			}
			return err
		}
	}
}

// failedTask reports whether tr failed: failed, or skipped after it ran.
func failedTask(tr *runner.TaskResult) bool {
	return tr != nil && (tr.Status == runner.TaskFailed || tr.Status == runner.TaskSkipped && tr.Attempts > 0)
}

// taskFailure is the failure of the task of tr, for the planner.
func taskFailure(tr *runner.TaskResult) Failure {
	f := Failure{TaskID: tr.ID, Class: string(tr.Class), Diagnosis: tr.Diagnosis, Output: tr.Output}
	if f.Diagnosis == "" && tr.Err != nil {
		f.Diagnosis = tr.Err.Error()
	}
	var report *agent.FailureReport
	if errors.As(tr.Err, &report) {
		f.Suggestion = report.Suggestion
	}
	return f
}

// roundOutcome lists the failed and the pending tasks of a round's run, in
// p's order.
func roundOutcome(rr *runner.Result, p *plan.Plan) (failed []Failure, pending []string) {
	for _, t := range p.Tasks {
		tr := rr.Tasks[t.ID]
		switch {
		case tr == nil || tr.Status == runner.TaskPending || tr.Status == runner.TaskRunning || tr.Status == runner.TaskWaiting:
			pending = append(pending, t.ID)
		case failedTask(tr):
			failed = append(failed, taskFailure(tr))
		case tr.Status == runner.TaskSkipped:
			pending = append(pending, t.ID)
		}
	}
	return failed, pending
}
