package progress_test

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/progress"
	"github.com/dagent-dev/dagent/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a buffer the heartbeats' timers and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestLine(t *testing.T) {
	tests := []struct {
		e    runner.Event
		want string
	}{
		{runner.Event{Kind: runner.EventPhaseFinished, Phase: 1, Duration: 1234 * time.Millisecond}, "phase 1 settled in 1.23s"},
		{runner.Event{Kind: runner.EventTaskVerified, TaskID: "a", Passed: true}, "a: verification passed"},
		{runner.Event{Kind: runner.EventTaskVerified, TaskID: "a", Diagnosis: "too short\nsecond line"}, "a: verification failed: too short"},
		{runner.Event{Kind: runner.EventTaskVerified, TaskID: "a", Err: errors.New("no such key")}, "a: verification error: no such key"},
		{runner.Event{Kind: runner.EventTaskSkipped, TaskID: "b", Err: errors.New("dependency a failed")}, "b: skipped: dependency a failed"},
		{runner.Event{Kind: runner.EventTaskWaiting, TaskID: "r"}, "r: waiting for review"},
		{runner.Event{Kind: executor.EventReplanRequested, TaskID: "b", Class: runner.ClassAgentError, Diagnosis: "boom"}, "replan requested after b failed (agent_error: boom)"},
		{runner.Event{Kind: executor.EventRepairAdopted, TaskID: "b", Class: runner.ClassAgentError, Version: 1, NewTasks: 2}, "replan 1 after b failed (agent_error): 2 tasks added"},
		{runner.Event{Kind: executor.EventRoundRequested, Attempt: 1}, "asking the planner for round 1"},
		{runner.Event{Kind: executor.EventRoundRequested, Attempt: 3}, "round 2 ran: asking the planner what next"},
		{runner.Event{Kind: executor.EventRoundAdopted, Attempt: 2, NewTasks: 1}, "round 2 planned: 1 task added"},
		{runner.Event{Kind: executor.EventRoundsDone, Attempt: 4}, "the planner is done after round 3"},
		{runner.Event{Kind: executor.EventReplanFailed, TaskID: "b", Class: runner.ClassAgentError, Err: errors.New("no valid plan")}, "replan after b failed (agent_error): no repair plan: no valid plan"},
		{runner.Event{Kind: executor.EventHalted, Halt: executor.HaltMaxReplans}, "replanning halted (max_replans): the replans reached their limit"},
		{runner.Event{Kind: durable.EventPlanned, Tasks: 3, Attempt: 1}, "planned 3 tasks in 1 attempt"},
		{runner.Event{Kind: durable.EventPlanCached, Tasks: 1}, "reused the cached plan of 1 task"},
		{runner.Event{Kind: "custom", TaskID: "c"}, "c: custom"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, progress.Line(tt.e))
		assert.Equal(t, tt.want, progress.Words{}.Line(tt.e), "no words of its own: Line's")
	}
}

func TestWords(t *testing.T) {
	w := progress.Words{HaltReason: func(halt string) string { return "raise --limit, " + halt }}
	assert.Equal(t, "replanning halted (max_replans): raise --limit, max_replans", w.Line(runner.Event{Kind: executor.EventHalted, Halt: executor.HaltMaxReplans}))
	assert.Equal(t, "b: skipped: dependency a failed", w.Line(runner.Event{Kind: runner.EventTaskSkipped, TaskID: "b", Err: errors.New("dependency a failed")}))
}

func TestPrinterHeartbeat(t *testing.T) {
	var out syncBuffer
	p := progress.NewPrinter(&out, progress.WithHeartbeat(20*time.Millisecond))
	now := time.Now()
	p.Observe(runner.Event{Kind: runner.EventRunStarted, Time: now, RunID: "r"})
	p.Observe(runner.Event{Kind: runner.EventTaskStarted, Time: now, TaskID: "slow"})
	p.Observe(runner.Event{Kind: runner.EventTaskStarted, Time: now, TaskID: "quick"})
	p.Observe(runner.Event{Kind: runner.EventTaskFinished, Time: now, TaskID: "quick"})
	require.Eventually(t, func() bool { return strings.Count(out.String(), "slow: running for ") >= 2 }, 5*time.Second, 5*time.Millisecond, out.String())
	p.Observe(runner.Event{Kind: runner.EventTaskFinished, Time: time.Now(), TaskID: "slow"})
	settled := out.String()
	time.Sleep(60 * time.Millisecond)
	assert.Equal(t, settled, out.String(), "no heartbeat after the task settled")
	assert.NotContains(t, settled, "quick: running", "a task that settled at once has no heartbeat")
	assert.Regexp(t, `(?m)^ +\d+ms  slow: running for \d+ms$`, settled)
	require.NoError(t, p.Close())
	p.Observe(runner.Event{Kind: runner.EventRunFinished, Time: time.Now(), Status: runner.StatusCompleted})
	assert.Equal(t, settled, out.String(), "nothing after Close")
}

