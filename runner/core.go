package runner

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/verify"
)

// This file and coretask.go hold the run's deterministic core: what a run
// decides, apart from how it runs. They start no goroutine, read no clock,
// draw no random number and hold no lock (core_purity_test.go checks it):
// the time, the cancellation and everything that blocks come from the
// driver — the Runner, or a workflow — through the core's settings and a
// task's Host.

// taskState is the run's record of one task. It holds what differs from
// run to run; what a task runs with is shared by the tasks alike in it, so
// that a run of many tasks touches little memory per task.
type taskState struct {
	res   TaskResult
	bind  *binding // nil for a review and a task done before the run
	check *checks  // nil for a task without a predicate or schema
}

// binding is how the tasks that name one agent with one timeout in the
// plan run. The core reads its timeout and limit; the agent and the
// worker are the Runner's, nil under another driver.
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

// settings are the core's configuration, fixed when the run starts.
type settings struct {
	schedule    Schedule
	concurrency int
	maxRequest  int64 // 0: DefaultMaxRequestBytes; below 0: no limit
	backoff     Backoff
	noRetry     map[Class]bool
	judge       bool                                   // tasks with a rubric are judged
	jitter      func(task string, attempt int) float64 // the jitter draw of a retry's backoff
	emit        func(Event)                            // nil: no events
	driver      driver                                 // the run's cancellation and the halt's hook
}

// driver is what the core asks of the driver that runs it besides a
// task's Host. The Runner is one itself, so that it costs the run no
// allocation.
type driver interface {
	// stopCause returns nil while the run goes on, and why it was
	// cancelled once it is.
	stopCause() error
	// onHalt is called once, when the run halts, to end the waits before
	// retries.
	onHalt()
}

// core is the state of one run that its decisions depend on: the tasks'
// records, what waits for what, the ready queue, the phases, the worker
// limits, the halt. It is not safe for concurrent use: the Runner uses it
// under its lock, except for the task flow (coretask.go), which reads only
// the settled records of a task's upstream, and halted, which is atomic.
type core struct {
	conf settings
	id   string
	p    *plan.Plan
	d    *plan.DAG
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

	// halted is set when the run halts. A task's flow reads it without
	// the lock, to give up its retries.
	halted  atomic.Bool
	err     error // why the run failed
	replan  *ReplanRequest
	started time.Time
}

// init sets up c for d, run id at started: the initial results, the review
// decisions, the compiled checks, each task's binding (resolve gives the
// binding of an agent's tasks with a plan timeout, and the worker's bound
// on its attempts at once), the edges and the first attempts' keys.
func (c *core) init(d *plan.DAG, id string, started time.Time, initial map[string]any, reviews map[string]Decision, resolve func(agent string, timeout time.Duration) (*binding, int, error)) error {
	p := d.Plan()
	c.p, c.d, c.id, c.started, c.phase = p, d, id, started, -1
	c.state = make([]taskState, len(p.Tasks))
	for i := range p.Tasks {
		c.state[i].res.ID, c.state[i].res.Status = p.Tasks[i].ID, TaskPending
	}
	if err := c.preset(initial, reviews); err != nil {
		return err
	}
	if err := c.bind(resolve); err != nil {
		return err
	}
	c.link()
	c.firstKeys()
	return nil
}

// taskTimeout is the timeout of a task's attempts: the worker's own
// (registry.Worker.Timeout) or else def, and the plan's when it is
// shorter. The registry is trusted and the plan is not: a plan may
// shorten a worker's timeout, never stretch it.
func taskTimeout(def, worker, planned time.Duration) time.Duration {
	t := def
	if worker > 0 {
		t = worker
	}
	if planned > 0 && (worker <= 0 || planned < worker) {
		t = planned
	}
	return t
}

// firstKeys builds the idempotency keys of the first attempts of the tasks
// that are to run.
func (c *core) firstKeys() {
	size := 0
	for i := range c.state {
		if c.state[i].res.Status != TaskDone {
			size += len(c.id) + len(c.state[i].res.ID) + len("//1")
		}
	}
	var b strings.Builder
	b.Grow(size)
	c.keyStart = make([]int, len(c.state)+1)
	for i := range c.state {
		if c.state[i].res.Status != TaskDone {
			b.WriteString(c.id)
			b.WriteByte('/')
			b.WriteString(c.state[i].res.ID)
			b.WriteString("/1")
		}
		c.keyStart[i+1] = b.Len()
	}
	c.keys = b.String()
}

// idempotencyKey returns the key of attempt n of task i.
func (c *core) idempotencyKey(i, n int) string {
	if n == 1 {
		return c.keys[c.keyStart[i]:c.keyStart[i+1]]
	}
	return c.id + "/" + c.state[i].res.ID + "/" + strconv.Itoa(n)
}

