package runner_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

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
		return runner.Verdict{Usage: agent.Usage{PromptTokens: 1}}, s.err
	}
	v := s.verdicts[0]
	if len(s.verdicts) > 1 {
		s.verdicts = s.verdicts[1:]
	}
	return v, nil
}

func rubric(text string) mod { return func(t *plan.Task) { t.Rubric = text } }

func TestJudge(t *testing.T) {
	pass := runner.Verdict{Pass: true, Reason: "cites both", Usage: agent.Usage{PromptTokens: 10, CompletionTokens: 2}}
	fail := runner.Verdict{Pass: false, Reason: "cites no source", Usage: agent.Usage{PromptTokens: 10, CompletionTokens: 3}}
	tests := []struct {
		name     string
		task     plan.Task
		judge    *scriptedJudge
		status   runner.TaskStatus
		attempts int
		asked    int
		class    runner.Class
		diag     string
	}{
		{name: "pass", task: task("a", "in", rubric("cites sources")), judge: &scriptedJudge{verdicts: []runner.Verdict{pass}},
			status: runner.TaskDone, attempts: 1, asked: 1},
		{name: "fail, retry, pass", task: task("a", "in", rubric("cites sources"), retries(2)), judge: &scriptedJudge{verdicts: []runner.Verdict{fail, pass}},
			status: runner.TaskDone, attempts: 2, asked: 2},
		{name: "fail for good, skip", task: task("a", "in", rubric("cites sources"), onVerify(plan.PolicySkip)), judge: &scriptedJudge{verdicts: []runner.Verdict{fail}},
			status: runner.TaskSkipped, attempts: 1, asked: 1, class: runner.ClassVerification, diag: "cites no source"},
		{name: "predicate fails first: no judgement", task: task("a", "in", rubric("cites sources"), verifies("false"), onVerify(plan.PolicySkip)), judge: &scriptedJudge{verdicts: []runner.Verdict{pass}},
			status: runner.TaskSkipped, attempts: 1, asked: 0, class: runner.ClassVerification, diag: "predicate returned false: false"},
		{name: "no rubric: no judgement", task: task("a", "in"), judge: &scriptedJudge{verdicts: []runner.Verdict{fail}},
			status: runner.TaskDone, attempts: 1, asked: 0},
		{name: "budget spent: no retry", task: task("a", "in", rubric("cites sources"), retries(3), nonCritical()), judge: &scriptedJudge{err: llm.ErrBudgetExceeded},
			status: runner.TaskSkipped, attempts: 1, asked: 1, class: runner.ClassBudget, diag: "judge failed: llm: budget exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder().on("a", output("out"))
			res := run(t, planOf(tt.task), rec, runner.WithJudge(tt.judge))
			got := res.Tasks["a"]
			assert.Equal(t, tt.status, got.Status)
			assert.Equal(t, tt.attempts, got.Attempts)
			require.Len(t, tt.judge.asked, tt.asked)
			if tt.asked > 0 {
				assert.Equal(t, runner.JudgeRequest{RunID: res.RunID, TaskID: "a", Attempt: tt.asked, Input: "in", Rubric: "cites sources", Output: "out"}, tt.judge.asked[tt.asked-1])
			}
			assert.Equal(t, tt.class, runner.Classify(got.Err))
			assert.Equal(t, tt.diag, got.Diagnosis)
		})
	}
}

