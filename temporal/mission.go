package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/runner"
)

// planTimeout bounds the planning of a mission: the planner's calls, its
// corrections and the critic's reviews.
const planTimeout = repairTimeout

// PlanRequest asks the worker's planner for the plan of a mission, as
// [metaplanner.Planner.Plan] is asked by a local run that starts from a
// mission.
type PlanRequest struct {
	Mission string `json:"mission"`
	// LLM holds the planner's settings.
	LLM durable.LLMSpec `json:"llm"`
	// Budget, when set, bounds the planner's calls by the run's budget.
	Budget *Allowance `json:"budget,omitempty"`
}

// PlanReply is the planner's answer, reviewed by the critic.
type PlanReply struct {
	// Planned is the planner's answer: its route, and the plan, the
	// direct answer or the question; with Failure, what it answered last.
	Planned *metaplanner.Result `json:"planned,omitempty"`
	// Spent is what the planner's calls of the worker's LLM spent.
	Spent Spend `json:"spent"`
	// Failure is the planner's error, if any: no valid plan after its
	// corrections, an LLM that failed.
	Failure *Failure `json:"failure,omitempty"`
}

// Plan asks the worker's planner, on the worker's LLM and catalog, for the
// plan of a mission; the planner has the critic review each answer and
// asks for corrections of what it finds critical. A planner that fails is
// a reply with a Failure, not an error of the activity.
func (a *Activities) Plan(ctx context.Context, in PlanRequest) (PlanReply, error) {
	if a.llm == nil {
		return PlanReply{Failure: failureOf(fmt.Errorf("planner: %w", ErrNoLLM), false)}, nil
	}
	m := in.Budget.meter(a.llm)
	if m == nil {
		in.Budget, m = &Allowance{}, llm.NewMeter(a.llm, llm.Budget{})
	}
	res, err := a.planner(m, in.LLM).Plan(ctx, in.Mission)
	out := PlanReply{Planned: res, Spent: *in.Budget.spent(m, nil)}
	if err != nil {
		out.Failure = failureOf(err, false)
		if res != nil {
			// The last plan of a planner that failed must not run: it
			// is left out, as dagent plan leaves it out.
			cp := *res
			cp.Plan = nil
			out.Planned = &cp
		}
	}
	return out, nil
}

// planner is the worker's planner on c, with the spec's settings.
func (a *Activities) planner(c llm.Client, s durable.LLMSpec) *metaplanner.Planner {
	opts := append(s.PlannerOptions(), metaplanner.WithRegistry(a.reg))
	if s.Model != "" {
		opts = append(opts, metaplanner.WithModel(s.Model))
	}
	return metaplanner.New(c, opts...)
}

// planMission asks the planner's activity for the plan of the spec's
// mission, under the spec's wall-time budget, whose rest is the run's. It
// returns the outcome of a run that ends there: the planner's direct
// answer, its question, its error; nil when the plan is to run.
func (f *flow) planMission(ctx workflow.Context) (*Outcome, error) {
	timeout := planTimeout
	limit := f.in.Spec.Budget.MaxDuration
	if limit > 0 && limit < timeout {
		timeout = limit
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: timeout})
	in := PlanRequest{Mission: f.in.Spec.Mission, LLM: f.in.Spec.LLM, Budget: f.allowance()}
	started := workflow.Now(ctx)
	var out PlanReply
	err := workflow.ExecuteActivity(actx, ActivityPlan, in).Get(ctx, &out)
	if limit > 0 {
		// The wall time planning took comes off the run's.
		f.in.Spec.Budget.MaxDuration = max(limit-workflow.Now(ctx).Sub(started), time.Nanosecond)
	}
	f.charge(&out.Spent)
	res := out.Planned
	if res == nil {
		res = &metaplanner.Result{}
	}
	switch {
	case err != nil:
		f.status = string(runner.StatusFailed)
		return &Outcome{Planned: res, PlanError: fmt.Sprintf("planner: %v", lost(ctx, err).Err)}, nil
	case out.Failure != nil:
		f.status = string(runner.StatusFailed)
		return &Outcome{Planned: res, PlanError: out.Failure.Message}, nil
	case res.Route != metaplanner.RoutePlan || res.Plan == nil:
		f.status = string(res.Route)
		return &Outcome{Planned: res}, nil
	}
	f.plan = res.Plan
	f.observe(runner.Event{Kind: durable.EventPlanned, Time: workflow.Now(ctx), RunID: f.in.RunID, Tasks: len(res.Plan.Tasks), Attempt: res.Attempts})
	return nil, nil
}

// marshalPlanning writes o, an outcome of the planner alone, in the JSON
// form of a planning (metaplanner.Outcome): the document dagent plan
// --format json prints.
func (o Outcome) marshalPlanning() ([]byte, error) {
	var err error
	if o.PlanError != "" {
		err = errors.New(o.PlanError)
	}
	return metaplanner.Outcome{Result: o.Planned, Err: err}.MarshalJSON()
}

// unmarshalPlanning reads o from a planning document.
func (o *Outcome) unmarshalPlanning(data []byte) error {
	var doc metaplanner.Outcome
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("outcome: %w", err)
	}
	*o = Outcome{Planned: doc.Result}
	if doc.Err != nil {
		o.PlanError = doc.Err.Error()
	}
	return nil
}
