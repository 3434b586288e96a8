package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

func TestRegistryWorker(t *testing.T) {
	reg := registry.New()
	fetch := newRecorder().on("f", output(map[string]any{"url": "http://x", "body": "B"}))
	strict := newRecorder()
	require.NoError(t, reg.Register("fetch", registry.Worker{Agent: fetch, Outputs: []string{"url", "body"}}))
	require.NoError(t, reg.Register("strict", registry.Worker{
		Agent:         strict,
		Preconditions: []string{`(if (starts-with? data/input "please") true "say please")`},
	}))
	p := planOf(
		task("f", "get it", agentName("fetch")),
		task("polite", "please use {{results.f.body}}", deps("f"), agentName("strict"), inputs(map[string]plan.InputRef{"u": {From: "f", Slot: "url"}})),
		task("rude", "use it", deps("f"), agentName("strict"), nonCritical(), onFailure(plan.PolicyRetry), retries(1)),
	)
	noLeaks(t)
	res, err := runner.New(runner.WithRegistry(reg), runner.WithBackoff(runner.Backoff{})).RunPlan(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, runner.TaskDone, res.Tasks["polite"].Status)
	assert.Equal(t, map[string]any{"u": "http://x"}, strict.requests("polite")[0].Inputs)

	rude := res.Tasks["rude"]
	assert.Equal(t, runner.TaskSkipped, rude.Status)
	assert.ErrorIs(t, rude.Err, registry.ErrPrecondition)
	var pe *registry.PreconditionError
	require.ErrorAs(t, rude.Err, &pe)
	assert.Equal(t, "say please", pe.Diagnosis)
	assert.Equal(t, 2, rude.Attempts, "a failed precondition is a failed attempt, retried by on_failure")
	assert.Zero(t, strict.count("rude"), "the worker does not run when a precondition fails")
}

// Plan validation knows the registry's declared outputs.
func TestRegistryUndeclaredSlot(t *testing.T) {
	reg := registry.New()
	rec := newRecorder()
	require.NoError(t, reg.Register("fetch", registry.Worker{Agent: rec, Outputs: []string{"url"}}))
	p := planOf(
		task("f", "in", agentName("fetch")),
		task("g", "in", deps("f"), agentName("fetch"), inputs(map[string]plan.InputRef{"b": {From: "f", Slot: "body"}})),
	)
	res, err := runner.New(runner.WithRegistry(reg)).RunPlan(context.Background(), p)
	assert.ErrorIs(t, err, plan.ErrInvalid)
	assert.Nil(t, res)
	assert.Zero(t, rec.calls.Load())
}

// WithAgent goes ahead of a registry worker of the same name.
func TestWithAgentAheadOfRegistry(t *testing.T) {
	reg := registry.New()
	fromReg := newRecorder()
	require.NoError(t, reg.Register(worker, registry.Worker{Agent: fromReg}))
	rec := newRecorder()
	res := run(t, planOf(task("a", "in")), rec, runner.WithRegistry(reg))
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, int64(1), rec.calls.Load())
	assert.Zero(t, fromReg.calls.Load())
}

// A plan-defined agent needs WithPlanAgents; without it Run fails before
// anything runs.
func TestPlanAgentWithoutFactory(t *testing.T) {
	noLeaks(t)
	rec := newRecorder()
	ev := &events{}
	p := planOf(task("a", "in"), task("b", "in", agentName("writer")))
	p.Agents = map[string]plan.Agent{"writer": {Prompt: "You write."}}
	res, err := runWithErr(t, p, rec, runner.WithObserver(ev))
	assert.ErrorIs(t, err, runner.ErrNoAgent)
	assert.Contains(t, err.Error(), `"writer"`)
	assert.Nil(t, res)
	assert.Zero(t, rec.calls.Load())
	assert.Empty(t, ev.list())

	// The default agent is the plan's too.
	res, err = runner.New().RunPlan(context.Background(), planOf(plan.NewTask("a", "in")))
	assert.ErrorIs(t, err, runner.ErrNoAgent)
	assert.Nil(t, res)
}

