package runner

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/verify"
)

// Runner executes plans. Its configuration is fixed by New; what belongs to
// one run (its id, initial results, review decisions) is given to Run, so
// one Runner may run many plans, also at once. Create it with New.
type Runner struct {
	registry    *registry.Registry
	agents      map[string]agent.Agent
	planAgents  PlanAgents
	concurrency int
	schedule    Schedule
	taskTimeout time.Duration
	maxRequest  int64 // 0: DefaultMaxRequestBytes; below 0: no limit
	backoff     Backoff
	observers   []Observer
	journal     Journal
	rubricJudge Judge
	noRetry     map[Class]bool
}

// New returns a runner configured by opts.
func New(opts ...Option) *Runner {
	r := &Runner{concurrency: DefaultConcurrency, taskTimeout: DefaultTaskTimeout, backoff: DefaultBackoff()}
	for _, o := range opts {
		o(r)
	}
	return r
}

// run is one Run: its core, guarded by mu, and how it runs — the
// workers, their groups, the watchdog, the journal and the observers. A
// running task's state belongs to the goroutine that runs it.
type run struct {
	*Runner
	core
	bus  *bus
	ctxs *contexts // nil: no observer is a ContextObserver
	ctx  context.Context

	mu       sync.Mutex
	group    *errgroup.Group   // the group new workers join: the phase's in Phased
	groups   []*errgroup.Group // every group of the run
	gen      int               // counts the groups: a worker of an older one retires
	inGroup  int               // workers started in the current group
	workers  int               // workers, not counting those left in abandoned agents
	idle     int               // workers waiting for a task
	waking   int               // workers told of a task that have not woken yet
	wakeup   sync.Cond         // tells idle workers of a ready task or the end
	ended    bool              // no task will start: workers end
	done     chan struct{}     // closed when the last worker ended
	detached bool              // a worker was left in an abandoned agent
	watchdog

	halting chan struct{} // closed when the run halts, to stop retries
}

// Run executes the checked plan d — from [plan.Plan.DAG] or [Runner.Check]
// — and returns its result; d's structure is not derived again. Failing
// tasks do not make Run return an error: the result's Status and Err say
// how the run ended, and every finished task's output is in it. Run
// returns an error and no result when the run cannot start — a DAG whose
// check found problems (d.Err(), matching [plan.ErrInvalid]), a predicate
// that does not compile, an agent it cannot run, an option it cannot use —
// and an error beside the result when ctx ends the run or an observer
// panics.
func (rn *Runner) Run(ctx context.Context, d *plan.DAG, opts ...RunOption) (*Result, error) {
	var rc runConfig
	for _, o := range opts {
		o(&rc)
	}
	r, err := rn.prepare(ctx, d, rc)
	if err != nil {
		return nil, err
	}
	r.bus = newBus(rn.observers)
	if r.bus != nil {
		r.conf.emit = r.bus.emit
	}
	started := Event{Kind: EventRunStarted, Time: r.started, RunID: r.id}
	r.ctxs = newContexts(rn.observers)
	r.ctx = r.ctxs.context(r.ctx, started)
	r.bus.emit(started)
	r.walk()
	res := r.result(time.Now())
	r.bus.emit(Event{Kind: EventRunFinished, Time: time.Now(), RunID: r.id, Duration: res.Duration, Err: res.Err, Status: res.Status, Usage: res.Usage})
	errs := append(r.bus.close(), r.ctxs.errs()...)
	if ctx.Err() != nil {
		errs = append(errs, res.Err)
	}
	return res, errors.Join(errs...)
}

// RunPlan checks p against what the runner can run, as [Runner.Check]
// does, and runs it, as [Runner.Run] does: for a plan that runs once. A
// plan that is checked anyway — reviewed, or run again — is checked once
// and its DAG handed to Run.
func (rn *Runner) RunPlan(ctx context.Context, p *plan.Plan, opts ...RunOption) (*Result, error) {
	d, err := rn.Check(p)
	if err != nil {
		return nil, err
	}
	return rn.Run(ctx, d, opts...)
}

