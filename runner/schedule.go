package runner

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"
)

// walk runs the plan on workers, goroutines of an errgroup.Group: in
// Phased, each phase is a group of its own, limited by SetLimit to the
// concurrency; in Eager one group holds every worker, at most concurrency
// of them. There is no scheduler goroutine: a worker settles its task under
// the run's lock and takes the next ready task itself, waking an idle
// worker, or starting one while a place is free, for each other task its
// task made ready. A worker with nothing to take while tasks of its group
// run waits for one rather than ending, so that a run starts few
// goroutines, not one per task. In Phased the tasks of a phase become
// ready when the phase before has settled: the worker that settles its
// last task starts the next phase and its group, and the workers of the
// settled phase end.
//
// Agents run on the workers, and a watchdog ends attempts at their
// deadline (see watchdog). A worker left behind in an agent that ignores
// the end of its context cannot be waited for: the watchdog hands its
// task, and its place, to a fresh goroutine outside the group, and the run
// no longer waits for its groups. As each phase has a group of its own, a
// stuck worker never holds a place of a later phase.
func (r *run) walk() {
	stop := context.AfterFunc(r.ctx, r.cancelled)
	defer stop()
	defer r.stopWatch()
	done := make(chan struct{})
	r.mu.Lock()
	r.done = done
	if r.schedule == Eager {
		r.join(new(errgroup.Group))
	}
	r.wakeup.L = &r.mu
	now := time.Now()
	r.advance(now)
	r.spawn(now)
	if r.workers == 0 {
		// Nothing may start: close the phase the run may have opened.
		r.advance(now)
		r.ended = true
		close(done)
	}
	r.mu.Unlock()
	<-done
	r.mu.Lock()
	detached := r.detached
	r.mu.Unlock()
	if !detached {
		for _, g := range r.groups {
			_ = g.Wait() // the workers return no error
		}
	}
}

// join makes g the group new workers start in. The workers of the group
// before, which are idle or about to end, retire. The caller holds mu.
func (r *run) join(g *errgroup.Group) {
	r.group = g
	r.groups = append(r.groups, g)
	r.gen++
	r.inGroup, r.idle, r.waking = 0, 0, 0
	r.wakeup.Broadcast()
}

// advance, in Phased, finishes the phase under way and starts the next one
// that has tasks, in a group of its own limited to the concurrency, unless
// the run stopped; it reports whether it started one. The caller holds
// mu, and no task runs or is ready.
func (r *run) advance(now time.Time) bool {
	if !r.core.advance(now) {
		return false
	}
	g := new(errgroup.Group)
	g.SetLimit(r.concurrency)
	r.join(g)
	return true
}

// spawn finds a worker for each ready task: an idle one, or while a place
// is free a new one, which starts its task at now. Idle workers wake one
// after another: the one woken wakes the next once it has its task, so
// that they do not all crowd the lock at once. The caller holds mu.
func (r *run) spawn(now time.Time) {
	want := len(r.ready) - r.head - r.waking
	if want > 0 && r.idle > 0 && r.waking == 0 {
		r.idle--
		r.waking++
		r.wakeup.Signal()
		want--
	}
	for want -= r.idle; want > 0 && r.inGroup < r.concurrency; want-- {
		i := r.take(now)
		if i < 0 {
			return
		}
		r.workers++
		r.inGroup++
		j := &job{gen: r.gen, r: r}
		r.enlist(j)
		r.group.Go(func() error {
			growStack(0)
			r.work(j, i)
			return nil
		})
	}
}

// work runs task i on job j, then every task it takes after it, until the
// run is over.
func (r *run) work(j *job, i int) {
	for i >= 0 {
		o, ok := r.runTask(j, i)
		if !ok {
			return // left in an abandoned agent; another goroutine took over
		}
		i = r.finish(j, &o)
	}
}

// resume carries on the task of j after the watchdog abandoned its attempt
// n, whose failure is x, on the goroutine that replaces its worker.
func (r *run) resume(j *job, n int, x Reply) {
	if o, ok := r.attempts(j, &j.carry, n, &x); ok {
		r.work(j, r.finish(j, &o))
	}
}

// finish commits o, settles it, and returns the next task j's worker is to
// run, or -1 when the run is over and the worker ends. With an
// [AsyncJournal] the worker does not wait for the commit: the task's
// place goes to the next ready task, and the journal's answer settles o
// (see committedAsync).
func (r *run) finish(j *job, o *outcome) int {
	if aj, ok := r.journal.(AsyncJournal); ok && r.journals(o) {
		r.mu.Lock()
		r.unlimit(o.i)
		r.running--
		r.committing++
		r.mu.Unlock()
		oc := *o
		aj.CommitAsync(context.WithoutCancel(r.ctx), r.commitOf(o), func(err error) { r.committedAsync(committed(oc, err)) })
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.carryOn(j, time.Now())
	}
	r.commit(o)
	r.mu.Lock()
	defer r.mu.Unlock()
	// One reading of the clock ends this task and starts the next.
	now := time.Now()
	r.settle(o, now)
	r.unlimit(o.i)
	r.running--
	return r.carryOn(j, now)
}

// committedAsync settles o, whose commit the journal has answered, on the
// journal's goroutine. When o was the last task the run waited for, an
// idle worker wakes to start the next phase or end the run.
func (r *run) committedAsync(o outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.settle(&o, now)
	r.committing--
	r.spawn(now)
	if r.running == 0 && r.committing == 0 && r.head == len(r.ready) && r.idle > 0 && r.waking == 0 {
		r.idle--
		r.waking++
		r.wakeup.Signal()
	}
}

// carryOn returns the next task j's worker is to run, started at now, waiting
// while tasks run or commit that may make one ready; or -1 when the run is
// over, or j's group retired, and the worker ends. The caller holds mu.
func (r *run) carryOn(j *job, now time.Time) int {
	for !r.ended && j.gen == r.gen {
		if i := r.take(now); i >= 0 {
			r.spawn(now)
			return i
		}
		if r.running > 0 || r.committing > 0 {
			// Tasks run or commit that may make one ready.
			r.idle++
			r.wakeup.Wait()
			if !r.ended && j.gen == r.gen {
				r.waking--
				now = time.Now()
			}
			continue
		}
		if r.advance(now) {
			// The next phase runs in a group of its own.
			r.spawn(now)
			break
		}
		r.ended = true
		r.wakeup.Broadcast()
	}
	r.dismiss(j)
	if r.workers--; r.workers == 0 {
		close(r.done)
	}
	return -1
}

// workerStack is about the stack a worker's calls reach: a task's
// attempt, its agent and its settling.
const workerStack = 16 << 10

// growStack makes a fresh worker's stack workerStack deep at once, while
// it holds nothing to copy: grown a little at a time as the first task's
// calls deepen, it would be copied three times over, which costs more
// than the task when agents are quick.
//
//go:noinline
func growStack(i int) byte {
	var pad [workerStack]byte
	return pad[i]
}
