package runnertest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// testVerification: the predicate sees the rendered input, the
// dependencies' outputs and the result; it judges every successful
// attempt, with a task_verified event each, and a task that passes
// reports no diagnosis. It does not run after a failed attempt.
func testVerification(t *testing.T, k *kit) {
	rec := newRecorder().
		on("up", output("U")).
		on("a", byAttempt(fails(errBoom), output(map[string]any{"n": json.Number("1")}), output(map[string]any{"n": json.Number("5")})))
	pred := `(if (and (= data/input "use {{results.up}}") (= (get data/depends "up") "U") (> (:n data/result) 3))
  true
  (str "n is " (:n data/result)))`
	p := planOf(
		task("up", "in"),
		task("a", "use {{results.up}}", deps("up"), verifies(pred), onFailure(plan.PolicyRetry), retries(2)),
	)
	s := scenarioOf(p, rec)
	s.Concurrency = 1
	res, evs := k.run(t, s)
	completed(t, res)
	checkTask(t, res, "a", done(3, map[string]any{"n": json.Number("5")}))
	assert.Equal(t, "use U", rec.requests("a")[0].Input, "the agent sees the expanded input")
	assert.Equal(t, "n is 1", rec.requests("a")[2].Diagnosis)
	assert.Equal(t, agent.FailureVerification, rec.requests("a")[2].Failure)
	var verdicts []bool
	var diags []string
	for _, e := range of(evs, "a") {
		if e.Kind == runner.EventTaskVerified {
			verdicts = append(verdicts, e.Passed)
			diags = append(diags, e.Diagnosis)
			assert.NoError(t, e.Err)
		}
		if e.Kind == runner.EventTaskFinished {
			assert.Empty(t, e.Diagnosis, "task_finished has no diagnosis")
			assert.Equal(t, map[string]any{"n": json.Number("5")}, e.Output)
		}
	}
	assert.Equal(t, []bool{false, true}, verdicts, "verified after every successful attempt, not after the failed one")
	assert.Equal(t, []string{"n is 1", ""}, diags)
	assert.Equal(t, []step{
		{runner.EventRunStarted, "", 0, 0},
		{runner.EventPhaseStarted, "", 0, 0},
		{runner.EventTaskStarted, "up", 1, 0},
		{runner.EventTaskFinished, "up", 1, 0},
		{runner.EventPhaseFinished, "", 0, 0},
		{runner.EventPhaseStarted, "", 0, 1},
		{runner.EventTaskStarted, "a", 1, 0},
		{runner.EventTaskRetried, "a", 2, 0},
		{runner.EventTaskVerified, "a", 2, 0},
		{runner.EventTaskRetried, "a", 3, 0},
		{runner.EventTaskVerified, "a", 3, 0},
		{runner.EventTaskFinished, "a", 3, 0},
		{runner.EventPhaseFinished, "", 0, 1},
		{runner.EventRunFinished, "", 0, 0},
	}, steps(evs))
}

// testPredicateErrorFollowsOnFailure: a predicate that errors at run time
// is a task failure for on_failure, retried as an error, not a failed
// verdict.
func testPredicateErrorFollowsOnFailure(t *testing.T, k *kit) {
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
			rec := newRecorder().on("a", output(map[string]any{"m": json.Number("1")}))
			res, evs := k.run(t, scenarioOf(planOf(task("a", "in", append(c.mods, verifies(pred))...)), rec))
			a := res.Tasks["a"]
			assert.Equal(t, c.status, a.Status)
			assert.Equal(t, c.run, res.Status)
			assert.Equal(t, c.attempts, a.Attempts)
			assert.Equal(t, c.attempts, rec.count("a"))
			assert.Equal(t, runner.ClassAgentError, a.Class)
			assert.NotErrorIs(t, a.Err, runner.ErrVerification)
			assert.Contains(t, a.Diagnosis, "cannot compare nil")
			assert.Regexp(t, "^verification: ", a.Diagnosis)
			assert.Equal(t, map[string]any{"m": json.Number("1")}, a.Output, "the output that failed is kept")
			if c.attempts > 1 {
				retry := rec.requests("a")[1]
				assert.Equal(t, agent.FailureError, retry.Failure, "a predicate error is retried as an error")
				assert.Regexp(t, "^verification: ", retry.Diagnosis)
			}
			verified := 0
			for _, e := range of(evs, "a") {
				if e.Kind == runner.EventTaskVerified {
					verified++
					assert.False(t, e.Passed)
					assert.Error(t, e.Err)
				}
			}
			assert.Equal(t, c.attempts, verified)
		})
	}
}