// Check checks p, as [plan.Plan.DAG] does, against what the runner can
// run: its registry is the catalog, and the agents of WithAgent are
// workers. opts add to those (limits, say).
func (rn *Runner) Check(p *plan.Plan, opts ...plan.Option) (*plan.DAG, error) {
	all := make([]plan.Option, 0, len(opts)+2)
	if rn.registry != nil {
		all = append(all, plan.WithCatalog(rn.registry))
	}
	all = append(all, plan.WithWorkers(slices.Collect(maps.Keys(rn.agents))...))
	return p.DAG(append(all, opts...)...)
}

// prepare checks the options and builds the run's state.
func (rn *Runner) prepare(ctx context.Context, d *plan.DAG, rc runConfig) (*run, error) {
	if d == nil {
		return nil, fmt.Errorf("%w: no plan to run: the DAG is nil", ErrInvalidOption)
	}
	if rn.concurrency < 1 {
		return nil, fmt.Errorf("%w: concurrency %d; it must be at least 1", ErrInvalidOption, rn.concurrency)
	}
	if rn.taskTimeout <= 0 {
		return nil, fmt.Errorf("%w: task timeout %s; it must be positive", ErrInvalidOption, rn.taskTimeout)
	}
	if rc.id != "" {
		if err := checkRunIDChars(rc.id); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	if rc.predicates == nil {
		rc.predicates = verify.NewSet()
	}
	r := &run{Runner: rn, ctx: ctx, halting: make(chan struct{})}
	r.conf = settings{
		schedule: rn.schedule, concurrency: rn.concurrency, maxRequest: rn.maxRequest, backoff: rn.backoff,
		noRetry: rn.noRetry, judge: rn.rubricJudge != nil, jitter: randomJitter, driver: r,
	}
	r.predicates = rc.predicates
	id, started := rc.id, time.Now()
	if id == "" {
		id = NewRunID(started)
	}
	built := make(map[string]agent.Agent)
	resolve := func(name string, timeout time.Duration) (*binding, int, error) {
		return r.binding(name, timeout, built)
	}
	if err := r.init(d, id, started, rc.initial, rc.reviews, resolve); err != nil {
		return nil, err
	}
	return r, nil
}

// randomJitter draws the jitter of a retry's backoff at random, as
// [backoff.Policy.Delay] does.
func randomJitter(string, int) float64 { return rand.Float64() }

// stopCause returns why the run's context ended, or nil while it has not.
func (r *run) stopCause() error {
	if r.ctx.Err() == nil {
		return nil
	}
	return context.Cause(r.ctx)
}

// onHalt ends the waits before retries when the run halts.
func (r *run) onHalt() { close(r.halting) }

// binding finds agent name and the timeout of its tasks whose plan entry
// sets timeout, and the registry worker's bound on its attempts at once.
func (r *run) binding(name string, timeout time.Duration, built map[string]agent.Agent) (*binding, int, error) {
	a, w, err := r.agentFor(name, built)
	if err != nil {
		return nil, 0, err
	}
	var own time.Duration
	most := 0
	if w != nil {
		own, most = w.Timeout, w.MaxConcurrency
	}
	return &binding{agent: a, worker: w, timeout: taskTimeout(r.taskTimeout, own, timeout)}, most, nil
}

func (r *run) agentFor(name string, built map[string]agent.Agent) (agent.Agent, *registry.Worker, error) {
	if a, ok := r.agents[name]; ok {
		return a, nil, nil
	}
	if w, ok := r.registry.Lookup(name); ok {
		return w.Agent, &w, nil
	}
	if a, ok := built[name]; ok {
		return a, nil, nil
	}
	if r.planAgents == nil {
		return nil, nil, fmt.Errorf("%w: agent %q is an LLM agent of the plan, and no LLM is configured", ErrNoAgent, name)
	}
	a, err := r.planAgents(name, r.p.Agents[name])
	if err != nil {
		return nil, nil, fmt.Errorf("%w: agent %q: %w", ErrNoAgent, name, err)
	}
	built[name] = a
	return a, nil, nil
}

// NewRunID returns a new run id that sorts by t, the run's start, and is
// unique in practice: the id of a run not given one with [WithRunID].
func NewRunID(t time.Time) string {
	var b [4]byte
	_, _ = crand.Read(b[:])
	return t.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
