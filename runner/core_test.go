package runner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/verify"
)

// coreHost runs a Core's attempts on the calling goroutine, as a workflow's
// activity would: the agent under the timeout, its output normalised. Its
// waits end at once.
type coreHost struct {
	agents   map[string]agent.Agent
	judge    runner.Judge
	inFlight map[string]int // attempts under way, by agent
	most     map[string]int // the most at once, by agent
}

func (h *coreHost) Attempt(req agent.Request, timeout time.Duration) runner.Reply {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := h.agents[req.Agent].Run(ctx, req)
	if err != nil {
		return runner.Reply{Usage: res.Usage, Err: err, TimedOut: errors.Is(ctx.Err(), context.DeadlineExceeded)}
	}
	out, err := jsonv.Normalize(res.Output)
	if err != nil {
		err = fmt.Errorf("%w: %w", agent.ErrInvalidOutput, err)
	}
	return runner.Reply{Output: out, Usage: res.Usage, Err: err}
}

func (h *coreHost) Judge(req runner.JudgeRequest, timeout time.Duration) (runner.Verdict, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return h.judge.Judge(ctx, req)
}

func (*coreHost) Wait(time.Duration) runner.WaitEnd { return runner.WaitDone }
func (*coreHost) Now() time.Time                    { return time.Now() }

// drive runs c to its end on this goroutine: it takes every task that may
// start, then runs and settles them one by one, and opens the next phase
// when nothing runs.
func drive(c *runner.Core, h *coreHost, agentOf func(i int) string) *runner.Result {
	c.Advance(time.Now())
	for {
		var taken []int
		for i := c.Take(time.Now()); i >= 0; i = c.Take(time.Now()) {
			taken = append(taken, i)
			h.inFlight[agentOf(i)]++
			h.most[agentOf(i)] = max(h.most[agentOf(i)], h.inFlight[agentOf(i)])
		}
		for _, i := range taken {
			o := c.RunTask(h, i)
			h.inFlight[agentOf(i)]--
			c.Settle(o, time.Now())
		}
		if c.Running() == 0 && len(taken) == 0 && !c.Advance(time.Now()) {
			return c.Result(time.Now())
		}
	}
}

// projected is what must be alike in the results of two drivers.
type projected struct {
	Status    runner.TaskStatus
	Attempts  int
	Class     runner.Class
	Diagnosis string
	Output    any
	Err       string
}

func project(res *runner.Result) (runner.Status, string, map[string]projected) {
	tasks := make(map[string]projected, len(res.Tasks))
	for id, t := range res.Tasks {
		p := projected{Status: t.Status, Attempts: t.Attempts, Class: t.Class, Diagnosis: t.Diagnosis, Output: t.Output}
		if t.Err != nil {
			p.Err = t.Err.Error()
		}
		tasks[id] = p
	}
	msg := ""
	if res.Err != nil {
		msg = res.Err.Error()
	}
	return res.Status, msg, tasks
}

// coreCase is a plan run by the Runner and by a Core with the same agents.
type coreCase struct {
	name        string
	plan        *plan.Plan
	agents      func() map[string]agent.Agent // fresh agents for each run
	capped      int                           // the max_concurrency of worker "capped"; 0: no such worker
	concurrency int
	schedule    runner.Schedule
	judge       func() runner.Judge
	reviews     map[string]runner.Decision
}

