package runner_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// TestMain checks, after every test and example, that no goroutine a run
// started is still alive. Tests that use well-behaved agents also check it
// themselves with goleak.VerifyNone (through run and noLeaks).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// noLeaks checks at the end of the test that no goroutine outlived it.
func noLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// errBoom is the execution error the scripted agents fail with.
var errBoom = errors.New("boom")

// worker is the name of the agent every test plan uses unless it says
// otherwise.
const worker = "w"

// script is what a scripted agent does for one request.
type script func(ctx context.Context, req agent.Request) (any, error)

// recorder is an agent that counts its calls, keeps every request, and
// answers with a per-task script (or fallback, or "ok").
type recorder struct {
	calls    atomic.Int64
	mu       sync.Mutex
	reqs     []agent.Request
	scripts  map[string]script
	fallback script
}

func newRecorder() *recorder { return &recorder{scripts: make(map[string]script)} }

// on sets the script of one task.
func (r *recorder) on(taskID string, s script) *recorder {
	r.scripts[taskID] = s
	return r
}

func (r *recorder) Run(ctx context.Context, req agent.Request) (agent.Result, error) {
	r.calls.Add(1)
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	s := r.scripts[req.TaskID]
	r.mu.Unlock()
	if s == nil {
		s = r.fallback
	}
	if s == nil {
		return agent.Result{Output: "ok"}, nil
	}
	out, err := s(ctx, req)
	return agent.Result{Output: out}, err
}

// requests returns the requests of one task in the order they came.
func (r *recorder) requests(taskID string) []agent.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agent.Request
	for _, q := range r.reqs {
		if q.TaskID == taskID {
			out = append(out, q)
		}
	}
	return out
}

// count is the number of calls for one task.
func (r *recorder) count(taskID string) int { return len(r.requests(taskID)) }

// ran lists the tasks called at least once, sorted.
func (r *recorder) ran() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, q := range r.reqs {
		if !slices.Contains(ids, q.TaskID) {
			ids = append(ids, q.TaskID)
		}
	}
	slices.Sort(ids)
	return ids
}

// Scripts.

func output(v any) script {
	return func(context.Context, agent.Request) (any, error) { return v, nil }
}

func fails(err error) script {
	return func(context.Context, agent.Request) (any, error) { return nil, err }
}

// byAttempt answers attempt n with steps[n-1] (the last one repeats).
func byAttempt(steps ...script) script {
	return func(ctx context.Context, req agent.Request) (any, error) {
		return steps[min(req.Attempt, len(steps))-1](ctx, req)
	}
}

// hang blocks until ctx ends and returns its error, as a well-behaved agent
// does.
func hang(ctx context.Context, _ agent.Request) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// Plans.

type mod func(*plan.Task)

// task is plan.NewTask run by worker, changed by mods.
func task(id, input string, mods ...mod) plan.Task {
	t := plan.NewTask(id, input)
	t.Agent = worker
	for _, m := range mods {
		m(&t)
	}
	return t
}

func deps(ids ...string) mod      { return func(t *plan.Task) { t.DependsOn = ids } }
func nonCritical() mod            { return func(t *plan.Task) { t.Critical = false } }
func onFailure(p plan.Policy) mod { return func(t *plan.Task) { t.OnFailure = p } }
func onVerify(p plan.Policy) mod  { return func(t *plan.Task) { t.OnVerificationFailure = p } }
func retries(n int) mod           { return func(t *plan.Task) { t.MaxRetries = n } }
func verifies(src string) mod     { return func(t *plan.Task) { t.Verification = src } }
func gate() mod                   { return func(t *plan.Task) { t.Type = plan.TypeSynthesisGate } }
func review() mod                 { return func(t *plan.Task) { t.Type = plan.TypeHumanReview } }
func agentName(n string) mod      { return func(t *plan.Task) { t.Agent = n } }
func timeout(d time.Duration) mod { return func(t *plan.Task) { t.Timeout = d } }
func inputs(in map[string]plan.InputRef) mod {
	return func(t *plan.Task) { t.Inputs = in }
}
func params(p map[string]any) mod { return func(t *plan.Task) { t.Params = p } }

func planOf(tasks ...plan.Task) *plan.Plan { return &plan.Plan{Tasks: tasks} }

// run runs p on rec (as worker) with immediate retries and opts — each a
// runner.Option or a runner.RunOption — fails the test if Run returns an
// error, and checks for leaked goroutines.
func run(t *testing.T, p *plan.Plan, rec *recorder, opts ...any) *runner.Result {
	t.Helper()
	noLeaks(t)
	res, err := runWithErr(t, p, rec, opts...)
	require.NoError(t, err)
	require.NotNil(t, res)
	return res
}

func runWithErr(t *testing.T, p *plan.Plan, rec *recorder, opts ...any) (*runner.Result, error) {
	t.Helper()
	all := []runner.Option{runner.WithAgent(worker, rec), runner.WithBackoff(runner.Backoff{})}
	var per []runner.RunOption
	for _, o := range opts {
		switch o := o.(type) {
		case runner.Option:
			all = append(all, o)
		case runner.RunOption:
			per = append(per, o)
		default:
			t.Fatalf("run: %T is not an option", o)
		}
	}
	return runner.New(all...).RunPlan(context.Background(), p, per...)
}

// statuses maps every task to its status.
func statuses(res *runner.Result) map[string]runner.TaskStatus {
	out := make(map[string]runner.TaskStatus, len(res.Tasks))
	for id, t := range res.Tasks {
		out[id] = t.Status
	}
	return out
}

// events collects a run's events; safe for concurrent use.
type events struct {
	mu  sync.Mutex
	all []runner.Event
}

func (e *events) Observe(ev runner.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) list() []runner.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.all)
}

// of returns the events of one task.
func (e *events) of(taskID string) []runner.Event {
	var out []runner.Event
	for _, ev := range e.list() {
		if ev.TaskID == taskID {
			out = append(out, ev)
		}
	}
	return out
}

func kinds(evs []runner.Event) []runner.EventKind {
	out := make([]runner.EventKind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

// closeOnce returns a channel and a function that closes it once.
func closeOnce() (chan struct{}, func()) {
	ch := make(chan struct{})
	var once sync.Once
	return ch, func() { once.Do(func() { close(ch) }) }
}

// within waits for ch, failing the agent (not the test) after d.
func within(ctx context.Context, ch <-chan struct{}, d time.Duration) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return errors.New("timed out waiting for the test's signal")
	}
}
