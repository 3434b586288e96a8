package runnertest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// testFailureTable runs the on_failure × critical table, for execution
// errors (on_failure) and failed verdicts (on_verification_failure).
//
// The plan: phase 0 holds the failing task "a" and "x", which runs while
// "a" fails; phase 1 holds "later", independent of "a" but ready only once
// "x" is done, and "child", which depends on "a". "x" waits for a's final
// event when the driver delivers events live, else for a's first call: in
// the Eager schedule, "later" then may start before a halt or not, and
// the scenario does not check whether it ran when the run halts.
func testFailureTable(t *testing.T, k *kit) {
	type outcome struct {
		task     runner.TaskStatus
		run      runner.Status
		attempts int
		later    bool // whether "later" (independent, next phase) ran
	}
	halt := func(attempts int) outcome { return outcome{runner.TaskFailed, runner.StatusFailed, attempts, false} }
	goOn := func(attempts int) outcome { return outcome{runner.TaskSkipped, runner.StatusCompleted, attempts, true} }
	replan := outcome{runner.TaskFailed, runner.StatusReplanRequired, 1, false}
	const maxRetries = 2
	cases := []struct {
		policy   plan.Policy
		critical bool
		want     outcome
	}{
		{plan.PolicyStop, true, halt(1)},
		{plan.PolicyStop, false, goOn(1)},
		{plan.PolicySkip, true, goOn(1)},
		{plan.PolicySkip, false, goOn(1)},
		{plan.PolicyRetry, true, halt(maxRetries + 1)},
		{plan.PolicyRetry, false, goOn(maxRetries + 1)},
		{plan.PolicyReplan, true, replan},
		{plan.PolicyReplan, false, replan},
	}
	for _, kind := range []string{"error", "verdict"} {
		for _, c := range cases {
			for _, sched := range []runner.Schedule{runner.Phased, runner.Eager} {
				name := fmt.Sprintf("%s/%s/critical=%v/%s", kind, c.policy, c.critical, sched)
				t.Run(name, func(t *testing.T) {
					aCalled, aSettled := newSignal(), newSignal()
					rec := newRecorder().on("x", func(ctx context.Context, _ agent.Request) (any, error) {
						wait := aCalled
						if k.caps.LiveEvents {
							wait = aSettled
						}
						return "x done", wait.wait(ctx)
					})
					mods := []mod{retries(maxRetries)}
					if !c.critical {
						mods = append(mods, nonCritical())
					}
					var diagnosis string
					var class runner.Class
					var wantErr error
					if kind == "error" {
						rec.on("a", firing(aCalled, fails(errBoom)))
						mods = append(mods, onFailure(c.policy), onVerify(plan.PolicyStop))
						diagnosis, class = "boom", runner.ClassAgentError
					} else {
						rec.on("a", firing(aCalled, output("bad")))
						mods = append(mods, onFailure(plan.PolicyStop), onVerify(c.policy), verifies(`(if (= data/result "good") true "want good")`))
						diagnosis, class, wantErr = "want good", runner.ClassVerification, runner.ErrVerification
					}
					p := planOf(
						task("a", "do a", mods...),
						task("x", "do x"),
						task("later", "do later", deps("x")),
						task("child", "do child", deps("a")),
					)
					s := scenarioOf(p, rec)
					s.Schedule, s.Concurrency = sched, 4
					s.Observe = func(e runner.Event) {
						if e.TaskID == "a" && (e.Kind == runner.EventTaskFailed || e.Kind == runner.EventTaskSkipped) {
							aSettled.fire()
						}
					}
					res, _ := k.run(t, s)

					var out any
					if kind == "verdict" {
						out = "bad"
					}
					checkTask(t, res, "a", want{status: c.want.task, attempts: c.want.attempts, class: class, diagnosis: diagnosis, output: out, err: wantErr})
					assert.Equal(t, c.want.run, res.Status, "run status")
					assert.Equal(t, c.want.attempts, rec.count("a"), "agent calls for a")
					checkTask(t, res, "x", done(1, "x done"))
					if c.want.later {
						checkTask(t, res, "later", done(1, "ok"))
						checkTask(t, res, "child", done(1, "ok"))
						assert.Equal(t, []string{"a"}, rec.requests("child")[0].Skipped, "a dependent of a skipped task runs, told so")
						assert.NotContains(t, rec.requests("child")[0].Depends, "a")
					} else {
						if sched == runner.Phased || k.caps.LiveEvents {
							checkTask(t, res, "later", want{status: runner.TaskPending})
							assert.Zero(t, rec.count("later"), "no task starts after a halt")
						}
						checkTask(t, res, "child", want{status: runner.TaskPending})
						assert.Zero(t, rec.count("child"))
					}
					switch res.Status {
					case runner.StatusFailed:
						failedBy(t, res, "a", wantErr)
						assert.ErrorContains(t, res.Err, diagnosis)
					case runner.StatusReplanRequired:
						assert.NoError(t, res.Err)
						require.NotNil(t, res.Replan)
						assert.Equal(t, "a", res.Replan.TaskID)
						assert.Equal(t, diagnosis, res.Replan.Diagnosis)
						assert.Equal(t, out, res.Replan.Output)
						assert.Contains(t, res.Replan.Completed, "x")
						if sched == runner.Phased || k.caps.LiveEvents {
							assert.Equal(t, []string{"x"}, res.Replan.Completed)
						}
					default:
						completed(t, res)
					}
				})
			}
		}
	}
}

