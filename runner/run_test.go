package runner_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// A halt stops the retries of tasks still running: no new attempt starts,
// even one waiting out a long backoff, and the task ends as if its retries
// were spent.
func TestHaltStopsRetries(t *testing.T) {
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(s.String(), func(t *testing.T) {
			started := make(chan struct{})
			rec := newRecorder().
				on("flaky", func(context.Context, agent.Request) (any, error) {
					close(started)
					return nil, errBoom
				}).
				on("halts", func(ctx context.Context, _ agent.Request) (any, error) {
					<-started // fail only once flaky is waiting for its retry
					time.Sleep(10 * time.Millisecond)
					return nil, errors.New("fatal")
				})
			p := planOf(
				task("flaky", "x", onFailure(plan.PolicyRetry), retries(5), nonCritical()),
				task("halts", "y"),
			)
			begin := time.Now()
			res := run(t, p, rec, runner.WithSchedule(s), runner.WithBackoff(runner.Backoff{Initial: time.Hour}))
			assert.Less(t, time.Since(begin), 30*time.Second, "the hour-long backoff was cut short")
			assert.Equal(t, runner.StatusFailed, res.Status)
			assert.Equal(t, runner.TaskFailed, res.Tasks["halts"].Status)
			assert.Equal(t, runner.TaskSkipped, res.Tasks["flaky"].Status, "a non-critical task whose retries were cut ends skipped")
			assert.Equal(t, 1, res.Tasks["flaky"].Attempts)
			assert.ErrorIs(t, res.Tasks["flaky"].Err, errBoom)
			assert.Equal(t, 1, rec.count("flaky"))
		})
	}
}

// Preconditions judge the task's rendered input, not the retry feedback
// appended to it.
func TestPreconditionsSeeTheInputWithoutRetryText(t *testing.T) {
	noLeaks(t)
	var calls int
	w := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		calls++
		return agent.Result{Output: map[string]any{"n": calls}}, nil
	})
	reg := registry.New()
	require.NoError(t, reg.Register("short", registry.Worker{Agent: w, Preconditions: []string{"(< (count data/input) 20)"}}))
	tk := plan.NewTask("a", "count to two")
	tk.Agent = "short"
	tk.Verification = `(= (get data/result "n") 2)`
	res, err := runner.New(runner.WithRegistry(reg), runner.WithBackoff(runner.Backoff{})).RunPlan(context.Background(), &plan.Plan{Tasks: []plan.Task{tk}})
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Tasks["a"].Err)
	assert.Equal(t, 2, res.Tasks["a"].Attempts)
}

// TestCheckLimits: Check applies the default limits, and the limits it is
// given instead; Run refuses a DAG whose check found problems.
func TestCheckLimits(t *testing.T) {
	noLeaks(t)
	p := planOf(task("a", "x", retries(150), onFailure(plan.PolicyRetry)))
	rn := runner.New(runner.WithAgent(worker, newRecorder()))
	_, err := rn.RunPlan(context.Background(), p)
	var perr *plan.Error
	require.ErrorAs(t, err, &perr)
	assert.True(t, perr.Has(plan.CodeTooManyRetries))

	d, err := rn.Check(p)
	require.Error(t, err)
	require.NotNil(t, d, "the structure is sound: the DAG comes with the error")
	res, err := rn.Run(context.Background(), d)
	assert.Nil(t, res)
	require.ErrorAs(t, err, &perr, "a DAG whose check failed does not run")
	assert.True(t, perr.Has(plan.CodeTooManyRetries))

	d, err = rn.Check(p, plan.WithLimits(plan.Limits{MaxRetries: 200}))
	require.NoError(t, err)
	res, err = rn.Run(context.Background(), d)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
}

// Every predicate that does not compile is reported at once.
func TestEveryBadPredicateAtOnce(t *testing.T) {
	noLeaks(t)
	rec := newRecorder()
	p := planOf(task("a", "x", verifies("(= 1")), task("b", "y", verifies("true")), task("c", "z", verifies("(frob)")))
	res, err := runner.New(runner.WithAgent(worker, rec)).RunPlan(context.Background(), p)
	require.Error(t, err)
	assert.Nil(t, res)
	assert.ErrorIs(t, err, plan.ErrInvalid)
	assert.Contains(t, err.Error(), "task a: verification:")
	assert.Contains(t, err.Error(), "task c: verification:")
	assert.NotContains(t, err.Error(), "task b")
	assert.Zero(t, rec.calls.Load())
}

// Structs nested in maps and slices are normalized too, so that paths
// reach into them.
func TestNestedStructOutputsAreNormalized(t *testing.T) {
	type item struct {
		Title string `json:"title"`
	}
	rec := newRecorder().on("a", output(map[string]any{"items": []any{item{Title: "first"}}}))
	p := planOf(task("a", "x"), task("b", "{{results.a.items.0.title}}", deps("a")))
	res := run(t, p, rec)
	require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Tasks["b"].Err)
	assert.Equal(t, "first", rec.requests("b")[0].Input)
	assert.Equal(t, map[string]any{"items": []any{map[string]any{"title": "first"}}}, res.Tasks["a"].Output)
}

