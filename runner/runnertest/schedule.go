package runnertest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// rendezvous holds each attempt until target attempts run at once, once:
// after that it lets every attempt through. A scheduler that kept a ready
// task from starting when it may would never reach target, and its
// attempts would give up after the kit's patience.
type rendezvous struct {
	target  int
	mu      sync.Mutex
	now     int
	reached *signal
}

func newRendezvous(target int) *rendezvous { return &rendezvous{target: target, reached: newSignal()} }

func (r *rendezvous) script(ctx context.Context, _ agent.Request) (any, error) {
	r.mu.Lock()
	r.now++
	if r.now >= r.target {
		r.reached.fire()
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.now--
		r.mu.Unlock()
	}()
	return "ok", r.reached.wait(ctx)
}

// testRunConcurrency: no more tasks run at once than the run's
// concurrency, and as many as it allows do.
func testRunConcurrency(t *testing.T, k *kit) {
	for _, sched := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(sched.String(), func(t *testing.T) {
			rv := newRendezvous(3)
			rec := newRecorder()
			var tasks []plan.Task
			for i := range 8 {
				id := fmt.Sprintf("t%d", i)
				rec.on(id, rv.script)
				tasks = append(tasks, task(id, "in"))
			}
			s := scenarioOf(planOf(tasks...), rec)
			s.Schedule, s.Concurrency = sched, 3
			res, _ := k.run(t, s)
			completed(t, res)
			for _, tk := range tasks {
				checkTask(t, res, tk.ID, done(1, "ok"))
			}
			_, all := rec.peaks()
			assert.Equal(t, 3, all, "the most attempts at once")
		})
	}
}

// testWorkerCap: a registry worker's MaxConcurrency bounds its attempts at
// once in the run; tasks waiting for it hold no place of the run's
// concurrency, so other workers' tasks start beside them.
func testWorkerCap(t *testing.T, k *kit) {
	for _, sched := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(sched.String(), func(t *testing.T) {
			rv := newRendezvous(4)
			rec := newRecorder()
			var tasks []plan.Task
			for _, id := range []string{"c1", "c2", "c3", "c4", "c5", "u1", "u2"} {
				rec.on(id, rv.script)
				name := "capped"
				if id[0] == 'u' {
					name = "free"
				}
				tasks = append(tasks, task(id, "in", agentName(name)))
			}
			s := Scenario{Plan: planOf(tasks...), Workers: map[string]registry.Worker{
				"capped": {Agent: rec, MaxConcurrency: 2},
				"free":   {Agent: rec},
			}, Schedule: sched, Concurrency: 4}
			res, _ := k.run(t, s)
			completed(t, res)
			for _, tk := range tasks {
				checkTask(t, res, tk.ID, done(1, "ok"))
			}
			peaks, all := rec.peaks()
			assert.Equal(t, 2, peaks["capped"], "the capped worker's most attempts at once")
			assert.Equal(t, 4, all, "the run's most attempts at once")
		})
	}
}

// testPriorityOrder: with one place, the tasks ready at once start by
// priority, the higher first, and in plan order among equals.
func testPriorityOrder(t *testing.T, k *kit) {
	tests := []struct {
		name  string
		tasks []plan.Task
		want  []string
	}{
		{"no priorities: plan order", []plan.Task{task("a", "in"), task("b", "in"), task("c", "in")}, []string{"a", "b", "c"}},
		{"higher first", []plan.Task{task("a", "in"), task("b", "in", prio(2)), task("c", "in", prio(1)), task("d", "in", prio(-1))}, []string{"b", "c", "a", "d"}},
		{"ties in plan order", []plan.Task{task("a", "in", prio(1)), task("b", "in"), task("c", "in", prio(1)), task("d", "in"), task("e", "in", prio(1))}, []string{"a", "c", "e", "b", "d"}},
		{"dependents made ready together", []plan.Task{
			task("root", "in"),
			task("x", "in", deps("root")), task("y", "in", deps("root"), prio(3)), task("z", "in", deps("root"), prio(3)),
		}, []string{"root", "y", "z", "x"}},
	}
	for _, sched := range []runner.Schedule{runner.Phased, runner.Eager} {
		for _, tt := range tests {
			t.Run(sched.String()+"/"+tt.name, func(t *testing.T) {
				rec := newRecorder()
				s := scenarioOf(planOf(tt.tasks...), rec)
				s.Schedule, s.Concurrency = sched, 1
				res, _ := k.run(t, s)
				completed(t, res)
				assert.Equal(t, tt.want, rec.started())
			})
		}
	}
}

