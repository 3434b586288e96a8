// Package dagent runs missions end to end: a model writes a plan, the plan
// is checked against the host's catalog, runs on the catalog's workers and
// on the LLM agents the plan defines, and when a task fails for good the
// model repairs the unfinished tail of the plan, every finished result
// kept.
//
// It is a facade over the packages that do each stage — [metaplanner]
// plans, plan checks, critic reviews, [runner] runs, [executor] loops —
// for a host that wants the whole loop with its catalog and its model
// given once. Each stage stays usable on its own.
package dagent

import (
	"context"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/verify"
)

// Engine runs missions on one model and one catalog. Its configuration is
// fixed by [New], so one Engine may run many missions, also at once. There is
// no useful zero Engine: create it with New.
type Engine struct {
	client llm.Client
	reg    *registry.Registry
	c      config
}

// Option configures an [Engine].
type Option func(*config)

type config struct {
	model    string
	planner  []metaplanner.Option
	executor []executor.Option
}

// WithModel names the model of the planner and of the plan's LLM agents;
// a plan agent that names its own model keeps it. Default: the client's.
func WithModel(name string) Option {
	return func(c *config) { c.model = name }
}

// WithPlanner configures the planner: corrections, temperature, limits,
// prompts for small models.
func WithPlanner(opts ...metaplanner.Option) Option {
	return func(c *config) { c.planner = append(c.planner, opts...) }
}

// WithExecutor configures the loop that runs and repairs plans: replan
// limits, budgets, run ids, observers of the runs and the repairs
// ([executor.WithObserver]), the plans' journal ([executor.WithJournal]),
// and the runner (concurrency, schedule, timeouts, the tasks' journal)
// through [executor.WithRunner].
func WithExecutor(opts ...executor.Option) Option {
	return func(c *config) { c.executor = append(c.executor, opts...) }
}

// New returns an engine that plans with client and runs on reg: reg is
// the catalog the planner offers the model, the catalog every plan and
// repair is checked against, the workers tasks run on, and the tools of
// the plan's LLM agents, which run on client. A nil reg is an empty
// catalog: plans may use only LLM agents without tools.
func New(client llm.Client, reg *registry.Registry, opts ...Option) *Engine {
	e := &Engine{client: client, reg: reg}
	for _, o := range opts {
		o(&e.c)
	}
	if e.reg == nil {
		e.reg = registry.New()
	}
	return e
}

// Result is the outcome of a mission.
type Result struct {
	// Planned is the planner's answer: its route, and the plan, the
	// direct answer or the clarifying question.
	Planned *metaplanner.Result
	// Run is the execution of the plan, repairs included; nil when the
	// planner answered directly, asked a question, or gave no plan that
	// could run.
	Run *executor.Result
}

// Run plans mission and runs the plan to the end. The error is the
// planner's (such as [metaplanner.ErrNoValidPlan], with the rejected plan
// in Planned), a plan the critic refuses ([executor.RefusedError]), a plan
// the runner cannot start, or ctx ending the run; failures of tasks are in
// the result, as [executor.Execute] reports them.
func (e *Engine) Run(ctx context.Context, mission string) (*Result, error) {
	// The planner's critic and the execution share one compilation of each
	// predicate of the mission's plans.
	predicates := verify.NewSet()
	popts := []metaplanner.Option{metaplanner.WithRegistry(e.reg), metaplanner.WithModel(e.c.model), metaplanner.WithPredicates(predicates)}
	planner := metaplanner.New(e.client, append(popts, e.c.planner...)...)
	planned, err := planner.Plan(ctx, mission)
	res := &Result{Planned: planned}
	if err != nil || planned.Route != metaplanner.RoutePlan {
		return res, err
	}
	exec := []executor.Option{
		executor.WithRegistry(e.reg),
		executor.WithPredicates(predicates),
		executor.WithRunner(runner.WithPlanAgents(llmagent.Agents(e.client, e.reg, e.c.model))),
		executor.WithReplanner(planner),
	}
	res.Run, err = executor.Execute(ctx, planned.Plan, mission, append(exec, e.c.executor...)...)
	return res, err
}
