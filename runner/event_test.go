package runner_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// eventPlan exercises every task event: retries with verification, an
// error retry, a skip, a review that waits.
func eventPlan() (*plan.Plan, *recorder) {
	rec := newRecorder().
		on("v", byAttempt(output("bad"), output("good"))).
		on("e", byAttempt(fails(errBoom), output("fine"))).
		on("s", fails(errBoom))
	p := planOf(
		task("root", "in"),
		task("v", "in", deps("root"), verifies(`(= data/result "good")`)),
		task("e", "in", deps("root"), onFailure(plan.PolicyRetry)),
		task("s", "in", deps("root"), onFailure(plan.PolicySkip)),
		task("join", "in", deps("v", "e", "s")),
		task("rev", "look", deps("join"), review()),
		task("after", "in", deps("rev")),
	)
	return p, rec
}

func TestEvents(t *testing.T) {
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(s.String(), func(t *testing.T) {
			p, rec := eventPlan()
			ev := &events{}
			res := run(t, p, rec, runner.WithSchedule(s), runner.WithObserver(ev), runner.WithRunID("ev-run"))
			require.Equal(t, runner.StatusWaiting, res.Status)
			all := ev.list()
			require.NotEmpty(t, all)

			// Envelope: run_started first, run_finished last, Seq 1..n.
			assert.Equal(t, runner.EventRunStarted, all[0].Kind)
			last := all[len(all)-1]
			assert.Equal(t, runner.EventRunFinished, last.Kind)
			assert.Equal(t, runner.StatusWaiting, last.Status)
			assert.NoError(t, last.Err)
			assert.Positive(t, last.Duration)
			for k, e := range all {
				assert.Equal(t, k+1, e.Seq, "Seq counts from 1 in delivery order")
				assert.Equal(t, "ev-run", e.RunID)
				assert.False(t, e.Time.IsZero())
				if k > 0 && k < len(all)-1 {
					assert.NotEqual(t, runner.EventRunStarted, e.Kind)
					assert.NotEqual(t, runner.EventRunFinished, e.Kind)
				}
			}

			// Phases: only in Phased, properly nested, each task event
			// inside its own phase.
			phase := -1
			var phases []int
			for _, e := range all {
				switch e.Kind {
				case runner.EventPhaseStarted:
					require.Equal(t, runner.Phased, s, "no phase events in Eager")
					require.Equal(t, -1, phase, "phases do not overlap")
					phase = e.Phase
					phases = append(phases, e.Phase)
				case runner.EventPhaseFinished:
					require.Equal(t, phase, e.Phase)
					phase = -1
				default:
					if s == runner.Phased && e.TaskID != "" {
						assert.Equal(t, phase, e.Phase, "%s of %s inside its phase", e.Kind, e.TaskID)
					}
				}
			}
			if s == runner.Phased {
				assert.Equal(t, []int{0, 1, 2, 3}, phases)
				assert.Equal(t, -1, phase, "the last phase finished")
			}

			// Per task: started (verified|retried)* final.
			shape := regexp.MustCompile(`^task_started( task_(verified|retried))* task_(finished|failed|skipped|waiting)$`)
			for _, id := range []string{"root", "v", "e", "s", "join", "rev"} {
				seq := kinds(ev.of(id))
				var words []string
				for _, k := range seq {
					words = append(words, string(k))
				}
				assert.Regexp(t, shape, strings.Join(words, " "), id)
			}
			assert.Empty(t, ev.of("after"), "a task left pending has no events")

			assert.Equal(t, []runner.EventKind{
				runner.EventTaskStarted, runner.EventTaskVerified, runner.EventTaskRetried, runner.EventTaskVerified, runner.EventTaskFinished,
			}, kinds(ev.of("v")))
			vs := ev.of("v")
			assert.False(t, vs[1].Passed)
			assert.Equal(t, 1, vs[1].Attempt)
			assert.Equal(t, 2, vs[2].Attempt)
			assert.Equal(t, `predicate returned false: (= data/result "good")`, vs[2].Diagnosis)
			assert.ErrorIs(t, vs[2].Err, runner.ErrVerification)
			assert.True(t, vs[3].Passed)
			assert.Equal(t, "good", vs[4].Output)
			assert.Equal(t, 2, vs[4].Attempt)

			es := ev.of("e")
			assert.Equal(t, []runner.EventKind{runner.EventTaskStarted, runner.EventTaskRetried, runner.EventTaskFinished}, kinds(es))
			assert.Equal(t, 2, es[1].Attempt)
			assert.Equal(t, "boom", es[1].Diagnosis)
			assert.ErrorIs(t, es[1].Err, errBoom)
			assert.Equal(t, "fine", es[2].Output)

			ss := ev.of("s")
			assert.Equal(t, runner.EventTaskSkipped, ss[len(ss)-1].Kind)
			assert.ErrorIs(t, ss[len(ss)-1].Err, errBoom)

			for _, e := range all {
				if e.Kind == runner.EventTaskRetried {
					assert.GreaterOrEqual(t, e.Attempt, 2)
					assert.NotEmpty(t, e.Diagnosis)
				}
			}

			// A dependent starts after its dependencies' final events.
			pos := func(id string, final bool) int {
				for k, e := range all {
					if e.TaskID != id {
						continue
					}
					if !final && e.Kind == runner.EventTaskStarted {
						return k
					}
					if final && isFinal(e.Kind) {
						return k
					}
				}
				t.Fatalf("no event for %s", id)
				return -1
			}
			for _, tk := range p.Tasks {
				if len(ev.of(tk.ID)) == 0 {
					continue
				}
				for _, d := range tk.DependsOn {
					assert.Greater(t, pos(tk.ID, false), pos(d, true), "%s starts after %s settles", tk.ID, d)
				}
			}
		})
	}
}