// testRetryCarriesDiagnosis: a retry hands the agent the previous failure
// as data — Diagnosis, and Failure saying whether it was an error or a
// verdict — and leaves the input as it is. A task that finally passes
// reports no diagnosis.
func testRetryCarriesDiagnosis(t *testing.T, k *kit) {
	rec := newRecorder().
		on("err", byAttempt(fails(errBoom), output("fine"))).
		on("verdict", byAttempt(output("bad"), output("bad"), output("good")))
	p := planOf(
		task("err", "Fetch X", onFailure(plan.PolicyRetry), retries(2)),
		task("verdict", "Write Y", retries(2), verifies(`(if (= data/result "good") true "want good")`)),
	)
	s := scenarioOf(p, rec)
	res, _ := k.run(t, s)
	completed(t, res)
	checkTask(t, res, "err", done(2, "fine"))
	checkTask(t, res, "verdict", done(3, "good"))

	errReqs := rec.requests("err")
	require.Len(t, errReqs, 2)
	assert.Equal(t, "", errReqs[0].Diagnosis)
	assert.Equal(t, agent.Failure(""), errReqs[0].Failure)
	assert.Equal(t, "boom", errReqs[1].Diagnosis)
	assert.Equal(t, agent.FailureError, errReqs[1].Failure)
	assert.Equal(t, "Fetch X", errReqs[1].Input, "the input stays as it was")

	vReqs := rec.requests("verdict")
	require.Len(t, vReqs, 3)
	for n, q := range vReqs {
		assert.Equal(t, n+1, q.Attempt)
		assert.Equal(t, "Write Y", q.Input)
		if n > 0 {
			assert.Equal(t, "want good", q.Diagnosis)
			assert.Equal(t, agent.FailureVerification, q.Failure)
		}
	}
}

// testRetryBudget: a task under retry makes 1 + max_retries attempts at
// most; with no retries, one.
func testRetryBudget(t *testing.T, k *kit) {
	for _, n := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("max_retries=%d", n), func(t *testing.T) {
			rec := newRecorder().on("a", fails(errBoom))
			p := planOf(task("a", "in", onFailure(plan.PolicyRetry), retries(n), nonCritical()), task("b", "in", deps("a")))
			res, evs := k.run(t, scenarioOf(p, rec))
			completed(t, res)
			checkTask(t, res, "a", want{status: runner.TaskSkipped, attempts: n + 1, class: runner.ClassAgentError, diagnosis: "boom"})
			checkTask(t, res, "b", done(1, "ok"))
			assert.Equal(t, n+1, rec.count("a"))
			retried := 0
			for _, e := range of(evs, "a") {
				if e.Kind == runner.EventTaskRetried {
					retried++
					assert.Equal(t, "boom", e.Diagnosis, "task_retried says why")
				}
			}
			assert.Equal(t, n, retried)
		})
	}
}

