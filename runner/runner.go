package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/verify"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Runner executes plans. Its configuration is fixed by New, so one Runner
// may run many plans, also at once.
type Runner struct {
	registry    *registry.Registry
	agents      map[string]agent.Agent
	planAgents  PlanAgents
	concurrency int
	schedule    Schedule
	taskTimeout time.Duration
	backoff     Backoff
	initial     map[string]any
	reviews     map[string]Decision
	observers   []Observer
	journal     Journal
	runID       string
	limits      plan.Limits
}

// New returns a runner configured by opts.
func New(opts ...Option) *Runner {
	r := &Runner{concurrency: DefaultConcurrency, taskTimeout: DefaultTaskTimeout, backoff: DefaultBackoff()}
	for _, o := range opts {
		o(r)
	}
	return r
}

// taskState is the runner's record of one task.
type taskState struct {
	res      TaskResult
	agent    agent.Agent
	worker   *registry.Worker // the registry worker, for its preconditions
	pred     *verify.Predicate
	schema   *jsonschema.Schema // the task's output_schema, compiled
	timeout  time.Duration
	decision *Decision
	phase    int
	deps     []int // direct dependencies
	next     []int // tasks that wait for this one
	waits    int   // tasks this one waits for that have not settled
}

// run is the state of one Run. The scheduler goroutine owns it; task
// goroutines read only what was settled before they started and report
// back on done.
type run struct {
	*Runner
	id    string
	p     *plan.Plan
	index map[string]int
	state []taskState
	bus   *bus

	done     chan outcome
	inflight int
	ready    []int   // tasks that may start now
	byPhase  [][]int // Phased: tasks ready to start when their phase comes
	phase    int     // Phased: the current phase, -1 before the first
	phaseAt  time.Time

	halted  bool
	halting chan struct{} // closed when the run halts, to stop retries
	err     error         // why the run failed
	replan  *ReplanRequest
	started time.Time
}

// Run executes p and returns its result. Failing tasks do not make Run
// return an error: the result's Status and Err say how the run ended, and
// every finished task's output is in it. Run returns an error and no result
// when the run cannot start — an invalid plan (errors.Is(err,
// plan.ErrInvalid)), a predicate that does not compile, an agent it cannot
// run, an option it cannot use — and an error beside the result when ctx
// ends the run or an observer panics.
func (rn *Runner) Run(ctx context.Context, p *plan.Plan) (*Result, error) {
	r, err := rn.prepare(p)
	if err != nil {
		return nil, err
	}
	r.bus = newBus(rn.observers)
	r.bus.emit(Event{Kind: EventRunStarted, Time: r.started, RunID: r.id})
	r.loop(ctx)
	res := r.result(ctx)
	r.bus.emit(Event{Kind: EventRunFinished, Time: time.Now(), RunID: r.id, Duration: res.Duration, Err: res.Err, Status: res.Status, Usage: res.Usage})
	errs := r.bus.close()
	if ctx.Err() != nil {
		errs = append(errs, res.Err)
	}
	return res, errors.Join(errs...)
}

// prepare checks the plan and the options and builds the run's state.
func (rn *Runner) prepare(p *plan.Plan) (*run, error) {
	if rn.concurrency < 1 {
		return nil, fmt.Errorf("%w: concurrency %d; it must be at least 1", ErrInvalidOption, rn.concurrency)
	}
	if rn.taskTimeout <= 0 {
		return nil, fmt.Errorf("%w: task timeout %s; it must be positive", ErrInvalidOption, rn.taskTimeout)
	}
	if err := p.Validate(rn.planOptions()...); err != nil {
		return nil, err
	}
	r := &run{
		Runner:  rn,
		id:      rn.runID,
		p:       p,
		index:   make(map[string]int, len(p.Tasks)),
		state:   make([]taskState, len(p.Tasks)),
		done:    make(chan outcome, rn.concurrency),
		phase:   -1,
		halting: make(chan struct{}),
		started: time.Now(),
	}
	if r.id == "" {
		r.id = newRunID(r.started)
	}
	for i := range p.Tasks {
		r.index[p.Tasks[i].ID] = i
		r.state[i].res = TaskResult{ID: p.Tasks[i].ID, Status: TaskPending}
	}
	if err := r.seed(); err != nil {
		return nil, err
	}
	if err := r.bind(); err != nil {
		return nil, err
	}
	r.link()
	return r, nil
}

