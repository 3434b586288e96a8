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
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// TestFailureMatrix runs the on_failure × critical table, for execution
// errors (on_failure) and failed verdicts (on_verification_failure).
//
// The plan: phase 0 holds the failing task "a" and "x", which is still
// running when "a" settles; phase 1 holds "later", independent of "a" but
// ready only once "x" is done, and "child", which depends on "a". Both
// schedules follow the same table.
func TestFailureMatrix(t *testing.T) {
	type want struct {
		task     runner.TaskStatus
		run      runner.Status
		attempts int
		later    bool // whether "later" (independent, next phase) ran
	}
	halt := func(attempts int) want { return want{runner.TaskFailed, runner.StatusFailed, attempts, false} }
	goOn := func(attempts int) want { return want{runner.TaskSkipped, runner.StatusCompleted, attempts, true} }
	replan := want{runner.TaskFailed, runner.StatusReplanRequired, 1, false}
	const maxRetries = 2
	cases := []struct {
		policy   plan.Policy
		critical bool
		want     want
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
					aSettled, settle := closeOnce()
					obs := runner.ObserverFunc(func(e runner.Event) {
						if e.TaskID == "a" && (e.Kind == runner.EventTaskFailed || e.Kind == runner.EventTaskSkipped) {
							settle()
						}
					})
					rec := newRecorder().
						on("x", func(ctx context.Context, _ agent.Request) (any, error) {
							// Still running when "a" settles: a halt must let it finish.
							return "x done", within(ctx, aSettled, 10*time.Second)
						})
					mods := []mod{retries(maxRetries)}
					if !c.critical {
						mods = append(mods, nonCritical())
					}
					var wantErr error
					if kind == "error" {
						rec.on("a", fails(errBoom))
						mods = append(mods, onFailure(c.policy), onVerify(plan.PolicyStop))
						wantErr = errBoom
					} else {
						rec.on("a", output("bad"))
						mods = append(mods, onFailure(plan.PolicyStop), onVerify(c.policy), verifies(`(= data/result "good")`))
						wantErr = runner.ErrVerification
					}
					p := planOf(
						task("a", "do a", mods...),
						task("x", "do x"),
						task("later", "do later", deps("x")),
						task("child", "do child", deps("a")),
					)
					res := run(t, p, rec, runner.WithObserver(obs), runner.WithSchedule(sched))

					a := res.Tasks["a"]
					assert.Equal(t, c.want.task, a.Status, "status of a")
					assert.Equal(t, c.want.run, res.Status, "run status")
					assert.Equal(t, c.want.attempts, a.Attempts, "attempts of a")
					assert.Equal(t, c.want.attempts, rec.count("a"), "agent calls for a")
					assert.ErrorIs(t, a.Err, wantErr)
					assert.Equal(t, runner.TaskDone, res.Tasks["x"].Status, "x was running and must finish")
					assert.Equal(t, "x done", res.Tasks["x"].Output)
					if c.want.later {
						assert.Equal(t, runner.TaskDone, res.Tasks["later"].Status)
						assert.Equal(t, 1, rec.count("later"))
						assert.Equal(t, runner.TaskDone, res.Tasks["child"].Status, "a dependent of a skipped task runs")
						assert.Equal(t, []string{"a"}, rec.requests("child")[0].Skipped)
					} else {
						assert.Equal(t, runner.TaskPending, res.Tasks["later"].Status, "no task starts after a halt")
						assert.Zero(t, rec.count("later"))
						assert.Equal(t, runner.TaskPending, res.Tasks["child"].Status)
						assert.Zero(t, rec.count("child"))
					}
					switch res.Status {
					case runner.StatusFailed:
						var te *runner.TaskError
						require.ErrorAs(t, res.Err, &te)
						assert.Equal(t, "a", te.TaskID)
						assert.ErrorIs(t, res.Err, wantErr)
						assert.Nil(t, res.Replan)
					case runner.StatusReplanRequired:
						require.NotNil(t, res.Replan)
						assert.Equal(t, "a", res.Replan.TaskID)
						assert.Nil(t, res.Err)
					default:
						assert.NoError(t, res.Err)
						assert.Nil(t, res.Replan)
					}
				})
			}
		}
	}
}

