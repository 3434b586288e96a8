package runner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/verify"
)

// The predicate sees the raw input (templates unexpanded), the output and
// the outputs of the direct dependencies, after every successful attempt.
func TestVerificationBindings(t *testing.T) {
	rec := newRecorder().
		on("up", output("U")).
		on("a", byAttempt(output(map[string]any{"n": 1}), output(map[string]any{"n": 5})))
	ev := &events{}
	pred := `(if (and (= data/input "use {{results.up}}") (= (get data/depends "up") "U") (> (:n data/result) 3))
  true
  (str "n is " (:n data/result)))`
	p := planOf(
		task("up", "in"),
		task("a", "use {{results.up}}", deps("up"), verifies(pred)),
	)
	res := run(t, p, rec, runner.WithObserver(ev))
	require.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, "use U", rec.requests("a")[0].Input, "the agent sees the expanded input")
	assert.Equal(t, 2, res.Tasks["a"].Attempts)
	var verdicts []bool
	var diags []string
	for _, e := range ev.of("a") {
		if e.Kind == runner.EventTaskVerified {
			verdicts = append(verdicts, e.Passed)
			diags = append(diags, e.Diagnosis)
			assert.NoError(t, e.Err)
		}
	}
	assert.Equal(t, []bool{false, true}, verdicts, "verified after every successful attempt")
	assert.Equal(t, []string{"n is 1", ""}, diags)
	assert.Empty(t, res.Tasks["a"].Diagnosis, "a task that passed reports no diagnosis; its failed attempt's is on its task_verified event")
	for _, e := range ev.of("a") {
		if e.Kind == runner.EventTaskFinished {
			assert.Empty(t, e.Diagnosis, "nor does its task_finished event")
		}
	}
}

// Verification does not run after a failed attempt.
func TestVerificationSkippedOnError(t *testing.T) {
	rec := newRecorder().on("a", byAttempt(fails(errBoom), output("good")))
	ev := &events{}
	res := run(t, planOf(task("a", "in", onFailure(plan.PolicyRetry), verifies(`(= data/result "good")`))), rec, runner.WithObserver(ev))
	require.Equal(t, runner.TaskDone, res.Tasks["a"].Status)
	assert.Equal(t, []runner.EventKind{
		runner.EventTaskStarted, runner.EventTaskRetried, runner.EventTaskVerified, runner.EventTaskFinished,
	}, kinds(ev.of("a")))
}

// A predicate that errors at run time is a task failure for on_failure, not
// a failed verdict.
func TestPredicateRuntimeErrorFollowsOnFailure(t *testing.T) {
	pred := `(> (:n data/result) 0)` // nil > 0: a runtime error
	cases := []struct {
		name     string
		mods     []mod
		status   runner.TaskStatus
		run      runner.Status
		attempts int
	}{
		{"on_failure skip, on_verification_failure retry", []mod{onFailure(plan.PolicySkip), onVerify(plan.PolicyRetry)}, runner.TaskSkipped, runner.StatusCompleted, 1},
		{"on_failure retry, on_verification_failure stop", []mod{onFailure(plan.PolicyRetry), onVerify(plan.PolicyStop), retries(3)}, runner.TaskFailed, runner.StatusFailed, 4},
		{"on_failure stop, on_verification_failure skip", []mod{onFailure(plan.PolicyStop), onVerify(plan.PolicySkip)}, runner.TaskFailed, runner.StatusFailed, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := newRecorder().on("a", output(map[string]any{"m": 1}))
			ev := &events{}
			res := run(t, planOf(task("a", "in", append(c.mods, verifies(pred))...)), rec, runner.WithObserver(ev))
			a := res.Tasks["a"]
			assert.Equal(t, c.status, a.Status)
			assert.Equal(t, c.run, res.Status)
			assert.Equal(t, c.attempts, a.Attempts)
			assert.Equal(t, c.attempts, rec.count("a"))
			assert.NotErrorIs(t, a.Err, runner.ErrVerification)
			var rte *verify.RuntimeError
			assert.ErrorAs(t, a.Err, &rte)
			assert.Contains(t, a.Diagnosis, "cannot compare nil")
			if c.attempts > 1 {
				retry := rec.requests("a")[1]
				assert.Equal(t, "in", retry.Input)
				assert.Equal(t, agent.FailureError, retry.Failure, "a predicate error is retried as an error")
				assert.True(t, strings.HasPrefix(retry.Diagnosis, "verification: "), retry.Diagnosis)
			}
			for _, e := range ev.of("a") {
				if e.Kind == runner.EventTaskVerified {
					assert.False(t, e.Passed)
					assert.Error(t, e.Err)
				}
			}
		})
	}
}

