package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"

	"github.com/dagent-dev/dagent/internal/llmtest"
	"github.com/dagent-dev/dagent/temporal"
)

// task is a task of a generated plan.
type task struct {
	ID        string   `json:"id"`
	Agent     string   `json:"agent,omitempty"`
	Type      string   `json:"type,omitempty"`
	Input     string   `json:"input,omitempty"`
	DependsOn []string `json:"depends_on,omitempty"`
	OnFailure string   `json:"on_failure,omitempty"`
}

type planDoc struct {
	Mission string `json:"mission,omitempty"`
	Tasks   []task `json:"tasks"`
}

// fanPlan is a plan of blocks × (1 + width) tasks of the step worker:
// each block a hub fanning out to width leaves, which all fan in to the
// next block's hub.
func fanPlan(blocks, width int) planDoc {
	var p planDoc
	var prev []string
	for b := range blocks {
		hub := fmt.Sprintf("hub%02d", b)
		p.Tasks = append(p.Tasks, task{ID: hub, Agent: "step", DependsOn: prev})
		prev = nil
		for l := range width {
			id := fmt.Sprintf("b%02d_%03d", b, l)
			p.Tasks = append(p.Tasks, task{ID: id, Agent: "step", DependsOn: []string{hub}})
			prev = append(prev, id)
		}
	}
	return p
}

// waitClosed waits for the run's workflow to end.
func waitClosed(t *testing.T, runID string, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	_ = env.srv.Client().GetWorkflow(ctx, runID, "").Get(ctx, nil)
	require.NoError(t, ctx.Err(), "run %s did not end within %v", runID, limit)
}

// attemptActivities counts, in the run's history, the attempt activities
// scheduled and those whose result was recorded.
func attemptActivities(t *testing.T, runID string) (scheduled, completed int) {
	t.Helper()
	ctx := context.Background()
	types := map[int64]string{}
	it := env.srv.Client().GetWorkflowHistory(ctx, runID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		switch e.GetEventType() {
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			name := e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			types[e.GetEventId()] = name
			if name == temporal.ActivityAttempt {
				scheduled++
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if types[e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] == temporal.ActivityAttempt {
				completed++
			}
		}
	}
	return scheduled, completed
}

// checkExactlyOnce checks a completed run of the step worker's tasks: every
// task done on its first attempt with its own key as output, the key in
// the workers' log, and each task's attempt scheduled once and recorded
// once in the history. It returns the log's executions by key.
func checkExactlyOnce(t *testing.T, res result, p planDoc, log string) map[string][]execution {
	t.Helper()
	require.Equal(t, "completed", res.Status)
	require.Len(t, res.Tasks, len(p.Tasks))
	byKey := map[string][]execution{}
	for _, e := range executions(t, log) {
		byKey[e.key] = append(byKey[e.key], e)
	}
	for _, tk := range p.Tasks {
		tr := res.Tasks[tk.ID]
		require.Equal(t, "done", tr.Status, tk.ID)
		assert.Equal(t, 1, tr.Attempts, "task %s: dagent retried nothing", tk.ID)
		key := fmt.Sprintf("%s/%s/%d", res.RunID, tk.ID, tr.Attempts)
		assert.JSONEq(t, fmt.Sprintf(`{"key": %q}`, key), string(tr.Output), tk.ID)
		assert.NotEmpty(t, byKey[key], "the final attempt of %s is in the log", tk.ID)
	}
	assert.Len(t, byKey, len(p.Tasks), "no key but the tasks' first attempts ran")
	scheduled, completed := attemptActivities(t, res.RunID)
	assert.Equal(t, len(p.Tasks), scheduled, "each task's attempt was scheduled once: no finished task ran again")
	assert.Equal(t, len(p.Tasks), completed, "each task's result was recorded once: none lost")
	return byKey
}

// TestThousandTasksOnTwoWorkers: a plan of 1,000 tasks runs on two worker
// processes, every task done exactly once.
func TestThousandTasksOnTwoWorkers(t *testing.T) {
	setup(t)
	q, log := queue(t), filepath.Join(t.TempDir(), "executions.log")
	w1 := startWorker(t, q, "DAGENT_IT_LOG="+log)
	w2 := startWorker(t, q, "DAGENT_IT_LOG="+log)
	p := fanPlan(10, 99)
	require.Len(t, p.Tasks, 1000)
	runID := "it-thousand-" + time.Now().Format("150405.000")
	start := time.Now()
	code, stdout, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--run-id", runID,
		"--concurrency", "200", "--wait", "--format", "json")
	took := time.Since(start)
	require.Equal(t, 0, code, stderr)
	byKey := checkExactlyOnce(t, decode(t, stdout), p, log)
	for key, es := range byKey {
		assert.Len(t, es, 1, "%s ran once", key)
	}
	pids := map[int]int{}
	for _, es := range byKey {
		pids[es[0].pid]++
	}
	assert.Positive(t, pids[w1.cmd.Process.Pid], "worker 1 did some tasks")
	assert.Positive(t, pids[w2.cmd.Process.Pid], "worker 2 did some tasks")
	t.Logf("1000 tasks in %v (%.0f tasks/s); worker 1 did %d, worker 2 %d", took.Round(time.Millisecond),
		1000/took.Seconds(), pids[w1.cmd.Process.Pid], pids[w2.cmd.Process.Pid])
}