// WithPlanAgents builds each agent the plan names once, whatever the number
// of tasks that use it.
func TestPlanAgentsFactory(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	built := map[string]int{}
	defs := map[string]plan.Agent{}
	rec := newRecorder()
	rec.fallback = func(_ context.Context, req agent.Request) (any, error) { return req.Agent, nil }
	factory := func(name string, def plan.Agent) (agent.Agent, error) {
		mu.Lock()
		defer mu.Unlock()
		built[name]++
		defs[name] = def
		return rec, nil
	}
	p := planOf(
		task("a", "in", agentName("writer")),
		task("b", "in", agentName("writer")),
		task("c", "in", agentName("critic"), deps("a")),
		task("d", "in", agentName("writer"), deps("c")),
		plan.NewTask("e", "in"),
		task("r", "in", review(), agentName("editor")), // a review never runs its agent
	)
	p.Agents = map[string]plan.Agent{
		"writer": {Prompt: "You write.", Tools: []string{"search"}},
		"critic": {Prompt: "You criticise."},
		"editor": {Prompt: "You edit."},
	}
	res, err := runner.New(runner.WithPlanAgents(factory)).RunPlan(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusWaiting, res.Status)
	assert.Equal(t, map[string]int{"writer": 1, "critic": 1, plan.DefaultAgent: 1}, built)
	assert.Equal(t, plan.Agent{Prompt: "You write.", Tools: []string{"search"}}, defs["writer"])
	assert.Equal(t, plan.Agent{}, defs[plan.DefaultAgent])
	assert.Equal(t, "critic", res.Tasks["c"].Output)
	assert.Equal(t, int64(5), rec.calls.Load())
}

func TestPlanAgentsFactoryError(t *testing.T) {
	errNoKey := errors.New("no API key")
	p := planOf(plan.NewTask("a", "in"))
	res, err := runner.New(runner.WithPlanAgents(func(string, plan.Agent) (agent.Agent, error) { return nil, errNoKey })).
		RunPlan(context.Background(), p)
	assert.ErrorIs(t, err, runner.ErrNoAgent)
	assert.ErrorIs(t, err, errNoKey)
	assert.Nil(t, res)
}

// Each attempt runs under its timeout: the plan's, the worker's (which the
// plan may shorten but not stretch), else the runner's default.
func TestTimeouts(t *testing.T) {
	const short, long = 60 * time.Millisecond, time.Hour
	cases := []struct {
		name    string
		plan    time.Duration // task timeout in the plan
		worker  time.Duration // registry worker timeout; 0 means WithAgent
		dflt    time.Duration // WithTaskTimeout; 0 means the default
		applies string
	}{
		{"plan timeout", short, 0, long, "60ms"},
		{"runner default", 0, 0, short, "60ms"},
		{"worker timeout", 0, short, long, "60ms"},
		{"plan cannot stretch the worker's", long, short, long, "60ms"},
		{"plan shortens the worker's", short, long, long, "60ms"},
		{"plan shortens the worker's to a different value", 70 * time.Millisecond, long, long, "70ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			noLeaks(t)
			rec := newRecorder().on("a", hang)
			opts := []runner.Option{runner.WithBackoff(runner.Backoff{})}
			if c.worker > 0 {
				reg := registry.New()
				require.NoError(t, reg.Register("slow", registry.Worker{Agent: rec, Timeout: c.worker}))
				opts = append(opts, runner.WithRegistry(reg))
			} else {
				opts = append(opts, runner.WithAgent("slow", rec))
			}
			if c.dflt > 0 {
				opts = append(opts, runner.WithTaskTimeout(c.dflt))
			}
			p := planOf(task("a", "in", agentName("slow"), timeout(c.plan), onFailure(plan.PolicyRetry), retries(1)))
			start := time.Now()
			res, err := runner.New(opts...).RunPlan(context.Background(), p)
			require.NoError(t, err)
			assert.Less(t, time.Since(start), 10*time.Second)
			a := res.Tasks["a"]
			assert.Equal(t, runner.TaskFailed, a.Status)
			assert.Equal(t, 2, a.Attempts, "a timeout is an error, retried by on_failure")
			assert.ErrorIs(t, a.Err, context.DeadlineExceeded)
			assert.NotErrorIs(t, a.Err, runner.ErrAbandoned)
			assert.Contains(t, a.Err.Error(), "timed out after "+c.applies)
			retry := rec.requests("a")[1]
			assert.Equal(t, "in", retry.Input, "the input does not change on a retry")
			assert.Equal(t, "timed out after "+c.applies+": context deadline exceeded", retry.Diagnosis)
			assert.Equal(t, agent.FailureError, retry.Failure)
		})
	}
}

