package runner_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/runner"
)

// timeline records the start and end of agent calls in the order they
// happen.
type timeline struct {
	mu  sync.Mutex
	log []string
}

func (tl *timeline) add(s string) {
	tl.mu.Lock()
	tl.log = append(tl.log, s)
	tl.mu.Unlock()
}

func (tl *timeline) index(s string) int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return slices.Index(tl.log, s)
}

// wrap records start and end around s.
func (tl *timeline) wrap(s script) script {
	return func(ctx context.Context, req agent.Request) (any, error) {
		tl.add("start:" + req.TaskID)
		defer tl.add("end:" + req.TaskID)
		if s == nil {
			return "ok", nil
		}
		return s(ctx, req)
	}
}

func sleepFor(d time.Duration) script {
	return func(ctx context.Context, _ agent.Request) (any, error) {
		select {
		case <-time.After(d):
			return "ok", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// In Phased, a task of phase k+1 starts only after every task of phase k
// has settled, even one it does not depend on.
func TestPhasedWaitsForPhase(t *testing.T) {
	tl := &timeline{}
	rec := newRecorder()
	rec.fallback = tl.wrap(nil)
	rec.on("slow", tl.wrap(sleepFor(100*time.Millisecond)))
	p := planOf(
		task("slow", "in"),
		task("fast", "in"),
		task("fast2", "in", deps("fast")),
		task("fast3", "in", deps("fast2")),
		task("join", "in", deps("slow", "fast3")),
	)
	res := run(t, p, rec, runner.WithSchedule(runner.Phased))
	require.Equal(t, runner.StatusCompleted, res.Status)
	endSlow := tl.index("end:slow")
	require.GreaterOrEqual(t, endSlow, 0)
	assert.Greater(t, tl.index("start:fast2"), endSlow, "phase 1 waits for the slow task of phase 0")
	assert.Greater(t, tl.index("start:fast3"), tl.index("end:fast2"))
	assert.Greater(t, tl.index("start:join"), tl.index("end:fast3"))
	assert.False(t, res.Tasks["fast2"].Started.Before(res.Tasks["slow"].Started.Add(res.Tasks["slow"].Duration)),
		"timestamps agree: fast2 started after slow settled")
}

// In Eager, a task starts as soon as its own dependencies settle: the fast
// branch's next layers start while the slow first-layer task still runs.
// The slow task waits for that start (with a generous bound), so the test
// cannot pass by timing luck, and fails rather than hangs under Phased.
func TestEagerStartsEarly(t *testing.T) {
	tl := &timeline{}
	started, signal := closeOnce()
	rec := newRecorder()
	rec.fallback = tl.wrap(nil)
	rec.on("fast3", tl.wrap(func(context.Context, agent.Request) (any, error) { signal(); return "ok", nil }))
	rec.on("slow", tl.wrap(func(ctx context.Context, _ agent.Request) (any, error) {
		return "ok", within(ctx, started, 10*time.Second)
	}))
	p := planOf(
		task("slow", "in"),
		task("fast", "in"),
		task("fast2", "in", deps("fast")),
		task("fast3", "in", deps("fast2")),
		task("join", "in", deps("slow", "fast3")),
	)
	res := run(t, p, rec, runner.WithSchedule(runner.Eager))
	require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Err)
	assert.Less(t, tl.index("start:fast2"), tl.index("end:slow"))
	assert.Less(t, tl.index("start:fast3"), tl.index("end:slow"))
	assert.Greater(t, tl.index("start:join"), tl.index("end:slow"), "a task still waits for its own dependencies")
	assert.Greater(t, tl.index("start:join"), tl.index("end:fast3"))
}

// Running at most n agent calls at once; the default is 10.
func TestConcurrencyLimit(t *testing.T) {
	cases := []struct {
		limit int // 0: default
		want  int
	}{{1, 1}, {3, 3}, {0, runner.DefaultConcurrency}}
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/limit=%d", s, c.limit), func(t *testing.T) {
				var cur, peak atomic.Int32
				full, reached := closeOnce()
				rec := newRecorder()
				rec.fallback = func(ctx context.Context, _ agent.Request) (any, error) {
					n := cur.Add(1)
					defer cur.Add(-1)
					for {
						p := peak.Load()
						if n <= p || peak.CompareAndSwap(p, n) {
							break
						}
					}
					if int(n) >= c.want {
						reached()
					}
					// Hold the slot until the limit is reached once, so that
					// the peak does not depend on how fast goroutines start.
					_ = within(ctx, full, 2*time.Second)
					time.Sleep(time.Millisecond)
					return "ok", nil
				}
				// 3 × want independent tasks in the first layer and a second
				// layer fanning out again.
				var tasks []string
				p := planOf()
				for k := range 3 * c.want {
					id := fmt.Sprintf("a%d", k)
					tasks = append(tasks, id)
					p.Tasks = append(p.Tasks, task(id, "in"))
				}
				for k := range 2 * c.want {
					p.Tasks = append(p.Tasks, task(fmt.Sprintf("b%d", k), "in", deps(tasks[k%len(tasks)])))
				}
				opts := []any{runner.WithSchedule(s)}
				if c.limit > 0 {
					opts = append(opts, runner.WithConcurrency(c.limit))
				}
				res := run(t, p, rec, opts...)
				require.Equal(t, runner.StatusCompleted, res.Status)
				assert.Equal(t, int64(5*c.want), rec.calls.Load())
				assert.LessOrEqual(t, int(peak.Load()), c.want, "never more than the limit")
				assert.Equal(t, c.want, int(peak.Load()), "the limit is reached with enough ready tasks")
			})
		}
	}
}

// Phased and Eager give the same results.
func TestSchedulesAgree(t *testing.T) {
	p := planOf(
		task("a", "A"),
		task("b", "B {{results.a}}", deps("a")),
		task("c", "C {{results.a}}", deps("a")),
		task("d", "D {{results.b}} {{results.c}}", deps("b", "c")),
	)
	var outs []map[string]any
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		rec := newRecorder()
		rec.fallback = func(_ context.Context, req agent.Request) (any, error) { return "<" + req.Input + ">", nil }
		res := run(t, p, rec, runner.WithSchedule(s))
		require.Equal(t, runner.StatusCompleted, res.Status)
		outs = append(outs, res.Outputs())
	}
	assert.Equal(t, "<D <B <A>> <C <A>>>", outs[0]["d"])
	assert.Equal(t, outs[0], outs[1])
}

// One Runner may run several plans at once.
func TestRunnerReusedConcurrently(t *testing.T) {
	noLeaks(t)
	rec := newRecorder()
	rec.fallback = func(_ context.Context, req agent.Request) (any, error) { return req.RunID, nil }
	rn := runner.New(runner.WithAgent(worker, rec), runner.WithSchedule(runner.Eager))
	p := planOf(task("a", "in"), task("b", "in", deps("a")))
	var wg sync.WaitGroup
	results := make([]*runner.Result, 8)
	for k := range results {
		wg.Go(func() {
			res, err := rn.RunPlan(context.Background(), p)
			assert.NoError(t, err)
			results[k] = res
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for _, res := range results {
		require.Equal(t, runner.StatusCompleted, res.Status)
		assert.Equal(t, res.RunID, res.Tasks["b"].Output)
		ids[res.RunID] = true
	}
	assert.Len(t, ids, len(results), "each run has its own id")
	assert.Equal(t, int64(16), rec.calls.Load())
}
