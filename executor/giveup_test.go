package executor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExecuteGiveUp: a replanner that gives up halts the execution
// cleanly with gave_up, its reason in the error and the halt event.
func TestExecuteGiveUp(t *testing.T) {
	p := mustPlan(t, `{"tasks": [{"id": "x", "input": "X", "on_failure": "replan"}]}`)
	w := newWorkers().set("x", fail(errBoom))
	rp := executor.ReplannerFunc(func(context.Context, string, map[string]any, executor.Failure, []executor.Trial) (*executor.Repair, error) {
		return &executor.Repair{GaveUp: true, Reason: "the source is gone for good", Usage: llm.Usage{PromptTokens: 30, CompletionTokens: 5}}, nil
	})
	var events []runner.Event
	obs := runner.ObserverFunc(func(ev runner.Event) { events = append(events, ev) })
	res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp), executor.WithObserver(obs))...)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.Equal(t, executor.HaltGaveUp, res.Halt)
	assert.Equal(t, 0, res.ReplanCount)
	assert.Equal(t, 35, res.Usage.Total(), "giving up costs its tokens")
	var he *executor.HaltError
	require.ErrorAs(t, res.Err, &he)
	var gu *executor.GaveUpError
	require.ErrorAs(t, res.Err, &gu)
	assert.Equal(t, "the source is gone for good", gu.Reason)
	assert.True(t, errors.Is(res.Err, executor.ErrHalted))
	assert.Equal(t, "replanning halted (gave_up): the planner gave up after task x failed: the source is gone for good", res.Err.Error())
	last := events[len(events)-1]
	assert.Equal(t, executor.EventHalted, last.Kind)
	assert.Equal(t, executor.HaltGaveUp, last.Halt)
	for _, ev := range events {
		assert.NotEqual(t, executor.EventReplanFailed, ev.Kind, "giving up is no failed replan")
	}
}

// TestExecuteRepairReason: the reason of an adopted repair is in its trial,
// which the journal and the JSON result keep.
func TestExecuteRepairReason(t *testing.T) {
	p := mustPlan(t, `{"tasks": [{"id": "x", "input": "X", "on_failure": "replan"}]}`)
	repair := mustPlan(t, `{"tasks": [{"id": "y", "input": "Y"}]}`)
	w := newWorkers().set("x", fail(errBoom)).set("y", output("ok"))
	rp := executor.ReplannerFunc(func(context.Context, string, map[string]any, executor.Failure, []executor.Trial) (*executor.Repair, error) {
		return &executor.Repair{Plan: repair, Reason: "y does what x could not"}, nil
	})
	var commits []executor.PlanCommit
	j := journalFunc(func(_ context.Context, c executor.PlanCommit) error { commits = append(commits, c); return nil })
	res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp), executor.WithJournal(j))...)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	require.Len(t, res.History, 1)
	assert.Equal(t, "y does what x could not", res.History[0].Reason)
	require.Len(t, commits, 2)
	assert.Equal(t, "y does what x could not", commits[1].Trial.Reason)
	doc, err := res.MarshalJSON()
	require.NoError(t, err)
	assert.Contains(t, string(doc), `"reason":"y does what x could not"`)
}

type journalFunc func(context.Context, executor.PlanCommit) error

func (f journalFunc) CommitPlan(ctx context.Context, c executor.PlanCommit) error { return f(ctx, c) }