// An agent that ignores its context is abandoned after 500ms; the task
// fails with ErrAbandoned and the run goes on.
func TestAbandonedAgent(t *testing.T) {
	release, releaseAll := closeOnce()
	var exited sync.WaitGroup
	var running atomic.Int32
	stubborn := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		exited.Add(1)
		defer exited.Done()
		running.Add(1)
		defer running.Add(-1)
		<-release // ignores ctx
		return agent.Result{Output: "too late"}, nil
	})
	defer func() {
		releaseAll()
		exited.Wait()
		goleak.VerifyNone(t)
	}()
	rec := newRecorder()
	p := planOf(
		task("stuck", "in", agentName("stubborn"), timeout(20*time.Millisecond), nonCritical()),
		task("next", "in", deps("stuck")),
	)
	start := time.Now()
	res, err := runner.New(runner.WithAgent("stubborn", stubborn), runner.WithAgent(worker, rec)).RunPlan(context.Background(), p)
	elapsed := time.Since(start)
	require.NoError(t, err)
	stuck := res.Tasks["stuck"]
	assert.Equal(t, runner.TaskSkipped, stuck.Status)
	assert.ErrorIs(t, stuck.Err, runner.ErrAbandoned)
	assert.ErrorIs(t, stuck.Err, context.DeadlineExceeded)
	assert.Contains(t, stuck.Err.Error(), "timed out after 20ms")
	assert.Nil(t, stuck.Output)
	assert.GreaterOrEqual(t, elapsed, 500*time.Millisecond, "the grace period is 500ms")
	assert.Less(t, elapsed, 5*time.Second)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, runner.TaskDone, res.Tasks["next"].Status)
	assert.Equal(t, int32(1), running.Load(), "the abandoned agent is still running when Run returns")
}

// An agent that returns soon after its deadline, within the grace period,
// is not abandoned: the timeout is its failure.
func TestAgentReturnsLateWithinGrace(t *testing.T) {
	noLeaks(t)
	late := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond)
		return agent.Result{}, errors.New("gave up")
	})
	p := planOf(task("a", "in", agentName("late"), timeout(10*time.Millisecond)))
	res, err := runner.New(runner.WithAgent("late", late)).RunPlan(context.Background(), p)
	require.NoError(t, err)
	a := res.Tasks["a"]
	assert.Equal(t, runner.TaskFailed, a.Status)
	assert.NotErrorIs(t, a.Err, runner.ErrAbandoned)
	assert.ErrorIs(t, a.Err, context.DeadlineExceeded)
	assert.Contains(t, a.Err.Error(), "timed out after 10ms: context deadline exceeded: gave up")
}

// A panicking agent fails its task, not the process.
func TestPanickingAgent(t *testing.T) {
	rec := newRecorder().on("p", func(context.Context, agent.Request) (any, error) { panic("kaboom") })
	p := planOf(
		task("p", "in", nonCritical(), onFailure(plan.PolicyRetry), retries(1)),
		task("q", "in"),
		task("after", "in", deps("p")),
	)
	res := run(t, p, rec)
	pr := res.Tasks["p"]
	assert.Equal(t, runner.TaskSkipped, pr.Status)
	assert.Equal(t, 2, pr.Attempts)
	var pe *runner.PanicError
	require.ErrorAs(t, pr.Err, &pe)
	assert.Equal(t, "kaboom", pe.Value)
	assert.NotEmpty(t, pe.Stack)
	assert.Contains(t, string(pe.Stack), "runner_test")
	assert.Contains(t, pr.Err.Error(), "agent panicked: kaboom")
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, runner.TaskDone, res.Tasks["q"].Status)
	assert.Equal(t, runner.TaskDone, res.Tasks["after"].Status)
}

// A panic in a critical task halts the run like any error.
func TestPanickingAgentHalts(t *testing.T) {
	rec := newRecorder().on("p", func(context.Context, agent.Request) (any, error) { panic(errBoom) })
	res := run(t, planOf(task("p", "in"), task("after", "in", deps("p"))), rec)
	assert.Equal(t, runner.StatusFailed, res.Status)
	var pe *runner.PanicError
	require.ErrorAs(t, res.Err, &pe)
	assert.Equal(t, errBoom, pe.Value)
	assert.Equal(t, runner.TaskPending, res.Tasks["after"].Status)
}

type article struct {
	Title string   `json:"title"`
	Words int      `json:"words"`
	Score float64  `json:"score"`
	Tags  []string `json:"tags"`
	Draft bool     `json:"-"`
}