// TestWorkerKilledMidRun: one of two workers is killed with SIGKILL while
// tasks run on it; Temporal gives its attempts to the other worker once
// their heartbeats stop, and the run completes with no result lost and no
// finished task run again. At least one attempt was in flight on the
// killed worker and ran again.
func TestWorkerKilledMidRun(t *testing.T) {
	setup(t)
	q, log := queue(t), filepath.Join(t.TempDir(), "executions.log")
	vars := []string{"DAGENT_IT_LOG=" + log, "DAGENT_IT_SLEEP=0.05"}
	victim := startWorker(t, q, vars...)
	startWorker(t, q, vars...)
	p := fanPlan(4, 99)
	runID := "it-kill-" + time.Now().Format("150405.000")
	code, _, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--run-id", runID, "--concurrency", "100",
		"--heartbeat-timeout", "5s") // the workers heartbeat every 300ms
	require.Equal(t, 0, code, stderr)

	waitFor(t, time.Minute, "150 tasks to start", func() bool { return len(executions(t, log)) >= 150 })
	victim.kill(t)
	atKill := len(executions(t, log))
	t.Logf("killed worker %d after %d executions", victim.cmd.Process.Pid, atKill)

	waitClosed(t, runID, 2*time.Minute)
	code, stdout, stderr := dagentTemporal(t, "show", runID, "--format", "json")
	require.Equal(t, 0, code, stderr)
	byKey := checkExactlyOnce(t, decode(t, stdout), p, log)
	again := 0
	all := executions(t, log)
	for key, es := range byKey {
		if len(es) == 1 {
			continue
		}
		again++
		// Only an attempt in flight on the killed worker runs again.
		assert.Equal(t, victim.cmd.Process.Pid, es[0].pid, "%s first ran on the killed worker", key)
		for _, e := range es[1:] {
			assert.NotEqual(t, victim.cmd.Process.Pid, e.pid, "%s ran again on the other worker", key)
		}
		first := indexOf(all, es[0])
		assert.Less(t, first, atKill, "%s had started when the worker was killed", key)
	}
	t.Logf("%d attempts in flight on the killed worker ran again on the other", again)
	assert.Positive(t, again, "the killed worker had attempts in flight, which ran again: else the test proves nothing")
}

func indexOf(all []execution, e execution) int {
	for i, x := range all {
		if x == e {
			return i
		}
	}
	return -1
}

// reviewPlan is a draft, its human review, and what publishes it.
func reviewPlan() planDoc {
	return planDoc{Tasks: []task{
		{ID: "draft", Agent: "step"},
		{ID: "review", Type: "human_review", Input: "Publish the draft?", DependsOn: []string{"draft"}},
		{ID: "publish", Agent: "step", DependsOn: []string{"review"}},
	}}
}

