package executor

import (
	"maps"
	"slices"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/verify"
)

// Defaults of the limits.
const (
	DefaultMaxReplans             = 5
	DefaultMaxReplansPerTask      = 3
	DefaultMaxConsecutiveFailures = 3
	DefaultMaxFlakyStreak         = 3
	DefaultMaxPlanGrowth          = 20
)

// Budget bounds what a whole execution may spend; zero fields are no limit.
type Budget struct {
	// MaxTokens bounds the tokens of every LLM call: agents and planner.
	MaxTokens int
	// MaxCalls bounds the number of LLM calls.
	MaxCalls int
	// MaxDuration bounds the wall time of the execution.
	MaxDuration time.Duration
}

// Meter reports what the LLM calls of an execution spent; *[llm.Meter] is
// one. Without it, tokens are counted from the results and calls are not.
type Meter interface {
	Usage() llm.Usage
	Calls() int
}

// Option configures [Execute].
type Option func(*config)

type config struct {
	runner                 []runner.Option
	runs                   []runner.RunOption
	runID                  string
	registry               *registry.Registry
	workers                []string
	limits                 plan.Limits
	predicates             *verify.Set
	planner                Replanner
	maxReplans             int
	maxReplansPerTask      int
	maxConsecutiveFailures int
	maxFlakyStreak         int
	maxPlanGrowth          int
	cooldown               time.Duration
	budget                 Budget
	meter                  Meter
	observers              []runner.Observer
	journal                Journal
	history                []Trial
	resumed                bool // history given: the plan is committed already
	initial                map[string]any
	gate                   critic.Gate
	haltOn                 map[runner.Class]bool
	rounds                 RoundPlanner
	maxRounds              int
}

func newConfig(opts []Option) config {
	c := config{maxReplans: DefaultMaxReplans, maxReplansPerTask: DefaultMaxReplansPerTask, maxConsecutiveFailures: DefaultMaxConsecutiveFailures,
		maxFlakyStreak: DefaultMaxFlakyStreak, maxPlanGrowth: DefaultMaxPlanGrowth, haltOn: make(map[runner.Class]bool)}
	for _, class := range DefaultHaltClasses() {
		c.haltOn[class] = true
	}
	for _, o := range opts {
		o(&c)
	}
	if c.predicates == nil {
		c.predicates = verify.NewSet()
	}
	return c
}

// WithPredicates compiles the predicates of every plan of the execution in
// s, which the critic and the runner share: hand it the set the planner
// reviewed the plan with
// ([github.com/dagent-dev/dagent/metaplanner.WithPredicates]), and no predicate is
// compiled twice. Default: a set of the execution's own.
func WithPredicates(s *verify.Set) Option {
	return func(c *config) { c.predicates = s }
}

// WithRunner configures the runner of every execution: concurrency,
// schedule, timeouts, backoff, LLM agents, observers of the runs only
// ([WithObserver] also sees the executor's events). Give the registry
// and Go agents with [WithRegistry] and [WithAgent] instead, which the
// executor also checks plans against. Initial results are the executor's
// own.
func WithRunner(opts ...runner.Option) Option {
	return func(c *config) { c.runner = append(c.runner, opts...) }
}

// WithReviews gives the decisions of human reviews, by task id, to every
// run of the execution, as [runner.WithReviews] does for one run.
func WithReviews(decisions map[string]runner.Decision) Option {
	return func(c *config) { c.runs = append(c.runs, runner.WithReviews(decisions)) }
}

// WithRunID names the execution and its runs: the plan it starts with runs
// under id, and the k-th repair plan under id.k (id.1, id.2, ...), so that
// a task of a repair plan never shares an idempotency key with the task of
// an earlier plan it replaces. Default: a new id that sorts by the start
// time ([runner.NewRunID]).
func WithRunID(id string) Option {
	return func(c *config) { c.runID = id }
}

// WithAgent runs the tasks that name agent name on a, as [runner.WithAgent]
// does, and checks plans knowing that the name is a worker.
func WithAgent(name string, a agent.Agent) Option {
	return func(c *config) {
		c.runner = append(c.runner, runner.WithAgent(name, a))
		c.workers = append(c.workers, name)
	}
}

