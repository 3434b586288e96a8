package runner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// Cancelling the context ends the run promptly: status failed with the
// context's error, done results kept, running tasks failed, the rest
// pending.
func TestCancel(t *testing.T) {
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(s.String(), func(t *testing.T) {
			noLeaks(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			blocked, signal := closeOnce()
			rec := newRecorder().
				on("slow", func(ctx context.Context, _ agent.Request) (any, error) {
					signal()
					<-ctx.Done()
					return nil, ctx.Err()
				})
			// Cancel once "slow" runs and the last task that can finish
			// has: "quick" in Phased, "next" (which needs only quick) in Eager.
			target := "quick"
			if s == runner.Eager {
				target = "next"
			}
			settled, settle := closeOnce()
			ev := &events{}
			watch := runner.ObserverFunc(func(e runner.Event) {
				if e.Kind == runner.EventTaskFinished && e.TaskID == target {
					settle()
				}
			})
			p := planOf(
				task("quick", "in"),
				task("slow", "in"),
				task("next", "in", deps("quick")),
				task("after", "in", deps("slow")),
				task("last", "in", deps("after", "next")),
			)
			rn := runner.New(runner.WithAgent(worker, rec), runner.WithSchedule(s), runner.WithObserver(ev), runner.WithObserver(watch))
			cancelledAt := make(chan time.Time, 1)
			go func() {
				<-blocked
				<-settled
				cancelledAt <- time.Now()
				cancel()
			}()
			res, err := rn.RunPlan(ctx, p)
			returned := time.Now()
			cancelled := <-cancelledAt
			require.Error(t, err)
			assert.ErrorIs(t, err, context.Canceled)
			require.NotNil(t, res)
			assert.Less(t, returned.Sub(cancelled), time.Second, "Run returns promptly")
			assert.Equal(t, runner.StatusFailed, res.Status)
			assert.ErrorIs(t, res.Err, context.Canceled)

			assert.Equal(t, runner.TaskDone, res.Tasks["quick"].Status)
			assert.Equal(t, "ok", res.Tasks["quick"].Output)
			assert.Equal(t, runner.TaskFailed, res.Tasks["slow"].Status)
			assert.ErrorIs(t, res.Tasks["slow"].Err, context.Canceled)
			assert.Equal(t, runner.TaskPending, res.Tasks["after"].Status)
			assert.Equal(t, runner.TaskPending, res.Tasks["last"].Status)
			assert.Zero(t, rec.count("after"))
			if s == runner.Phased {
				assert.Equal(t, runner.TaskPending, res.Tasks["next"].Status, "phase 1 never started")
			}
			if s == runner.Eager {
				assert.Equal(t, runner.TaskDone, res.Tasks["next"].Status, "Eager ran what it could")
			}

			last := ev.list()[len(ev.list())-1]
			assert.Equal(t, runner.EventRunFinished, last.Kind)
			assert.Equal(t, runner.StatusFailed, last.Status)
			assert.ErrorIs(t, last.Err, context.Canceled)
		})
	}
}

// A run whose context is already done runs nothing.
func TestCancelBeforeStart(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := newRecorder()
	res, err := runner.New(runner.WithAgent(worker, rec)).RunPlan(ctx, planOf(task("a", "in"), task("b", "in", deps("a"))))
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.Equal(t, map[string]runner.TaskStatus{"a": runner.TaskPending, "b": runner.TaskPending}, statuses(res))
	assert.Zero(t, rec.calls.Load())
}

// The context's cause is kept, and a deadline counts as a cancellation.
func TestCancelCauseAndDeadline(t *testing.T) {
	t.Run("cause", func(t *testing.T) {
		noLeaks(t)
		errShutdown := errors.New("shutting down")
		ctx, cancel := context.WithCancelCause(context.Background())
		rec := newRecorder().on("a", func(ctx context.Context, _ agent.Request) (any, error) {
			cancel(errShutdown)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		res, err := runner.New(runner.WithAgent(worker, rec)).RunPlan(ctx, planOf(task("a", "in")))
		assert.ErrorIs(t, err, errShutdown)
		require.NotNil(t, res)
		assert.ErrorIs(t, res.Err, errShutdown)
		assert.Equal(t, runner.StatusFailed, res.Status)
	})
	t.Run("deadline", func(t *testing.T) {
		noLeaks(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		rec := newRecorder().on("a", hang)
		res, err := runner.New(runner.WithAgent(worker, rec)).RunPlan(ctx, planOf(task("a", "in", onFailure(plan.PolicyRetry))))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotNil(t, res)
		assert.Equal(t, runner.StatusFailed, res.Status)
		assert.Equal(t, 1, rec.count("a"), "no retry once the run's context is done")
		assert.Equal(t, runner.TaskFailed, res.Tasks["a"].Status)
	})
}

// Cancelling during a retry's backoff ends the wait at once.
func TestCancelDuringBackoff(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder().on("a", func(context.Context, agent.Request) (any, error) {
		time.AfterFunc(20*time.Millisecond, cancel)
		return nil, errBoom
	})
	start := time.Now()
	res, err := runner.New(runner.WithAgent(worker, rec), runner.WithBackoff(runner.Backoff{Initial: time.Hour})).
		RunPlan(ctx, planOf(task("a", "in", onFailure(plan.PolicyRetry))))
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.Equal(t, runner.TaskFailed, res.Tasks["a"].Status)
	assert.Equal(t, 1, rec.count("a"))
}

// An agent that ignores cancellation is abandoned after the grace period:
// Run still returns.
func TestCancelIgnoringAgent(t *testing.T) {
	release, releaseAll := closeOnce()
	exited := make(chan struct{})
	stubborn := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		defer close(exited)
		<-release
		return agent.Result{Output: "late"}, nil
	})
	defer func() {
		releaseAll()
		<-exited
		noLeaks(t)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	res, err := runner.New(runner.WithAgent(worker, stubborn)).RunPlan(ctx, planOf(task("a", "in")))
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	assert.Equal(t, runner.TaskFailed, res.Tasks["a"].Status)
}