const itemsSchema = `{"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "minItems": 1, "items": {"type": "string"}}}}`

func withSchema(src string) mod {
	return func(t *plan.Task) { t.OutputSchema = json.RawMessage(src) }
}

// testOutputSchema: the schema reaches the agent; an output that does not
// match it fails like a verification, retried with the schema's
// complaints, and for good is invalid_output.
func testOutputSchema(t *testing.T, k *kit) {
	rec := newRecorder().
		on("a", byAttempt(
			output(map[string]any{"items": []any{}}),
			output(map[string]any{"items": []any{1}}),
			output(map[string]any{"items": []any{"x"}}),
		)).
		on("b", output("plain text"))
	p := planOf(
		task("a", "list", withSchema(itemsSchema), retries(2)),
		task("b", "list", withSchema(itemsSchema), retries(1), nonCritical()),
	)
	res, _ := k.run(t, scenarioOf(p, rec))
	completed(t, res)
	checkTask(t, res, "a", done(3, map[string]any{"items": []any{"x"}}))
	reqs := rec.requests("a")
	require.Len(t, reqs, 3)
	assert.JSONEq(t, itemsSchema, string(reqs[0].OutputSchema))
	assert.Contains(t, reqs[1].Diagnosis, "the output does not match the task's output_schema: at /items: ")
	assert.Contains(t, reqs[2].Diagnosis, "at /items/0: ")
	assert.Equal(t, agent.FailureVerification, reqs[1].Failure)
	checkTask(t, res, "b", want{status: runner.TaskSkipped, attempts: 2, class: runner.ClassInvalidOutput, output: "plain text",
		diagnosis: "the output does not match the task's output_schema: ", diagPrefix: true, err: runner.ErrOutputSchema})
}

// testGateOutput: a synthesis gate whose output says nothing fails its
// check as a verification, retried with the diagnosis; its predicate runs
// after the check.
func testGateOutput(t *testing.T, k *kit) {
	rec := newRecorder().
		on("g", byAttempt(output("tiny"), output("a long enough summary"), output("a long summary with DONE"))).
		on("h", output(map[string]any{}))
	p := planOf(
		task("g", "Summarize", gate(), onFailure(plan.PolicyStop), onVerify(plan.PolicyRetry), retries(3),
			verifies(`(if (includes? data/result "DONE") true "say DONE")`)),
		task("h", "Summarize", gate(), nonCritical(), onVerify(plan.PolicyStop)),
	)
	res, _ := k.run(t, scenarioOf(p, rec))
	checkTask(t, res, "g", done(3, "a long summary with DONE"))
	reqs := rec.requests("g")
	require.Len(t, reqs, 3)
	assert.Equal(t, "Summarize", reqs[1].Input)
	assert.Equal(t, agent.FailureVerification, reqs[1].Failure)
	assert.Equal(t, "the synthesis gate's output is too short (4 bytes, at least 10 needed)", reqs[1].Diagnosis)
	assert.Equal(t, "say DONE", reqs[2].Diagnosis)
	checkTask(t, res, "h", want{status: runner.TaskFailed, attempts: 1, class: runner.ClassVerification, output: map[string]any{},
		diagnosis: "", diagPrefix: true, err: runner.ErrGateOutput})
	failedBy(t, res, "h", runner.ErrGateOutput)
}

