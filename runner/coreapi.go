package runner

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/verify"
)

// Core is the deterministic core of a run: the decisions the [Runner]
// takes — the ready queue, the phases, the worker limits, the priorities,
// a task's whole flow from its when condition through its attempts,
// verification, judge and failure policy to its final state, the gate
// propagation, the halts and the result — with none of the goroutines,
// clocks, randomness or locks that run them. The Runner drives a Core of
// its own; another driver, a durable workflow say, drives one through the
// same methods and gets the same results and events for the same plan and
// replies.
//
// A driver loops: [Core.Take] the tasks that may start, run each with
// [Core.RunTask] (concurrently, if it likes, up to the concurrency),
// [Core.Settle] each outcome, and when no task runs [Core.Advance] to the
// next phase; the run is over when nothing runs and Advance opens no
// phase. Then [Core.Result].
//
// A Core is not safe for concurrent use. RunTask may run off the driver's
// lock, concurrently with other calls: it reads only the settled results
// of the task's upstream and the halt flag; every other method needs the
// caller to serialise it with the others.
type Core struct {
	c core
}

// CoreConfig configures a [Core]. The zero values of the fields say what
// they default to.
type CoreConfig struct {
	// RunID is the run's id: it is in every event, request and result, and
	// makes the attempts' idempotency keys. Required: a Core draws no
	// random id; see [NewRunID].
	RunID string
	// Started is when the run started; the result's duration counts from
	// it, and so do a task's times when a driver gives no clock of its own.
	// A zero Started is the zero time: give the run's real start.
	Started time.Time
	// Schedule is when a task may start. Default Phased.
	Schedule Schedule
	// Concurrency bounds the tasks [Core.Take] hands out at once. Default
	// DefaultConcurrency.
	Concurrency int
	// TaskTimeout bounds an attempt whose worker sets no timeout. Default
	// DefaultTaskTimeout. A plan's timeout may shorten a worker's, never
	// stretch it.
	TaskTimeout time.Duration
	// Workers holds the settings of the registry's workers, by name, as
	// the Runner takes them from [registry.Worker]. An agent not in it has
	// TaskTimeout and no limit of its own.
	Workers map[string]WorkerSettings
	// MaxRequestBytes bounds a task's request. Default
	// DefaultMaxRequestBytes; below 0: no bound.
	MaxRequestBytes int64
	// Backoff spaces retries. The zero Backoff retries at once; the
	// Runner's default is [DefaultBackoff].
	Backoff Backoff
	// Jitter draws the jitter of the wait before attempt+1 of a task, in
	// [0, 1) (see [backoff.Policy.DelayAt]). Default: a hash of the run
	// id, the task and the attempt, so that a replay computes the same
	// wait.
	Jitter func(taskID string, attempt int) float64
	// NoRetry lists the classes of failure that are never retried (see
	// [WithoutRetryOn]).
	NoRetry []Class
	// Judge says the driver has a rubric judge: the outputs of tasks with
	// a rubric are judged through [Host.Judge]. Without it rubrics are
	// not checked.
	Judge bool
	// Initial and Reviews are the results the run starts with and the
	// review decisions it has, as [WithInitialResults] and [WithReviews].
	Initial map[string]any
	Reviews map[string]Decision
	// Predicates compiles the plan's predicates. Default: a set with no
	// wall-clock bound (verify.WithTimeout(0)), so that a verdict never
	// depends on the speed of the machine that evaluates it, and a bound
	// of [DefaultPredicateSteps] steps (verify.WithMaxSteps), so that a
	// predicate that would run for long fails its task as a predicate error
	// rather than holding the driver.
	Predicates *verify.Set
	// Observe receives the run's task and phase events, in order, on the
	// goroutine of the call that causes them: safe for concurrent use if
	// RunTask runs concurrently with other calls. Their Seq is left to it.
	// The run_started and run_finished events are the driver's. Default:
	// no events.
	Observe func(Event)
	// Cancelled returns nil while the run goes on and why it was
	// cancelled once it is: no task starts after, an attempt that fails
	// then ends its task as cancelled, and the run fails. It is asked
	// every time it matters, also from [Core.RunTask], which may run
	// concurrently with other calls: it must be cheap and safe for
	// concurrent use. Default: never.
	Cancelled func() error
	// OnHalt is called once, from the call that halts the run (Settle),
	// so that the driver ends the [Host.Wait]s under way with WaitHalted.
	OnHalt func()
}

// WorkerSettings are what a [Core] needs of a registry worker.
type WorkerSettings struct {
	// Timeout bounds each attempt of the worker's tasks; 0: the run's.
	Timeout time.Duration
	// MaxConcurrency bounds the worker's attempts at once in the run; 0:
	// no bound.
	MaxConcurrency int
}

// Outcome is a task's final state, as [Core.RunTask] reaches it and
// [Core.Settle] records it. It is opaque: settle it on the Core that made
// it.
type Outcome struct {
	o outcome
}

// Task is the index in the plan of the task the outcome is of.
func (o Outcome) Task() int { return o.o.i }

// Status is the task's final status.
func (o Outcome) Status() TaskStatus { return o.o.status }