// A retry hands the agent the previous failure as data — Diagnosis, and
// Failure saying whether it was an error or a verdict — and leaves the
// input as it is. A task that finally passes reports no diagnosis.
func TestRetryInputAndDiagnosis(t *testing.T) {
	rec := newRecorder().
		on("err", byAttempt(fails(errBoom), output("fine"))).
		on("verdict", byAttempt(output("bad"), output("bad"), output("good")))
	p := planOf(
		task("err", "Fetch X", onFailure(plan.PolicyRetry)),
		task("verdict", "Write Y", verifies(`(if (= data/result "good") true "want good")`)),
	)
	res := run(t, p, rec)
	require.Equal(t, runner.StatusCompleted, res.Status)

	reqs := rec.requests("err")
	require.Len(t, reqs, 2)
	assert.Equal(t, "Fetch X", reqs[0].Input)
	assert.Equal(t, 1, reqs[0].Attempt)
	assert.Empty(t, reqs[0].Diagnosis)
	assert.Empty(t, reqs[0].Failure)
	assert.Equal(t, "Fetch X", reqs[1].Input)
	assert.Equal(t, 2, reqs[1].Attempt)
	assert.Equal(t, "boom", reqs[1].Diagnosis)
	assert.Equal(t, agent.FailureError, reqs[1].Failure)
	assert.Equal(t, 2, res.Tasks["err"].Attempts)
	assert.Equal(t, "fine", res.Tasks["err"].Output)
	assert.Empty(t, res.Tasks["err"].Diagnosis, "a task that passed reports no diagnosis")
	assert.Empty(t, res.Tasks["err"].Class)

	reqs = rec.requests("verdict")
	require.Len(t, reqs, 3)
	for k, q := range reqs {
		assert.Equal(t, k+1, q.Attempt)
		assert.Equal(t, "Write Y", q.Input)
	}
	for _, q := range reqs[1:] {
		assert.Equal(t, "want good", q.Diagnosis, "the diagnosis is the previous attempt's")
		assert.Equal(t, agent.FailureVerification, q.Failure)
	}
	assert.Equal(t, 3, res.Tasks["verdict"].Attempts)
	assert.Equal(t, "good", res.Tasks["verdict"].Output)
	assert.Empty(t, res.Tasks["verdict"].Diagnosis, "a task that passed reports no diagnosis")
}

// on_verification_failure retry retries verdicts only: an execution error
// on a retry follows on_failure.
func TestVerificationRetryThenErrorFollowsOnFailure(t *testing.T) {
	rec := newRecorder().on("a", byAttempt(output("bad"), fails(errBoom), output("good")))
	p := planOf(
		task("a", "in", onFailure(plan.PolicyStop), onVerify(plan.PolicyRetry), retries(5), verifies(`(= data/result "good")`)),
		task("b", "in", deps("a")),
	)
	res := run(t, p, rec)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.Equal(t, runner.TaskFailed, res.Tasks["a"].Status)
	assert.Equal(t, 2, res.Tasks["a"].Attempts)
	assert.Equal(t, 2, rec.count("a"))
	assert.ErrorIs(t, res.Tasks["a"].Err, errBoom)
	assert.ErrorIs(t, res.Err, errBoom)
	assert.Equal(t, runner.TaskPending, res.Tasks["b"].Status)
}

// on_failure retry retries errors only: a failed verdict on a retry follows
// on_verification_failure.
func TestErrorRetryThenVerdictFollowsOnVerificationFailure(t *testing.T) {
	rec := newRecorder().on("a", byAttempt(fails(errBoom), output("bad"), output("good")))
	p := planOf(task("a", "in", onFailure(plan.PolicyRetry), onVerify(plan.PolicySkip), retries(5), verifies(`(= data/result "good")`)))
	res := run(t, p, rec)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, runner.TaskSkipped, res.Tasks["a"].Status)
	assert.Equal(t, 2, res.Tasks["a"].Attempts)
	assert.ErrorIs(t, res.Tasks["a"].Err, runner.ErrVerification)
	assert.Equal(t, "bad", res.Tasks["a"].Output, "a failed task keeps the output that failed verification")
}

// Both kinds of failure draw on one max_retries budget.
func TestRetryBudgetShared(t *testing.T) {
	rec := newRecorder().on("a", byAttempt(fails(errBoom), output("bad"), fails(errBoom), output("good")))
	p := planOf(task("a", "in", onFailure(plan.PolicyRetry), onVerify(plan.PolicyRetry), retries(2), verifies(`(= data/result "good")`)))
	res := run(t, p, rec)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.Equal(t, runner.TaskFailed, res.Tasks["a"].Status)
	assert.Equal(t, 3, res.Tasks["a"].Attempts)
	assert.Equal(t, 3, rec.count("a"))
	assert.ErrorIs(t, res.Tasks["a"].Err, errBoom)
	reqs := rec.requests("a")
	assert.Equal(t, "in", reqs[1].Input)
	assert.Equal(t, "boom", reqs[1].Diagnosis)
	assert.Equal(t, agent.FailureError, reqs[1].Failure)
	assert.Equal(t, "in", reqs[2].Input)
	assert.Equal(t, `predicate returned false: (= data/result "good")`, reqs[2].Diagnosis)
	assert.Equal(t, agent.FailureVerification, reqs[2].Failure)
	assert.Equal(t, runner.ClassAgentError, res.Tasks["a"].Class)
}