// Go values are normalized to JSON-shaped data: maps, slices, json.Number.
func TestOutputNormalization(t *testing.T) {
	rec := newRecorder().
		on("s", output(article{Title: "Go", Words: 1200, Score: 0.5, Tags: []string{"x"}, Draft: true})).
		on("p", output(&article{Title: "Ptr"})).
		on("m", output(map[string]string{"k": "v"})).
		on("l", output([]int{1, 2}))
	p := planOf(
		task("s", "in", verifies(`(and (= (:words data/result) 1200) (= (:title data/result) "Go"))`)),
		task("p", "in"),
		task("m", "in"),
		task("l", "in"),
		task("use", "{{results.s}} {{results.s.words}} {{results.l.1}}", deps("s", "p", "m", "l")),
	)
	res := run(t, p, rec)
	require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Err)
	assert.Equal(t, map[string]any{
		"title": "Go", "words": json.Number("1200"), "score": json.Number("0.5"), "tags": []any{"x"},
	}, res.Tasks["s"].Output)
	assert.Equal(t, map[string]any{"title": "Ptr", "words": json.Number("0"), "score": json.Number("0"), "tags": nil}, res.Tasks["p"].Output)
	assert.Equal(t, map[string]any{"k": "v"}, res.Tasks["m"].Output)
	assert.Equal(t, []any{json.Number("1"), json.Number("2")}, res.Tasks["l"].Output)
	req := rec.requests("use")[0]
	assert.Equal(t, `{"score":0.5,"tags":["x"],"title":"Go","words":1200} 1200 2`, req.Input)
	assert.Equal(t, res.Tasks["s"].Output, req.Depends["s"])
}

// An output that cannot be made JSON-shaped fails the attempt.
func TestOutputNotJSON(t *testing.T) {
	rec := newRecorder().on("a", output(make(chan int)))
	res := run(t, planOf(task("a", "in", nonCritical())), rec)
	assert.Equal(t, runner.TaskSkipped, res.Tasks["a"].Status)
	assert.ErrorContains(t, res.Tasks["a"].Err, "not JSON-shaped")
}

// Usage adds up over attempts and tasks.
func TestUsage(t *testing.T) {
	var n atomic.Int32
	a := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		n.Add(1)
		u := agent.Usage{PromptTokens: 10, CompletionTokens: 1}
		if req.TaskID == "r" && req.Attempt == 1 {
			return agent.Result{Usage: u}, errBoom
		}
		return agent.Result{Output: "ok", Usage: u}, nil
	})
	ev := &events{}
	p := planOf(task("r", "in", onFailure(plan.PolicyRetry)), task("s", "in"))
	noLeaks(t)
	res, err := runner.New(runner.WithAgent(worker, a), runner.WithBackoff(runner.Backoff{}), runner.WithObserver(ev)).RunPlan(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, agent.Usage{PromptTokens: 20, CompletionTokens: 2}, res.Tasks["r"].Usage)
	assert.Equal(t, agent.Usage{PromptTokens: 10, CompletionTokens: 1}, res.Tasks["s"].Usage)
	assert.Equal(t, agent.Usage{PromptTokens: 30, CompletionTokens: 3}, res.Usage)
	last := ev.list()[len(ev.list())-1]
	assert.Equal(t, res.Usage, last.Usage)
	assert.Equal(t, int32(3), n.Load())
}

func TestInvalidOptions(t *testing.T) {
	p := planOf(task("a", "in"))
	for name, opt := range map[string]runner.Option{
		"concurrency 0":  runner.WithConcurrency(0),
		"concurrency -1": runner.WithConcurrency(-1),
		"timeout 0":      runner.WithTaskTimeout(0),
		"timeout -1s":    runner.WithTaskTimeout(-time.Second),
	} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder()
			res, err := runWithErr(t, p, rec, opt)
			assert.ErrorIs(t, err, runner.ErrInvalidOption)
			assert.Nil(t, res)
			assert.Zero(t, rec.calls.Load())
		})
	}
}

func TestInvalidPlan(t *testing.T) {
	rec := newRecorder()
	for name, p := range map[string]*plan.Plan{
		"empty":         planOf(),
		"cycle":         planOf(task("a", "in", deps("b")), task("b", "in", deps("a"))),
		"unknown agent": planOf(task("a", "in", agentName("ghost"))),
		"not upstream":  planOf(task("a", "in"), task("b", "{{results.a}}")),
	} {
		t.Run(name, func(t *testing.T) {
			res, err := runWithErr(t, p, rec)
			assert.ErrorIs(t, err, plan.ErrInvalid)
			assert.Nil(t, res)
		})
	}
	assert.Zero(t, rec.calls.Load())
}

func TestParseSchedule(t *testing.T) {
	for in, want := range map[string]runner.Schedule{"phased": runner.Phased, "eager": runner.Eager, " Eager ": runner.Eager, "PHASED": runner.Phased} {
		got, err := runner.ParseSchedule(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := runner.ParseSchedule("fast")
	assert.ErrorIs(t, err, runner.ErrInvalidOption)
	assert.Equal(t, "phased", runner.Phased.String())
	assert.Equal(t, "eager", runner.Eager.String())
}
