package runnertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// testSkippedDependencies: a task skipped by its condition is skipped like
// any other — a gate and a review too: its dependents run, the skipped
// task named in the request's Skipped and absent from its Depends, its
// templates empty and its inputs left out; a skipped review waits for no
// one.
func testSkippedDependencies(t *testing.T, k *kit) {
	for _, sched := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(sched.String(), func(t *testing.T) {
			rec := newRecorder().on("triage", output(map[string]any{"severity": "low"}))
			low := when(`(= (get-in data/depends ["triage" "severity"]) "high")`)
			p := planOf(
				task("triage", "rate it"),
				task("page", "page", deps("triage"), low),
				task("merge", "merge", deps("triage"), gate(), low),
				task("approve", "approve", deps("triage"), review(), low),
				task("report", "report {{results.page}}", deps("page", "merge", "approve"),
					inputs(map[string]plan.InputRef{"paged": {From: "page"}})),
				task("follow_up", "follow up", deps("page"), when(`(contains? data/depends "page")`)),
				task("last", "last", deps("follow_up", "report")),
			)
			s := scenarioOf(p, rec)
			s.Schedule = sched
			res, _ := k.run(t, s)
			completed(t, res)
			for _, id := range []string{"page", "merge", "approve", "follow_up"} {
				assert.Equal(t, runner.TaskSkipped, res.Tasks[id].Status, id)
				assert.Equal(t, runner.ClassConditionNotMet, res.Tasks[id].Class, id)
				assert.Zero(t, res.Tasks[id].Attempts, id)
				assert.Zero(t, rec.count(id), "%s never ran", id)
			}
			checkTask(t, res, "report", done(1, "ok"))
			checkTask(t, res, "last", done(1, "ok"))
			req := rec.requests("report")
			require.Len(t, req, 1)
			assert.Equal(t, []string{"page", "merge", "approve"}, req[0].Skipped)
			assert.Empty(t, req[0].Depends)
			assert.Equal(t, "report ", req[0].Input, "a skipped task's template is empty")
			assert.Empty(t, req[0].Inputs, "a slot wired from a skipped task is left out")
			assert.Equal(t, []string{"follow_up"}, rec.requests("last")[0].Skipped)
		})
	}
}

// testUsage: a task's usage is that of all its attempts and of its
// judgements, the run's that of all its tasks; the final events carry
// them.
func testUsage(t *testing.T, k *kit) {
	u := agent.Usage{PromptTokens: 10, CompletionTokens: 1}
	a := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		if req.TaskID == "r" && req.Attempt == 1 {
			return agent.Result{Usage: u}, errBoom
		}
		return agent.Result{Output: "ok", Usage: u}, nil
	})
	j := &scriptedJudge{verdicts: []runner.Verdict{
		{Pass: false, Reason: "thin", Usage: agent.Usage{PromptTokens: 5, CompletionTokens: 3}},
		{Pass: true, Usage: agent.Usage{PromptTokens: 5, CompletionTokens: 1}},
	}}
	p := planOf(task("r", "in", onFailure(plan.PolicyRetry), retries(1)), task("s", "in"), task("j", "in", deps("s"), rubric("full"), retries(1)))
	s := Scenario{Plan: p, Agents: map[string]agent.Agent{worker: a}, Judge: j, Concurrency: 1}
	res, evs := k.run(t, s)
	completed(t, res)
	assert.Equal(t, agent.Usage{PromptTokens: 20, CompletionTokens: 2}, res.Tasks["r"].Usage)
	assert.Equal(t, u, res.Tasks["s"].Usage)
	assert.Equal(t, agent.Usage{PromptTokens: 30, CompletionTokens: 6}, res.Tasks["j"].Usage, "two attempts and two judgements")
	assert.Equal(t, agent.Usage{PromptTokens: 60, CompletionTokens: 9}, res.Usage)
	for _, id := range []string{"r", "s", "j"} {
		evs := of(evs, id)
		assert.Equal(t, res.Tasks[id].Usage, evs[len(evs)-1].Usage, "the final event of %s", id)
	}
	assert.Equal(t, res.Usage, evs[len(evs)-1].Usage, "run_finished")
}