// max_retries 0 means one attempt.
func TestRetryZeroRetries(t *testing.T) {
	rec := newRecorder().on("a", fails(errBoom))
	res := run(t, planOf(task("a", "in", onFailure(plan.PolicyRetry), retries(0), nonCritical())), rec)
	assert.Equal(t, runner.TaskSkipped, res.Tasks["a"].Status)
	assert.Equal(t, 1, res.Tasks["a"].Attempts)
	assert.Equal(t, 1, rec.count("a"))
}

// Retries wait as the backoff says, and a task that succeeds on a retry is
// done with its diagnosis history in Diagnosis.
func TestRetryBackoffWaits(t *testing.T) {
	rec := newRecorder().on("a", byAttempt(fails(errBoom), fails(errBoom), output("ok")))
	start := time.Now()
	res := run(t, planOf(task("a", "in", onFailure(plan.PolicyRetry))), rec,
		runner.WithBackoff(runner.Backoff{Initial: 40 * time.Millisecond, Coefficient: 2}))
	elapsed := time.Since(start)
	assert.Equal(t, runner.TaskDone, res.Tasks["a"].Status)
	assert.Equal(t, 3, res.Tasks["a"].Attempts)
	assert.GreaterOrEqual(t, elapsed, 120*time.Millisecond, "two retries wait 40ms + 80ms")
}

// A dependent of a skipped task runs without it: absent from Depends,
// listed in Skipped, its templates and inputs empty.
func TestSkippedDependency(t *testing.T) {
	rec := newRecorder().
		on("a", fails(errBoom)).
		on("b", output(map[string]any{"v": "B"}))
	p := planOf(
		task("a", "in", onFailure(plan.PolicySkip)),
		task("b", "in"),
		task("c", "a=[{{results.a}}] a.x=[{{results.a.x}}] b=[{{results.b.v}}]", deps("a", "b"),
			inputs(map[string]plan.InputRef{"fromA": {From: "a", Slot: "x"}, "fromB": {From: "b", Slot: "v"}})),
	)
	res := run(t, p, rec)
	require.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, runner.TaskSkipped, res.Tasks["a"].Status)
	assert.ErrorIs(t, res.Tasks["a"].Err, errBoom)
	require.Equal(t, 1, rec.count("c"))
	req := rec.requests("c")[0]
	assert.Equal(t, "a=[] a.x=[] b=[B]", req.Input)
	assert.Equal(t, map[string]any{"b": map[string]any{"v": "B"}}, req.Depends)
	assert.Equal(t, []string{"a"}, req.Skipped)
	assert.Equal(t, map[string]any{"fromB": "B"}, req.Inputs)
	assert.Equal(t, runner.TaskDone, res.Tasks["c"].Status)
}

// Result.Replan names the task, its last output, the diagnosis, and the
// completed tasks in plan order.
func TestReplanRequest(t *testing.T) {
	t.Run("verdict", func(t *testing.T) {
		rec := newRecorder().on("check", output(map[string]any{"n": 1}))
		p := planOf(
			task("zeta", "in"),
			task("alpha", "in"),
			task("mid", "in", deps("zeta")),
			task("check", "in", deps("alpha", "mid"), verifies(`(if (> (:n data/result) 3) true "n must be over 3")`), onVerify(plan.PolicyReplan)),
			task("after", "in", deps("check")),
		)
		res := run(t, p, rec)
		assert.Equal(t, runner.StatusReplanRequired, res.Status)
		assert.NoError(t, res.Err)
		require.NotNil(t, res.Replan)
		assert.Equal(t, &runner.ReplanRequest{
			TaskID:    "check",
			Output:    map[string]any{"n": 1},
			Diagnosis: "n must be over 3",
			Completed: []string{"zeta", "alpha", "mid"},
		}, res.Replan)
		assert.Equal(t, runner.TaskFailed, res.Tasks["check"].Status)
		assert.Equal(t, 1, rec.count("check"), "replan does not retry")
		assert.Equal(t, runner.TaskPending, res.Tasks["after"].Status)
		assert.Equal(t, map[string]any{"zeta": "ok", "alpha": "ok", "mid": "ok"}, res.Outputs())
	})
	t.Run("error", func(t *testing.T) {
		rec := newRecorder().on("a", fails(errBoom))
		res := run(t, planOf(task("a", "in", onFailure(plan.PolicyReplan), retries(3))), rec)
		assert.Equal(t, runner.StatusReplanRequired, res.Status)
		require.NotNil(t, res.Replan)
		assert.Equal(t, "a", res.Replan.TaskID)
		assert.Nil(t, res.Replan.Output)
		assert.Equal(t, "boom", res.Replan.Diagnosis)
		assert.Empty(t, res.Replan.Completed)
		assert.Equal(t, 1, rec.count("a"))
	})
}

