package temporal

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
)

// roundTimeout bounds one round's planning.
const roundTimeout = repairTimeout

// RoundRequest asks the worker's round planner what the next round of a
// mission planned in rounds is, as [executor.RoundPlanner.Round] is asked.
type RoundRequest struct {
	Mission string              `json:"mission"`
	State   executor.RoundState `json:"state"`
	// LLM holds the planner's settings.
	LLM durable.LLMSpec `json:"llm"`
	// Budget, when set, bounds the planner's calls by the run's budget.
	Budget *Allowance `json:"budget,omitempty"`
}

// RoundReply is the round planner's answer. The tasks of a continue
// travel as the plan of the next round, Next ([executor.NextRound]), its
// last NewTasks tasks the answer's, which the critic reviewed (Report):
// the critic's checks run goroutines, which workflow code must not.
type RoundReply struct {
	Action      executor.RoundAction `json:"action,omitempty"`
	Deliverable []string             `json:"deliverable,omitempty"`
	Reason      string               `json:"reason,omitempty"`
	Usage       llm.Usage            `json:"usage"`
	Next        *plan.Plan           `json:"next,omitempty"`
	NewTasks    int                  `json:"new_tasks,omitempty"`
	Report      critic.Report        `json:"report"`
	// Answered says the planner gave an answer, with or without Failure.
	Answered bool `json:"answered,omitempty"`
	// Spent is what the planner's calls of the worker's LLM spent.
	Spent Spend `json:"spent"`
	// Failure is the planner's error, if any.
	Failure *Failure `json:"failure,omitempty"`
}

// UnmarshalJSON reads r keeping the numbers of the results exact.
func (r *RoundRequest) UnmarshalJSON(data []byte) error {
	type plain RoundRequest
	return exact(data, (*plain)(r))
}

// Round asks the worker's planner, on the worker's LLM and catalog, for
// the next round of a mission, and has the critic review the plan of a
// continue. A planner that fails is a reply with a Failure, not an error
// of the activity.
func (a *Activities) Round(ctx context.Context, in RoundRequest) (RoundReply, error) {
	if a.llm == nil {
		return RoundReply{Failure: failureOf(fmt.Errorf("planner: %w", ErrNoLLM), false)}, nil
	}
	m := in.Budget.meter(a.llm)
	if m == nil {
		in.Budget, m = &Allowance{}, llm.NewMeter(a.llm, llm.Budget{})
	}
	ans, err := a.planner(m, in.LLM).Round(ctx, in.Mission, in.State)
	out := RoundReply{Spent: *in.Budget.spent(m, nil)}
	if err != nil {
		out.Failure = failureOf(err, false)
	}
	if ans == nil {
		return out, nil
	}
	out.Answered, out.Action, out.Deliverable, out.Reason, out.Usage = true, ans.Action, ans.Deliverable, ans.Reason, ans.Usage
	if err != nil || ans.Action != executor.RoundContinue || ans.Check(in.State.Completed) != nil {
		return out, nil
	}
	next := executor.NextRound(in.State.Plan, in.State.Completed, ans.Tasks, ans.Agents)
	if next.Mission == "" {
		next.Mission = in.Mission
	}
	out.Next, out.NewTasks = next, len(ans.Tasks)
	var opt []plan.Option
	if a.reg != nil {
		opt = append(opt, plan.WithCatalog(a.reg))
	}
	if d, _ := next.DAG(opt...); d != nil {
		out.Report = critic.ReviewDAG(d)
	} else {
		out.Report = critic.Review(next)
	}
	return out, nil
}

// answer is the round planner's answer of r, nil when it gave none.
func (r *RoundReply) answer() *executor.RoundAnswer {
	if !r.Answered {
		return nil
	}
	a := &executor.RoundAnswer{Action: r.Action, Deliverable: r.Deliverable, Reason: r.Reason, Usage: r.Usage}
	if r.Next != nil && r.NewTasks > 0 && r.NewTasks <= len(r.Next.Tasks) {
		a.Tasks, a.Agents = r.Next.Tasks[len(r.Next.Tasks)-r.NewTasks:], r.Next.Agents
	}
	return a
}

// roundOptions are the executor's options of the spec's rounds, as
// dagent run gives them.
func roundOptions(s durable.Spec, initial map[string]any, m executor.Meter) []executor.Option {
	opts := []executor.Option{
		executor.WithRounds(s.Rounds, executor.RoundPlannerFunc(func(context.Context, string, executor.RoundState) (*executor.RoundAnswer, error) {
			return nil, fmt.Errorf("the workflow plans rounds through its activity")
		})),
		executor.WithBudget(s.Budget, m),
		executor.WithInitialResults(initial),
		executor.WithGate(s.Gate),
	}
	if r := s.Replan; r != nil {
		opts = append(opts, executor.WithMaxFlakyStreak(r.MaxFlakyStreak), executor.WithHaltOn(r.HaltOn...), executor.WithoutHaltOn(r.NoHaltOn...))
		if r.MaxConsecutiveFailures > 0 {
			opts = append(opts, executor.WithMaxConsecutiveFailures(r.MaxConsecutiveFailures))
		}
	}
	return opts
}

// rounds runs the spec's mission in rounds, as the executor does: from
// the spec's plan, else from the first round the planner's activity
// writes; after each round the planner's activity says what comes next.
func (f *flow) rounds(ctx workflow.Context) (*Outcome, error) {
	var d *plan.DAG
	if f.plan != nil {
		var err error
		if d, err = f.plan.DAG(f.planOptions()...); err != nil {
			return nil, invalid("%v", err)
		}
	}
	rp, err := f.replanning(d, roundOptions(f.in.Spec, f.initial, f))
	if err != nil {
		return nil, err
	}
	scope, cancel := f.budget(ctx)
	defer cancel()
	dec := rp.Start()
	for {
		if dec.Step == executor.StepRound {
			f.emit(ctx, dec.Events)
			rep, err := f.round(scope, *dec.Round)
			a := rep.answer()
			if a != nil {
				rp.Spend(a.Usage)
			}
			f.charge(&rep.Spent)
			if err == nil && rep.Failure != nil {
				err = rep.Failure.Err()
			}
			if scope.Err() != nil && (err != nil || a == nil || a.Check(rp.Completed()) != nil) {
				return f.stopped(ctx, rp), nil
			}
			var nd *plan.DAG
			if rep.Next != nil {
				nd, _ = rep.Next.DAG(f.planOptions()...)
			}
			dec = rp.Rounded(a, err, nd, rep.Report)
		}
		f.emit(ctx, dec.Events)
		if dec.Step != executor.StepRun {
			return f.executed(ctx, rp), nil
		}
		var cut bool
		if dec, cut, err = f.runNext(ctx, scope, rp); err != nil {
			return nil, err
		}
		if cut && f.outOfTime {
			f.emit(ctx, dec.Events)
			return f.stopped(ctx, rp), nil
		}
	}
}

// round asks the round planner's activity about state.
func (f *flow) round(ctx workflow.Context, state executor.RoundState) (RoundReply, error) {
	in := RoundRequest{Mission: f.mission(), State: state, LLM: f.in.Spec.LLM, Budget: f.allowance()}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: roundTimeout})
	var out RoundReply
	if err := workflow.ExecuteActivity(actx, ActivityRound, in).Get(ctx, &out); err != nil {
		return RoundReply{}, fmt.Errorf("round: %w", err)
	}
	return out, nil
}