// testStartOrder: at concurrency 1 both schedules start the tasks in the
// order they became ready — which puts every task after the tasks of the
// phases before its own — and each run's events are fixed.
func testStartOrder(t *testing.T, k *kit) {
	p := func() *plan.Plan {
		return planOf(task("a", "in"), task("b", "in"), task("c", "in", deps("b")), task("d", "in", deps("a")))
	}
	started := func(id string) []step {
		return []step{{Kind: runner.EventTaskStarted, TaskID: id, Attempt: 1}, {Kind: runner.EventTaskFinished, TaskID: id, Attempt: 1}}
	}
	seq := func(parts ...[]step) []step {
		var out []step
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	run := []step{{Kind: runner.EventRunStarted}}
	end := []step{{Kind: runner.EventRunFinished}}
	phase := func(n int, tasks ...string) []step {
		out := []step{{Kind: runner.EventPhaseStarted, Phase: n}}
		for _, id := range tasks {
			out = append(out, started(id)...)
		}
		return append(out, step{Kind: runner.EventPhaseFinished, Phase: n})
	}
	t.Run("phased", func(t *testing.T) {
		rec := newRecorder()
		s := scenarioOf(p(), rec)
		s.Concurrency = 1
		res, evs := k.run(t, s)
		completed(t, res)
		assert.Equal(t, []string{"a", "b", "d", "c"}, rec.started())
		assert.Equal(t, seq(run, phase(0, "a", "b"), phase(1, "d", "c"), end), steps(evs))
	})
	t.Run("eager", func(t *testing.T) {
		rec := newRecorder()
		s := scenarioOf(p(), rec)
		s.Schedule, s.Concurrency = runner.Eager, 1
		res, evs := k.run(t, s)
		completed(t, res)
		assert.Equal(t, []string{"a", "b", "d", "c"}, rec.started())
		assert.Equal(t, seq(run, started("a"), started("b"), started("d"), started("c"), end), steps(evs))
	})
}

// testEagerStartsEarly: in Eager a task starts once its own dependencies
// are done, while a slow task of an earlier phase still runs; in Phased it
// waits for the whole phase.
func testEagerStartsEarly(t *testing.T, k *kit) {
	p := func() *plan.Plan {
		return planOf(task("a", "in"), task("slow", "in"), task("b", "in", deps("a")))
	}
	t.Run("eager", func(t *testing.T) {
		bCalled := newSignal()
		rec := newRecorder().on("slow", after(bCalled, output("slow"))).on("b", firing(bCalled, output("b")))
		s := scenarioOf(p(), rec)
		s.Schedule, s.Concurrency = runner.Eager, 2
		res, evs := k.run(t, s)
		completed(t, res)
		checkTask(t, res, "slow", done(1, "slow"))
		checkTask(t, res, "b", done(1, "b"))
		assert.Less(t, seqOf(evs, runner.EventTaskStarted, "b"), seqOf(evs, runner.EventTaskFinished, "slow"), "b starts while slow runs")
	})
	t.Run("phased", func(t *testing.T) {
		rec := newRecorder()
		s := scenarioOf(p(), rec)
		s.Concurrency = 2
		res, evs := k.run(t, s)
		completed(t, res)
		assert.Less(t, seqOf(evs, runner.EventTaskFinished, "slow"), seqOf(evs, runner.EventTaskStarted, "b"), "b waits for its phase")
	})
}

// testHaltEndsRetryWait: a task waiting to retry when the run halts makes
// no new attempt: it ends as if its retries were spent.
func testHaltEndsRetryWait(t *testing.T, k *kit) {
	bFailed := newSignal()
	rec := newRecorder().
		on("b", firing(bFailed, fails(errBoom))).
		on("a", after(bFailed, fails(errBoom)))
	p := planOf(
		task("a", "in"),
		task("b", "in", nonCritical(), onFailure(plan.PolicyRetry), retries(3)),
		task("c", "in", deps("a", "b")),
	)
	s := scenarioOf(p, rec)
	// Long enough that the run would outlast the kit were the wait not
	// ended by the halt.
	s.Backoff = runner.Backoff{Initial: time.Hour, Coefficient: 1}
	res, _ := k.run(t, s)
	failedBy(t, res, "a", nil)
	checkTask(t, res, "a", want{status: runner.TaskFailed, attempts: 1, class: runner.ClassAgentError, diagnosis: "boom"})
	checkTask(t, res, "b", want{status: runner.TaskSkipped, attempts: 1, class: runner.ClassAgentError, diagnosis: "boom"})
	checkTask(t, res, "c", want{status: runner.TaskPending})
	assert.Equal(t, 1, rec.count("b"), "no attempt after the halt")
}

// testStatusPrecedence: a replan wins over a failure, and a failure over a
// waiting review, which stays listed.
func testStatusPrecedence(t *testing.T, k *kit) {
	t.Run("replan over failed", func(t *testing.T) {
		aCalled, bCalled := newSignal(), newSignal()
		rec := newRecorder().
			on("a", firing(aCalled, after(bCalled, fails(errBoom)))).
			on("b", firing(bCalled, after(aCalled, fails(fmt.Errorf("wrong approach")))))
		p := planOf(task("a", "in"), task("b", "in", onFailure(plan.PolicyReplan)), task("c", "in", deps("a", "b")))
		res, _ := k.run(t, scenarioOf(p, rec))
		assert.Equal(t, runner.StatusReplanRequired, res.Status)
		assert.NoError(t, res.Err)
		require.NotNil(t, res.Replan)
		assert.Equal(t, runner.ReplanRequest{TaskID: "b", Diagnosis: "wrong approach"}, *res.Replan)
		checkTask(t, res, "a", want{status: runner.TaskFailed, attempts: 1, class: runner.ClassAgentError, diagnosis: "boom"})
		checkTask(t, res, "b", want{status: runner.TaskFailed, attempts: 1, class: runner.ClassAgentError, diagnosis: "wrong approach"})
		checkTask(t, res, "c", want{status: runner.TaskPending})
	})
	t.Run("failed over waiting", func(t *testing.T) {
		rec := newRecorder().on("a", fails(errBoom))
		p := planOf(task("r", "look", review()), task("a", "in"), task("c", "in", deps("r")))
		s := scenarioOf(p, rec)
		s.Concurrency = 1
		res, _ := k.run(t, s)
		assert.Equal(t, runner.StatusFailed, res.Status)
		assert.ErrorContains(t, res.Err, "boom")
		var te *runner.TaskError
		require.ErrorAs(t, res.Err, &te)
		assert.Equal(t, "a", te.TaskID)
		if assert.Len(t, res.PendingReviews, 1) {
			pr := res.PendingReviews[0]
			assert.Equal(t, "r", pr.TaskID)
			assert.Equal(t, "look", pr.Prompt)
			assert.Empty(t, pr.Upstream, "a review with no dependencies judges nothing upstream")
		}
		checkTask(t, res, "r", want{status: runner.TaskWaiting})
	})
}

// testTimeouts: an attempt that outlasts its timeout — the plan's, the
// worker's or the run's — fails as timeout and is retried like any; a
// plan may shorten a worker's timeout, never stretch it.
func testTimeouts(t *testing.T, k *kit) {
	const short = 30 * time.Millisecond
	cases := []struct {
		name    string
		mods    []mod
		worker  time.Duration
		runTime time.Duration
	}{
		{name: "plan", mods: []mod{timeout(short)}},
		{name: "worker", worker: short},
		{name: "run", runTime: short},
		{name: "plan cannot stretch the worker's", mods: []mod{timeout(time.Hour)}, worker: short},
		{name: "plan shortens the worker's", mods: []mod{timeout(short)}, worker: time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := newRecorder().
				on("once", byAttempt(hang, output("late but fine"))).
				on("never", hang)
			p := planOf(
				task("once", "in", append([]mod{agentName("slow"), onFailure(plan.PolicyRetry), retries(1)}, c.mods...)...),
				task("never", "in", append([]mod{agentName("slow"), nonCritical()}, c.mods...)...),
			)
			s := Scenario{Plan: p, Workers: map[string]registry.Worker{"slow": {Agent: rec, Timeout: c.worker}}, TaskTimeout: c.runTime}
			res, _ := k.run(t, s)
			completed(t, res)
			checkTask(t, res, "once", done(2, "late but fine"))
			retry := rec.requests("once")[1]
			assert.Equal(t, agent.FailureError, retry.Failure)
			assert.Regexp(t, "^timed out after "+short.String(), retry.Diagnosis)
			checkTask(t, res, "never", want{status: runner.TaskSkipped, attempts: 1, class: runner.ClassTimeout,
				diagnosis: "timed out after " + short.String(), diagPrefix: true, err: context.DeadlineExceeded})
		})
	}
}