func TestPrinterCloseStopsHeartbeats(t *testing.T) {
	var out syncBuffer
	p := progress.NewPrinter(&out, progress.WithHeartbeat(10*time.Millisecond))
	p.Observe(runner.Event{Kind: runner.EventTaskStarted, Time: time.Now(), TaskID: "hung"})
	require.NoError(t, p.Close())
	before := out.String()
	time.Sleep(40 * time.Millisecond)
	assert.Equal(t, before, out.String())
}

func TestPrinterMakesTextVisible(t *testing.T) {
	var out bytes.Buffer
	p := progress.NewPrinter(&out, progress.WithHeartbeat(0))
	p.Observe(runner.Event{Kind: runner.EventTaskFailed, TaskID: "a", Err: errors.New("\x1b]0;pwned\x07 \u202eevil")})
	p.Println("planned \x1b[2J")
	assert.NotRegexp(t, "[\x1b\x07\u202e]", out.String())
	assert.Contains(t, out.String(), `a: failed: \u001b]0;pwned\u0007 \u202eevil`)
	assert.Contains(t, out.String(), `planned \u001b[2J`)
}

func TestWriteSummary(t *testing.T) {
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "a", "agent": "w"}, {"id": "r", "type": "human_review", "agent": "w", "depends_on": ["a"]}]}`))
	require.NoError(t, err)
	tests := []struct {
		name string
		s    progress.Summary
		want []string
		not  []string
	}{
		{
			name: "waiting, with a hint and a replaced task",
			s: progress.Summary{Plan: p, ReviewHint: "decide it\n", Result: &runner.Result{
				Status: runner.StatusWaiting,
				Tasks: map[string]*runner.TaskResult{
					"a":   {ID: "a", Status: runner.TaskDone, Attempts: 1, Output: map[string]any{"k": "\x1b[2J"}},
					"r":   {ID: "r", Status: runner.TaskWaiting},
					"old": {ID: "old", Status: runner.TaskFailed, Attempts: 1, Err: errors.New("gone")},
				},
				PendingReviews: []runner.PendingReview{{TaskID: "r", Prompt: "Approve?\nReally?"}},
			}},
			want: []string{"old (replaced)  failed", "review r waits for a decision:\n  Approve?\n  Really?\n\ndecide it\n", "waiting for review after 0s\n"},
			not:  []string{"== a =="},
		},
		{
			name: "halted execution",
			s: progress.Summary{Plan: p, Execution: &executor.Result{Halt: executor.HaltSameFailure, ReplanCount: 2}, Result: &runner.Result{
				Status: runner.StatusFailed, Err: errors.New("task a failed \x1b[31m"),
				Tasks: map[string]*runner.TaskResult{"a": {ID: "a", Status: runner.TaskFailed}},
			}},
			want: []string{"replanning halted (same_failure): a task failed the same way as before a replan\nfailed after 0s and 2 replans: task a failed \\u001b[31m\n"},
		},
		{
			name: "the host's words for a halt",
			s: progress.Summary{Plan: p, Execution: &executor.Result{Halt: executor.HaltBudget}, HaltReason: func(string) string { return "raise --budget" }, Result: &runner.Result{
				Status: runner.StatusFailed, Tasks: map[string]*runner.TaskResult{},
			}},
			want: []string{"replanning halted (budget_exceeded): raise --budget\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, progress.WriteSummary(&out, tt.s))
			assert.NotContains(t, out.String(), "\x1b")
			for _, w := range tt.want {
				assert.Contains(t, out.String(), w)
			}
			for _, w := range tt.not {
				assert.NotContains(t, out.String(), w)
			}
		})
	}
}

func TestWriteSummaryNeedsAPlanAndAResult(t *testing.T) {
	var out bytes.Buffer
	assert.ErrorIs(t, progress.WriteSummary(&out, progress.Summary{}), progress.ErrIncomplete)
	assert.Empty(t, out.String())
}