// planOptions tells plan validation the limits, which workers exist and
// what they declare.
func (rn *Runner) planOptions() []plan.Option {
	opts := []plan.Option{plan.WithLimits(rn.limits)}
	for name := range rn.agents {
		opts = append(opts, plan.WithWorkers(name))
	}
	return append(opts, rn.registry.PlanOptions()...)
}

// seed applies the initial results and the review decisions.
func (r *run) seed() error {
	for _, id := range slices.Sorted(maps.Keys(r.initial)) {
		i, ok := r.index[id]
		if !ok {
			return fmt.Errorf("%w: initial result for %q, which is not a task of the plan", ErrUnknownTask, id)
		}
		// Outputs given as Go values are made JSON-shaped like an agent's,
		// so that paths, templates and predicates can read them.
		out, err := normalize(r.initial[id])
		if err != nil {
			return fmt.Errorf("%w: initial result for %q: %w", ErrInvalidOption, id, err)
		}
		r.state[i].res.Status = TaskDone
		r.state[i].res.Output = out
	}
	for _, id := range slices.Sorted(maps.Keys(r.reviews)) {
		i, ok := r.index[id]
		if !ok {
			return fmt.Errorf("%w: review decision for %q, which is not a task of the plan", ErrUnknownTask, id)
		}
		if r.p.Tasks[i].Type != plan.TypeHumanReview {
			return fmt.Errorf("%w: review decision for %q, which is a %s, not a human_review", ErrUnknownTask, id, r.p.Tasks[i].Type)
		}
		d := r.reviews[id]
		r.state[i].decision = &d
	}
	return nil
}

