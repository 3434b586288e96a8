package temporal

import (
	"context"
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
)

// RepairRequest asks the worker's planner for a repair plan of a run's
// tail, as [executor.Replanner.Repair] is asked.
type RepairRequest struct {
	Mission   string           `json:"mission"`
	Completed map[string]any   `json:"completed"`
	Failure   executor.Failure `json:"failure"`
	History   []executor.Trial `json:"history"`
	// LLM holds the planner's settings.
	LLM durable.LLMSpec `json:"llm"`
	// Budget, when set, bounds the planner's calls by the run's budget.
	Budget *Allowance `json:"budget,omitempty"`
}

// RepairReply is the planner's answer, reviewed by the critic.
type RepairReply struct {
	// Plan is the repair plan; nil when the planner gave none (Failure
	// says why) or gave up.
	Plan *plan.Plan `json:"plan,omitempty"`
	// Report is the critic's review of Plan checked against the worker's
	// catalog, which the workflow's gate reads: the critic's checks run
	// goroutines, which workflow code must not.
	Report critic.Report `json:"report"`
	GaveUp bool          `json:"gave_up,omitempty"`
	Reason string        `json:"reason,omitempty"`
	Usage  llm.Usage     `json:"usage"`
	// Calls counts the LLM calls the repair made, for the run's budget.
	Calls int `json:"calls"`
	// Failure is the planner's error, if any.
	Failure *Failure `json:"failure,omitempty"`
}

// Repair asks the worker's planner, on the worker's LLM and catalog, for
// a repair plan, and has the critic review it; the workflow checks the
// plan again against the catalog it runs on, and applies the gate. A
// planner that fails, or overruns its time (the activity's less a
// grace), is a reply with a Failure, not an error of the activity. It
// heartbeats while the planner works.
func (a *Activities) Repair(ctx context.Context, in RepairRequest) (RepairReply, error) {
	if a.llm == nil {
		return RepairReply{Failure: failureOf(fmt.Errorf("planner: %w", ErrNoLLM), false)}, nil
	}
	meter := in.Budget.meter(a.llm)
	if meter == nil {
		in.Budget, meter = &Allowance{}, llm.NewMeter(a.llm, llm.Budget{})
	}
	// The planner's own deadline comes before the activity's, so that a
	// planner that overruns comes back as a reply the executor's rules
	// decide on, not as a timeout of the activity made again.
	pctx, cancel := context.WithTimeout(ctx, repairTimeout-repairGrace)
	defer cancel()
	stop := a.beat(ctx)
	rep, err := a.planner(meter, in.LLM).Repair(pctx, in.Mission, in.Completed, in.Failure, in.History)
	stop()
	spent := in.Budget.spent(meter, nil)
	out := RepairReply{Usage: spent.Usage, Calls: spent.Calls}
	switch {
	case err != nil && ctx.Err() != nil:
		return RepairReply{}, fmt.Errorf("the repair was cut short on this worker: %w", context.Cause(ctx))
	case err != nil:
		out.Failure = failureOf(err, errors.Is(pctx.Err(), context.DeadlineExceeded))
		return out, nil
	case rep == nil:
		return out, nil
	case rep.GaveUp:
		out.GaveUp, out.Reason = true, rep.Reason
		return out, nil
	}
	out.Plan, out.Reason = rep.Plan, rep.Reason
	if out.Plan == nil {
		return out, nil
	}
	var opt []plan.Option
	if a.reg != nil {
		opt = append(opt, plan.WithCatalog(a.reg))
	}
	if d, _ := out.Plan.DAG(opt...); d != nil {
		out.Report = critic.ReviewDAG(d)
	} else {
		out.Report = critic.Review(out.Plan)
	}
	return out, nil
}
