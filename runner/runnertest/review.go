package runnertest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// reviewPlan: draft → rev (human review) → publish; an independent chain
// i1 → i2 → i3 → i4 spans the same phases and more.
func reviewPlan(revMods ...mod) *plan.Plan {
	return planOf(
		task("draft", "Write"),
		task("rev", "Check this draft: {{results.draft}}", append([]mod{deps("draft"), review()}, revMods...)...),
		task("publish", "Publish {{results.rev}}", deps("rev")),
		task("i1", "in"),
		task("i2", "in", deps("i1")),
		task("i3", "in", deps("i2")),
		task("i4", "in", deps("i3")),
	)
}

// testReviewWaits: a review without a decision waits, with its prompt and
// what it judges; its downstream stays pending, everything else runs, and
// the run is waiting. Run again with the outputs and the decision, it
// resumes without running anything done again.
func testReviewWaits(t *testing.T, k *kit) {
	for _, sched := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(sched.String(), func(t *testing.T) {
			rec := newRecorder().on("draft", output("the draft"))
			s := scenarioOf(reviewPlan(), rec)
			s.Schedule = sched
			res, evs := k.run(t, s)
			assert.Equal(t, runner.StatusWaiting, res.Status)
			assert.NoError(t, res.Err)
			assert.Nil(t, res.Replan)
			assert.Equal(t, map[string]runner.TaskStatus{
				"draft": runner.TaskDone, "rev": runner.TaskWaiting, "publish": runner.TaskPending,
				"i1": runner.TaskDone, "i2": runner.TaskDone, "i3": runner.TaskDone, "i4": runner.TaskDone,
			}, statuses(res))
			assert.Equal(t, []runner.PendingReview{{
				TaskID:   "rev",
				Prompt:   "Check this draft: the draft",
				Upstream: map[string]any{"draft": "the draft"},
			}}, res.PendingReviews)
			checkTask(t, res, "rev", want{status: runner.TaskWaiting})
			assert.Equal(t, []runner.EventKind{runner.EventTaskStarted, runner.EventTaskWaiting}, kinds(of(evs, "rev")))
			assert.Zero(t, rec.count("publish"))
			assert.Zero(t, rec.count("rev"), "a review calls no agent")

			rec2 := newRecorder()
			s2 := scenarioOf(reviewPlan(), rec2)
			s2.Schedule = sched
			s2.Initial = res.Outputs()
			s2.Reviews = map[string]runner.Decision{"rev": runner.Approve()}
			res2, _ := k.run(t, s2)
			completed(t, res2)
			assert.Equal(t, []string{"publish"}, rec2.started(), "only what was not done runs")
			checkTask(t, res2, "rev", done(1, "approve"))
			req := rec2.requests("publish")[0]
			assert.Equal(t, "Publish approve", req.Input)
			assert.Equal(t, map[string]any{"rev": "approve"}, req.Depends)
			for _, id := range []string{"draft", "i1", "i2", "i3", "i4"} {
				checkTask(t, res2, id, want{status: runner.TaskDone, output: res.Tasks[id].Output})
			}
		})
	}
}