// WithRegistry gives the executor the host's trusted workers and tools:
// every plan, the first and each repair, is checked against it as a
// catalog ([plan.WithCatalog]) and run on it ([runner.WithRegistry]).
func WithRegistry(r *registry.Registry) Option {
	return func(c *config) {
		c.runner = append(c.runner, runner.WithRegistry(r))
		c.registry = r
	}
}

// WithLimits sets the limits every plan is checked against. Default
// plan.DefaultLimits().
func WithLimits(l plan.Limits) Option {
	return func(c *config) { c.limits = l }
}

// planOptions are the options every plan is checked with.
func (c *config) planOptions() []plan.Option {
	opts := []plan.Option{plan.WithLimits(c.limits), plan.WithWorkers(c.workers...)}
	if c.registry != nil {
		opts = append(opts, plan.WithCatalog(c.registry))
	}
	return opts
}

// criticOptions review a plan whose structure is not sound, which has no
// DAG, with the options of planOptions.
func (c *config) criticOptions() []critic.Option {
	opts := []critic.Option{critic.WithLimits(c.limits), critic.WithWorkers(c.workers...)}
	if c.registry != nil {
		opts = append(opts, critic.WithCatalog(c.registry))
	}
	return opts
}

// WithGate sets the gate of the critic: every plan of the execution, the
// first and each repair, is refused when its review holds an issue at g's
// severity or worse. Default [critic.GateCritical]: a plan is refused only
// for what makes it unable to run as written, never for what a heuristic
// suspects. [critic.GateNever] refuses no plan for its findings, though a
// plan whose check fails (a cycle, an unknown worker) still cannot run and
// is refused.
func WithGate(g critic.Gate) Option {
	return func(c *config) { c.gate = g }
}

// WithReplanner allows replanning with p. Without it, a run that asks for a
// replan ends as replan_required; with it, a run the executor cannot
// repair ends failed with a *[HaltError].
func WithReplanner(p Replanner) Option {
	return func(c *config) { c.planner = p }
}

// WithMaxReplans bounds the replans of an execution. Default 5.
func WithMaxReplans(n int) Option {
	return func(c *config) { c.maxReplans = n }
}

// WithMaxReplansPerTask bounds the replans one task may cause. Default 3.
func WithMaxReplansPerTask(n int) Option {
	return func(c *config) { c.maxReplansPerTask = n }
}

// WithMaxConsecutiveFailures bounds the failed executions in a row that
// finish no new task. Default 3.
func WithMaxConsecutiveFailures(n int) Option {
	return func(c *config) { c.maxConsecutiveFailures = n }
}

// DefaultHaltClasses returns the failure classes that halt an execution
// rather than go to the replanner, unless [WithoutHaltOn] says otherwise:
// [runner.ClassToolRefused], an agent that kept calling tools it may not
// use, most likely because instructions planted in its data told it to,
// and [runner.ClassPrecondition], a worker whose precondition failed,
// which says the host's environment is not as the plan needs it. A
// repair plan can fix neither, and a planner that reads the injected text
// may be led by it.
func DefaultHaltClasses() []runner.Class {
	return []runner.Class{runner.ClassToolRefused, runner.ClassPrecondition}
}

// WithHaltOn makes a failure of each class halt the execution, with the
// class as its halt ([Result].Halt, [HaltError].Halt), instead of going to
// the replanner: the run's failed task, or the task whose failure asked
// for a replan, decides. Any class a worker may report counts
// ([runner.Class.Valid]). A failure of the budget class always halts,
// with [HaltBudget]. Options apply in order: a later [WithoutHaltOn] of
// the same class wins. Without a replanner nothing is replanned, and a
// failed run ends as it is, halted by no class. Either way a task that
// fails with such a class is not retried ([runner.WithoutRetryOn]): the
// retry would repeat what the halt is there to stop.
func WithHaltOn(classes ...runner.Class) Option {
	return func(c *config) {
		for _, class := range classes {
			c.haltOn[class] = true
		}
	}
}

// WithoutHaltOn sends failures of each class to the replanner again, as
// any failure goes: WithoutHaltOn(DefaultHaltClasses()...) halts on no
// class. It cannot undo the budget's halt.
func WithoutHaltOn(classes ...runner.Class) Option {
	return func(c *config) {
		for _, class := range classes {
			delete(c.haltOn, class)
		}
	}
}

