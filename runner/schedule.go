package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
)

// walk runs the plan: in Eager as one wave, in Phased as one wave per
// phase, each starting when the one before has settled.
//
// A wave is an errgroup.Group of worker goroutines, at most concurrency of
// them. There is no scheduler goroutine: a worker settles its task under
// the run's lock, takes the next ready task itself, and in Eager starts
// another worker for each task its task made ready, while a place is free.
// Agents run on the workers, and a watchdog ends attempts at their deadline
// (see watchdog). A worker left behind in an agent that ignores the end of
// its context cannot be waited for: the watchdog hands its task, and its
// place, to a fresh goroutine, and the wave no longer waits for the group.
// So the group has no limit of its own in Eager, where workers start while
// the wave runs: the count of workers under the lock is the limit, and a
// worker left in an agent holds no place of it.
func (r *run) walk() {
	stop := context.AfterFunc(r.ctx, r.cancelled)
	defer stop()
	defer r.stopWatch()
	if r.schedule == Eager {
		r.wave(-1)
		return
	}
	for k := range r.byPhase {
		if !r.wave(k) {
			return
		}
	}
}

// wave runs the ready tasks — in Phased those of phase k — until no worker
// runs, and reports whether the run goes on.
func (r *run) wave(k int) bool {
	var g errgroup.Group
	r.mu.Lock()
	if r.stopped() {
		r.mu.Unlock()
		return false
	}
	if k >= 0 {
		if len(r.byPhase[k]) == 0 {
			r.mu.Unlock()
			return true
		}
		// Every task of the phase is known now: the phase's workers all
		// start here, so the group's limit never holds one back.
		g.SetLimit(r.concurrency)
		r.ready, r.head, r.byPhase[k] = r.byPhase[k], 0, nil
	}
	var started time.Time
	if k >= 0 && r.bus != nil {
		started = time.Now()
		r.bus.emit(Event{Kind: EventPhaseStarted, Time: started, RunID: r.id, Phase: k})
	}
	idle := make(chan struct{})
	r.group, r.idle, r.detached, r.workers = &g, idle, false, 0
	r.spawn(time.Now())
	running := r.workers > 0
	r.mu.Unlock()
	if running {
		<-idle
	}
	r.mu.Lock()
	detached := r.detached
	r.mu.Unlock()
	if !detached {
		_ = g.Wait()
	}
	if k >= 0 && r.bus != nil {
		now := time.Now()
		r.bus.emit(Event{Kind: EventPhaseFinished, Time: now, RunID: r.id, Phase: k, Duration: now.Sub(started)})
	}
	return true
}

// stopped reports whether no new task may start. The caller holds mu.
func (r *run) stopped() bool { return r.halted || r.ctx.Err() != nil }

// spawn starts a worker for each ready task while a place is free, the
// tasks started at now. The caller holds mu.
func (r *run) spawn(now time.Time) {
	for r.workers < r.concurrency {
		i := r.take(now)
		if i < 0 {
			return
		}
		r.workers++
		j := &job{}
		r.enlist(j)
		r.group.Go(func() error {
			r.work(j, i)
			return nil
		})
	}
}

// take returns the next task to start, marked running and started at now,
// or -1 when none may start. The caller holds mu.
func (r *run) take(now time.Time) int {
	if r.head == len(r.ready) || r.stopped() {
		return -1
	}
	i := r.ready[r.head]
	r.head++
	res := &r.state[i].res
	res.Status, res.Started = TaskRunning, now
	return i
}

// work runs task i on job j, then every task it takes after it, until none
// is ready.
func (r *run) work(j *job, i int) {
	for i >= 0 {
		o, ok := r.runTask(j, i)
		if !ok {
			return // left in an abandoned agent; another goroutine took over
		}
		i = r.finish(j, o)
	}
}

// resume carries on the task of j after the watchdog abandoned its attempt
// n, whose failure is x, on the goroutine that replaces its worker.
func (r *run) resume(j *job, n int, x reply) {
	if o, ok := r.attempts(j, n, &x); ok {
		r.work(j, r.finish(j, o))
	}
}

// finish commits o, settles it, and returns the next task j's worker is to
// run, or -1 when the worker is done.
func (r *run) finish(j *job, o outcome) int {
	o = r.commit(r.ctx, o)
	r.mu.Lock()
	defer r.mu.Unlock()
	// One reading of the clock ends this task and starts the next.
	now := time.Now()
	r.settle(o, now)
	i := r.take(now)
	if i < 0 {
		r.dismiss(j)
		if r.workers--; r.workers == 0 {
			close(r.idle)
		}
		return -1
	}
	r.spawn(now)
	return i
}

// enqueue makes task i startable: now in Eager, when its phase comes in
// Phased. The caller holds mu, or owns the run before it starts.
func (r *run) enqueue(i int) {
	if r.schedule == Eager {
		if r.head == len(r.ready) {
			r.ready, r.head = r.ready[:0], 0
		}
		r.ready = append(r.ready, i)
		return
	}
	k := r.d.Level(i)
	r.byPhase[k] = append(r.byPhase[k], i)
}

// settle records a task's final state at now and applies what it means
// for the run. The caller holds mu.
func (r *run) settle(o outcome, now time.Time) {
	st := &r.state[o.i]
	res := &st.res
	res.Status, res.Attempts, res.Output, res.Err, res.Diagnosis = o.status, o.attempts, o.output, o.err, o.diagnosis
	res.Usage = o.usage
	res.Duration = now.Sub(res.Started)
	if o.status == TaskFailed || o.status == TaskSkipped {
		res.Class = Classify(o.err)
	}
	if r.bus != nil {
		e := Event{Time: now, RunID: r.id, TaskID: res.ID, Phase: r.d.Level(o.i), Attempt: o.attempts, Duration: res.Duration, Err: o.err, Diagnosis: o.diagnosis, Usage: o.usage}
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
		r.bus.emit(e)
	}
	if o.status == TaskDone || o.status == TaskSkipped {
		r.release(o.i)
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
	for _, j := range r.after(i) {
		if r.waits[j]--; r.waits[j] == 0 {
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
	stack := slices.Clone(r.after(g))
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st := &r.state[i]
		if st.res.Status != TaskPending {
			continue
		}
		st.res.Status, st.res.Err, st.res.Class = TaskSkipped, reason, ClassGateFailed
		r.bus.emit(Event{Kind: EventTaskSkipped, Time: now, RunID: r.id, TaskID: st.res.ID, Phase: r.d.Level(i), Err: reason})
		stack = append(stack, r.after(i)...)
	}
}

// depends gathers the outputs of task i's direct dependencies; skipped ones
// are named instead.
func (r *run) depends(i int) (map[string]any, []string) {
	deps := r.d.Deps(i)
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
