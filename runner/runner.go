package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/jsonv"
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

// taskState is the run's record of one task. It holds what differs from
// run to run; what a task runs with is shared by the tasks alike in it, so
// that a run of many tasks touches little memory per task.
type taskState struct {
	res   TaskResult
	bind  *binding // nil for a review and a task done before the run
	check *checks  // nil for a task without a predicate or schema
}

// binding is how the tasks that name one agent with one timeout in the
// plan run.
type binding struct {
	agent   agent.Agent
	worker  *registry.Worker // the registry worker, for its preconditions
	timeout time.Duration
	limit   *limit // the worker's bound on its attempts at once; nil: none
}

// checks are a task's compiled predicates and output schema.
type checks struct {
	when   *verify.Predicate
	pred   *verify.Predicate
	schema plan.Validator
}

// run is the state of one Run. Its scheduling state is guarded by mu; a
// running task's state belongs to the goroutine that runs it.
type run struct {
	*Runner
	id string
	p  *plan.Plan
	d  *plan.DAG
	// predicates holds the compiled predicates of the plan.
	predicates *verify.Set
	state      []taskState
	decisions  map[int]Decision // the review decisions, by task
	// waits counts, for each pending task, the tasks it waits for that have
	// not settled; it is below zero for a task done before the run, which
	// never starts.
	waits []int32
	// next lists the tasks that wait for each task, as next[nextStart[i]:
	// nextStart[i+1]]; nil when they are the task's dependents.
	next      []int
	nextStart []int
	// keys holds the idempotency key of each task's first attempt, as
	// keys[keyStart[i]:keyStart[i+1]]: one string for the run rather than
	// one per task.
	keys     string
	keyStart []int
	bus      *bus
	ctx      context.Context

	mu    sync.Mutex
	ready []int // tasks that may start now, from head on; a heap when ordered
	head  int
	// ordered is set when a task of the plan has a priority: ready is then
	// a heap, and a phase's tasks are sorted when it starts.
	ordered bool
	byPhase [][]int   // Phased: tasks ready to start when their phase comes
	phase   int       // Phased: the phase under way; -1 before the first
	begun   time.Time // Phased: when the phase under way started
	running int       // tasks taken, not settled and not committing
	// committing counts the tasks whose outcome an AsyncJournal is making
	// durable: they hold no place, and they settle when it answers.
	committing int
	group      *errgroup.Group   // the group new workers join: the phase's in Phased
	groups     []*errgroup.Group // every group of the run
	gen        int               // counts the groups: a worker of an older one retires
	inGroup    int               // workers started in the current group
	workers    int               // workers, not counting those left in abandoned agents
	idle       int               // workers waiting for a task
	waking     int               // workers told of a task that have not woken yet
	wakeup     sync.Cond         // tells idle workers of a ready task or the end
	ended      bool              // no task will start: workers end
	done       chan struct{}     // closed when the last worker ended
	detached   bool              // a worker was left in an abandoned agent
	watchdog

	halted  bool
	halting chan struct{} // closed when the run halts, to stop retries
	err     error         // why the run failed
	replan  *ReplanRequest
	started time.Time
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
	r.bus.emit(Event{Kind: EventRunStarted, Time: r.started, RunID: r.id})
	r.walk()
	res := r.result(ctx)
	r.bus.emit(Event{Kind: EventRunFinished, Time: time.Now(), RunID: r.id, Duration: res.Duration, Err: res.Err, Status: res.Status, Usage: res.Usage})
	errs := r.bus.close()
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
	p := d.Plan()
	if rc.predicates == nil {
		rc.predicates = verify.NewSet()
	}
	r := &run{
		predicates: rc.predicates,
		Runner:     rn,
		id:         rc.id,
		p:          p,
		d:          d,
		state:      make([]taskState, len(p.Tasks)),
		ctx:        ctx,
		halting:    make(chan struct{}),
		started:    time.Now(),
	}
	if r.id == "" {
		r.id = NewRunID(r.started)
	}
	for i := range p.Tasks {
		r.state[i].res.ID, r.state[i].res.Status = p.Tasks[i].ID, TaskPending
	}
	if err := r.preset(rc); err != nil {
		return nil, err
	}
	if err := r.bind(); err != nil {
		return nil, err
	}
	r.link()
	r.firstKeys()
	return r, nil
}