// TestReviewApprovedFromTheCLI: a run waits for a human review; start
// --wait exits 3, show reports the review, approve refuses a task that is
// no review of the plan, approve from the command sends the decision, and
// the run completes with the approved output.
func TestReviewApprovedFromTheCLI(t *testing.T) {
	setup(t)
	q, log := queue(t), filepath.Join(t.TempDir(), "executions.log")
	startWorker(t, q, "DAGENT_IT_LOG="+log)
	p := reviewPlan()
	runID := "it-review-" + time.Now().Format("150405.000")
	code, stdout, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--run-id", runID, "--wait")
	require.Equal(t, 3, code, "waiting for review: %s%s", stdout, stderr)
	assert.Contains(t, stdout, "review review waits: Publish the draft?")

	code, stdout, stderr = dagentTemporal(t, "show", runID, "--format", "json")
	require.Equal(t, 3, code, stderr)
	var doc struct {
		Status         string `json:"status"`
		PendingReviews []struct {
			TaskID string `json:"task_id"`
		} `json:"pending_reviews"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	assert.Equal(t, "waiting", doc.Status)
	require.Len(t, doc.PendingReviews, 1)
	assert.Equal(t, "review", doc.PendingReviews[0].TaskID)

	// A decision the plan cannot take is refused, and the run goes on.
	for task, want := range map[string]string{"nosuch": `review of "nosuch": the run's plan has no such task`,
		"draft": `review of "draft": the task is not a human_review`} {
		code, stdout, stderr = dagentTemporal(t, "approve", runID, task)
		assert.Equal(t, 2, code, "approve %s: %s%s", task, stdout, stderr)
		assert.Contains(t, stderr, want)
		assert.Empty(t, stdout)
	}

	code, stdout, stderr = dagentTemporal(t, "approve", runID, "review", "--output", `{"publish": true}`, "--comment", "fine")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "run "+runID+": review review approved\n", stdout)
	code, _, stderr = dagentTemporal(t, "reject", runID, "review")
	assert.NotEqual(t, 0, code, "a decided review is refused or the run has ended")
	assert.NotEmpty(t, stderr)

	waitClosed(t, runID, time.Minute)
	code, stdout, stderr = dagentTemporal(t, "show", runID, "--format", "json")
	require.Equal(t, 0, code, stderr)
	res := decode(t, stdout)
	assert.Equal(t, "completed", res.Status)
	assert.JSONEq(t, `{"publish": true}`, string(res.Tasks["review"].Output))
	assert.Equal(t, "done", res.Tasks["publish"].Status)
	assert.Len(t, executions(t, log), 2, "draft and publish ran once each")
}

// TestReplanRepairsTheTail: a task fails with on_failure replan; the
// worker's planner (a scripted OpenAI-compatible server) writes a repair
// plan, whose tail runs, and the run completes without running the done
// task again.
func TestReplanRepairsTheTail(t *testing.T) {
	setup(t)
	repair := `{"route": "plan", "plan": {"mission": "Publish the report", "tasks": [
		{"id": "fetch", "agent": "step", "input": "fetch"},
		{"id": "fetch_mirror", "agent": "step", "depends_on": ["fetch"], "input": "fetch from the mirror"},
		{"id": "report", "agent": "step", "depends_on": ["fetch_mirror"], "input": "write the report"}]}}`
	srv := llmtest.Start(t, "test-model", func(map[string]any) (string, error) { return repair, nil })
	q, log := queue(t), filepath.Join(t.TempDir(), "executions.log")
	startWorker(t, q, "DAGENT_IT_LOG="+log, "OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=", "DAGENT_MODEL=test-model")
	p := planDoc{Mission: "Publish the report", Tasks: []task{
		{ID: "fetch", Agent: "step", Input: "fetch"},
		{ID: "parse", Agent: "broken", DependsOn: []string{"fetch"}, OnFailure: "replan", Input: "parse"},
		{ID: "report", Agent: "step", DependsOn: []string{"parse"}, Input: "write the report"},
	}}
	runID := "it-replan-" + time.Now().Format("150405.000")
	code, stdout, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--run-id", runID,
		"--replan", "--wait", "--format", "json")
	require.Equal(t, 0, code, "%s%s", stdout, stderr)
	res := decode(t, stdout)
	assert.Equal(t, "completed", res.Status)
	require.NotNil(t, res.ReplanCount)
	assert.Equal(t, 1, *res.ReplanCount)
	for _, id := range []string{"fetch", "fetch_mirror", "report"} {
		assert.Equal(t, "done", res.Tasks[id].Status, id)
	}
	assert.NotEmpty(t, srv.Bodies(), "the planner was asked")
	fetched := 0
	for _, e := range executions(t, log) {
		if strings.HasSuffix(e.key, "/fetch/1") {
			fetched++
		}
	}
	assert.Equal(t, 1, fetched, "the done task is not run again after the repair")
}