// The runner's phases are plan.DAG's: each task's events carry the phase
// DAG().Phases() puts it in, on random DAGs.
func TestPhasesMatchThePlanDAG(t *testing.T) {
	noLeaks(t)
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 20 {
		n := 5 + rng.IntN(40)
		p := &plan.Plan{}
		for i := range n {
			tk := task(fmt.Sprintf("t%d", i), "x")
			for range rng.IntN(4) {
				if i > 0 {
					if d := fmt.Sprintf("t%d", rng.IntN(i)); !slices.Contains(tk.DependsOn, d) {
						tk.DependsOn = append(tk.DependsOn, d)
					}
				}
			}
			p.Tasks = append(p.Tasks, tk)
		}
		// Shuffle so that dependencies do not always come first.
		rng.Shuffle(len(p.Tasks), func(i, j int) { p.Tasks[i], p.Tasks[j] = p.Tasks[j], p.Tasks[i] })
		d, err := p.DAG(plan.WithWorkers(worker))
		require.NoError(t, err)
		want := map[string]int{}
		for k, phase := range d.Phases() {
			for _, id := range phase {
				want[id] = k
			}
		}
		ev := &events{}
		res := run(t, p, newRecorder(), runner.WithObserver(ev))
		require.Equal(t, runner.StatusCompleted, res.Status)
		for _, e := range ev.list() {
			if e.Kind == runner.EventTaskStarted {
				assert.Equal(t, want[e.TaskID], e.Phase, "trial %d task %s", trial, e.TaskID)
			}
		}
	}
}

// An output that arrives while the run is being cancelled is kept, verified
// like any other.
func TestOutputArrivingDuringCancellationIsKept(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorder().on("a", func(context.Context, agent.Request) (any, error) {
		cancel()
		return map[string]any{"n": 1}, nil
	})
	p := planOf(task("a", "x", verifies(`(= (get data/result "n") 1)`)), task("b", "y", deps("a")))
	res, err := runner.New(runner.WithAgent(worker, rec)).RunPlan(ctx, p)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.Equal(t, runner.TaskDone, res.Tasks["a"].Status)
	assert.Equal(t, map[string]any{"n": 1}, res.Tasks["a"].Output)
	assert.Equal(t, runner.TaskPending, res.Tasks["b"].Status)
}

// A request whose input has templates carries the template and each
// template's value, so that an LLM agent can show the values as data.
func TestRequestCarriesTemplateAndRefs(t *testing.T) {
	rec := newRecorder().on("a", output(map[string]any{"items": []any{"x", "y"}}))
	p := planOf(
		task("a", "x"),
		task("s", "y", nonCritical(), onFailure(plan.PolicySkip)),
		task("b", "Use {{results.a.items.1}} and {{ results.s }}", deps("a", "s")),
		task("c", "no templates", deps("a")),
	)
	rec.on("s", fails(errBoom))
	res := run(t, p, rec)
	require.Equal(t, runner.StatusCompleted, res.Status)
	b := rec.requests("b")[0]
	assert.Equal(t, "Use y and ", b.Input)
	assert.Equal(t, "Use {{results.a.items.1}} and {{ results.s }}", b.Template)
	assert.Equal(t, map[string]any{"results.a.items.1": "y", "results.s": nil}, b.Refs)
	c := rec.requests("c")[0]
	assert.Empty(t, c.Template)
	assert.Nil(t, c.Refs)
}

// An attempt that outlives its timeout is a timeout, whatever error the
// agent returns once its context ends.
func TestTimeoutWhateverTheAgentSays(t *testing.T) {
	rec := newRecorder().on("a", func(ctx context.Context, _ agent.Request) (any, error) {
		<-ctx.Done()
		return nil, errors.New("connection closed")
	})
	res := run(t, planOf(task("a", "x", timeout(20*time.Millisecond), retries(0))), rec)
	err := res.Tasks["a"].Err
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "timed out after 20ms: context deadline exceeded: connection closed")
}

// Run ids, initial results and review decisions belong to one run: two
// runs of one Runner at once keep their own, in every result and request.
func TestConcurrentRunsKeepTheirOwnState(t *testing.T) {
	noLeaks(t)
	rec := newRecorder()
	rec.fallback = func(_ context.Context, req agent.Request) (any, error) {
		return req.RunID + ":" + req.Input, nil
	}
	p := planOf(
		task("seed", "in"),
		task("use", "from {{results.seed}}", deps("seed")),
		task("rev", "check", deps("use"), review()),
	)
	rn := runner.New(runner.WithAgent(worker, rec), runner.WithSchedule(runner.Eager))
	runs := []struct {
		id, seed string
		decision runner.Decision
	}{
		{"run-a", "A", runner.Approve()},
		{"run-b", "B", runner.Reject("no")},
	}
	results := make([]*runner.Result, len(runs))
	var wg sync.WaitGroup
	for k, c := range runs {
		wg.Go(func() {
			for range 20 {
				res, err := rn.RunPlan(context.Background(), p, runner.WithRunID(c.id),
					runner.WithInitialResults(map[string]any{"seed": c.seed}),
					runner.WithReviews(map[string]runner.Decision{"rev": c.decision}))
				assert.NoError(t, err)
				results[k] = res
			}
		})
	}
	wg.Wait()
	for k, c := range runs {
		res := results[k]
		require.NotNil(t, res)
		assert.Equal(t, c.id, res.RunID)
		assert.Equal(t, c.seed, res.Tasks["seed"].Output)
		assert.Equal(t, c.id+":from "+c.seed, res.Tasks["use"].Output)
		if c.decision.Approved {
			assert.Equal(t, runner.TaskDone, res.Tasks["rev"].Status)
		} else {
			assert.Equal(t, runner.TaskFailed, res.Tasks["rev"].Status)
			assert.Equal(t, runner.ClassRejected, res.Tasks["rev"].Class)
		}
	}
	reqs := rec.requests("use")
	require.Len(t, reqs, 40)
	for _, q := range reqs {
		seed := map[string]string{"run-a": "A", "run-b": "B"}[q.RunID]
		require.NotEmpty(t, seed, "request of an unknown run %q", q.RunID)
		assert.Equal(t, "from "+seed, q.Input)
		assert.Equal(t, q.RunID+"/use/1", q.IdempotencyKey)
	}
	assert.Zero(t, rec.count("seed"), "initial results are never run")
}