func coreCases() []coreCase {
	one := func(a agent.Agent) func() map[string]agent.Agent {
		return func() map[string]agent.Agent { return map[string]agent.Agent{worker: a} }
	}
	return []coreCase{
		{
			name: "retry and verification",
			plan: planOf(
				task("a", "in", verifies(`(if (= data/result "good") true "not good yet")`), retries(2)),
				task("b", "use {{results.a}}", deps("a"))),
			agents: func() map[string]agent.Agent {
				return map[string]agent.Agent{worker: newRecorder().on("a", byAttempt(output("bad"), output("good")))}
			},
		},
		{
			name: "retries spent halt the run",
			plan: planOf(task("a", "in", retries(1), onFailure(plan.PolicyRetry)), task("b", "in"), task("c", "in", deps("a"))),
			agents: func() map[string]agent.Agent {
				return map[string]agent.Agent{worker: newRecorder().on("a", fails(errBoom))}
			},
		},
		{
			name: "gate failure",
			plan: planOf(
				task("a", "in"),
				task("g", "gate", deps("a"), gate(), onVerify(plan.PolicySkip)),
				task("d", "after", deps("g")), task("e", "after", deps("d"))),
			agents: func() map[string]agent.Agent {
				return map[string]agent.Agent{worker: newRecorder().on("g", output(""))}
			},
		},
		{
			name:   "review waiting",
			plan:   planOf(task("a", "in"), task("r", "ok? {{results.a}}", deps("a"), review()), task("c", "in", deps("r"))),
			agents: one(newRecorder()),
		},
		{
			name:    "review decided",
			plan:    planOf(task("a", "in"), task("r", "ok?", deps("a"), review()), task("c", "in", deps("r"))),
			agents:  one(newRecorder()),
			reviews: map[string]runner.Decision{"r": {Approved: true, Output: map[string]any{"ok": true}}},
		},
		{
			name: "judge",
			plan: planOf(task("a", "in", rubric("cites sources"), retries(1))),
			agents: func() map[string]agent.Agent {
				return map[string]agent.Agent{worker: newRecorder().on("a", output("some text"))}
			},
			judge: func() runner.Judge {
				return &scriptedJudge{verdicts: []runner.Verdict{{Pass: false, Reason: "no sources"}, {Pass: true, Reason: "cites"}}}
			},
		},
		{
			name: "worker cap",
			plan: planOf(
				task("a", "in", agentName("capped")), task("b", "in", agentName("capped")),
				task("c", "in", agentName("capped")), task("d", "in"), task("e", "in", deps("a", "b"))),
			agents: func() map[string]agent.Agent {
				return map[string]agent.Agent{worker: newRecorder(), "capped": newRecorder()}
			},
			capped:      1,
			concurrency: 3,
		},
		{
			name: "phased, a task skipped",
			plan: planOf(
				task("a", "in"), task("b", "in", nonCritical(), onFailure(plan.PolicySkip)),
				task("c", "{{results.a}}", deps("a", "b")), task("d", "in", deps("c"))),
			agents: func() map[string]agent.Agent {
				return map[string]agent.Agent{worker: newRecorder().on("b", fails(errBoom))}
			},
		},
		{
			name: "eager, a task skipped",
			plan: planOf(
				task("a", "in"), task("b", "in", nonCritical(), onFailure(plan.PolicySkip)),
				task("c", "{{results.a}}", deps("a", "b")), task("d", "in", deps("c"))),
			agents: func() map[string]agent.Agent {
				return map[string]agent.Agent{worker: newRecorder().on("b", fails(errBoom))}
			},
			schedule: runner.Eager,
		},
	}
}

// TestCoreMatchesRunner runs each plan with the Runner and with a Core
// driven on one goroutine, and checks that they end alike: every task's
// status, attempts, class, diagnosis, output and error, the run's status,
// and the events.
func TestCoreMatchesRunner(t *testing.T) {
	for _, tt := range coreCases() {
		t.Run(tt.name, func(t *testing.T) {
			conc := max(tt.concurrency, 1)

			// The Runner.
			agents := tt.agents()
			reg := registry.New()
			opts := []runner.Option{runner.WithRegistry(reg), runner.WithBackoff(runner.Backoff{}), runner.WithConcurrency(conc), runner.WithSchedule(tt.schedule)}
			for name, a := range agents {
				if name == "capped" {
					require.NoError(t, reg.Register(name, registry.Worker{Agent: a, MaxConcurrency: tt.capped}))
					continue
				}
				opts = append(opts, runner.WithAgent(name, a))
			}
			var ev events
			opts = append(opts, runner.WithObserver(&ev))
			if tt.judge != nil {
				opts = append(opts, runner.WithJudge(tt.judge()))
			}
			rn := runner.New(opts...)
			d, err := rn.Check(tt.plan)
			require.NoError(t, err)
			want, err := rn.Run(context.Background(), d, runner.WithRunID("r1"), runner.WithReviews(tt.reviews))
			require.NoError(t, err)

			// The Core.
			h := &coreHost{agents: tt.agents(), inFlight: map[string]int{}, most: map[string]int{}}
			cfg := runner.CoreConfig{RunID: "r1", Started: time.Now(), Schedule: tt.schedule, Concurrency: conc, Reviews: tt.reviews}
			if tt.capped > 0 {
				cfg.Workers = map[string]runner.WorkerSettings{"capped": {MaxConcurrency: tt.capped}}
			}
			if tt.judge != nil {
				h.judge, cfg.Judge = tt.judge(), true
			}
			var got []runner.Event
			cfg.Observe = func(e runner.Event) { got = append(got, e) }
			c, err := runner.NewCore(d, cfg)
			require.NoError(t, err)
			res := drive(c, h, func(i int) string { return tt.plan.Tasks[i].Agent })

			ws, we, wt := project(want)
			gs, ge, gt := project(res)
			assert.Equal(t, ws, gs, "run status")
			assert.Equal(t, we, ge, "run error")
			assert.Equal(t, wt, gt, "tasks")
			assert.Equal(t, want.PendingReviews, res.PendingReviews)
			if tt.capped > 0 {
				assert.Equal(t, tt.capped, h.most["capped"], "the worker's cap holds")
			}
			// The Runner's events, less the run's own, which are its
			// driver's.
			var runnerEvents []runner.Event
			for _, e := range ev.list() {
				if e.Kind != runner.EventRunStarted && e.Kind != runner.EventRunFinished {
					runnerEvents = append(runnerEvents, e)
				}
			}
			if conc == 1 {
				assert.Equal(t, kinds(runnerEvents), kinds(got), "events in order")
			}
			for _, pt := range tt.plan.Tasks {
				id := pt.ID
				assert.Equal(t, kinds(byTask(runnerEvents, id)), kinds(byTask(got, id)), "events of %s", id)
			}
		})
	}
}

