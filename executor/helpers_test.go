package executor_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// TestMain checks, after every test and example, that no goroutine an
// execution started is still alive.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// errBoom is the error scripted agents fail with.
var errBoom = errors.New("boom")

// mustPlan parses a plan written as JSON.
func mustPlan(t testing.TB, src string) *plan.Plan {
	t.Helper()
	p, err := plan.Parse([]byte(src))
	require.NoError(t, err)
	return p
}

// behaviour is what the scripted agent does for one request of a task.
type behaviour func(ctx context.Context, req agent.Request) (agent.Result, error)

// output answers with v.
func output(v any) behaviour {
	return func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{Output: v}, nil }
}

// fail fails with err.
func fail(err error) behaviour {
	return func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, err }
}

// workers is the scripted agent every test plan runs on (its tasks name no
// agent, so they run on plan.DefaultAgent): per-task behaviours, "<id>-out"
// for a task without one, and a count of the calls of every task.
type workers struct {
	mu    sync.Mutex
	on    map[string]behaviour
	calls map[string]int
	reqs  map[string][]agent.Request
}

func newWorkers() *workers {
	return &workers{on: make(map[string]behaviour), calls: make(map[string]int), reqs: make(map[string][]agent.Request)}
}

// set gives task id its behaviour.
func (w *workers) set(id string, b behaviour) *workers {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.on[id] = b
	return w
}

func (w *workers) run(ctx context.Context, req agent.Request) (agent.Result, error) {
	w.mu.Lock()
	w.calls[req.TaskID]++
	w.reqs[req.TaskID] = append(w.reqs[req.TaskID], req)
	b := w.on[req.TaskID]
	w.mu.Unlock()
	if b == nil {
		return agent.Result{Output: req.TaskID + "-out"}, nil
	}
	return b(ctx, req)
}

// counts returns the number of calls of every task that was called.
func (w *workers) counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.calls)
}

// requests returns the requests task id received.
func (w *workers) requests(id string) []agent.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.reqs[id])
}

// options runs the executor on w, without backoff between retries, plus
// opts.
func (w *workers) options(opts ...executor.Option) []executor.Option {
	base := []executor.Option{executor.WithRunner(
		runner.WithAgent(plan.DefaultAgent, agent.Func(w.run)),
		runner.WithBackoff(runner.Backoff{}),
	)}
	return append(base, opts...)
}

// reply is one scripted answer of the fake replanner.
type reply struct {
	plan     *plan.Plan
	usage    llm.Usage
	err      error
	noResult bool // answer a nil *executor.Repair
}

// call is what the fake replanner received.
type call struct {
	mission   string
	completed map[string]any
	failure   executor.Failure
	history   []executor.Trial
}

// replanner is a scripted executor.Replanner: it answers with its replies
// in order and records what it received.
type replanner struct {
	mu      sync.Mutex
	replies []reply
	calls   []call
	hook    func(ctx context.Context) // called first, when set
}

var _ executor.Replanner = (*replanner)(nil)

var errExhausted = errors.New("replanner script exhausted")

func newReplanner(replies ...reply) *replanner { return &replanner{replies: replies} }

func (r *replanner) Repair(ctx context.Context, mission string, completed map[string]any, failure executor.Failure, history []executor.Trial) (*executor.Repair, error) {
	if r.hook != nil {
		r.hook(ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{mission: mission, completed: maps.Clone(completed), failure: failure, history: slices.Clone(history)})
	if err := ctx.Err(); err != nil {
		return &executor.Repair{}, err
	}
	if len(r.replies) == 0 {
		return &executor.Repair{}, errExhausted
	}
	rep := r.replies[0]
	r.replies = r.replies[1:]
	if rep.noResult {
		return nil, rep.err
	}
	return &executor.Repair{Plan: rep.plan, Usage: rep.usage}, rep.err
}

// received returns what the replanner received, call by call.
func (r *replanner) received() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// meter is a fake executor.Meter that reports fixed spending.
type meter struct {
	usage llm.Usage
	calls int
}

func (m *meter) Usage() llm.Usage { return m.usage }
func (m *meter) Calls() int       { return m.calls }

var _ executor.Meter = (*llm.Meter)(nil)
