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
// attempt costs one allocation and nothing in the run's context.
type attemptCtx struct {
	parent   context.Context
	deadline time.Time

	mu     sync.Mutex
	inner  context.Context // made on demand
	cancel context.CancelCauseFunc
	err    error // set when the attempt ended
	cause  error
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
	return c.made().Done()
}

func (c *attemptCtx) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return deadlineErr(c.parent)
}

func (c *attemptCtx) Value(key any) any {
	c.mu.Lock()
	lazy := c.inner == nil && c.err == nil
	c.mu.Unlock()
	if lazy {
		// While the attempt runs and nothing made its channel, it shares
		// the run's values and the run's cause.
		return c.parent.Value(key)
	}
	return c.made().Value(key)
}

// made returns the cancellable context behind c, making it on first use:
// a child of the run's context while the attempt runs, a context ended
// with the attempt's cause once it ended.
func (c *attemptCtx) made() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner == nil {
		if c.err == nil {
			c.inner, c.cancel = context.WithCancelCause(c.parent)
		} else {
			c.inner, c.cancel = context.WithCancelCause(context.WithoutCancel(c.parent))
			c.cancel(c.cause)
		}
	}
	return c.inner
}

// end ends the attempt for cause, unless it ended already; the first end,
// its own or the run's context's, is the one its Err and cause report.
func (c *attemptCtx) end(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	switch {
	case c.inner != nil:
		c.cancel(cause)
		c.err, c.cause = deadlineErr(c.inner), context.Cause(c.inner)
	case c.parent.Err() != nil:
		c.err, c.cause = deadlineErr(c.parent), context.Cause(c.parent)
	default:
		c.err, c.cause = context.Canceled, cause
		if cause == context.DeadlineExceeded {
			c.err = context.DeadlineExceeded
		}
	}
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