// preset applies the initial results and the review decisions.
func (c *core) preset(initial map[string]any, reviews map[string]Decision) error {
	for _, id := range slices.Sorted(maps.Keys(initial)) {
		i, ok := c.d.Index(id)
		if !ok {
			return fmt.Errorf("%w: initial result for %q, which is not a task of the plan", ErrUnknownTask, id)
		}
		// Outputs given as Go values are made JSON-shaped like an agent's,
		// so that paths, templates and predicates can read them.
		out, err := jsonv.Normalize(initial[id])
		if err != nil {
			return fmt.Errorf("%w: initial result for %q: %w", ErrInvalidOption, id, err)
		}
		c.state[i].res.Status = TaskDone
		c.state[i].res.Output = out
	}
	for _, id := range slices.Sorted(maps.Keys(reviews)) {
		i, ok := c.d.Index(id)
		if !ok {
			return fmt.Errorf("%w: review decision for %q, which is not a task of the plan", ErrUnknownTask, id)
		}
		if c.p.Tasks[i].Type != plan.TypeHumanReview {
			return fmt.Errorf("%w: review decision for %q, which is a %s, not a human_review", ErrUnknownTask, id, c.p.Tasks[i].Type)
		}
		if c.decisions == nil {
			c.decisions = make(map[int]Decision, len(reviews))
		}
		c.decisions[i] = reviews[id]
	}
	return nil
}

