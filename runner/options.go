package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/verify"
)

// Schedule says when a task may start.
type Schedule int

const (
	// Phased starts phase k+1 when every task of phase k has settled.
	Phased Schedule = iota
	// Eager starts a task as soon as its own dependencies have settled.
	Eager
)

func (s Schedule) String() string {
	if s == Eager {
		return "eager"
	}
	return "phased"
}

// ParseSchedule reads "phased" or "eager".
func ParseSchedule(s string) (Schedule, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "phased":
		return Phased, nil
	case "eager":
		return Eager, nil
	}
	return 0, fmt.Errorf("%w: unknown schedule %q; use phased or eager", ErrInvalidOption, s)
}

// Defaults of a runner without options.
const (
	DefaultConcurrency = 10
	DefaultTaskTimeout = 10 * time.Minute
	// DefaultMaxRequestBytes bounds a task's request: 256 MiB.
	DefaultMaxRequestBytes = 256 << 20
	// DefaultPredicateSteps bounds the work of one predicate evaluation of
	// a [Core] without predicates of its own, in verify's steps: 250,000
	// steps take from about a millisecond to about 80 ms, depending on the
	// functions the predicate calls, well within what a durable workflow
	// may spend on one decision. An ordinary predicate over an output of
	// 100,000 elements fits in it.
	DefaultPredicateSteps = 250_000
)

// PlanAgents builds the agent for an LLM sub-agent the plan defines (and for
// [plan.DefaultAgent], whose definition is the zero [plan.Agent]).
type PlanAgents func(name string, def plan.Agent) (agent.Agent, error)

// Option configures a Runner.
type Option func(*Runner)

// WithRegistry gives the runner the host's trusted workers.
func WithRegistry(r *registry.Registry) Option {
	return func(rn *Runner) { rn.registry = r }
}

// WithAgent runs the tasks that name agent name on a, ahead of the registry.
func WithAgent(name string, a agent.Agent) Option {
	return func(rn *Runner) {
		if rn.agents == nil {
			rn.agents = make(map[string]agent.Agent)
		}
		rn.agents[name] = a
	}
}

// WithPlanAgents builds the agents the plan defines; without it, a task
// naming one makes Run fail with ErrNoAgent before any task starts.
func WithPlanAgents(f PlanAgents) Option {
	return func(rn *Runner) { rn.planAgents = f }
}

// WithConcurrency bounds the number of tasks running at once. Default 10.
func WithConcurrency(n int) Option {
	return func(rn *Runner) { rn.concurrency = n }
}

// WithMaxRequestBytes bounds the request of one task: its input, the
// values of its templates, the outputs of its dependencies, its wired inputs,
// its params and its output schema, counted as compact JSON without
// escapes. A task whose request would be larger fails at once, without an
// attempt, with an error matching [ErrRequestTooLarge]: its upstream outputs
// will not shrink on a retry. Zero keeps [DefaultMaxRequestBytes]; a
// negative n means no limit.
func WithMaxRequestBytes(n int64) Option {
	return func(rn *Runner) { rn.maxRequest = n }
}

// WithSchedule chooses Phased (the default) or Eager.
func WithSchedule(s Schedule) Option {
	return func(rn *Runner) { rn.schedule = s }
}

// WithTaskTimeout bounds each attempt of a task whose plan entry and worker
// set no timeout. Default 10 minutes.
func WithTaskTimeout(d time.Duration) Option {
	return func(rn *Runner) { rn.taskTimeout = d }
}

// WithBackoff spaces retries; see Backoff. Default DefaultBackoff().
func WithBackoff(b Backoff) Option {
	return func(rn *Runner) { rn.backoff = b }
}

// WithoutRetryOn makes a failure of each class final: a task that fails
// with one is not retried, whatever its policy and retries, and fails for
// good at once. For failures a retry would only repeat, or must not: a
// precondition that does not hold for the input, an agent that called
// tools it may not use because its data told it to. The executor passes
// the classes that halt it ([github.com/dagent-dev/dagent/executor.WithHaltOn]).
func WithoutRetryOn(classes ...Class) Option {
	return func(rn *Runner) {
		if rn.noRetry == nil {
			rn.noRetry = make(map[Class]bool)
		}
		for _, c := range classes {
			rn.noRetry[c] = true
		}
	}
}

// WithObserver adds an observer of the run's events. Observers are called
// on their own goroutines, each with every event in order. An observer
// that is a [ContextObserver] also gives the contexts of the run and its
// attempts.
func WithObserver(o Observer) Option {
	return func(rn *Runner) { rn.observers = append(rn.observers, o) }
}

// RunOption configures one run: what Run is given besides the plan.
type RunOption func(*runConfig)

// runConfig is the state of one run that the caller gives.
type runConfig struct {
	id         string
	initial    map[string]any
	reviews    map[string]Decision
	predicates *verify.Set
}

// WithPredicates takes the plan's compiled predicates from s, compiling
// there only those it lacks: hand the run the set a critic checked the
// plan with (critic.WithPredicates), and nothing is compiled twice.
// Default: a set of the run's own.
func WithPredicates(s *verify.Set) RunOption {
	return func(c *runConfig) { c.predicates = s }
}

// WithRunID names the run; the id is part of each request's idempotency
// key, so a resumed run must keep it. Default: a random id. An id that
// holds a character outside A-Z, a-z, 0-9, '.', '_', ':' and '-' is an
// error of Run matching [ErrInvalidOption] and [ErrInvalidRunID]; a host
// bounds the length of the ids it is given with [CheckRunID].
func WithRunID(id string) RunOption {
	return func(c *runConfig) { c.id = id }
}

// WithInitialResults marks tasks as done with the given outputs: they are
// never run, and their outputs flow to their dependents. It is how a run
// resumes: pass the Outputs of the previous Result.
func WithInitialResults(outputs map[string]any) RunOption {
	return func(c *runConfig) { c.initial = outputs }
}

// WithReviews gives the decisions of human reviews, by task id.
func WithReviews(decisions map[string]Decision) RunOption {
	return func(c *runConfig) { c.reviews = decisions }
}
