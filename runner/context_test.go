package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

type labelKey struct{}

// labeller is a ContextObserver that adds to a context's label what the
// event starts, and keeps the events it was asked about.
type labeller struct {
	events
	mu    sync.Mutex
	asked []runner.Event
	panic bool
}

func (l *labeller) Context(ctx context.Context, e runner.Event) context.Context {
	l.mu.Lock()
	l.asked = append(l.asked, e)
	l.mu.Unlock()
	if l.panic {
		panic("no context for you")
	}
	label, _ := ctx.Value(labelKey{}).(string)
	switch e.Kind {
	case runner.EventRunStarted:
		label += "run " + e.RunID
	default:
		label += " > " + e.TaskID + " #" + string(rune('0'+e.Attempt))
	}
	return context.WithValue(ctx, labelKey{}, label)
}

func (l *labeller) calls() []runner.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]runner.Event(nil), l.asked...)
}

// labels is an agent that fails its first attempt and answers the label
// its context holds.
func labels(ctx context.Context, req agent.Request) (any, error) {
	if req.Attempt == 1 {
		return nil, errBoom
	}
	label, _ := ctx.Value(labelKey{}).(string)
	return label, nil
}

func TestContextObserverGivesTheContexts(t *testing.T) {
	obs := &labeller{}
	p := planOf(task("a", "x", retries(1), onFailure(plan.PolicyRetry)), task("b", "y", deps("a"), retries(1), onFailure(plan.PolicyRetry)))
	res := run(t, p, newRecorder().on("a", labels).on("b", labels), runner.WithObserver(obs), runner.WithRunID("r1"))
	require.Equal(t, runner.StatusCompleted, res.Status)
	// The attempt's context is the run's as the observer made it, and
	// then the attempt's.
	assert.Equal(t, "run r1 > a #2", res.Tasks["a"].Output)
	assert.Equal(t, "run r1 > b #2", res.Tasks["b"].Output)

	var asked []string
	for _, e := range obs.calls() {
		asked = append(asked, string(e.Kind)+" "+e.TaskID)
		require.Equal(t, "r1", e.RunID)
		require.False(t, e.Time.IsZero(), "%s %s has no time", e.Kind, e.TaskID)
		if e.Kind != runner.EventRunStarted {
			assert.GreaterOrEqual(t, e.Duration, time.Duration(0))
		}
	}
	assert.Equal(t, []string{"run_started ", "task_started a", "task_retried a", "task_started b", "task_retried b"}, asked)
	// The observer is an observer too.
	assert.Equal(t, runner.EventRunStarted, obs.list()[0].Kind)
}

func TestContextObserverPanicLeavesTheContext(t *testing.T) {
	obs := &labeller{panic: true}
	p := planOf(task("a", "x", retries(1), onFailure(plan.PolicyRetry)))
	res, err := runWithErr(t, p, newRecorder().on("a", labels), runner.WithObserver(obs))
	require.NotNil(t, res)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, "", res.Tasks["a"].Output, "the agent got the context as it was")
	var panicked *runner.ObserverPanicError
	require.ErrorAs(t, err, &panicked)
	assert.Equal(t, runner.EventRunStarted, panicked.Event.Kind, "the first panic is returned")
	assert.Equal(t, "no context for you", panicked.Value)
}

func TestEventsSayWhenTheAttemptEnded(t *testing.T) {
	const work = 20 * time.Millisecond
	ev := &events{}
	slow := func(_ context.Context, req agent.Request) (any, error) {
		time.Sleep(work)
		if req.Attempt == 1 {
			return "bad", nil
		}
		return "good", nil
	}
	p := planOf(task("a", "x", verifies(`(= data/result "good")`), onVerify(plan.PolicyRetry), retries(1)))
	res := run(t, p, newRecorder().on("a", slow), runner.WithObserver(ev))
	require.Equal(t, runner.StatusCompleted, res.Status)

	evs := ev.of("a")
	require.Equal(t, []runner.EventKind{runner.EventTaskStarted, runner.EventTaskVerified, runner.EventTaskRetried, runner.EventTaskVerified, runner.EventTaskFinished}, kinds(evs))
	started, verified1, retried, verified2, finished := evs[0], evs[1], evs[2], evs[3], evs[4]
	assert.True(t, started.AttemptEnded.IsZero(), "nothing ended before the first attempt")
	// The first attempt ran for the agent's work, then its check began.
	assert.GreaterOrEqual(t, verified1.AttemptEnded.Sub(started.Time), work)
	assert.False(t, verified1.AttemptEnded.After(verified1.Time))
	assert.False(t, verified1.Passed)
	// The retry says when the attempt before ended: the wait began then.
	assert.Equal(t, verified1.AttemptEnded, retried.AttemptEnded)
	// The second attempt ended after it started, and its events say so.
	assert.GreaterOrEqual(t, verified2.AttemptEnded.Sub(retried.Time), work)
	assert.Equal(t, verified2.AttemptEnded, finished.AttemptEnded)
	assert.False(t, finished.AttemptEnded.After(finished.Time))
}

func TestEventsOfTasksWithoutAttemptsHaveNoAttemptEnd(t *testing.T) {
	ev := &events{}
	p := planOf(task("rev", "check it", review()))
	res := run(t, p, newRecorder(), runner.WithObserver(ev))
	require.Equal(t, runner.StatusWaiting, res.Status)
	for _, e := range ev.of("rev") {
		assert.True(t, e.AttemptEnded.IsZero(), "%s", e.Kind)
	}
}