// firstKeys builds the idempotency keys of the first attempts of the tasks
// that are to run.
func (r *run) firstKeys() {
	size := 0
	for i := range r.state {
		if r.state[i].res.Status != TaskDone {
			size += len(r.id) + len(r.state[i].res.ID) + len("//1")
		}
	}
	var b strings.Builder
	b.Grow(size)
	r.keyStart = make([]int, len(r.state)+1)
	for i := range r.state {
		if r.state[i].res.Status != TaskDone {
			b.WriteString(r.id)
			b.WriteByte('/')
			b.WriteString(r.state[i].res.ID)
			b.WriteString("/1")
		}
		r.keyStart[i+1] = b.Len()
	}
	r.keys = b.String()
}

// idempotencyKey returns the key of attempt n of task i.
func (r *run) idempotencyKey(i, n int) string {
	if n == 1 {
		return r.keys[r.keyStart[i]:r.keyStart[i+1]]
	}
	return r.id + "/" + r.state[i].res.ID + "/" + strconv.Itoa(n)
}

// preset applies the initial results and the review decisions.
func (r *run) preset(rc runConfig) error {
	for _, id := range slices.Sorted(maps.Keys(rc.initial)) {
		i, ok := r.d.Index(id)
		if !ok {
			return fmt.Errorf("%w: initial result for %q, which is not a task of the plan", ErrUnknownTask, id)
		}
		// Outputs given as Go values are made JSON-shaped like an agent's,
		// so that paths, templates and predicates can read them.
		out, err := jsonv.Normalize(rc.initial[id])
		if err != nil {
			return fmt.Errorf("%w: initial result for %q: %w", ErrInvalidOption, id, err)
		}
		r.state[i].res.Status = TaskDone
		r.state[i].res.Output = out
	}
	for _, id := range slices.Sorted(maps.Keys(rc.reviews)) {
		i, ok := r.d.Index(id)
		if !ok {
			return fmt.Errorf("%w: review decision for %q, which is not a task of the plan", ErrUnknownTask, id)
		}
		if r.p.Tasks[i].Type != plan.TypeHumanReview {
			return fmt.Errorf("%w: review decision for %q, which is a %s, not a human_review", ErrUnknownTask, id, r.p.Tasks[i].Type)
		}
		if r.decisions == nil {
			r.decisions = make(map[int]Decision, len(rc.reviews))
		}
		r.decisions[i] = rc.reviews[id]
	}
	return nil
}

// bind compiles the predicates (conditions and verifications), takes the
// schemas the check compiled, and finds the agent and timeout of every
// task that is to run.
func (r *run) bind() error {
	type key struct {
		agent   string
		timeout time.Duration
	}
	binds := make(map[key]*binding)
	built := make(map[string]agent.Agent)
	limits := make(map[string]*limit) // by worker: its tasks of every timeout share one
	var (
		last    *binding // tasks in a row mostly share one
		lastKey key
		bad     []error // every predicate that does not compile, reported at once
	)
	for i := range r.p.Tasks {
		t, st := &r.p.Tasks[i], &r.state[i]
		if st.res.Status == TaskDone {
			continue
		}
		var c checks
		var werr, verr error
		if t.When != "" {
			if c.when, werr = r.predicates.Compile(t.When); werr != nil {
				bad = append(bad, &PredicateError{TaskID: t.ID, Field: "when", Err: werr})
			}
		}
		if t.Verification != "" {
			if c.pred, verr = r.predicates.Compile(t.Verification); verr != nil {
				bad = append(bad, &PredicateError{TaskID: t.ID, Err: verr})
			}
		}
		if werr != nil || verr != nil {
			continue
		}
		// The check compiled the output schema; the DAG keeps it.
		c.schema = r.d.OutputValidator(i)
		if c != (checks{}) {
			st.check = &checks{when: c.when, pred: c.pred, schema: c.schema}
		}
		if t.Type == plan.TypeHumanReview {
			continue
		}
		if k := (key{t.Agent, t.Timeout}); last == nil || k != lastKey {
			b := binds[k]
			if b == nil {
				var err error
				if b, err = r.binding(t.Agent, t.Timeout, built); err != nil {
					return fmt.Errorf("task %s: %w", t.ID, err)
				}
				if b.worker != nil && b.worker.MaxConcurrency > 0 {
					if limits[t.Agent] == nil {
						limits[t.Agent] = &limit{max: b.worker.MaxConcurrency}
					}
					b.limit = limits[t.Agent]
				}
				binds[k] = b
			}
			last, lastKey = b, k
		}
		st.bind = last
	}
	return errors.Join(bad...)
}