// NewCore returns the core of a run of the checked plan d, configured by
// cfg. It fails as [Runner.Run] does on a DAG whose check found problems, a
// predicate that does not compile or an option it cannot use.
func NewCore(d *plan.DAG, cfg CoreConfig) (*Core, error) {
	if d == nil {
		return nil, fmt.Errorf("%w: no plan to run: the DAG is nil", ErrInvalidOption)
	}
	if err := checkRunIDChars(cfg.RunID); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Concurrency < 1 {
		return nil, fmt.Errorf("%w: concurrency %d; it must be at least 1", ErrInvalidOption, cfg.Concurrency)
	}
	if cfg.TaskTimeout == 0 {
		cfg.TaskTimeout = DefaultTaskTimeout
	}
	if cfg.TaskTimeout < 0 {
		return nil, fmt.Errorf("%w: task timeout %s; it must be positive", ErrInvalidOption, cfg.TaskTimeout)
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	k := &Core{}
	c := &k.c
	c.conf = settings{
		schedule: cfg.Schedule, concurrency: cfg.Concurrency, maxRequest: cfg.MaxRequestBytes, backoff: cfg.Backoff,
		judge: cfg.Judge, jitter: cfg.Jitter, emit: cfg.Observe, driver: hooks{cfg.Cancelled, cfg.OnHalt},
	}
	if c.conf.jitter == nil {
		c.conf.jitter = hashJitter(cfg.RunID)
	}
	for _, cl := range cfg.NoRetry {
		if c.conf.noRetry == nil {
			c.conf.noRetry = make(map[Class]bool, len(cfg.NoRetry))
		}
		c.conf.noRetry[cl] = true
	}
	c.predicates = cfg.Predicates
	if c.predicates == nil {
		c.predicates = verify.NewSet(verify.WithTimeout(0), verify.WithMaxSteps(DefaultPredicateSteps))
	}
	resolve := func(name string, timeout time.Duration) (*binding, int, error) {
		w := cfg.Workers[name]
		return &binding{timeout: taskTimeout(cfg.TaskTimeout, w.Timeout, timeout)}, w.MaxConcurrency, nil
	}
	if err := c.init(d, cfg.RunID, cfg.Started, cfg.Initial, cfg.Reviews, resolve); err != nil {
		return nil, err
	}
	return k, nil
}

// hooks are the driver of a Core: its config's functions.
type hooks struct {
	cancelled func() error
	halted    func()
}

func (h hooks) stopCause() error {
	if h.cancelled == nil {
		return nil
	}
	return h.cancelled()
}

func (h hooks) onHalt() {
	if h.halted != nil {
		h.halted()
	}
}

// hashJitter is the default jitter of a Core: a hash of the run, the task
// and the attempt, in [0, 1).
func hashJitter(runID string) func(string, int) float64 {
	return func(task string, attempt int) float64 {
		h := fnv.New64a()
		_, _ = h.Write([]byte(runID))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(task))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write(strconv.AppendInt(nil, int64(attempt), 10))
		return float64(h.Sum64()>>11) / (1 << 53)
	}
}

// Take returns the next task to start, marked running and started at now,
// or -1 when none may start now: none is ready, Concurrency tasks run, or
// the run halted or was cancelled. A task whose worker runs as many
// attempts as it may waits, holding no place, for one of them to settle.
func (k *Core) Take(now time.Time) int {
	if k.c.running >= k.c.conf.concurrency {
		return -1
	}
	return k.c.take(now)
}

// Advance, in Phased, ends the phase under way and opens the next one that
// has tasks, unless the run stopped; it reports whether it opened one,
// whose tasks Take then hands out. Call it when no task runs: first to
// open phase 0, then each time a phase has settled. In Eager it does
// nothing and reports false.
func (k *Core) Advance(now time.Time) bool { return k.c.advance(now) }

// Running is the number of tasks taken and not settled.
func (k *Core) Running() int { return k.c.running }

// RunTask runs the flow of task i, which Take handed out, through h: its
// when condition, its request rendered and wired from its upstream's
// results, its attempts with their retries, the verification of their
// outputs, the judge, and its failure policy; or, for a human review, the
// decision it was given. It returns the task's final state, for Settle;
// its task events (task_started, task_retried, task_verified) are emitted
// as it goes, timed by h.Now.
func (k *Core) RunTask(h Host, i int) Outcome {
	var cr carry
	o, _ := k.c.runTask(h, &cr, i) // only the Runner's own host abandons attempts
	return Outcome{o: o}
}

// Settle records o at now: the task's final event, the tasks it makes
// ready, and what it means for the run — a halt, a failed gate's
// downstream skipped, a replan. Its place goes to the next task.
func (k *Core) Settle(o Outcome, now time.Time) {
	k.c.settle(&o.o, now)
	k.c.unlimit(o.o.i)
	k.c.running--
}

// Halted reports whether the run halted: a failure stopped new tasks and
// new attempts from starting.
func (k *Core) Halted() bool { return k.c.halted.Load() }

// Result is the run's outcome at now, as [Runner.Run] returns it. Take it
// when the run is over; its tasks are the Core's own records.
func (k *Core) Result(now time.Time) *Result { return k.c.result(now) }

// Tasks returns a copy of the tasks' records, in plan order: for a look at
// a run under way.
func (k *Core) Tasks() []TaskResult {
	out := make([]TaskResult, len(k.c.state))
	for i := range k.c.state {
		out[i] = k.c.state[i].res
	}
	return out
}