// bind compiles the predicates and finds the agent and timeout of every task
// that is to run.
func (r *run) bind() error {
	built := make(map[string]agent.Agent)
	var bad []error // every predicate and schema that does not compile, reported at once
	for i := range r.p.Tasks {
		t, st := &r.p.Tasks[i], &r.state[i]
		if st.res.Status == TaskDone {
			continue
		}
		if t.Verification != "" {
			pred, err := verify.Compile(t.Verification)
			if err != nil {
				bad = append(bad, &PredicateError{TaskID: t.ID, Err: err})
				continue
			}
			st.pred = pred
		}
		if len(t.OutputSchema) > 0 {
			sch, err := compileSchema(t.OutputSchema)
			if err != nil {
				bad = append(bad, &SchemaError{TaskID: t.ID, Err: err})
				continue
			}
			st.schema = sch
		}
		if t.Type == plan.TypeHumanReview {
			continue
		}
		a, w, err := r.agentFor(t.Agent, built)
		if err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
		st.agent, st.worker = a, w
		st.timeout = r.taskTimeout
		if w != nil && w.Timeout > 0 {
			st.timeout = w.Timeout
		}
		// The registry is trusted and the plan is not: a plan may shorten
		// a worker's timeout, never stretch it.
		if t.Timeout > 0 && (w == nil || w.Timeout <= 0 || t.Timeout < w.Timeout) {
			st.timeout = t.Timeout
		}
	}
	return errors.Join(bad...)
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
// result came from WithInitialResults and its own upstream did not.
func (r *run) link() {
	// Flat arrays hold every task's dependencies and waiters, so that a
	// plan of any size costs a handful of allocations here.
	n := 0
	for i := range r.p.Tasks {
		n += len(r.p.Tasks[i].DependsOn)
	}
	flat := make([]int, 0, n)
	for i := range r.p.Tasks {
		begin := len(flat)
		for _, d := range r.p.Tasks[i].DependsOn {
			if j := r.index[d]; !slices.Contains(flat[begin:], j) {
				flat = append(flat, j)
			}
		}
		r.state[i].deps = flat[begin:len(flat):len(flat)]
	}
	r.byPhase = make([][]int, r.levels())

	waits := make([][]int, len(r.p.Tasks))
	counts := make([]int, len(r.p.Tasks))
	for i := range r.p.Tasks {
		t, st := &r.p.Tasks[i], &r.state[i]
		if st.res.Status == TaskDone {
			continue
		}
		waits[i] = st.deps
		if len(t.Inputs) > 0 || strings.Contains(t.Input, "{{") {
			waits[i] = r.reads(i)
		}
		for _, j := range waits[i] {
			if r.state[j].res.Status != TaskDone {
				counts[j]++
				st.waits++
			}
		}
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	next := make([]int, 0, total)
	for j, c := range counts {
		r.state[j].next = next[len(next) : len(next) : len(next)+c]
		next = next[:len(next)+c]
	}
	for i, w := range waits {
		for _, j := range w {
			if r.state[j].res.Status != TaskDone {
				r.state[j].next = append(r.state[j].next, i)
			}
		}
		if r.state[i].res.Status != TaskDone && r.state[i].waits == 0 {
			r.enqueue(i)
		}
	}
}

// levels sets every task's phase — 0 without dependencies, else one above
// its highest dependency, as plan.DAG's phases — and returns the number of
// phases. The plan is valid, so the dependencies have no cycle.
func (r *run) levels() int {
	const unset = -1
	for i := range r.state {
		r.state[i].phase = unset
	}
	phases := 0
	var stack []int
	for root := range r.state {
		if r.state[root].phase != unset {
			continue
		}
		stack = append(stack[:0], root)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			st := &r.state[i]
			level, ready := 0, true
			for _, j := range st.deps {
				if r.state[j].phase == unset {
					stack, ready = append(stack, j), false
					break
				}
				level = max(level, r.state[j].phase+1)
			}
			if ready {
				st.phase = level
				phases = max(phases, level+1)
				stack = stack[:len(stack)-1]
			}
		}
	}
	return phases
}

// reads is the set of tasks task i waits for: its dependencies plus the
// tasks its templates and inputs name.
func (r *run) reads(i int) []int {
	t := &r.p.Tasks[i]
	out := r.state[i].deps
	add := func(id string) {
		if j := r.index[id]; !slices.Contains(out, j) {
			if len(out) == len(r.state[i].deps) {
				out = slices.Clone(out)
			}
			out = append(out, j)
		}
	}
	for _, in := range t.Inputs {
		add(in.From)
	}
	for ref := range plan.ResultRefs(t.Input, r.isTask) {
		add(ref.Task)
	}
	return out
}

func (r *run) isTask(id string) bool { _, ok := r.index[id]; return ok }

// enqueue makes task i startable: now in Eager, when its phase comes in
// Phased.
func (r *run) enqueue(i int) {
	if r.schedule == Eager {
		r.ready = append(r.ready, i)
		return
	}
	k := r.state[i].phase
	r.byPhase[k] = append(r.byPhase[k], i)
}

// loop is the scheduler: it starts what may start, up to the concurrency
// limit, and settles what finishes, until nothing runs.
func (r *run) loop(ctx context.Context) {
	for {
		for len(r.ready) > 0 && r.inflight < r.concurrency && !r.halted && ctx.Err() == nil {
			i := r.ready[0]
			r.ready = r.ready[1:]
			r.start(ctx, i)
		}
		if r.inflight == 0 {
			if r.schedule == Phased && r.nextPhase(ctx) {
				continue
			}
			return
		}
		o := <-r.done
		r.inflight--
		r.settle(o)
	}
}

// nextPhase ends the current phase and starts the next one that has tasks
// to run, if the run goes on.
func (r *run) nextPhase(ctx context.Context) bool {
	if r.phase >= 0 {
		now := time.Now()
		r.bus.emit(Event{Kind: EventPhaseFinished, Time: now, RunID: r.id, Phase: r.phase, Duration: now.Sub(r.phaseAt)})
	}
	if r.halted || ctx.Err() != nil {
		return false
	}
	for r.phase+1 < len(r.byPhase) {
		r.phase++
		if len(r.byPhase[r.phase]) > 0 {
			r.ready, r.byPhase[r.phase] = r.byPhase[r.phase], nil
			r.phaseAt = time.Now()
			r.bus.emit(Event{Kind: EventPhaseStarted, Time: r.phaseAt, RunID: r.id, Phase: r.phase})
			return true
		}
	}
	return false
}

// start prepares task i's request from settled results and runs it on its
// own goroutine.
func (r *run) start(ctx context.Context, i int) {
	st := &r.state[i]
	st.res.Status = TaskRunning
	st.res.Started = time.Now()
	j := job{i: i, task: &r.p.Tasks[i], st: st, started: st.res.Started}
	j.input, j.refs, j.err = r.render(i)
	if j.err == nil {
		j.inputs, j.err = r.wire(i)
	}
	j.depends, j.skipped = r.depends(i)
	r.inflight++
	go func() { r.done <- r.commit(ctx, r.execute(ctx, j)) }()
}

// depends gathers the outputs of task i's direct dependencies; skipped ones
// are named instead.
func (r *run) depends(i int) (map[string]any, []string) {
	deps := r.state[i].deps
	out := make(map[string]any, len(deps))
	var skipped []string
	for _, j := range deps {
		res := &r.state[j].res
		if res.Status == TaskDone {
			out[res.ID] = res.Output
		} else {
			skipped = append(skipped, res.ID)
		}
	}
	return out, skipped
}

// settle records a task's final state and applies what it means for the
// run.
func (r *run) settle(o outcome) {
	st := &r.state[o.i]
	res := &st.res
	res.Status, res.Attempts, res.Output, res.Err, res.Diagnosis = o.status, o.attempts, o.output, o.err, o.diagnosis
	res.Usage = o.usage
	res.Duration = time.Since(res.Started)
	e := Event{Time: time.Now(), RunID: r.id, TaskID: res.ID, Phase: st.phase, Attempt: o.attempts, Duration: res.Duration, Err: o.err, Diagnosis: o.diagnosis, Usage: o.usage}
	switch o.status {
	case TaskDone:
		e.Kind, e.Output = EventTaskFinished, o.output
		r.bus.emit(e)
		r.release(o.i)
	case TaskSkipped:
		e.Kind = EventTaskSkipped
		r.bus.emit(e)
		r.release(o.i)
	case TaskWaiting:
		e.Kind = EventTaskWaiting
		r.bus.emit(e)
	default:
		e.Kind = EventTaskFailed
		r.bus.emit(e)
	}
	switch o.action {
	case actHalt:
		r.halt(&TaskError{TaskID: res.ID, Err: o.err})
	case actGate:
		r.halt(nil)
		r.failGate(o.i)
	case actGateOnly:
		r.failGate(o.i)
	case actReplan:
		r.halt(nil)
		if r.replan == nil {
			r.replan = &ReplanRequest{TaskID: res.ID, Output: o.output, Diagnosis: o.diagnosis}
		}
	}
}

// release lets the tasks waiting for task i start once nothing else holds
// them.
func (r *run) release(i int) {
	for _, j := range r.state[i].next {
		if r.state[j].waits--; r.state[j].waits == 0 {
			r.enqueue(j)
		}
	}
}

// halt stops new tasks and new attempts from starting; running attempts
// finish.
func (r *run) halt(err error) {
	if !r.halted {
		r.halted = true
		close(r.halting)
	}
	if r.err == nil && err != nil {
		r.err = err
	}
}

// failGate skips everything downstream of the failed gate g and fails the
// run.
func (r *run) failGate(g int) {
	gate := &r.state[g].res
	if r.err == nil {
		r.err = &TaskError{TaskID: gate.ID, Err: gate.Err}
	}
	reason := fmt.Errorf("%w: %q", ErrGateFailed, gate.ID)
	now := time.Now()
	stack := slices.Clone(r.state[g].next)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st := &r.state[i]
		if st.res.Status != TaskPending {
			continue
		}
		st.res.Status, st.res.Err = TaskSkipped, reason
		r.bus.emit(Event{Kind: EventTaskSkipped, Time: now, RunID: r.id, TaskID: st.res.ID, Phase: st.phase, Err: reason})
		stack = append(stack, st.next...)
	}
}

// result assembles the run's outcome.
func (r *run) result(ctx context.Context) *Result {
	res := &Result{RunID: r.id, Tasks: make(map[string]*TaskResult, len(r.state)), Started: r.started, Duration: time.Since(r.started)}
	var completed []string
	for i := range r.state {
		t := &r.state[i].res
		res.Tasks[t.ID] = t
		res.Usage = res.Usage.Add(t.Usage)
		switch t.Status {
		case TaskDone:
			completed = append(completed, t.ID)
		case TaskWaiting:
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
		res.Replan.Completed = completed
	case r.err != nil:
		res.Status, res.Err = StatusFailed, r.err
	case len(res.PendingReviews) > 0:
		res.Status = StatusWaiting
	default:
		res.Status = StatusCompleted
	}
	return res
}

// newRunID returns an id that sorts by start time and is unique in practice.
func newRunID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
