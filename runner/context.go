package runner

import (
	"context"
	"runtime/debug"
	"sync"
	"time"
)

// ContextObserver is an [Observer] that the [Runner] also asks for the
// context a run, and each attempt of a task, runs with: a tracer puts its
// span there, so that the calls an agent makes — to a model, say — find
// the span of the attempt that made them. The Runner finds it among the
// observers of [WithObserver] by type assertion; another driver of a
// [Core] calls it or not.
type ContextObserver interface {
	Observer
	// Context returns the context of what e starts, ctx or a context
	// derived from it. It is called with the run's EventRunStarted and the
	// context given to [Runner.Run], on the goroutine that called Run,
	// before Observe sees the event; the run then runs with the context
	// it returns. And it is called with an EventTaskStarted (attempt 1)
	// or EventTaskRetried event of an attempt about to call its agent,
	// Time when the attempt starts, and the attempt's context, on the
	// goroutine that runs the attempt, which waits for it: Observe sees
	// the task's own event of the attempt before or after it. The agent
	// is given the context it returns. A panic in Context leaves ctx as
	// it was, and is returned by Run as an *[ObserverPanicError].
	Context(ctx context.Context, e Event) context.Context
}

// contexts are the context observers of a run.
type contexts struct {
	obs    []ContextObserver
	mu     sync.Mutex
	panics []error // per observer, the first panic in Context
}

func newContexts(observers []Observer) *contexts {
	var c *contexts
	for _, o := range observers {
		if co, ok := o.(ContextObserver); ok {
			if c == nil {
				c = &contexts{}
			}
			c.obs = append(c.obs, co)
		}
	}
	if c != nil {
		c.panics = make([]error, len(c.obs))
	}
	return c
}

// context is the context of what e starts, from ctx; on a nil contexts it
// is ctx, so that a run without context observers pays nothing for them.
func (c *contexts) context(ctx context.Context, e Event) context.Context {
	if c == nil {
		return ctx
	}
	for k, o := range c.obs {
		ctx = c.call(k, o, ctx, e)
	}
	return ctx
}

func (c *contexts) call(k int, o ContextObserver, ctx context.Context, e Event) (out context.Context) {
	defer func() {
		if v := recover(); v != nil {
			out = ctx
			c.mu.Lock()
			if c.panics[k] == nil {
				c.panics[k] = &ObserverPanicError{Event: e, Value: v, Stack: debug.Stack()}
			}
			c.mu.Unlock()
		}
	}()
	return o.Context(ctx, e)
}

// errs returns the first panic of each context observer that panicked.
func (c *contexts) errs() []error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []error
	for _, err := range c.panics {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// attemptContext is the context attempt n of task i, started at start,
// gives its agent: ctx, as the context observers make it.
func (r *run) attemptContext(ctx context.Context, i, n int, start time.Time) context.Context {
	if r.ctxs == nil {
		return ctx
	}
	st := &r.state[i]
	kind := EventTaskStarted
	if n > 1 {
		kind = EventTaskRetried
	}
	return r.ctxs.context(ctx, Event{Kind: kind, Time: start, RunID: r.id, TaskID: st.res.ID, Phase: r.d.Level(i), Attempt: n, Duration: start.Sub(st.res.Started)})
}