// TestCancelEndsTheRun: cancel stops a running run, which ends failed
// with its finished results kept; its id cannot start another run,
// neither while it runs nor after.
func TestCancelEndsTheRun(t *testing.T) {
	setup(t)
	q, log := queue(t), filepath.Join(t.TempDir(), "executions.log")
	startWorker(t, q, "DAGENT_IT_LOG="+log)
	p := planDoc{Tasks: []task{
		{ID: "quick", Agent: "step"},
		{ID: "long", Agent: "slow", DependsOn: []string{"quick"}},
	}}
	runID := "it-cancel-" + time.Now().Format("150405.000")
	code, _, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--run-id", runID)
	require.Equal(t, 0, code, stderr)
	waitFor(t, 30*time.Second, "the long task to start", func() bool { return len(executions(t, log)) == 2 })
	again := func() {
		t.Helper()
		code, _, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--run-id", runID)
		assert.Equal(t, 2, code, "a run id names one run")
		assert.Contains(t, stderr, "run "+runID+" exists already")
	}
	again()

	code, stdout, stderr := dagentTemporal(t, "show", runID)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "run "+runID+" running")

	code, stdout, stderr = dagentTemporal(t, "cancel", runID)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "run "+runID+": cancel requested\n", stdout)
	waitClosed(t, runID, 30*time.Second)
	code, stdout, stderr = dagentTemporal(t, "show", runID, "--format", "json")
	assert.Equal(t, 1, code, stderr)
	res := decode(t, stdout)
	assert.Equal(t, "failed", res.Status)
	assert.Equal(t, "done", res.Tasks["quick"].Status, "the finished result is kept")
	assert.NotEqual(t, "done", res.Tasks["long"].Status)
	again()
	assert.Len(t, executions(t, log), 2, "a run id that ended does not start again")

	code, stdout, stderr = dagentTemporal(t, "cancel", runID)
	assert.Equal(t, 1, code, "an ended run is not cancelled: %s%s", stdout, stderr)
	assert.Contains(t, stderr, "run "+runID+" has ended already (completed): nothing to cancel")
}

// TestTerminatedRunExitsFailed: a run terminated on the cluster ended
// without a result; show says so and exits 1, as for a failed run, not 2.
func TestTerminatedRunExitsFailed(t *testing.T) {
	setup(t)
	q, log := queue(t), filepath.Join(t.TempDir(), "executions.log")
	startWorker(t, q, "DAGENT_IT_LOG="+log)
	p := planDoc{Tasks: []task{{ID: "long", Agent: "slow"}}}
	runID := "it-terminate-" + time.Now().Format("150405.000")
	code, _, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--run-id", runID)
	require.Equal(t, 0, code, stderr)
	waitFor(t, 30*time.Second, "the task to start", func() bool { return len(executions(t, log)) == 1 })
	require.NoError(t, env.srv.Client().TerminateWorkflow(context.Background(), runID, "", "by the test"))
	code, stdout, stderr := dagentTemporal(t, "show", runID)
	assert.Equal(t, 1, code, "%s%s", stdout, stderr)
	assert.Contains(t, stderr, "run "+runID+" ended without a result")
	assert.Contains(t, stderr, "terminated")
	assert.NotContains(t, stderr, "did not start")
}

// TestPlanTheWorkersCannotRun: a plan naming a worker the workers'
// registry does not have is refused when the run starts, exit 1, as
// dagent run refuses it.
func TestPlanTheWorkersCannotRun(t *testing.T) {
	setup(t)
	q := queue(t)
	startWorker(t, q, "DAGENT_IT_LOG="+filepath.Join(t.TempDir(), "executions.log"))
	p := planDoc{Tasks: []task{{ID: "a", Agent: "ghost"}}}
	code, stdout, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--wait", "--format", "json")
	assert.Equal(t, 1, code, "%s%s", stdout, stderr)
	assert.Contains(t, stderr, "did not start")
	assert.Contains(t, stderr, `"ghost"`)
}