// testReviewDecisions: an approved decision's output becomes the task's
// output and is verified like any output; a rejection fails the task with
// ErrRejected through on_failure. A decision is never retried.
func testReviewDecisions(t *testing.T, k *kit) {
	cases := []struct {
		name     string
		mods     []mod
		decision runner.Decision
		rev      want
		run      runner.Status
		publish  runner.TaskStatus
	}{
		{name: "approve", decision: runner.Approve(),
			rev: done(1, "approve"), run: runner.StatusCompleted, publish: runner.TaskDone},
		{name: "approve with output", decision: runner.Decision{Approved: true, Output: map[string]any{"text": "edited"}},
			rev: done(1, map[string]any{"text": "edited"}), run: runner.StatusCompleted, publish: runner.TaskDone},
		{name: "approved output verified", mods: []mod{verifies(`(= data/result "yes")`)}, decision: runner.Decision{Approved: true, Output: "yes"},
			rev: done(1, "yes"), run: runner.StatusCompleted, publish: runner.TaskDone},
		{name: "reject stop critical", decision: runner.Reject("too long"),
			rev: want{status: runner.TaskFailed, attempts: 1, class: runner.ClassRejected, diagnosis: "rejected by the reviewer: too long", err: runner.ErrRejected},
			run: runner.StatusFailed, publish: runner.TaskPending},
		{name: "reject retry critical", mods: []mod{onFailure(plan.PolicyRetry), retries(3)}, decision: runner.Reject("too long"),
			rev: want{status: runner.TaskFailed, attempts: 1, class: runner.ClassRejected, diagnosis: "rejected by the reviewer: too long", err: runner.ErrRejected},
			run: runner.StatusFailed, publish: runner.TaskPending},
		{name: "reject skip", mods: []mod{onFailure(plan.PolicySkip)}, decision: runner.Reject(""),
			rev: want{status: runner.TaskSkipped, attempts: 1, class: runner.ClassRejected, diagnosis: "rejected by the reviewer", err: runner.ErrRejected},
			run: runner.StatusCompleted, publish: runner.TaskDone},
		{name: "reject replan", mods: []mod{onFailure(plan.PolicyReplan)}, decision: runner.Reject("wrong approach"),
			rev: want{status: runner.TaskFailed, attempts: 1, class: runner.ClassRejected, diagnosis: "rejected by the reviewer: wrong approach", err: runner.ErrRejected},
			run: runner.StatusReplanRequired, publish: runner.TaskPending},
		{name: "approved output fails verification", mods: []mod{verifies(`(= data/result "yes")`), onVerify(plan.PolicyRetry)},
			decision: runner.Decision{Approved: true, Output: "no"},
			rev:      want{status: runner.TaskFailed, attempts: 1, class: runner.ClassVerification, diagnosis: `predicate returned false: (= data/result "yes")`, output: "no", err: runner.ErrVerification},
			run:      runner.StatusFailed, publish: runner.TaskPending},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := newRecorder().on("draft", output("the draft"))
			s := scenarioOf(reviewPlan(c.mods...), rec)
			s.Reviews = map[string]runner.Decision{"rev": c.decision}
			res, _ := k.run(t, s)
			checkTask(t, res, "rev", c.rev)
			assert.Equal(t, c.run, res.Status)
			assert.Equal(t, c.publish, res.Tasks["publish"].Status)
			assert.Empty(t, res.PendingReviews)
			assert.Equal(t, 1, rec.count("draft"))
			switch c.run {
			case runner.StatusFailed:
				failedBy(t, res, "rev", c.rev.err)
			case runner.StatusReplanRequired:
				require.NotNil(t, res.Replan)
				assert.Equal(t, "rev", res.Replan.TaskID)
				assert.Equal(t, c.rev.diagnosis, res.Replan.Diagnosis)
			}
		})
	}
}

// testParallelReviews: two reviews in one phase both wait, in plan order;
// deciding one leaves the other waiting.
func testParallelReviews(t *testing.T, k *kit) {
	p := func() *plan.Plan {
		return planOf(
			task("a", "in"),
			task("r1", "first {{results.a}}", deps("a"), review()),
			task("r2", "second", deps("a"), review()),
			task("after1", "in", deps("r1")),
		)
	}
	rec := newRecorder()
	res, _ := k.run(t, scenarioOf(p(), rec))
	assert.Equal(t, runner.StatusWaiting, res.Status)
	require.Len(t, res.PendingReviews, 2)
	assert.Equal(t, []string{"r1", "r2"}, []string{res.PendingReviews[0].TaskID, res.PendingReviews[1].TaskID})
	assert.Equal(t, "first ok", res.PendingReviews[0].Prompt)

	s := scenarioOf(p(), newRecorder())
	s.Initial = res.Outputs()
	s.Reviews = map[string]runner.Decision{"r1": runner.Approve()}
	res2, _ := k.run(t, s)
	assert.Equal(t, runner.StatusWaiting, res2.Status)
	require.Len(t, res2.PendingReviews, 1)
	assert.Equal(t, "r2", res2.PendingReviews[0].TaskID)
	assert.Equal(t, map[string]any{"a": "ok"}, res2.PendingReviews[0].Upstream)
	checkTask(t, res2, "after1", done(1, "ok"))
}
