package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/jsonv"
)

// job is a worker's task in hand: what it carries from one attempt to the
// next, and the attempt in flight, which it shares with the watchdog.
type job struct {
	carry
	mu        sync.Mutex // guards the fields below, shared with the watchdog
	inflight  bool       // an attempt is in flight
	n         int        // its number
	ctx       *attemptCtx
	deadline  time.Time
	ended     time.Time // when its context ended; zero while it runs
	timedOut  bool      // the watchdog ended it at its deadline
	abandoned bool      // the watchdog left it behind
	slot      int       // the job's place in run.jobs
	gen       int       // the group its worker belongs to: run.gen when it started
	r         *run
}

// The job of a worker is the Host of its task: the attempts run on the
// worker's goroutine under the watchdog, the judge under the task's
// timeout, and the waits before retries end with the run.
var _ Host = (*job)(nil)

// runTask runs task i on j. It reports false when its goroutine was left
// in an abandoned agent and must stop.
func (r *run) runTask(j *job, i int) (outcome, bool) {
	return r.core.runTask(j, &j.carry, i)
}

// Attempt runs the agent once, under the task's timeout, which the
// watchdog enforces; its reply is abandoned when the watchdog left it
// behind.
func (j *job) Attempt(req agent.Request, _ time.Duration) Reply {
	x, ok := j.r.attempt(j, req.Attempt, &req)
	if !ok {
		return Reply{abandoned: true}
	}
	x.TimedOut = x.Err != nil && j.timedOut
	return x
}

// Judge asks the runner's judge, bounded by timeout and by the run.
func (j *job) Judge(req JudgeRequest, timeout time.Duration) (Verdict, error) {
	ctx := j.r.ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return j.r.rubricJudge.Judge(ctx, req)
}

// Wait waits d unless the run is cancelled or halts first.
func (j *job) Wait(d time.Duration) WaitEnd { return j.r.wait(j.r.ctx, d) }

// Now reads the clock.
func (*job) Now() time.Time { return time.Now() }

// attempt runs the agent once, on this goroutine, under the task's
// timeout, which the watchdog enforces. A panic is the attempt's failure.
// It reports false when the watchdog abandoned the attempt.
func (r *run) attempt(j *job, n int, req *agent.Request) (Reply, bool) {
	st := &r.state[j.i]
	b := st.bind
	if b.worker != nil && len(b.worker.Preconditions) > 0 {
		if err := b.worker.Check(r.ctx, *req); err != nil {
			return Reply{Err: err}, true
		}
	}
	start := st.res.Started
	if n > 1 {
		start = time.Now()
	}
	ctx := r.watch(j, n, start.Add(b.timeout))
	res, err := call(r.attemptContext(ctx, j.i, n, start), b.agent, req)
	if !j.unwatch() {
		return Reply{}, false
	}
	if err != nil {
		return Reply{Usage: res.Usage, Err: err}, true
	}
	out, err := jsonv.Normalize(res.Output)
	if err != nil {
		// Not a failure of the agent's process, but of what it answered.
		err = fmt.Errorf("%w: %w", agent.ErrInvalidOutput, err)
	} else if b.worker != nil {
		err = b.worker.CheckOutput(out)
	}
	return Reply{Output: out, Usage: res.Usage, Err: err}, true
}

// wait waits d unless ctx ends or the run halts first.
func (r *run) wait(ctx context.Context, d time.Duration) WaitEnd {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return WaitCancelled
	case <-r.halting:
		return WaitHalted
	default:
	}
	if timeout == nil {
		return WaitDone
	}
	select {
	case <-timeout:
		return WaitDone
	case <-ctx.Done():
		return WaitCancelled
	case <-r.halting:
		return WaitHalted
	}
}