// binding finds agent name and the timeout of its tasks whose plan entry
// sets timeout.
func (r *run) binding(name string, timeout time.Duration, built map[string]agent.Agent) (*binding, error) {
	a, w, err := r.agentFor(name, built)
	if err != nil {
		return nil, err
	}
	b := &binding{agent: a, worker: w, timeout: r.taskTimeout}
	if w != nil && w.Timeout > 0 {
		b.timeout = w.Timeout
	}
	// The registry is trusted and the plan is not: a plan may shorten a
	// worker's timeout, never stretch it.
	if timeout > 0 && (w == nil || w.Timeout <= 0 || timeout < w.Timeout) {
		b.timeout = timeout
	}
	return b, nil
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

// link builds the edges the scheduler walks: a task waits for its
// dependencies and for every task its templates and inputs read (all
// upstream), so that what it reads has settled even when a dependency's
// result came from WithInitialResults and its own upstream did not. When
// every task reads only its dependencies, as most do, the edges are the
// plan's own.
func (r *run) link() {
	n := len(r.state)
	r.waits = make([]int32, n)
	for i := range r.p.Tasks {
		if r.p.Tasks[i].Priority != 0 {
			r.ordered = true
			break
		}
	}
	if r.schedule == Eager {
		r.ready = make([]int, 0, n)
	} else {
		// One backing array holds every phase's tasks.
		phases := r.d.Phases()
		r.byPhase = make([][]int, len(phases))
		all := make([]int, 0, n)
		for k, ids := range phases {
			r.byPhase[k] = all[len(all) : len(all) : len(all)+len(ids)]
			all = all[:len(all)+len(ids)]
		}
	}
	extra := false
	for i := range n {
		reads := r.d.Reads(i)
		extra = extra || len(reads) > len(r.d.Deps(i))
		if r.state[i].res.Status == TaskDone {
			r.waits[i] = -1
			continue
		}
		for _, j := range reads {
			if r.state[j].res.Status != TaskDone {
				r.waits[i]++
			}
		}
	}
	if extra {
		r.nextStart = make([]int, n+1)
		for i := range n {
			for _, j := range r.d.Reads(i) {
				r.nextStart[j+1]++
			}
		}
		for j := range n {
			r.nextStart[j+1] += r.nextStart[j]
		}
		r.next = make([]int, r.nextStart[n])
		fill := slices.Clone(r.nextStart[:n])
		for i := range n {
			for _, j := range r.d.Reads(i) {
				r.next[fill[j]] = i
				fill[j]++
			}
		}
	}
	for i := range n {
		if r.waits[i] == 0 {
			r.enqueue(i)
		}
	}
}

// after returns the tasks that wait for task i.
func (r *run) after(i int) []int {
	if r.next == nil {
		return r.d.Dependents(i)
	}
	return r.next[r.nextStart[i]:r.nextStart[i+1]]
}

// result assembles the run's outcome.
func (r *run) result(ctx context.Context) *Result {
	res := &Result{RunID: r.id, Tasks: make(map[string]*TaskResult, len(r.state)), Started: r.started, Duration: time.Since(r.started)}
	for i := range r.state {
		t := &r.state[i].res
		res.Tasks[t.ID] = t
		res.Usage = res.Usage.Add(t.Usage)
		if t.Status == TaskWaiting {
			up, _ := r.depends(i)
			prompt, _, _ := r.render(i)
			res.PendingReviews = append(res.PendingReviews, PendingReview{TaskID: t.ID, Prompt: prompt, Upstream: up})
		}
	}
	switch {
	case ctx.Err() != nil:
		res.Status, res.Err = StatusFailed, fmt.Errorf("run cancelled: %w", context.Cause(ctx))
	case r.replan != nil:
		res.Status, res.Replan = StatusReplanRequired, r.replan
		for i := range r.state {
			if t := &r.state[i].res; t.Status == TaskDone {
				res.Replan.Completed = append(res.Replan.Completed, t.ID)
			}
		}
	case r.err != nil:
		res.Status, res.Err = StatusFailed, r.err
	case len(res.PendingReviews) > 0:
		res.Status = StatusWaiting
	default:
		res.Status = StatusCompleted
	}
	return res
}

// NewRunID returns a new run id that sorts by t, the run's start, and is
// unique in practice: the id of a run not given one with [WithRunID].
func NewRunID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