// A predicate that does not compile fails Run before any task starts.
func TestPredicateCompileError(t *testing.T) {
	noLeaks(t)
	rec := newRecorder()
	ev := &events{}
	p := planOf(
		task("a", "in"),
		task("b", "in", deps("a"), verifies(`(= data/result "x"`)),
	)
	res, err := runWithErr(t, p, rec, runner.WithObserver(ev))
	require.Error(t, err)
	assert.Nil(t, res)
	var pe *runner.PredicateError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "b", pe.TaskID)
	assert.True(t, strings.HasPrefix(err.Error(), "task b: verification: 1:"), err.Error())
	assert.ErrorIs(t, err, plan.ErrInvalid)
	var ce *verify.CompileError
	assert.ErrorAs(t, err, &ce)
	assert.Zero(t, rec.calls.Load())
	assert.Empty(t, ev.list(), "no event: the run never started")
}

// A task done from initial results does not need its predicate compiled:
// it never runs.
func TestPredicateOfInitialResultNotCompiled(t *testing.T) {
	rec := newRecorder()
	p := planOf(task("a", "in", verifies(`(broken`)), task("b", "in", deps("a")))
	res := run(t, p, rec, runner.WithInitialResults(map[string]any{"a": "A"}))
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, []string{"b"}, rec.ran())
}

// A synthesis gate fails on output that says nothing.
func TestGateOutputCheck(t *testing.T) {
	cases := []struct {
		out  any
		pass bool
	}{
		{"", false},
		{"   \n\t ", false},
		{"{}", false},
		{"[]", false},
		{map[string]any{}, false},
		{[]any{}, false},
		{nil, false},
		{"short", false},
		{"  123456789  ", false}, // 9 bytes once trimmed
		{"0123456789", true},     // 10 bytes
		{"  0123456789  ", true},
		{map[string]any{"summary": "ok"}, true}, // {"summary":"ok"} is 16 bytes
		{[]any{"a", "b", "c"}, true},            // ["a","b","c"]
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%q", fmt.Sprint(c.out)), func(t *testing.T) {
			rec := newRecorder().on("g", output(c.out))
			p := planOf(task("g", "sum up", gate(), nonCritical(), onVerify(plan.PolicyStop)))
			res := run(t, p, rec)
			g := res.Tasks["g"]
			assert.Equal(t, 1, g.Attempts)
			if c.pass {
				assert.Equal(t, runner.TaskDone, g.Status)
				assert.Equal(t, runner.StatusCompleted, res.Status)
				return
			}
			assert.Equal(t, runner.TaskFailed, g.Status, "a gate that fails is failed, never skipped")
			assert.ErrorIs(t, g.Err, runner.ErrGateOutput)
			assert.Equal(t, runner.StatusFailed, res.Status)
		})
	}
}

// The gate check is handled like a verification failure: on_verification_failure
// retry retries it with the diagnosis.
func TestGateOutputRetried(t *testing.T) {
	rec := newRecorder().on("g", byAttempt(output("tiny"), output("a long enough summary")))
	p := planOf(task("g", "Summarize", gate(), onFailure(plan.PolicyStop), onVerify(plan.PolicyRetry)))
	res := run(t, p, rec)
	require.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, 2, res.Tasks["g"].Attempts)
	retry := rec.requests("g")[1]
	assert.Equal(t, "Summarize", retry.Input)
	assert.Equal(t, agent.FailureVerification, retry.Failure)
	assert.Equal(t, "the synthesis gate's output is too short (4 bytes, at least 10 needed)", retry.Diagnosis)
}

