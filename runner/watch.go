package runner

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/dagent-dev/dagent/agent"
)

// abandonGrace is how long an agent may take to return after its context
// ends before the runner leaves it behind.
const abandonGrace = 500 * time.Millisecond

// watchdog enforces the deadlines of a run's attempts with one timer for
// the whole run rather than one per attempt: attempts start in time order,
// so with one timeout the earliest deadline is the first one's, and an
// attempt that starts costs no timer. It fires at the earliest deadline,
// ends the attempts that are due, and abandonGrace after an attempt's
// context ended (at its deadline or when the run's context did) it leaves
// the agent behind: the attempt fails with ErrAbandoned and a fresh
// goroutine carries on the task in place of the one stuck in the agent.
// Its fields are guarded by run.mu.
type watchdog struct {
	jobs   []*job // the workers' jobs
	timer  *time.Timer
	wake   time.Time    // when the timer fires; zero when it is not set
	wakeAt atomic.Int64 // wake in Unix nanoseconds, read without the lock
	over   bool         // the run is over: the timer must not act
}

// watch hands attempt n of j's task to the watchdog and returns its
// context.
func (r *run) watch(j *job, n int, deadline time.Time) context.Context {
	ctx := newAttemptCtx(r.ctx, deadline)
	j.mu.Lock()
	j.inflight, j.n, j.ctx, j.deadline, j.ended, j.timedOut = true, n, ctx, deadline, time.Time{}, false
	j.mu.Unlock()
	due := deadline
	if r.ctx.Err() != nil {
		// The run's context ended, perhaps before the watchdog could see
		// this attempt: its grace period starts now.
		now := time.Now()
		j.mu.Lock()
		if j.ended.IsZero() {
			j.ended = now
		}
		j.mu.Unlock()
		due = now.Add(abandonGrace)
	}
	if w := r.wakeAt.Load(); w == 0 || due.UnixNano() < w {
		r.mu.Lock()
		r.arm(due)
		r.mu.Unlock()
	}
	return ctx
}

// unwatch takes the attempt back from the watchdog when its agent
// returned, and reports false when the watchdog had abandoned it.
func (j *job) unwatch() bool {
	j.mu.Lock()
	abandoned := j.abandoned
	j.inflight = false
	j.mu.Unlock()
	if abandoned {
		return false
	}
	j.ctx.finish(endAttempt)
	return true
}

// enlist adds j to the jobs the watchdog looks after. The caller holds mu.
func (r *run) enlist(j *job) {
	j.slot = len(r.jobs)
	r.jobs = append(r.jobs, j)
}

// dismiss removes j from the jobs the watchdog looks after. The caller
// holds mu.
func (r *run) dismiss(j *job) {
	last := r.jobs[len(r.jobs)-1]
	r.jobs[j.slot], last.slot = last, j.slot
	r.jobs = r.jobs[:len(r.jobs)-1]
}

// arm makes the timer fire at t at the latest. The caller holds mu.
func (r *run) arm(t time.Time) {
	if !r.wake.IsZero() && !t.Before(r.wake) || r.over {
		return
	}
	r.wake = t
	r.wakeAt.Store(t.UnixNano())
	d := time.Until(t)
	if r.timer == nil {
		r.timer = time.AfterFunc(d, r.patrol)
		return
	}
	r.timer.Reset(d)
}

// patrol ends the attempts that are due, abandons those whose agents
// outstayed the grace period, and sets the timer for what comes next.
func (r *run) patrol() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wake = time.Time{}
	r.wakeAt.Store(0)
	if r.over {
		return
	}
	now := time.Now()
	var next time.Time
	for k := 0; k < len(r.jobs); {
		j := r.jobs[k]
		due, abandon := j.check(now)
		if abandon {
			r.abandon(j)
			continue // the last job took place k
		}
		if !due.IsZero() && (next.IsZero() || due.Before(next)) {
			next = due
		}
		k++
	}
	if !next.IsZero() {
		r.arm(next)
	}
}

// check ends j's attempt if it is due at now and returns when it is next
// due, or reports that it outstayed its grace period.
func (j *job) check(now time.Time) (time.Time, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.inflight {
		return time.Time{}, false
	}
	if j.ended.IsZero() && !now.Before(j.deadline) {
		j.ended, j.timedOut = now, true
		j.ctx.finish(endDeadline)
	}
	if j.ended.IsZero() {
		return j.deadline, false
	}
	due := j.ended.Add(abandonGrace)
	if now.Before(due) {
		return due, false
	}
	j.abandoned, j.inflight = true, false
	return time.Time{}, true
}

// abandon leaves j's goroutine behind in its agent and carries on its task
// on a fresh goroutine with a job of its own, which takes the stuck
// worker's place. The caller holds mu.
func (r *run) abandon(j *job) {
	r.dismiss(j)
	r.detached = true
	next := &job{carry: j.carry, timedOut: j.timedOut, gen: j.gen, r: r}
	r.enlist(next)
	err := fmt.Errorf("%w within %s: %w", ErrAbandoned, abandonGrace, context.Cause(j.ctx))
	go r.resume(next, j.n, Reply{Err: err, TimedOut: j.timedOut})
}

// cancelled starts the grace period of every attempt in flight when the
// run's context ends.
func (r *run) cancelled() {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for _, j := range r.jobs {
		j.mu.Lock()
		if j.inflight && j.ended.IsZero() {
			j.ended = now
		}
		j.mu.Unlock()
	}
	r.arm(now.Add(abandonGrace))
}

// stopWatch stops the watchdog at the end of the run.
func (r *run) stopWatch() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.over = true
	if r.timer != nil {
		r.timer.Stop()
	}
}

// call runs the agent on this goroutine; a panic is the attempt's failure.
func call(ctx context.Context, a agent.Agent, req *agent.Request) (res agent.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = agent.Result{}, &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return a.Run(ctx, *req)
}