// testWorkerChecks: a registry worker's preconditions are checked before
// each attempt, and a failing one means no call; a worker with declared
// outputs must return an object, and its slots can be wired.
func testWorkerChecks(t *testing.T, k *kit) {
	rec := newRecorder().
		on("refused", output("never")).
		on("stringy", output("not an object")).
		on("fine", output(map[string]any{"summary": "S", "extra": json.Number("1")}))
	p := planOf(
		task("refused", "stop", agentName("guarded"), nonCritical()),
		task("allowed", "go", agentName("guarded")),
		task("stringy", "in", agentName("summarizer"), nonCritical()),
		task("fine", "in", agentName("summarizer")),
		task("use", "in", deps("fine"), inputs(map[string]plan.InputRef{"s": {From: "fine", Slot: "summary"}})),
	)
	s := Scenario{Plan: p, Agents: map[string]agent.Agent{worker: rec}, Workers: map[string]registry.Worker{
		"guarded":    {Agent: rec, Preconditions: []string{`(if (= data/input "go") true "only go")`}},
		"summarizer": {Agent: rec, Outputs: []string{"summary"}},
	}}
	s.NoRetry = nil
	res, _ := k.run(t, s)
	completed(t, res)
	got := res.Tasks["refused"]
	assert.Equal(t, runner.TaskSkipped, got.Status)
	assert.Equal(t, 1, got.Attempts)
	assert.Equal(t, runner.ClassPrecondition, got.Class)
	assert.ErrorIs(t, got.Err, registry.ErrPrecondition)
	assert.Contains(t, got.Diagnosis, "only go")
	assert.Zero(t, rec.count("refused"), "a precondition that fails means no call")
	checkTask(t, res, "allowed", done(1, "ok"))
	got = res.Tasks["stringy"]
	assert.Equal(t, runner.TaskSkipped, got.Status)
	assert.Equal(t, runner.ClassInvalidOutput, got.Class)
	assert.ErrorIs(t, got.Err, agent.ErrInvalidOutput)
	checkTask(t, res, "fine", done(1, map[string]any{"summary": "S", "extra": json.Number("1")}))
	assert.Equal(t, map[string]any{"s": "S"}, rec.requests("use")[0].Inputs)
}

