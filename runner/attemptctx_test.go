package runner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/runner"
)

type ctxKey struct{}

// An attempt's context behaves as a context.WithCancelCause child of the
// run's with a deadline, however the agent looks at it: through Done, only
// through Err, after the attempt, or not at all until it ends.
func TestAttemptContext(t *testing.T) {
	poll := func(ctx context.Context) {
		for ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	}
	errShutdown := errors.New("shutting down")
	cases := []struct {
		name string
		// agent runs as the attempt; it returns when it is done.
		agent func(ctx context.Context, cancelRun context.CancelCauseFunc)
		// after checks the context the attempt had, once the run is over.
		after   func(t *testing.T, ctx context.Context)
		timeout time.Duration
	}{
		{
			name:    "deadline seen through Err",
			timeout: 20 * time.Millisecond,
			agent:   func(ctx context.Context, _ context.CancelCauseFunc) { poll(ctx) },
			after: func(t *testing.T, ctx context.Context) {
				assert.Equal(t, context.DeadlineExceeded, ctx.Err())
				assert.Equal(t, context.DeadlineExceeded, context.Cause(ctx))
				requireClosed(t, ctx.Done())
			},
		},
		{
			name:    "deadline seen through Done",
			timeout: 20 * time.Millisecond,
			agent:   func(ctx context.Context, _ context.CancelCauseFunc) { <-ctx.Done() },
			after: func(t *testing.T, ctx context.Context) {
				assert.Equal(t, context.DeadlineExceeded, ctx.Err())
				assert.Equal(t, context.DeadlineExceeded, context.Cause(ctx))
			},
		},
		{
			name:  "ended with the attempt, never looked at",
			agent: func(context.Context, context.CancelCauseFunc) {},
			after: func(t *testing.T, ctx context.Context) {
				assert.Equal(t, context.Canceled, ctx.Err())
				assert.Equal(t, context.Canceled, context.Cause(ctx))
				requireClosed(t, ctx.Done())
				assert.Equal(t, "run value", ctx.Value(ctxKey{}))
			},
		},
		{
			name: "ended with the attempt, watched",
			agent: func(ctx context.Context, _ context.CancelCauseFunc) {
				stopped := make(chan struct{})
				context.AfterFunc(ctx, func() { close(stopped) })
				go func() { <-stopped }()
				assert.Nil(t, ctx.Err())
			},
			after: func(t *testing.T, ctx context.Context) {
				assert.Equal(t, context.Canceled, ctx.Err())
				requireClosed(t, ctx.Done())
			},
		},
		{
			name: "the run's cause, seen through Err",
			agent: func(ctx context.Context, cancelRun context.CancelCauseFunc) {
				assert.Equal(t, "run value", ctx.Value(ctxKey{}))
				cancelRun(errShutdown)
				assert.Equal(t, context.Canceled, ctx.Err())
				assert.Equal(t, errShutdown, context.Cause(ctx))
			},
			after: func(t *testing.T, ctx context.Context) {
				assert.Equal(t, context.Canceled, ctx.Err())
				assert.Equal(t, errShutdown, context.Cause(ctx))
				requireClosed(t, ctx.Done())
			},
		},
		{
			name: "the run's cause, seen through Done",
			agent: func(ctx context.Context, cancelRun context.CancelCauseFunc) {
				done := ctx.Done()
				cancelRun(errShutdown)
				<-done
				assert.Equal(t, errShutdown, context.Cause(ctx))
			},
			after: func(t *testing.T, ctx context.Context) {
				assert.Equal(t, context.Canceled, ctx.Err())
				assert.Equal(t, errShutdown, context.Cause(ctx))
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			noLeaks(t)
			ctx, cancel := context.WithCancelCause(context.WithValue(context.Background(), ctxKey{}, "run value"))
			defer cancel(nil)
			var kept context.Context
			a := agent.Func(func(ctx context.Context, _ agent.Request) (agent.Result, error) {
				kept = ctx
				d, ok := ctx.Deadline()
				assert.True(t, ok)
				assert.WithinDuration(t, time.Now(), d, time.Hour)
				c.agent(ctx, cancel)
				return agent.Result{Output: "ok"}, nil
			})
			opts := []runner.Option{runner.WithAgent(worker, a)}
			if c.timeout > 0 {
				opts = append(opts, runner.WithTaskTimeout(c.timeout))
			}
			_, _ = runner.New(opts...).RunPlan(ctx, planOf(task("a", "in")))
			require.NotNil(t, kept)
			c.after(t, kept)
		})
	}
}

func requireClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatal("the channel is open")
	}
}