// halts reports whether a failure of class halts the execution.
func (c *config) halts(class runner.Class) bool { return c.haltOn[class] }

// admits reports whether a plan whose check is d (nil: the plan cannot
// run) and whose review is rep may run: its check found no problem and
// the gate does not refuse it.
func (c *config) admits(d *plan.DAG, rep *critic.Report) bool {
	return d != nil && d.Err() == nil && !c.gate.Refuses(rep)
}

// haltClasses are the classes that halt the execution, sorted. The runs
// do not retry their failures: a retry would repeat what the halt is there
// to stop, such as an agent led by planted text getting another go.
func (c *config) haltClasses() []runner.Class {
	return slices.Sorted(maps.Keys(c.haltOn))
}

// WithMaxFlakyStreak halts with [HaltFlakyStreak] a failed run after n
// or more tasks in a row, in the order they finished over the runs of the
// execution, each passed only on a retry after a transient failure: an
// error of its agent or a timeout ([runner.ClassAgentError],
// [runner.ClassTimeout]). Such failures come from a worker or a service
// that is unreliable, which a repair plan does not make reliable. Any
// other task done ends the streak — one done at its first attempt, or
// after an output that failed its checks, which a retry corrects; a task
// that never passed does not count. n < 1 turns the halt off. Default 3.
// A resumed execution ([WithHistory]) counts from 0 again.
func WithMaxFlakyStreak(n int) Option {
	return func(c *config) { c.maxFlakyStreak = n }
}

// WithMaxPlanGrowth halts with [HaltPlanGrowth], before it runs, a repair
// plan with more than n tasks beyond those of the plan the execution
// started with (for a resumed execution, [WithHistory], the plan it
// resumed with): a planner that answers each failure with more work
// rather than a fix. The repair counts in the result's ReplanCount and
// History. n < 1 turns the halt off. Default 20.
func WithMaxPlanGrowth(n int) Option {
	return func(c *config) { c.maxPlanGrowth = n }
}

// WithCooldown waits d before each replan, to let rate limits and flaky
// services recover. Default none.
func WithCooldown(d time.Duration) Option {
	return func(c *config) { c.cooldown = d }
}

// WithBudget bounds tokens, LLM calls and wall time; m reports the LLM
// calls' spending (nil: tokens are counted from the results).
func WithBudget(b Budget, m Meter) Option {
	return func(c *config) { c.budget, c.meter = b, m }
}

// WithObserver gives o the execution's events: those of every run, as
// [runner.WithObserver] does, and between the runs the executor's own
// (EventReplanRequested, EventRepairAdopted, EventReplanFailed,
// EventHalted), in order. An observer's panic is recovered; the first of
// each observer is returned by [Execute], joined with any other error.
func WithObserver(o runner.Observer) Option {
	return func(c *config) {
		c.runner = append(c.runner, runner.WithObserver(o))
		c.observers = append(c.observers, o)
	}
}

// WithJournal commits every plan of the execution to j before it runs;
// see [Journal]. The plan [Execute] is given is committed as version 0,
// unless [WithHistory] says the execution resumes: then it is committed
// already.
func WithJournal(j Journal) Option {
	return func(c *config) { c.journal = j }
}

// WithHistory resumes an execution that stopped before its end (its
// process died): h is its replan history so far, and the plan [Execute]
// is given is the plan of version len(h), the last it adopted. The
// execution goes on from there: its first run is the run of that plan,
// under the run id of that version (id.k, so that its tasks keep their
// idempotency keys); the replans of h count against the limits of
// replans in all and per task, a failure in h counts as seen for
// [HaltSameFailure], and the result's ReplanCount, ExecutionAttempts and
// History start from h. The count of failed executions in a row starts
// again from 0. Give the results the execution finished with
// [WithInitialResults]. WithHistory(nil) resumes at version 0.
func WithHistory(h []Trial) Option {
	return func(c *config) { c.history, c.resumed = slices.Clone(h), true }
}

// WithInitialResults gives the outputs, by task id, of the tasks an
// earlier execution finished: they count as completed from the start,
// as those of the execution's own runs do. Tasks of the plan among them
// do not run; every one of them is handed to the replanner as completed,
// and is in the result as done, with 0 attempts.
func WithInitialResults(m map[string]any) Option {
	return func(c *config) { c.initial = maps.Clone(m) }
}