func byTask(evs []runner.Event, id string) []runner.Event {
	var out []runner.Event
	for _, e := range evs {
		if e.TaskID == id {
			out = append(out, e)
		}
	}
	return out
}

func TestCoreTake(t *testing.T) {
	p := planOf(task("a", "in"), task("b", "in"), task("c", "in"))
	d, err := p.DAG(plan.WithWorkers(worker))
	require.NoError(t, err)
	c, err := runner.NewCore(d, runner.CoreConfig{RunID: "r", Concurrency: 2, Schedule: runner.Eager})
	require.NoError(t, err)
	now := time.Now()
	assert.False(t, c.Advance(now), "Eager has no phases")
	assert.Equal(t, 0, c.Take(now))
	assert.Equal(t, 1, c.Take(now))
	assert.Equal(t, -1, c.Take(now), "two run: the concurrency is spent")
	assert.Equal(t, 2, c.Running())
	h := &coreHost{agents: map[string]agent.Agent{worker: newRecorder()}}
	o := c.RunTask(h, 0)
	assert.Equal(t, 0, o.Task())
	assert.Equal(t, runner.TaskDone, o.Status())
	assert.Equal(t, runner.TaskRunning, c.Tasks()[0].Status, "not settled yet")
	c.Settle(o, now)
	assert.Equal(t, runner.TaskDone, c.Tasks()[0].Status)
	assert.Equal(t, 2, c.Take(now))
	assert.False(t, c.Halted())
}

func TestCoreCancelled(t *testing.T) {
	p := planOf(task("a", "in"), task("b", "in", deps("a")))
	d, err := p.DAG(plan.WithWorkers(worker))
	require.NoError(t, err)
	var cause error
	c, err := runner.NewCore(d, runner.CoreConfig{RunID: "r", Cancelled: func() error { return cause }})
	require.NoError(t, err)
	h := &coreHost{agents: map[string]agent.Agent{worker: newRecorder()}, inFlight: map[string]int{}, most: map[string]int{}}
	now := time.Now()
	require.True(t, c.Advance(now))
	i := c.Take(now)
	require.Equal(t, 0, i)
	c.Settle(c.RunTask(h, i), now)
	cause = errors.New("stop")
	assert.False(t, c.Advance(now), "a cancelled run opens no phase")
	res := c.Result(now)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.EqualError(t, res.Err, "run cancelled: stop")
	assert.Equal(t, runner.TaskDone, res.Tasks["a"].Status)
	assert.Equal(t, runner.TaskPending, res.Tasks["b"].Status)
}

func TestCoreHalt(t *testing.T) {
	p := planOf(task("a", "in"), task("b", "in"))
	d, err := p.DAG(plan.WithWorkers(worker))
	require.NoError(t, err)
	halts := 0
	c, err := runner.NewCore(d, runner.CoreConfig{RunID: "r", Concurrency: 1, OnHalt: func() { halts++ }})
	require.NoError(t, err)
	h := &coreHost{agents: map[string]agent.Agent{worker: newRecorder().on("a", fails(errBoom))}}
	now := time.Now()
	require.True(t, c.Advance(now))
	c.Settle(c.RunTask(h, c.Take(now)), now)
	assert.True(t, c.Halted())
	assert.Equal(t, 1, halts)
	assert.Equal(t, -1, c.Take(now), "a halted run starts nothing")
}

