package temporal

import (
	"context"
	"fmt"
	"time"

	sdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// repairTimeout bounds one repair activity: the planner's calls and its
// corrections, which end repairGrace before it so that the activity
// reports an overrun. A repair's worker that sends no heartbeat for
// repairHeartbeat is deemed lost, and the repair made again on another
// worker, at most repairAttempts times in all.
const (
	repairTimeout   = 10 * time.Minute
	repairGrace     = 30 * time.Second
	repairHeartbeat = 30 * time.Second
	repairAttempts  = 3
)

// noReplanner stands for the planner in the [executor.Replanning] of the
// workflow, which never calls it: the workflow asks the planner through
// the [ActivityRepair] activity.
type noReplanner struct{}

func (noReplanner) Repair(context.Context, string, map[string]any, executor.Failure, []executor.Trial) (*executor.Repair, error) {
	return nil, fmt.Errorf("the workflow repairs through its activity")
}

// replanOptions are the executor's options of the spec's replanning, as
// dagent run gives them.
func replanOptions(s durable.Spec, initial map[string]any, m executor.Meter) []executor.Option {
	r := s.Replan
	opts := []executor.Option{
		executor.WithReplanner(noReplanner{}),
		executor.WithMaxReplans(r.MaxReplans),
		executor.WithMaxReplansPerTask(r.MaxReplansPerTask),
		executor.WithCooldown(r.Cooldown),
		executor.WithMaxPlanGrowth(r.MaxPlanGrowth),
		executor.WithMaxFlakyStreak(r.MaxFlakyStreak),
		executor.WithHaltOn(r.HaltOn...),
		executor.WithoutHaltOn(r.NoHaltOn...),
		executor.WithGate(s.Gate),
		executor.WithBudget(s.Budget, m),
		executor.WithInitialResults(initial),
	}
	if r.MaxConsecutiveFailures > 0 {
		opts = append(opts, executor.WithMaxConsecutiveFailures(r.MaxConsecutiveFailures))
	}
	return opts
}

// replanning opens the executor's replanning session of the run on d with
// opts, as execute and rounds drive it: an invalid-input error when it
// cannot be opened; the classes of failure that halt it are those f does
// not retry.
func (f *flow) replanning(d *plan.DAG, opts []executor.Option) (*executor.Replanning, error) {
	rp, err := executor.NewReplanning(f.in.RunID, d, opts...)
	if err != nil {
		return nil, invalid("%v", err)
	}
	f.noRetry = rp.HaltClasses()
	return rp, nil
}

// stopped ends the execution of rp cut short by the wall-time budget or
// the caller's cancellation.
func (f *flow) stopped(ctx workflow.Context, rp *executor.Replanning) *Outcome {
	if f.outOfTime {
		f.emit(ctx, rp.OutOfTime(context.DeadlineExceeded).Events)
	} else {
		_ = rp.Cancelled(context.Canceled)
	}
	return f.executed(ctx, rp)
}

// runNext runs the next plan version of rp (with its reviews) in scope as
// a plain run does, and tells rp how it ended: rp's decision, and whether
// scope was done, the run cut short by the wall-time budget or the
// caller's cancellation.
func (f *flow) runNext(ctx, scope workflow.Context, rp *executor.Replanning) (executor.Decision, bool, error) {
	next := rp.Next()
	f.version, f.plan = next.Version, next.DAG.Plan()
	f.emit(ctx, next.Events)
	var evs []runner.Event
	f.events = &evs
	rr, err := f.reviewed(scope, next.DAG, next.ID, next.Initial)
	f.events = nil
	if err != nil {
		return executor.Decision{}, false, err
	}
	var cut error
	if scope.Err() != nil {
		cut = context.Canceled
	}
	return rp.Ran(rr, executor.RetriedTransiently(evs), cut), cut != nil, nil
}

// execute runs the plan of d through the executor's replanning rules:
// each plan version runs (with its reviews) as a plain run does, and a
// failure a repair may mend is sent to the planner's activity.
func (f *flow) execute(ctx workflow.Context, d *plan.DAG) (*Outcome, error) {
	rp, err := f.replanning(d, replanOptions(f.in.Spec, f.initial, f))
	if err != nil {
		return nil, err
	}
	scope, cancel := f.budget(ctx)
	defer cancel()
	for {
		dec, cut, err := f.runNext(ctx, scope, rp)
		if err != nil {
			return nil, err
		}
		f.emit(ctx, dec.Events)
		switch {
		case cut && f.outOfTime:
			return f.stopped(ctx, rp), nil
		case dec.Step != executor.StepRepair:
			return f.executed(ctx, rp), nil
		}
		if c := rp.Cooldown(); c > 0 && workflow.Sleep(scope, c) != nil {
			return f.stopped(ctx, rp), nil
		}
		rep, nd, err := f.repair(scope, rp, dec.Failure)
		if scope.Err() != nil {
			return f.stopped(ctx, rp), nil
		}
		rp.Spend(rep.Usage)
		f.charge(&Spend{Usage: rep.Usage, Calls: rep.Calls})
		var answer *executor.Repair
		switch {
		case err != nil:
		case rep.Failure != nil:
			err = rep.Failure.Err()
		default:
			answer = &executor.Repair{Plan: rep.Plan, GaveUp: rep.GaveUp, Reason: rep.Reason, Usage: rep.Usage}
		}
		dec = rp.Repaired(answer, err, nd, rep.Report)
		f.emit(ctx, dec.Events)
		if dec.Step != executor.StepRun {
			return f.executed(ctx, rp), nil
		}
	}
}

// budget is the scope of the run under the spec's wall-time budget: a
// timer cancels it, not the workflow, when the budget is spent, and
// sets outOfTime.
func (f *flow) budget(ctx workflow.Context) (workflow.Context, workflow.CancelFunc) {
	scope, cancel := workflow.WithCancel(ctx)
	if limit := f.in.Spec.Budget.MaxDuration; limit > 0 {
		workflow.Go(scope, func(g workflow.Context) {
			if workflow.Sleep(g, limit) == nil {
				f.outOfTime = true
				cancel()
			}
		})
	}
	return scope, cancel
}

// repair asks the planner's activity for a repair of failure, and checks
// its plan against the catalog.
func (f *flow) repair(ctx workflow.Context, rp *executor.Replanning, failure executor.Failure) (RepairReply, *plan.DAG, error) {
	in := RepairRequest{
		Mission: f.mission(), Completed: rp.Completed(), Failure: failure, History: rp.Result().History,
		LLM: f.in.Spec.LLM, Budget: f.allowance(),
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: repairTimeout, HeartbeatTimeout: repairHeartbeat,
		RetryPolicy: &sdk.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: repairAttempts},
	})
	var out RepairReply
	if err := workflow.ExecuteActivity(actx, ActivityRepair, in).Get(ctx, &out); err != nil {
		return RepairReply{}, nil, fmt.Errorf("repair: %w", err)
	}
	if out.Plan == nil {
		return out, nil, nil
	}
	nd, _ := out.Plan.DAG(f.planOptions()...)
	return out, nd, nil
}

// mission is what the run works toward: the spec's, else its plan's.
func (f *flow) mission() string {
	if m := f.in.Spec.Mission; m != "" || f.in.Spec.Plan == nil {
		return m
	}
	return f.in.Spec.Plan.Mission
}

// executed is the outcome of the replanning rp, its times the workflow's.
func (f *flow) executed(ctx workflow.Context, rp *executor.Replanning) *Outcome {
	res := rp.Result()
	// The usage of an execution is that of every call of the run's LLM,
	// the planning of its mission included, as in process.
	res.Usage = f.spent.Usage
	res.Started = f.started
	res.Duration = workflow.Now(ctx).Sub(f.started)
	f.status = string(res.Status)
	return &Outcome{Run: &res.Result, Execution: res}
}

// emit hands the executor's events to the observer, stamped with the
// workflow's time.
func (f *flow) emit(ctx workflow.Context, evs []runner.Event) {
	for _, e := range evs {
		e.Time = workflow.Now(ctx)
		f.observe(e)
	}
}