// When a gate fails for good, everything downstream of it is skipped with
// ErrGateFailed without running, tasks not downstream still run, and the
// run fails naming the gate.
func TestGateFailureSkipsDownstream(t *testing.T) {
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		for _, how := range []string{"verdict", "error"} {
			t.Run(s.String()+"/"+how, func(t *testing.T) {
				rec := newRecorder()
				wantErr := runner.ErrGateOutput
				if how == "verdict" {
					rec.on("g", output("meh"))
				} else {
					rec.on("g", fails(errBoom))
					wantErr = errBoom
				}
				ev := &events{}
				p := planOf(
					task("a", "in"),
					task("b", "in"),
					task("g", "sum {{results.a}} {{results.b}}", deps("a", "b"), gate(), nonCritical(), retries(1),
						onFailure(plan.PolicyRetry), onVerify(plan.PolicyRetry)),
					task("d1", "in", deps("g")),
					task("d2", "in", deps("d1")),
					task("d3", "in", deps("g", "i1")),
					task("i1", "in"),
					task("i2", "in", deps("i1")),
					task("i3", "in", deps("i2")),
					task("i4", "in", deps("i3")),
				)
				res := run(t, p, rec, runner.WithSchedule(s), runner.WithObserver(ev))
				assert.Equal(t, runner.StatusFailed, res.Status)
				var te *runner.TaskError
				require.ErrorAs(t, res.Err, &te)
				assert.Equal(t, "g", te.TaskID)
				assert.ErrorIs(t, res.Err, wantErr)
				assert.Equal(t, runner.TaskFailed, res.Tasks["g"].Status)
				assert.Equal(t, 2, res.Tasks["g"].Attempts)
				for _, id := range []string{"d1", "d2", "d3"} {
					d := res.Tasks[id]
					assert.Equal(t, runner.TaskSkipped, d.Status, id)
					assert.ErrorIs(t, d.Err, runner.ErrGateFailed, id)
					assert.Zero(t, d.Attempts, id)
					assert.Zero(t, rec.count(id), id)
					assert.Equal(t, []runner.EventKind{runner.EventTaskSkipped}, kinds(ev.of(id)), id)
				}
				for _, id := range []string{"a", "b", "i1", "i2", "i3", "i4"} {
					assert.Equal(t, runner.TaskDone, res.Tasks[id].Status, "%s is not downstream of the gate", id)
					assert.Equal(t, 1, rec.count(id), id)
				}
			})
		}
	}
}

// A critical gate whose policy halts (stop, or retry exhausted) also halts
// the run, as the failure table says for any critical task: tasks not yet
// started stay pending. Running ones finish.
func TestCriticalGateHalts(t *testing.T) {
	rec := newRecorder().on("g", output(""))
	p := planOf(
		task("g", "sum", gate(), onVerify(plan.PolicyStop)),
		task("i1", "in"),
		task("d", "in", deps("g")),
		task("i2", "in", deps("i1")),
	)
	res := run(t, p, rec)
	assert.Equal(t, runner.StatusFailed, res.Status)
	var te *runner.TaskError
	require.ErrorAs(t, res.Err, &te)
	assert.Equal(t, "g", te.TaskID)
	assert.Equal(t, map[string]runner.TaskStatus{
		"g": runner.TaskFailed, "i1": runner.TaskDone, "d": runner.TaskSkipped, "i2": runner.TaskPending,
	}, statuses(res))
	assert.ErrorIs(t, res.Tasks["d"].Err, runner.ErrGateFailed)
}

// A gate whose policy is replan asks for a replan like any task.
func TestGateReplan(t *testing.T) {
	rec := newRecorder().on("g", output("x"))
	p := planOf(task("g", "sum", gate(), onVerify(plan.PolicyReplan)), task("d", "in", deps("g")))
	res := run(t, p, rec)
	assert.Equal(t, runner.StatusReplanRequired, res.Status)
	require.NotNil(t, res.Replan)
	assert.Equal(t, "g", res.Replan.TaskID)
	assert.Equal(t, "x", res.Replan.Output)
	assert.Equal(t, runner.TaskPending, res.Tasks["d"].Status)
}

// A gate's verification runs after its output check.
func TestGateWithVerification(t *testing.T) {
	rec := newRecorder().on("g", byAttempt(output("a long summary without the word"), output("a long summary with DONE")))
	p := planOf(task("g", "sum", gate(), verifies(`(if (includes? data/result "DONE") true "say DONE")`)))
	res := run(t, p, rec)
	require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Err)
	assert.Equal(t, 2, res.Tasks["g"].Attempts)
	assert.Equal(t, "say DONE", rec.requests("g")[1].Diagnosis)
}