// testIdempotencyKeys: every attempt carries "<run id>/<task id>/<attempt>"
// and the request fields of the run and the task.
func testIdempotencyKeys(t *testing.T, k *kit) {
	rec := newRecorder().on("a", byAttempt(fails(errBoom), fails(errBoom), output("ok")))
	p := planOf(task("a", "in", onFailure(plan.PolicyRetry), retries(3)), task("b.c", "in"))
	res, _ := k.run(t, scenarioOf(p, rec))
	completed(t, res)
	var keys []string
	for _, q := range rec.requests("a") {
		keys = append(keys, q.IdempotencyKey)
		assert.Equal(t, runID, q.RunID)
		assert.Equal(t, "a", q.TaskID)
		assert.Equal(t, worker, q.Agent)
	}
	assert.Equal(t, []string{runID + "/a/1", runID + "/a/2", runID + "/a/3"}, keys)
	require.Len(t, rec.requests("b.c"), 1)
	assert.Equal(t, runID+"/b.c/1", rec.requests("b.c")[0].IdempotencyKey)
}

// testCannotStartNotRetried: an agent whose program cannot start is not
// retried, whatever the task's retries.
func testCannotStartNotRetried(t *testing.T, k *kit) {
	err := fmt.Errorf("command %q: %w: no such file", "missing", agent.ErrCannotStart)
	rec := newRecorder().on("a", fails(err))
	p := planOf(task("a", "in", onFailure(plan.PolicyRetry), retries(3)))
	res, _ := k.run(t, scenarioOf(p, rec))
	checkTask(t, res, "a", want{status: runner.TaskFailed, attempts: 1, class: runner.ClassAgentError, diagnosis: err.Error(), err: agent.ErrCannotStart})
	failedBy(t, res, "a", agent.ErrCannotStart)
	assert.Equal(t, 1, rec.count("a"))
}

// testNoRetryClass: a failure of a class the run does not retry is final;
// a failure of another class is retried.
func testNoRetryClass(t *testing.T, k *kit) {
	invalid := fmt.Errorf("%w: not a table", agent.ErrInvalidOutput)
	rec := newRecorder().
		on("final", fails(invalid)).
		on("again", byAttempt(fails(errBoom), output("ok")))
	p := planOf(
		task("final", "in", onFailure(plan.PolicyRetry), retries(3), nonCritical()),
		task("again", "in", onFailure(plan.PolicyRetry), retries(3)),
	)
	s := scenarioOf(p, rec)
	s.NoRetry = []runner.Class{runner.ClassInvalidOutput, runner.ClassPrecondition}
	res, _ := k.run(t, s)
	completed(t, res)
	checkTask(t, res, "final", want{status: runner.TaskSkipped, attempts: 1, class: runner.ClassInvalidOutput, diagnosis: invalid.Error(), err: agent.ErrInvalidOutput})
	checkTask(t, res, "again", done(2, "ok"))
}

// testPanicIsFailure: an agent's panic is its attempt's failure, of class
// panic, retried like any.
func testPanicIsFailure(t *testing.T, k *kit) {
	rec := newRecorder().
		on("p", func(context.Context, agent.Request) (any, error) { panic("agent bug") }).
		on("q", byAttempt(func(context.Context, agent.Request) (any, error) { panic("once") }, output("ok")))
	p := planOf(
		task("p", "in", nonCritical()),
		task("q", "in", onFailure(plan.PolicyRetry), retries(1)),
	)
	res, _ := k.run(t, scenarioOf(p, rec))
	completed(t, res)
	got := res.Tasks["p"]
	assert.Equal(t, runner.TaskSkipped, got.Status)
	assert.Equal(t, runner.ClassPanic, got.Class)
	assert.Contains(t, got.Diagnosis, "agent bug")
	checkTask(t, res, "q", done(2, "ok"))
	require.Len(t, rec.requests("q"), 2)
	assert.Contains(t, rec.requests("q")[1].Diagnosis, "once")
	assert.Equal(t, agent.FailureError, rec.requests("q")[1].Failure)
}