// testGateFailureSkipsDownstream: when a gate fails for good, everything
// downstream of it is skipped with gate_failed without running, the tasks
// not downstream still run, and the run fails naming the gate.
func testGateFailureSkipsDownstream(t *testing.T, k *kit) {
	for _, sched := range []runner.Schedule{runner.Phased, runner.Eager} {
		for _, how := range []string{"verdict", "error"} {
			t.Run(sched.String()+"/"+how, func(t *testing.T) {
				rec := newRecorder()
				var wantErr error
				gw := want{status: runner.TaskFailed, attempts: 2}
				if how == "verdict" {
					rec.on("g", output("meh"))
					wantErr = runner.ErrGateOutput
					gw.class, gw.output, gw.err = runner.ClassVerification, "meh", wantErr
					gw.diagnosis = "the synthesis gate's output is too short (3 bytes, at least 10 needed)"
				} else {
					rec.on("g", fails(errBoom))
					gw.class, gw.diagnosis = runner.ClassAgentError, "boom"
				}
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
				s := scenarioOf(p, rec)
				s.Schedule = sched
				res, evs := k.run(t, s)
				failedBy(t, res, "g", wantErr)
				assert.ErrorContains(t, res.Err, gw.diagnosis)
				checkTask(t, res, "g", gw)
				for _, id := range []string{"d1", "d2", "d3"} {
					checkTask(t, res, id, want{status: runner.TaskSkipped, class: runner.ClassGateFailed, err: runner.ErrGateFailed})
					assert.Zero(t, rec.count(id), id)
					assert.Equal(t, []runner.EventKind{runner.EventTaskSkipped}, kinds(of(evs, id)), id)
				}
				for _, id := range []string{"a", "b", "i1", "i2", "i3", "i4"} {
					checkTask(t, res, id, done(1, "ok"))
				}
			})
		}
	}
}

// testCriticalGateHalts: a critical gate whose policy halts also halts the
// run: tasks not yet started stay pending, running ones finish.
func testCriticalGateHalts(t *testing.T, k *kit) {
	gCalled := newSignal()
	rec := newRecorder().on("g", firing(gCalled, output(""))).on("i1", after(gCalled, output("ok")))
	p := planOf(
		task("g", "sum", gate(), onVerify(plan.PolicyStop)),
		task("i1", "in"),
		task("d", "in", deps("g")),
		task("i2", "in", deps("i1")),
	)
	res, _ := k.run(t, scenarioOf(p, rec))
	failedBy(t, res, "g", runner.ErrGateOutput)
	assert.Equal(t, map[string]runner.TaskStatus{
		"g": runner.TaskFailed, "i1": runner.TaskDone, "d": runner.TaskSkipped, "i2": runner.TaskPending,
	}, statuses(res))
	checkTask(t, res, "d", want{status: runner.TaskSkipped, class: runner.ClassGateFailed, err: runner.ErrGateFailed})
	checkTask(t, res, "i2", want{status: runner.TaskPending})
}

// testGateReplan: a gate whose policy is replan asks for a replan like any
// task.
func testGateReplan(t *testing.T, k *kit) {
	rec := newRecorder().on("g", output("x"))
	p := planOf(task("g", "sum", gate(), onVerify(plan.PolicyReplan)), task("d", "in", deps("g")))
	res, _ := k.run(t, scenarioOf(p, rec))
	assert.Equal(t, runner.StatusReplanRequired, res.Status)
	assert.NoError(t, res.Err)
	require.NotNil(t, res.Replan)
	assert.Equal(t, runner.ReplanRequest{TaskID: "g", Output: "x", Diagnosis: "the synthesis gate's output is too short (1 bytes, at least 10 needed)"}, *res.Replan)
	checkTask(t, res, "g", want{status: runner.TaskFailed, attempts: 1, class: runner.ClassVerification, output: "x",
		diagnosis: res.Replan.Diagnosis, err: runner.ErrGateOutput})
	checkTask(t, res, "d", want{status: runner.TaskPending})
}

// scriptedJudge answers with its verdicts in turn and records what it was
// asked.
type scriptedJudge struct {
	mu       sync.Mutex
	verdicts []runner.Verdict
	err      error
	asked    []runner.JudgeRequest
}

func (s *scriptedJudge) Judge(_ context.Context, req runner.JudgeRequest) (runner.Verdict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, req)
	if s.err != nil {
		return runner.Verdict{}, s.err
	}
	v := s.verdicts[0]
	if len(s.verdicts) > 1 {
		s.verdicts = s.verdicts[1:]
	}
	return v, nil
}