func isFinal(k runner.EventKind) bool {
	switch k {
	case runner.EventTaskFinished, runner.EventTaskFailed, runner.EventTaskSkipped, runner.EventTaskWaiting:
		return true
	}
	return false
}

// Every observer sees every event, in the same order.
func TestObserversSeeSameEvents(t *testing.T) {
	p, rec := eventPlan()
	a, b := &events{}, &events{}
	run(t, p, rec, runner.WithObserver(a), runner.WithObserver(b))
	assert.Equal(t, a.list(), b.list())
	assert.NotEmpty(t, a.list())
}

// A failed run's run_finished carries its status and error.
func TestRunFinishedEventOfFailedRun(t *testing.T) {
	ev := &events{}
	rec := newRecorder().on("a", fails(errBoom))
	res := run(t, planOf(task("a", "in")), rec, runner.WithObserver(ev))
	last := ev.list()[len(ev.list())-1]
	assert.Equal(t, runner.EventRunFinished, last.Kind)
	assert.Equal(t, runner.StatusFailed, last.Status)
	assert.ErrorIs(t, last.Err, errBoom)
	assert.Equal(t, res.Err, last.Err)
}

// A slow observer does not hold the scheduler back, yet Run returns only
// once it has seen run_finished.
func TestSlowObserver(t *testing.T) {
	const delay = 50 * time.Millisecond
	var seen atomic.Int32
	var sawFinish atomic.Bool
	slow := runner.ObserverFunc(func(e runner.Event) {
		time.Sleep(delay)
		seen.Add(1)
		if e.Kind == runner.EventRunFinished {
			sawFinish.Store(true)
		}
	})
	var tasks []plan.Task
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		tasks = append(tasks, task(id, "in"))
	}
	tasks = append(tasks, task("g", "in", deps("a", "b")), task("h", "in", deps("g")))
	ev := &events{}
	start := time.Now()
	res := run(t, planOf(tasks...), newRecorder(), runner.WithObserver(slow), runner.WithObserver(ev))
	elapsed := time.Since(start)
	require.Equal(t, runner.StatusCompleted, res.Status)
	n := len(ev.list())
	require.Greater(t, n, 20)
	assert.True(t, sawFinish.Load(), "Run returns after the observer saw run_finished")
	assert.Equal(t, int32(n), seen.Load())
	assert.GreaterOrEqual(t, elapsed, time.Duration(n)*delay)
	// The run itself, measured up to its last task, took a fraction of the
	// observer's time.
	assert.Less(t, res.Duration, time.Duration(n)*delay/4, "the scheduler did not wait for the observer")
}

// An observer that panics makes Run return an *ObserverPanicError beside an
// intact result; it and the other observers keep receiving events.
func TestObserverPanic(t *testing.T) {
	var after atomic.Int32
	bad := runner.ObserverFunc(func(e runner.Event) {
		if e.Kind == runner.EventTaskStarted {
			panic("observer bug")
		}
		after.Add(1)
	})
	good := &events{}
	rec := newRecorder()
	p := planOf(task("a", "in"), task("b", "in", deps("a")))
	noLeaks(t)
	res, err := runner.New(runner.WithAgent(worker, rec), runner.WithObserver(bad), runner.WithObserver(good)).RunPlan(context.Background(), p)
	require.Error(t, err)
	var ope *runner.ObserverPanicError
	require.ErrorAs(t, err, &ope)
	assert.Equal(t, "observer bug", ope.Value)
	assert.Equal(t, runner.EventTaskStarted, ope.Event.Kind)
	assert.Equal(t, "a", ope.Event.TaskID, "the first panic is the one returned")
	assert.NotEmpty(t, ope.Stack)
	assert.True(t, strings.HasPrefix(ope.Error(), "observer panicked on task_started event 3: observer bug\n"), ope.Error())
	assert.NotErrorIs(t, err, context.Canceled)

	require.NotNil(t, res)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.NoError(t, res.Err)
	assert.Equal(t, map[string]any{"a": "ok", "b": "ok"}, res.Outputs())
	assert.Equal(t, int32(len(good.list())-2), after.Load(), "the panicking observer saw every other event")
	assert.Equal(t, runner.EventRunFinished, good.list()[len(good.list())-1].Kind)
}

// Two observers that panic give two errors, joined.
func TestObserverPanicsJoined(t *testing.T) {
	mk := func(msg string) runner.Observer {
		return runner.ObserverFunc(func(e runner.Event) {
			if e.Kind == runner.EventRunFinished {
				panic(msg)
			}
		})
	}
	noLeaks(t)
	res, err := runner.New(runner.WithAgent(worker, newRecorder()), runner.WithObserver(mk("one")), runner.WithObserver(mk("two"))).
		RunPlan(context.Background(), planOf(task("a", "in")))
	require.NotNil(t, res)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	var joined interface{ Unwrap() []error }
	require.ErrorAs(t, err, &joined)
	errs := joined.Unwrap()
	require.Len(t, errs, 2)
	var values []any
	for _, e := range errs {
		var ope *runner.ObserverPanicError
		require.True(t, errors.As(e, &ope))
		values = append(values, ope.Value)
	}
	assert.ElementsMatch(t, []any{"one", "two"}, values)
}