// TestReviewRejectedFromTheCLI: a review rejected from the command fails
// its task, as dagent resume --review TASK=reject does, and what depends
// on it does not run.
func TestReviewRejectedFromTheCLI(t *testing.T) {
	setup(t)
	q, log := queue(t), filepath.Join(t.TempDir(), "executions.log")
	startWorker(t, q, "DAGENT_IT_LOG="+log)
	p := reviewPlan()
	runID := "it-reject-" + time.Now().Format("150405.000")
	code, _, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--run-id", runID)
	require.Equal(t, 0, code, stderr)
	waitFor(t, 30*time.Second, "the run to wait for its review", func() bool {
		code, _, _ := dagentTemporal(t, "show", runID)
		return code == 3
	})
	code, stdout, stderr := dagentTemporal(t, "reject", runID, "review", "--comment", "not yet")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "run "+runID+": review review rejected\n", stdout)

	waitClosed(t, runID, time.Minute)
	code, stdout, stderr = dagentTemporal(t, "show", runID, "--format", "json")
	assert.Equal(t, 1, code, stderr)
	res := decode(t, stdout)
	assert.Equal(t, "failed", res.Status)
	assert.Equal(t, "failed", res.Tasks["review"].Status)
	assert.NotEqual(t, "done", res.Tasks["publish"].Status)
	assert.Len(t, executions(t, log), 1, "only the draft ran")
}

// TestResultAbovePayloadLimit: three outputs of 800 KiB, which fit one by
// one but not together in the workflow's result, and one of 3 MiB, which
// fits in no payload. The run ends with every task's status — the
// largest output left out of the result with a note, the 3 MiB one
// failed as invalid output, once — instead of being terminated.
func TestResultAbovePayloadLimit(t *testing.T) {
	setup(t)
	q := queue(t)
	startWorker(t, q, "DAGENT_IT_LOG="+filepath.Join(t.TempDir(), "executions.log"))
	p := planDoc{Tasks: []task{
		{ID: "a", Agent: "bulky"}, {ID: "b", Agent: "bulky"}, {ID: "c", Agent: "bulky"},
		{ID: "d", Agent: "huge", OnFailure: "skip"},
	}}
	code, stdout, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--wait", "--format", "json")
	require.Equal(t, 0, code, stderr)
	assert.Less(t, len(stdout), 2<<20)
	res := decode(t, stdout)
	assert.Equal(t, "completed", res.Status)
	left := 0
	for _, id := range []string{"a", "b", "c"} {
		assert.Equal(t, "done", res.Tasks[id].Status, id)
		if bytes.Contains(res.Tasks[id].Output, []byte("left out of the run's result")) {
			left++
		} else {
			assert.Len(t, res.Tasks[id].Output, 800<<10+2, id)
		}
	}
	assert.Equal(t, 1, left, "one output is left out, the others kept")
	d := res.Tasks["d"]
	assert.Equal(t, "skipped", d.Status)
	assert.Equal(t, 1, d.Attempts, "an output too large is not retried")
	require.NotNil(t, d.Error)
	assert.Contains(t, *d.Error, "the output is 3145730 bytes as JSON, above the 1572864 bytes a run on Temporal takes")
}

// TestWorkerStoppedLetsAttemptsFinish: a worker stopped with SIGTERM while
// an attempt runs lets it finish within --stop-timeout; the attempt is
// not made again, and a worker started after it ends the run.
func TestWorkerStoppedLetsAttemptsFinish(t *testing.T) {
	setup(t)
	q, log := queue(t), filepath.Join(t.TempDir(), "executions.log")
	vars := []string{"DAGENT_IT_LOG=" + log, "DAGENT_IT_SLEEP=3"}
	first := startWorker(t, q, vars...)
	p := planDoc{Tasks: []task{{ID: "a", Agent: "step"}}}
	runID := "it-stop-" + time.Now().Format("150405.000")
	code, _, stderr := dagentTemporal(t, "start", writePlan(t, p), "--task-queue", q, "--run-id", runID)
	require.Equal(t, 0, code, stderr)
	waitFor(t, 30*time.Second, "the attempt to start", func() bool { return len(executions(t, log)) == 1 })
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGTERM))
	stopped := time.Now()
	require.NoError(t, first.cmd.Wait(), "the worker stops cleanly")
	assert.Greater(t, time.Since(stopped), 1500*time.Millisecond, "the worker waited for its attempt")
	startWorker(t, q, vars...)

	waitClosed(t, runID, time.Minute)
	code, stdout, stderr := dagentTemporal(t, "show", runID, "--format", "json")
	require.Equal(t, 0, code, stderr)
	res := decode(t, stdout)
	assert.Equal(t, "done", res.Tasks["a"].Status)
	es := executions(t, log)
	require.Len(t, es, 1, "the attempt finished on the stopped worker and did not run again")
	assert.Equal(t, first.cmd.Process.Pid, es[0].pid)
}