// testExactEvents: at concurrency 1 a run's events are fixed: retries,
// verdicts, a condition's skip, a gate's failure and what it skips.
func testExactEvents(t *testing.T, k *kit) {
	rec := newRecorder().
		on("a", byAttempt(fails(errBoom), output("A"))).
		on("v", byAttempt(output("bad"), output("good"))).
		on("g", output("meh"))
	p := planOf(
		task("a", "in", onFailure(plan.PolicyRetry), retries(1)),
		task("v", "in", deps("a"), verifies(`(= data/result "good")`), retries(1)),
		task("n", "in", deps("a"), when("false")),
		task("g", "in", deps("v"), gate(), nonCritical(), onVerify(plan.PolicySkip)),
		task("d", "in", deps("g")),
		task("e", "in", deps("d")),
	)
	for _, sched := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(sched.String(), func(t *testing.T) {
			s := scenarioOf(p, rec)
			s.Schedule, s.Concurrency = sched, 1
			res, evs := k.run(t, s)
			failedBy(t, res, "g", runner.ErrGateOutput)
			seq := []step{
				{Kind: runner.EventRunStarted},
				{Kind: runner.EventPhaseStarted, Phase: 0},
				{Kind: runner.EventTaskStarted, TaskID: "a", Attempt: 1},
				{Kind: runner.EventTaskRetried, TaskID: "a", Attempt: 2},
				{Kind: runner.EventTaskFinished, TaskID: "a", Attempt: 2},
				{Kind: runner.EventPhaseFinished, Phase: 0},
				{Kind: runner.EventPhaseStarted, Phase: 1},
				{Kind: runner.EventTaskStarted, TaskID: "v", Attempt: 1},
				{Kind: runner.EventTaskVerified, TaskID: "v", Attempt: 1},
				{Kind: runner.EventTaskRetried, TaskID: "v", Attempt: 2},
				{Kind: runner.EventTaskVerified, TaskID: "v", Attempt: 2},
				{Kind: runner.EventTaskFinished, TaskID: "v", Attempt: 2},
				{Kind: runner.EventTaskSkipped, TaskID: "n"},
				{Kind: runner.EventPhaseFinished, Phase: 1},
				{Kind: runner.EventPhaseStarted, Phase: 2},
				{Kind: runner.EventTaskStarted, TaskID: "g", Attempt: 1},
				{Kind: runner.EventTaskVerified, TaskID: "g", Attempt: 1},
				{Kind: runner.EventTaskFailed, TaskID: "g", Attempt: 1},
				{Kind: runner.EventTaskSkipped, TaskID: "d"},
				{Kind: runner.EventTaskSkipped, TaskID: "e"},
				{Kind: runner.EventPhaseFinished, Phase: 2},
				{Kind: runner.EventRunFinished},
			}
			if sched == runner.Eager {
				var eager []step
				for _, st := range seq {
					if st.Kind != runner.EventPhaseStarted && st.Kind != runner.EventPhaseFinished {
						eager = append(eager, st)
					}
				}
				seq = eager
			}
			assert.Equal(t, seq, steps(evs))
			checkTask(t, res, "n", want{status: runner.TaskSkipped, class: runner.ClassConditionNotMet, diagnosis: "predicate returned false: false", err: runner.ErrConditionNotMet})
		})
	}
}