// The judge's reason is the retry's diagnosis, and what the judge spent is
// the task's usage.
func TestJudgeDiagnosisAndUsage(t *testing.T) {
	j := &scriptedJudge{verdicts: []runner.Verdict{
		{Pass: false, Reason: "cites no source", Usage: agent.Usage{PromptTokens: 10, CompletionTokens: 3}},
		{Pass: true, Usage: agent.Usage{PromptTokens: 10, CompletionTokens: 1}},
	}}
	rec := newRecorder().on("a", output("out"))
	ev := &events{}
	res := run(t, planOf(task("a", "in", rubric("cites sources"), retries(1))), rec, runner.WithJudge(j), runner.WithObserver(ev))
	require.Equal(t, runner.StatusCompleted, res.Status)
	reqs := rec.requests("a")
	require.Len(t, reqs, 2)
	assert.Equal(t, "cites no source", reqs[1].Diagnosis)
	assert.Equal(t, agent.FailureVerification, reqs[1].Failure)
	assert.Equal(t, agent.Usage{PromptTokens: 20, CompletionTokens: 4}, res.Tasks["a"].Usage)
	var verdicts []bool
	for _, e := range ev.of("a") {
		if e.Kind == runner.EventTaskVerified {
			verdicts = append(verdicts, e.Passed)
		}
	}
	assert.Equal(t, []bool{false, true}, verdicts)
}

// A critical task whose judge fails halts the run with the judge's error.
func TestJudgeErrorHalts(t *testing.T) {
	boom := errors.New("model unreachable")
	res := run(t, planOf(task("a", "in", rubric("r"), retries(2))), newRecorder().on("a", output("out")), runner.WithJudge(&scriptedJudge{err: boom}))
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.ErrorIs(t, res.Err, runner.ErrJudge)
	assert.ErrorIs(t, res.Err, boom)
	assert.Equal(t, 1, res.Tasks["a"].Attempts)
}

// A person's decision is final: a human review's rubric is not judged.
func TestJudgeSkipsReview(t *testing.T) {
	j := &scriptedJudge{verdicts: []runner.Verdict{{Pass: false}}}
	res := run(t, planOf(task("r", "ok?", review(), rubric("r"))), newRecorder(), runner.WithJudge(j),
		runner.WithReviews(map[string]runner.Decision{"r": {Approved: true, Output: "fine"}}))
	assert.Equal(t, runner.TaskDone, res.Tasks["r"].Status)
	assert.Empty(t, j.asked)
}

// stalledJudge never answers: it waits for its context to end.
type stalledJudge struct{}

func (stalledJudge) Judge(ctx context.Context, _ runner.JudgeRequest) (runner.Verdict, error) {
	<-ctx.Done()
	return runner.Verdict{}, ctx.Err()
}

// A judge that stalls is bounded by the task's timeout, and by the run's
// cancellation, as the attempt is: the run never hangs on it.
func TestJudgeStalls(t *testing.T) {
	noLeaks(t)
	p := planOf(task("a", "in", rubric("r")))
	within := func(t *testing.T, ctx context.Context, rn *runner.Runner) *runner.Result {
		t.Helper()
		done := make(chan *runner.Result, 1)
		go func() {
			res, _ := rn.RunPlan(ctx, p)
			done <- res
		}()
		select {
		case res := <-done:
			require.NotNil(t, res)
			return res
		case <-time.After(5 * time.Second):
			t.Fatal("the run hangs on a judge that stalls")
			return nil
		}
	}
	t.Run("task timeout", func(t *testing.T) {
		rn := runner.New(runner.WithAgent("w", newRecorder().on("a", output("out"))), runner.WithJudge(stalledJudge{}),
			runner.WithTaskTimeout(50*time.Millisecond))
		res := within(t, context.Background(), rn)
		assert.Equal(t, runner.TaskFailed, res.Tasks["a"].Status)
		assert.ErrorIs(t, res.Tasks["a"].Err, runner.ErrJudge)
		assert.ErrorIs(t, res.Tasks["a"].Err, context.DeadlineExceeded)
	})
	t.Run("run cancelled", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		rn := runner.New(runner.WithAgent("w", newRecorder().on("a", output("out"))), runner.WithJudge(stalledJudge{}))
		res := within(t, ctx, rn)
		assert.NotEqual(t, runner.TaskDone, res.Tasks["a"].Status)
		assert.ErrorContains(t, res.Tasks["a"].Err, "cancelled")
	})
}