func TestNewCoreErrors(t *testing.T) {
	d, err := planOf(task("a", "in", verifies(`(nope`))).DAG(plan.WithWorkers(worker))
	require.NoError(t, err)
	_, err = runner.NewCore(d, runner.CoreConfig{RunID: "r"})
	var pe *runner.PredicateError
	assert.ErrorAs(t, err, &pe)

	ok, err := planOf(task("a", "in")).DAG(plan.WithWorkers(worker))
	require.NoError(t, err)
	for _, cfg := range []runner.CoreConfig{{}, {RunID: "a b"}, {RunID: "r", Concurrency: -1}, {RunID: "r", TaskTimeout: -time.Second}} {
		_, err = runner.NewCore(ok, cfg)
		assert.ErrorIs(t, err, runner.ErrInvalidOption, "%+v", cfg)
	}
	_, err = runner.NewCore(nil, runner.CoreConfig{RunID: "r"})
	assert.ErrorIs(t, err, runner.ErrInvalidOption)
	_, err = runner.NewCore(ok, runner.CoreConfig{RunID: "r", Initial: map[string]any{"zz": 1}})
	assert.ErrorIs(t, err, runner.ErrUnknownTask)
}

// TestCoreJitter: without a Jitter, a Core's backoff is the same on every
// replay of a run, and differs between tasks.
func TestCoreJitter(t *testing.T) {
	p := planOf(task("a", "in", retries(1), onFailure(plan.PolicyRetry)), task("b", "in", retries(1), onFailure(plan.PolicyRetry)))
	d, err := p.DAG(plan.WithWorkers(worker))
	require.NoError(t, err)
	waits := func() []time.Duration {
		c, err := runner.NewCore(d, runner.CoreConfig{RunID: "r", Concurrency: 1, Backoff: runner.DefaultBackoff()})
		require.NoError(t, err)
		h := &recordingWaits{coreHost: coreHost{agents: map[string]agent.Agent{worker: newRecorder().on("a", byAttempt(fails(errBoom), output("ok"))).on("b", byAttempt(fails(errBoom), output("ok")))}}}
		now := time.Now()
		c.Advance(now)
		for i := c.Take(now); i >= 0; i = c.Take(now) {
			c.Settle(c.RunTask(h, i), now)
		}
		return h.waits
	}
	first := waits()
	require.Len(t, first, 2)
	assert.Equal(t, first, waits())
	assert.NotEqual(t, first[0], first[1])
	for _, w := range first {
		assert.GreaterOrEqual(t, w, 800*time.Millisecond)
		assert.LessOrEqual(t, w, time.Second)
	}
}

type recordingWaits struct {
	coreHost
	waits []time.Duration
}

func (h *recordingWaits) Wait(d time.Duration) runner.WaitEnd {
	h.waits = append(h.waits, d)
	return runner.WaitDone
}

// A Core's default predicates have no wall-clock bound, so that verdicts
// replay alike, but a step bound: a predicate that would run for minutes
// fails its task as a predicate error, quickly and the same way each time.
func TestCoreDefaultPredicateStepBound(t *testing.T) {
	big := make([]any, 20_000)
	for i := range big {
		big[i] = float64(i)
	}
	p := planOf(task("a", "in", verifies(`(every? (fn [x] (> (count (sort data/result)) 0)) data/result)`)))
	d, err := p.DAG(plan.WithWorkers(worker))
	require.NoError(t, err)
	var diagnoses []string
	for range 2 {
		c, err := runner.NewCore(d, runner.CoreConfig{RunID: "r", Started: time.Unix(0, 0)})
		require.NoError(t, err)
		h := &coreHost{agents: map[string]agent.Agent{worker: newRecorder().on("a", output(big))}, inFlight: map[string]int{}, most: map[string]int{}}
		start := time.Now()
		res := drive(c, h, func(int) string { return worker })
		assert.Less(t, time.Since(start), 5*time.Second)
		a := res.Tasks["a"]
		assert.Equal(t, runner.TaskFailed, a.Status)
		assert.Equal(t, runner.StatusFailed, res.Status)
		assert.NotErrorIs(t, a.Err, runner.ErrVerification, "a predicate error, not a failed verdict")
		var rte *verify.RuntimeError
		require.ErrorAs(t, a.Err, &rte)
		assert.ErrorIs(t, a.Err, verify.ErrStepLimit)
		assert.Equal(t, "(sort data/result)", rte.Form)
		diagnoses = append(diagnoses, a.Diagnosis)
	}
	assert.Equal(t, diagnoses[0], diagnoses[1])
}