// bind compiles the predicates (conditions and verifications), takes the
// schemas the check compiled, and has resolve bind every task that is to
// run. The tasks of one worker share one limit, whatever their timeouts.
func (c *core) bind(resolve func(agent string, timeout time.Duration) (*binding, int, error)) error {
	type key struct {
		agent   string
		timeout time.Duration
	}
	binds := make(map[key]*binding)
	limits := make(map[string]*limit) // by worker: its tasks of every timeout share one
	var (
		last    *binding // tasks in a row mostly share one
		lastKey key
		bad     []error // every predicate that does not compile, reported at once
	)
	for i := range c.p.Tasks {
		t, st := &c.p.Tasks[i], &c.state[i]
		if st.res.Status == TaskDone {
			continue
		}
		var ch checks
		var werr, verr error
		if t.When != "" {
			if ch.when, werr = c.predicates.Compile(t.When); werr != nil {
				bad = append(bad, &PredicateError{TaskID: t.ID, Field: "when", Err: werr})
			}
		}
		if t.Verification != "" {
			if ch.pred, verr = c.predicates.Compile(t.Verification); verr != nil {
				bad = append(bad, &PredicateError{TaskID: t.ID, Err: verr})
			}
		}
		if werr != nil || verr != nil {
			continue
		}
		// The check compiled the output schema; the DAG keeps it.
		ch.schema = c.d.OutputValidator(i)
		if ch != (checks{}) {
			st.check = &checks{when: ch.when, pred: ch.pred, schema: ch.schema}
		}
		if t.Type == plan.TypeHumanReview {
			continue
		}
		if k := (key{t.Agent, t.Timeout}); last == nil || k != lastKey {
			b := binds[k]
			if b == nil {
				var (
					most int
					err  error
				)
				if b, most, err = resolve(t.Agent, t.Timeout); err != nil {
					return fmt.Errorf("task %s: %w", t.ID, err)
				}
				if most > 0 {
					if limits[t.Agent] == nil {
						limits[t.Agent] = &limit{max: most}
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

// link builds the edges the scheduler walks: a task waits for its
// dependencies and for every task its templates and inputs read (all
// upstream), so that what it reads has settled even when a dependency's
// result came from WithInitialResults and its own upstream did not. When
// every task reads only its dependencies, as most do, the edges are the
// plan's own.
func (c *core) link() {
	n := len(c.state)
	c.waits = make([]int32, n)
	for i := range c.p.Tasks {
		if c.p.Tasks[i].Priority != 0 {
			c.ordered = true
			break
		}
	}
	if c.conf.schedule == Eager {
		c.ready = make([]int, 0, n)
	} else {
		// One backing array holds every phase's tasks.
		phases := c.d.Phases()
		c.byPhase = make([][]int, len(phases))
		all := make([]int, 0, n)
		for k, ids := range phases {
			c.byPhase[k] = all[len(all) : len(all) : len(all)+len(ids)]
			all = all[:len(all)+len(ids)]
		}
	}
	extra := false
	for i := range n {
		reads := c.d.Reads(i)
		extra = extra || len(reads) > len(c.d.Deps(i))
		if c.state[i].res.Status == TaskDone {
			c.waits[i] = -1
			continue
		}
		for _, j := range reads {
			if c.state[j].res.Status != TaskDone {
				c.waits[i]++
			}
		}
	}
	if extra {
		c.nextStart = make([]int, n+1)
		for i := range n {
			for _, j := range c.d.Reads(i) {
				c.nextStart[j+1]++
			}
		}
		for j := range n {
			c.nextStart[j+1] += c.nextStart[j]
		}
		c.next = make([]int, c.nextStart[n])
		fill := slices.Clone(c.nextStart[:n])
		for i := range n {
			for _, j := range c.d.Reads(i) {
				c.next[fill[j]] = i
				fill[j]++
			}
		}
	}
	for i := range n {
		if c.waits[i] == 0 {
			c.enqueue(i)
		}
	}
}

// after returns the tasks that wait for task i.
func (c *core) after(i int) []int {
	if c.next == nil {
		return c.d.Dependents(i)
	}
	return c.next[c.nextStart[i]:c.nextStart[i+1]]
}

// send hands e to the run's observers, if any.
func (c *core) send(e Event) {
	if c.conf.emit != nil {
		c.conf.emit(e)
	}
}

// cause returns why the run was cancelled, or nil while it is not.
func (c *core) cause() error {
	return c.conf.driver.stopCause()
}

// advance, in Phased, finishes the phase under way and opens the next one
// that has tasks, unless the run stopped; it reports whether it opened
// one, whose tasks are then ready. The caller holds mu, and no task runs
// or is ready.
func (c *core) advance(now time.Time) bool {
	if c.conf.schedule == Eager {
		return false
	}
	if c.phase >= 0 && c.phase < len(c.byPhase) {
		c.send(Event{Kind: EventPhaseFinished, Time: now, RunID: c.id, Phase: c.phase, Duration: now.Sub(c.begun)})
	}
	if !c.stopped() {
		for k := c.phase + 1; k < len(c.byPhase); k++ {
			if len(c.byPhase[k]) == 0 {
				continue
			}
			c.phase, c.begun = k, now
			c.ready, c.head, c.byPhase[k] = c.byPhase[k], 0, nil
			if c.ordered {
				// Sorted, the phase's tasks are a heap already.
				slices.SortFunc(c.ready, c.compare)
			}
			c.send(Event{Kind: EventPhaseStarted, Time: now, RunID: c.id, Phase: k})
			return true
		}
	}
	c.phase = len(c.byPhase)
	return false
}

// stopped reports whether no new task may start. The caller holds mu.
func (c *core) stopped() bool { return c.halted.Load() || c.cause() != nil }

// take returns the next task to start, marked running and started at now,
// or -1 when none may start. A ready task whose worker runs as many
// attempts as it may is parked with the worker's limit, holding no place,
// and the next one is taken. The caller holds mu.
func (c *core) take(now time.Time) int {
	if c.stopped() {
		return -1
	}
	for c.head < len(c.ready) {
		i := c.pop()
		st := &c.state[i]
		if st.bind != nil && st.bind.limit != nil {
			l := st.bind.limit
			if l.running == l.max {
				l.parked = pushHeap(l.parked, i, c.less)
				continue
			}
			l.running++
		}
		c.running++
		st.res.Status, st.res.Started = TaskRunning, now
		return i
	}
	return -1
}

// pop removes the next ready task: the first in order of readiness, or
// when ordered the first by priority. The caller holds mu, and a task is
// ready.
func (c *core) pop() int {
	if !c.ordered {
		i := c.ready[c.head]
		c.head++
		return i
	}
	var i int
	i, c.ready = popHeap(c.ready, c.less)
	return i
}

// unlimit gives back the place task i held with its worker's limit, and
// makes ready the first task parked there, unless the run stopped. The
// caller holds mu.
func (c *core) unlimit(i int) {
	b := c.state[i].bind
	if b == nil || b.limit == nil {
		return
	}
	l := b.limit
	l.running--
	if len(l.parked) == 0 || c.stopped() {
		return
	}
	var j int
	j, l.parked = popHeap(l.parked, c.less)
	switch {
	case c.ordered:
		c.ready = pushHeap(c.ready, j, c.less)
	case c.head > 0:
		// It was ready before every task behind head: it goes first.
		c.head--
		c.ready[c.head] = j
	default:
		c.ready = slices.Insert(c.ready, 0, j)
	}
}

// enqueue makes task i startable: now in Eager, when its phase comes in
// Phased. The caller holds mu, or owns the run before it starts.
func (c *core) enqueue(i int) {
	if c.conf.schedule == Eager {
		if c.head == len(c.ready) {
			c.ready, c.head = c.ready[:0], 0
		}
		if c.ordered {
			c.ready = pushHeap(c.ready, i, c.less)
		} else {
			c.ready = append(c.ready, i)
		}
		return
	}
	k := c.d.Level(i)
	c.byPhase[k] = append(c.byPhase[k], i)
}

// settle records a task's final state at now and applies what it means
// for the run. The caller holds mu.
func (c *core) settle(o *outcome, now time.Time) {
	st := &c.state[o.i]
	res := &st.res
	res.Status, res.Attempts, res.Output, res.Err, res.Diagnosis = o.status, o.attempts, o.output, o.err, o.diagnosis
	res.Usage = o.usage
	res.Duration = now.Sub(res.Started)
	if o.status == TaskFailed || o.status == TaskSkipped {
		res.Class = Classify(o.err)
	}
	if c.conf.emit != nil {
		e := Event{Time: now, RunID: c.id, TaskID: res.ID, Phase: c.d.Level(o.i), Attempt: o.attempts, Duration: res.Duration, Err: o.err, Diagnosis: o.diagnosis, Usage: o.usage,
			AttemptEnded: o.ended}
		switch o.status {
		case TaskDone:
			e.Kind, e.Output = EventTaskFinished, o.output
		case TaskSkipped:
			e.Kind = EventTaskSkipped
		case TaskWaiting:
			e.Kind = EventTaskWaiting
		default:
			e.Kind = EventTaskFailed
		}
		c.conf.emit(e)
	}
	if o.status == TaskDone || o.status == TaskSkipped {
		c.release(o.i)
	}
	switch o.action {
	case actHalt:
		c.halt(&TaskError{TaskID: res.ID, Err: o.err})
	case actGate:
		c.halt(nil)
		c.failGate(o.i, now)
	case actGateOnly:
		c.failGate(o.i, now)
	case actReplan:
		c.halt(nil)
		if c.replan == nil {
			c.replan = &ReplanRequest{TaskID: res.ID, Output: o.output, Diagnosis: o.diagnosis}
		}
	}
}

// release lets the tasks waiting for task i start once nothing else holds
// them.
func (c *core) release(i int) {
	for _, j := range c.after(i) {
		if c.waits[j]--; c.waits[j] == 0 {
			c.enqueue(j)
		}
	}
}

// halt stops new tasks and new attempts from starting; running attempts
// finish. The driver wakes the tasks waiting to retry.
func (c *core) halt(err error) {
	if !c.halted.Load() {
		c.halted.Store(true)
		c.conf.driver.onHalt()
	}
	if c.err == nil && err != nil {
		c.err = err
	}
}

// failGate skips everything downstream of the failed gate g at now and
// fails the run.
func (c *core) failGate(g int, now time.Time) {
	gate := &c.state[g].res
	if c.err == nil {
		c.err = &TaskError{TaskID: gate.ID, Err: gate.Err}
	}
	reason := fmt.Errorf("%w: %q", ErrGateFailed, gate.ID)
	stack := slices.Clone(c.after(g))
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st := &c.state[i]
		if st.res.Status != TaskPending {
			continue
		}
		st.res.Status, st.res.Err, st.res.Class = TaskSkipped, reason, ClassGateFailed
		c.send(Event{Kind: EventTaskSkipped, Time: now, RunID: c.id, TaskID: st.res.ID, Phase: c.d.Level(i), Err: reason})
		stack = append(stack, c.after(i)...)
	}
}

// depends gathers the outputs of task i's direct dependencies; skipped ones
// are named instead.
func (c *core) depends(i int) (map[string]any, []string) {
	deps := c.d.Deps(i)
	out := make(map[string]any, len(deps))
	var skipped []string
	for _, j := range deps {
		res := &c.state[j].res
		if res.Status == TaskDone {
			out[res.ID] = res.Output
		} else {
			skipped = append(skipped, res.ID)
		}
	}
	return out, skipped
}

// result assembles the run's outcome at now.
func (c *core) result(now time.Time) *Result {
	res := &Result{RunID: c.id, Tasks: make(map[string]*TaskResult, len(c.state)), Started: c.started, Duration: now.Sub(c.started)}
	for i := range c.state {
		t := &c.state[i].res
		res.Tasks[t.ID] = t
		res.Usage = res.Usage.Add(t.Usage)
		if t.Status == TaskWaiting {
			up, _ := c.depends(i)
			prompt, _, _ := c.render(i)
			res.PendingReviews = append(res.PendingReviews, PendingReview{TaskID: t.ID, Prompt: prompt, Upstream: up})
		}
	}
	cause := c.cause()
	switch {
	case cause != nil:
		res.Status, res.Err = StatusFailed, fmt.Errorf("run cancelled: %w", cause)
	case c.replan != nil:
		res.Status, res.Replan = StatusReplanRequired, c.replan
		for i := range c.state {
			if t := &c.state[i].res; t.Status == TaskDone {
				res.Replan.Completed = append(res.Replan.Completed, t.ID)
			}
		}
	case c.err != nil:
		res.Status, res.Err = StatusFailed, c.err
	case len(res.PendingReviews) > 0:
		res.Status = StatusWaiting
	default:
		res.Status = StatusCompleted
	}
	return res
}
