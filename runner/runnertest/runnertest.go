// Package runnertest is the conformance kit of dagent's run semantics: the
// behaviour every way of running a plan must have — the in-process
// [runner.Runner], a workflow engine driving the same decisions — as
// scenarios. A driver runs each scenario's plan with the scenario's
// settings and hands back the result and the events, as [runner.Runner.Run]
// would; the kit checks what does not depend on wall time: each task's
// status, attempts, class, diagnosis and output, the run's status, error,
// pending reviews and replan request, what the agents were asked, and the
// order of the events.
//
// An implementation runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		runnertest.Run(t, myDriver{})
//	}
//
// The agents of a scenario are Go values that run in the test's process:
// a driver that runs attempts elsewhere (activities of a workflow, say)
// must run them in the same process, so that the scenario's agents can
// count their calls and wait for one another.
package runnertest

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// Driver runs plans as [runner.Runner.Run] does.
//
// Run runs s.Plan with s's settings and returns the run's result and every
// event of the run in order. It fails t (t.Fatal) when the run cannot
// start: no scenario of the kit expects that. The result's tasks, status,
// error, pending reviews and replan request must be those
// [runner.Runner.Run] gives; its times and durations are not checked. The
// events must keep the order guarantees of [runner.Event] and number
// themselves from 1 in Seq; their times and durations are not checked.
//
// An agent's error reaches the result with its text unchanged, and
// matching, through errors.Is, the sentinels a run's semantics depend on:
// [agent.ErrCannotStart], [agent.ErrInvalidOutput], [registry.ErrPrecondition]
// and [context.DeadlineExceeded] for an attempt that timed out.
type Driver interface {
	Run(t *testing.T, s Scenario) (*runner.Result, []runner.Event)
}

// DriverFunc adapts a function to [Driver].
type DriverFunc func(t *testing.T, s Scenario) (*runner.Result, []runner.Event)

// Run calls f.
func (f DriverFunc) Run(t *testing.T, s Scenario) (*runner.Result, []runner.Event) { return f(t, s) }

// Caps are what a driver can do beyond the [Driver] contract. The checks
// that need a capability the driver lacks are left out.
type Caps struct {
	// LiveEvents: the driver calls [Scenario.Observe], when set, with each
	// event of the run as it is emitted, in order, before Run returns —
	// so that an agent may wait for an event of another task, as the
	// in-process runner's observers can. With it, the failure table
	// checks in the Eager schedule that a halt lets a running task finish
	// and starts nothing after it.
	LiveEvents bool
}

// Capable is a [Driver] that says what else it can do. A driver that is
// not Capable has the zero Caps.
type Capable interface {
	Caps() Caps
}

// Scenario is a plan and what it runs with: the options of
// [runner.New] and of [runner.Runner.Run] a driver maps to its own.
type Scenario struct {
	// Plan is the plan to run: check it with the agents and workers below
	// as its catalog ([runner.Runner.Check]).
	Plan *plan.Plan
	// Agents run the tasks that name them ([runner.WithAgent]).
	Agents map[string]agent.Agent
	// Workers are the registry workers, by name ([runner.WithRegistry]):
	// their timeouts, caps, declared outputs and preconditions hold, as
	// in the registry [Scenario.Registry] builds.
	Workers map[string]registry.Worker
	// Judge, when set, judges the tasks that have a rubric ([runner.WithJudge]).
	Judge runner.Judge
	// Concurrency bounds the tasks running at once; zero means
	// [runner.DefaultConcurrency].
	Concurrency int
	// Schedule is [runner.Phased] or [runner.Eager].
	Schedule runner.Schedule
	// TaskTimeout bounds an attempt whose task and worker set no
	// timeout; zero means [runner.DefaultTaskTimeout].
	TaskTimeout time.Duration
	// MaxRequestBytes bounds a task's request
	// ([runner.WithMaxRequestBytes]): zero is the default, below zero
	// none.
	MaxRequestBytes int64
	// Backoff spaces retries; the kit's have no jitter.
	Backoff runner.Backoff
	// NoRetry are the classes whose failures are final ([runner.WithoutRetryOn]).
	NoRetry []runner.Class
	// RunID names the run; the kit always sets it.
	RunID string
	// Initial are the outputs of tasks done before the run
	// ([runner.WithInitialResults]).
	Initial map[string]any
	// Reviews are the decisions of human reviews ([runner.WithReviews]).
	Reviews map[string]runner.Decision
	// Observe, when set, is called with each event as it is emitted, by a
	// driver whose [Caps] have LiveEvents; the kit sets it only for such
	// drivers. It is safe for concurrent use, and returns at once.
	Observe func(runner.Event)
}

// Registry returns a registry of s.Workers, for a driver to run them
// with: it is what the in-process runner is given.
func (s Scenario) Registry() (*registry.Registry, error) {
	reg := registry.New()
	for _, name := range slices.Sorted(maps.Keys(s.Workers)) {
		if err := reg.Register(name, s.Workers[name]); err != nil {
			return nil, fmt.Errorf("worker %s: %w", name, err)
		}
	}
	return reg, nil
}

// Run runs every scenario of the kit against d, each a subtest (some with
// subtests of their own). The scenarios are independent: a driver may run
// them in parallel by calling t.Parallel in Run.
func Run(t *testing.T, d Driver) {
	var caps Caps
	if c, ok := d.(Capable); ok {
		caps = c.Caps()
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { sc.test(t, &kit{d: d, caps: caps}) })
	}
}

// Names lists the scenarios Run runs, in order: for a driver's report, or
// to select some with go test -run.
func Names() []string {
	out := make([]string, len(scenarios))
	for i, sc := range scenarios {
		out[i] = sc.name
	}
	return out
}

// scenario is one named test of the kit.
type scenario struct {
	name string
	test func(t *testing.T, k *kit)
}
