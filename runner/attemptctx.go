package runner

import (
	"context"
	"sync"
	"time"
)

// attemptCtx is an attempt's context. It ends when the attempt does, when
// the run's context does, and at its deadline, which the watchdog enforces;
// from then Err is context.DeadlineExceeded, as a context.WithDeadline's
// would be, and Deadline reports it.
//
// Most agents never look at their context's channel, so the cancellable
// context behind Done is made only when one asks for it (or for a value
// once the attempt ended, which is how context.Cause asks): until then an
// attempt costs one small allocation and nothing in the run's context.
type attemptCtx struct {
	parent   context.Context
	deadline time.Time
	mu       sync.Mutex
	end      attemptEnd // guarded by mu
	made     *madeCtx   // guarded by mu; nil until asked for
}

// attemptEnd is how an attempt's context ended.
type attemptEnd int32

const (
	endNone     attemptEnd = iota
	endAttempt             // the attempt returned
	endDeadline            // the watchdog ended it at its deadline
	endParent              // the run's context ended first
)

// madeCtx is the cancellable context behind an attemptCtx.
type madeCtx struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newAttemptCtx(parent context.Context, deadline time.Time) *attemptCtx {
	return &attemptCtx{parent: parent, deadline: deadline}
}

func (c *attemptCtx) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *attemptCtx) Done() <-chan struct{} {
	return c.ctx().Done()
}

func (c *attemptCtx) Err() error {
	c.mu.Lock()
	end := c.end
	c.mu.Unlock()
	switch end {
	case endAttempt:
		return context.Canceled
	case endDeadline:
		return context.DeadlineExceeded
	}
	return deadlineErr(c.parent)
}

func (c *attemptCtx) Value(key any) any {
	c.mu.Lock()
	lazy := c.made == nil && c.end == endNone
	c.mu.Unlock()
	if lazy {
		// While the attempt runs and nothing made its channel, it shares
		// the run's values and the run's cause.
		return c.parent.Value(key)
	}
	return c.ctx().Value(key)
}

// ctx returns the cancellable context behind c, making it on first use: a
// child of the run's context while the attempt runs, a context ended with
// the attempt's cause once it ended.
func (c *attemptCtx) ctx() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.made == nil {
		m := &madeCtx{}
		switch c.end {
		case endNone, endParent:
			m.ctx, m.cancel = context.WithCancelCause(c.parent)
		default:
			m.ctx, m.cancel = context.WithCancelCause(context.WithoutCancel(c.parent))
			m.cancel(c.end.cause())
		}
		c.made = m
	}
	return c.made.ctx
}

// finish ends the attempt, at its deadline or when it returned, unless it
// ended already: the first end, its own or the run's context's, is the one
// its Err and cause report.
func (c *attemptCtx) finish(end attemptEnd) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.end != endNone {
		return
	}
	switch {
	case c.made != nil:
		c.made.cancel(end.cause())
		if context.Cause(c.made.ctx) != end.cause() {
			end = endParent
		}
	case c.parent.Err() != nil:
		end = endParent
	}
	c.end = end
}

// cause is the cause an attempt's context reports when it ended so.
func (e attemptEnd) cause() error {
	if e == endDeadline {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// deadlineErr is ctx's error, context.DeadlineExceeded when that is its
// cause.
func deadlineErr(ctx context.Context) error {
	err := ctx.Err()
	if err != nil && context.Cause(ctx) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}
