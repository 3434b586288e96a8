package runner_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// probe is an agent shared by several registry workers that counts, for
// each worker, the attempts that run at once, and the most there were.
// Each attempt holds its place until target attempts run at once in all
// (or a while has passed), so that the peaks do not depend on how fast
// goroutines start; a scheduler that kept ready tasks waiting behind a
// capped one would never reach target.
type probe struct {
	target  int32
	fail    map[string]int // task id → its attempts that fail
	all     atomic.Int32
	mu      sync.Mutex
	now     map[string]int
	peak    map[string]int
	order   []string // task ids in the order their first attempts started
	reached chan struct{}
	once    sync.Once
}

func newProbe(target int) *probe {
	return &probe{target: int32(target), now: map[string]int{}, peak: map[string]int{}, reached: make(chan struct{})}
}

func (p *probe) Run(ctx context.Context, req agent.Request) (agent.Result, error) {
	p.mu.Lock()
	p.now[req.Agent]++
	p.peak[req.Agent] = max(p.peak[req.Agent], p.now[req.Agent])
	if req.Attempt == 1 {
		p.order = append(p.order, req.TaskID)
	}
	p.mu.Unlock()
	if p.all.Add(1) >= p.target {
		p.once.Do(func() { close(p.reached) })
	}
	_ = within(ctx, p.reached, 300*time.Millisecond)
	time.Sleep(time.Millisecond)
	p.all.Add(-1)
	p.mu.Lock()
	p.now[req.Agent]--
	p.mu.Unlock()
	if req.Attempt <= p.fail[req.TaskID] {
		return agent.Result{}, errBoom
	}
	return agent.Result{Output: "ok"}, nil
}

func (p *probe) peaks() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

func (p *probe) started() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.order
}

// limitRunner runs on a registry whose workers all run a, each with the
// max concurrency given.
func limitRunner(t *testing.T, a agent.Agent, caps map[string]int, opts ...runner.Option) *runner.Runner {
	t.Helper()
	reg := registry.New()
	for name, n := range caps {
		require.NoError(t, reg.Register(name, registry.Worker{Agent: a, MaxConcurrency: n}))
	}
	return runner.New(append([]runner.Option{runner.WithRegistry(reg), runner.WithBackoff(runner.Backoff{})}, opts...)...)
}

func TestWorkerMaxConcurrency(t *testing.T) {
	tests := []struct {
		name        string
		cap         int // of the worker "api"; "free" has none
		concurrency int
		api, free   int  // tasks of each, "api" ones first in the plan
		retry       bool // the first attempt of every api task fails, and is retried
		async       bool // with an AsyncJournal
		wantAPI     int  // the most api attempts at once
		wantFree    int  // the most free attempts at once
	}{
		{name: "one at a time", cap: 1, concurrency: 4, api: 6, free: 6, wantAPI: 1, wantFree: 3},
		{name: "two at a time", cap: 2, concurrency: 5, api: 8, free: 6, wantAPI: 2, wantFree: 3},
		{name: "retries hold the place", cap: 1, concurrency: 4, api: 4, free: 6, retry: true, wantAPI: 1, wantFree: 3},
		{name: "cap above concurrency", cap: 10, concurrency: 3, api: 6, free: 0, wantAPI: 3},
		{name: "every ready task capped", cap: 2, concurrency: 6, api: 7, free: 0, wantAPI: 2},
		{name: "async journal", cap: 1, concurrency: 4, api: 6, free: 6, async: true, wantAPI: 1, wantFree: 3},
	}
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/%s", s, tt.name), func(t *testing.T) {
				noLeaks(t)
				pr := newProbe(min(tt.concurrency, min(tt.cap, tt.api)+tt.free))
				pr.fail = map[string]int{}
				p := planOf()
				for k := range tt.api {
					id := fmt.Sprintf("api%d", k)
					p.Tasks = append(p.Tasks, task(id, "in", agentName("api"), onFailure(plan.PolicyRetry), retries(1)))
					if tt.retry {
						pr.fail[id] = 1
					}
				}
				for k := range tt.free {
					p.Tasks = append(p.Tasks, task(fmt.Sprintf("free%d", k), "in", agentName("free")))
				}
				opts := []runner.Option{runner.WithSchedule(s), runner.WithConcurrency(tt.concurrency)}
				j := newHeldJournal(false)
				if tt.async {
					opts = append(opts, runner.WithJournal(j))
				}
				rn := limitRunner(t, pr, map[string]int{"api": tt.cap, "free": 0}, opts...)
				res, err := rn.RunPlan(context.Background(), p)
				require.NoError(t, err)
				require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Err)
				for k := range tt.api {
					want := 1
					if tt.retry {
						want = 2
					}
					assert.Equal(t, want, res.Tasks[fmt.Sprintf("api%d", k)].Attempts)
				}
				peaks := pr.peaks()
				assert.Equal(t, tt.wantAPI, peaks["api"], "the most api attempts at once")
				assert.Equal(t, tt.wantFree, peaks["free"], "free tasks take the places capped ones leave")
				if tt.async {
					assert.Len(t, j.ids(), tt.api+tt.free)
				}
			})
		}
	}
}

// A capped worker's tasks wait in priority order, and uncapped tasks run
// past them.
func TestWorkerMaxConcurrencyOrder(t *testing.T) {
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(s.String(), func(t *testing.T) {
			noLeaks(t)
			pr := newProbe(1)
			p := planOf(
				task("a", "in", agentName("api")),
				task("b", "in", agentName("api"), func(t *plan.Task) { t.Priority = -1 }),
				task("c", "in", agentName("api"), func(t *plan.Task) { t.Priority = 5 }),
				task("d", "in", agentName("api")),
			)
			rn := limitRunner(t, pr, map[string]int{"api": 1}, runner.WithSchedule(s), runner.WithConcurrency(4))
			res, err := rn.RunPlan(context.Background(), p)
			require.NoError(t, err)
			require.Equal(t, runner.StatusCompleted, res.Status)
			assert.Equal(t, []string{"c", "a", "d", "b"}, pr.started())
			assert.Equal(t, 1, pr.peaks()["api"])
		})
	}
}

// A task that waits for a capped worker when the run halts never starts.
func TestWorkerMaxConcurrencyHalt(t *testing.T) {
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(s.String(), func(t *testing.T) {
			noLeaks(t)
			a := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
				if req.TaskID == "a" {
					return agent.Result{}, errBoom
				}
				return agent.Result{Output: "ok"}, nil
			})
			p := planOf(task("a", "in", agentName("api")), task("b", "in", agentName("api")))
			rn := limitRunner(t, a, map[string]int{"api": 1}, runner.WithSchedule(s))
			res, err := rn.RunPlan(context.Background(), p)
			require.NoError(t, err)
			assert.Equal(t, runner.StatusFailed, res.Status)
			assert.Equal(t, map[string]runner.TaskStatus{"a": runner.TaskFailed, "b": runner.TaskPending}, statuses(res))
		})
	}
}