func (s *scriptedJudge) requests() []runner.JudgeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]runner.JudgeRequest(nil), s.asked...)
}

// testJudge: a rubric is judged once the predicate passes; a failed
// verdict is a verification failure whose reason is the retry's
// diagnosis; a judge that reaches no verdict fails the task for
// on_failure without a retry; a review's rubric is never judged.
func testJudge(t *testing.T, k *kit) {
	pass := runner.Verdict{Pass: true, Reason: "cites both"}
	fail := runner.Verdict{Pass: false, Reason: "cites no source"}
	unreachable := errors.New("model unreachable")
	tests := []struct {
		name   string
		task   plan.Task
		judge  *scriptedJudge
		want   want
		asked  int
		halted bool
	}{
		{name: "pass", task: task("a", "in", rubric("cites sources")), judge: &scriptedJudge{verdicts: []runner.Verdict{pass}},
			want: done(1, "out"), asked: 1},
		{name: "fail, retry, pass", task: task("a", "in", rubric("cites sources"), retries(2)), judge: &scriptedJudge{verdicts: []runner.Verdict{fail, pass}},
			want: done(2, "out"), asked: 2},
		{name: "fail for good, skip", task: task("a", "in", rubric("cites sources"), onVerify(plan.PolicySkip)), judge: &scriptedJudge{verdicts: []runner.Verdict{fail}},
			want: want{status: runner.TaskSkipped, attempts: 1, class: runner.ClassVerification, diagnosis: "cites no source", output: "out", err: runner.ErrRubric}, asked: 1},
		{name: "predicate fails first: no judgement", task: task("a", "in", rubric("cites sources"), verifies("false"), onVerify(plan.PolicySkip)), judge: &scriptedJudge{verdicts: []runner.Verdict{pass}},
			want: want{status: runner.TaskSkipped, attempts: 1, class: runner.ClassVerification, diagnosis: "predicate returned false: false", output: "out", err: runner.ErrVerification}},
		{name: "no rubric: no judgement", task: task("a", "in"), judge: &scriptedJudge{verdicts: []runner.Verdict{fail}},
			want: done(1, "out")},
		{name: "no verdict: final, for on_failure", task: task("a", "in", rubric("cites sources"), retries(3), onFailure(plan.PolicyRetry), onVerify(plan.PolicySkip)),
			judge: &scriptedJudge{err: unreachable}, asked: 1, halted: true,
			want: want{status: runner.TaskFailed, attempts: 1, class: runner.ClassAgentError, diagnosis: "judge failed: model unreachable", output: "out", err: runner.ErrJudge}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder().on("a", output("out"))
			s := scenarioOf(planOf(tt.task), rec)
			s.Judge = tt.judge
			res, _ := k.run(t, s)
			checkTask(t, res, "a", tt.want)
			asked := tt.judge.requests()
			require.Len(t, asked, tt.asked)
			if tt.asked > 0 {
				assert.Equal(t, runner.JudgeRequest{RunID: runID, TaskID: "a", Attempt: tt.asked, Input: "in", Rubric: "cites sources", Output: "out"}, asked[tt.asked-1])
			}
			if tt.asked > 1 {
				q := rec.requests("a")[1]
				assert.Equal(t, "cites no source", q.Diagnosis)
				assert.Equal(t, agent.FailureVerification, q.Failure)
			}
			if tt.halted {
				failedBy(t, res, "a", runner.ErrJudge)
			} else {
				completed(t, res)
			}
		})
	}
	t.Run("review not judged", func(t *testing.T) {
		j := &scriptedJudge{verdicts: []runner.Verdict{fail}}
		s := scenarioOf(planOf(task("r", "ok?", review(), rubric("r"))), newRecorder())
		s.Judge = j
		s.Reviews = map[string]runner.Decision{"r": {Approved: true, Output: "fine"}}
		res, _ := k.run(t, s)
		completed(t, res)
		checkTask(t, res, "r", done(1, "fine"))
		assert.Empty(t, j.requests())
	})
}