// A phase that both halts on a failure and leaves a review waiting ends the
// run failed, with the review still listed.
func TestHaltAndWaitingIsFailed(t *testing.T) {
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(s.String(), func(t *testing.T) {
			rec := newRecorder().on("bad", fails(errBoom))
			p := planOf(
				task("rev", "Look", review()),
				task("bad", "in"),
			)
			res := run(t, p, rec, runner.WithSchedule(s))
			assert.Equal(t, runner.StatusFailed, res.Status)
			assert.ErrorIs(t, res.Err, errBoom)
			assert.Equal(t, runner.TaskWaiting, res.Tasks["rev"].Status)
			assert.Equal(t, runner.TaskFailed, res.Tasks["bad"].Status)
			require.Len(t, res.PendingReviews, 1)
			assert.Equal(t, "rev", res.PendingReviews[0].TaskID)
		})
	}
}

// Task errors keep their type through the runner.
func TestTaskErrorUnwraps(t *testing.T) {
	rec := newRecorder().on("a", fails(&codeErr{code: 7, err: errBoom}))
	res := run(t, planOf(task("a", "in")), rec)
	var ce *codeErr
	require.ErrorAs(t, res.Err, &ce)
	assert.Equal(t, 7, ce.code)
	assert.True(t, errors.Is(res.Err, errBoom))
	assert.Equal(t, "task a: boom", res.Err.Error())
}

type codeErr struct {
	code int
	err  error
}

func (e *codeErr) Error() string { return e.err.Error() }
func (e *codeErr) Unwrap() error { return e.err }

// A worker whose program is missing once had every retry of its task fail
// the same way after its backoff: it fails at once, as an agent error.
func TestMissingProgramNotRetried(t *testing.T) {
	noLeaks(t)
	missing := &agent.Command{Argv: []string{"dagent-no-such-program-xyz"}}
	p := planOf(task("a", "x", agentName("missing"), onFailure(plan.PolicyRetry), retries(3)))
	res, err := runner.New(runner.WithAgent("missing", missing), runner.WithBackoff(runner.Backoff{})).RunPlan(context.Background(), p)
	require.NoError(t, err)
	a := res.Tasks["a"]
	assert.Equal(t, runner.TaskFailed, a.Status)
	assert.Equal(t, 1, a.Attempts)
	assert.Equal(t, runner.ClassAgentError, a.Class)
	assert.ErrorIs(t, a.Err, agent.ErrCannotStart)
	assert.EqualError(t, a.Err, `command "dagent-no-such-program-xyz": cannot start: exec: "dagent-no-such-program-xyz": executable file not found in $PATH`)

	// Any other failure is retried as before.
	rec := newRecorder().on("b", fails(errors.New("flaky")))
	res = run(t, planOf(task("b", "x", onFailure(plan.PolicyRetry), retries(2))), rec)
	assert.Equal(t, 3, res.Tasks["b"].Attempts)
}

// A failure of a class WithoutRetryOn names is final: the task fails at its
// first attempt, whatever its retries; other classes are retried.
func TestWithoutRetryOn(t *testing.T) {
	noLeaks(t)
	refused := fmt.Errorf("llm agent: %w: rm", agent.ErrToolRefused)
	tests := []struct {
		name     string
		err      error
		opts     []runner.Option
		attempts int
	}{
		{"retried by default", refused, nil, 3},
		{"named: not retried", refused, []runner.Option{runner.WithoutRetryOn(runner.ClassToolRefused)}, 1},
		{"another class: retried", errors.New("flaky"), []runner.Option{runner.WithoutRetryOn(runner.ClassToolRefused)}, 3},
		{"a reported class", &agent.FailureReport{Class: "sandbox_violation", Message: "wrote outside"},
			[]runner.Option{runner.WithoutRetryOn("sandbox_violation")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, tt.err })
			opts := append([]runner.Option{runner.WithAgent("w", a), runner.WithBackoff(runner.Backoff{})}, tt.opts...)
			p := planOf(task("a", "x", agentName("w"), onFailure(plan.PolicyRetry), retries(2)))
			res, err := runner.New(opts...).RunPlan(context.Background(), p)
			require.NoError(t, err)
			assert.Equal(t, runner.TaskFailed, res.Tasks["a"].Status)
			assert.Equal(t, tt.attempts, res.Tasks["a"].Attempts)
		})
	}
}
