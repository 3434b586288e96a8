package executor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// twoTasks is a plan whose fetch may fail and whose sum depends on it.
const twoTasks = `{"tasks": [
	{"id": "prep", "input": "Prepare"},
	{"id": "fetch", "input": "Fetch", "depends_on": ["prep"], "on_failure": "replan"},
	{"id": "sum", "input": "Sum", "depends_on": ["fetch"]}]}`

// repairPlan is a repair of twoTasks with extra tasks beyond it.
func repairPlan(t *testing.T, extra int) *plan.Plan {
	t.Helper()
	more := ""
	for k := range extra {
		more += fmt.Sprintf(`, {"id": "more%d", "input": "More"}`, k)
	}
	return mustPlan(t, `{"tasks": [
		{"id": "prep", "input": "Prepare"},
		{"id": "mirror", "input": "Fetch from the mirror", "depends_on": ["prep"]},
		{"id": "sum", "input": "Sum", "depends_on": ["mirror"]}`+more+`]}`)
}

// newReplanning is a Replanning of twoTasks with a replanner.
func newReplanning(t *testing.T, opts ...executor.Option) *executor.Replanning {
	t.Helper()
	d, err := mustPlan(t, twoTasks).DAG()
	require.NoError(t, err)
	r, err := executor.NewReplanning("base", d, append([]executor.Option{executor.WithReplanner(newReplanner())}, opts...)...)
	require.NoError(t, err)
	return r
}

// fetchFailed is a run of twoTasks whose prep is done (when progress)
// and whose fetch failed with class and asked for a replan.
func fetchFailed(class runner.Class, progress bool) *runner.Result {
	rr := &runner.Result{RunID: "base", Status: runner.StatusReplanRequired, Tasks: map[string]*runner.TaskResult{
		"fetch": {ID: "fetch", Status: runner.TaskFailed, Attempts: 1, Class: class, Diagnosis: "410 Gone"},
		"sum":   {ID: "sum", Status: runner.TaskPending},
	}, Replan: &runner.ReplanRequest{TaskID: "fetch", Diagnosis: "410 Gone"}}
	if progress {
		rr.Tasks["prep"] = &runner.TaskResult{ID: "prep", Status: runner.TaskDone, Attempts: 1, Output: "ready"}
	}
	return rr
}

func kindsOf(evs []runner.Event) []runner.EventKind {
	var out []runner.EventKind
	for _, ev := range evs {
		out = append(out, ev.Kind)
	}
	return out
}

func TestReplanningRan(t *testing.T) {
	done := &runner.Result{Status: runner.StatusCompleted, Tasks: map[string]*runner.TaskResult{
		"prep": {ID: "prep", Status: runner.TaskDone, Attempts: 1}, "fetch": {ID: "fetch", Status: runner.TaskDone, Attempts: 1},
		"sum": {ID: "sum", Status: runner.TaskDone, Attempts: 1}}}
	flaky := fetchFailed(runner.ClassAgentError, true)
	tests := []struct {
		name    string
		opts    []executor.Option
		noPlan  bool
		rr      *runner.Result
		retried map[string]bool
		err     error
		step    executor.Step
		halt    string
	}{
		{name: "completed", rr: done, step: executor.StepDone},
		{name: "no replanner", noPlan: true, rr: fetchFailed(runner.ClassAgentError, true), step: executor.StepDone},
		{name: "the run's error", rr: fetchFailed(runner.ClassAgentError, true), err: context.Canceled, step: executor.StepDone},
		{name: "repair", rr: fetchFailed(runner.ClassAgentError, true), step: executor.StepRepair},
		{name: "class that halts", rr: fetchFailed(runner.ClassToolRefused, true), step: executor.StepHalt, halt: executor.HaltToolRefused},
		{name: "class made to halt", opts: []executor.Option{executor.WithHaltOn(runner.ClassTimeout)},
			rr: fetchFailed(runner.ClassTimeout, true), step: executor.StepHalt, halt: string(runner.ClassTimeout)},
		{name: "same failure", opts: []executor.Option{executor.WithHistory([]executor.Trial{{Attempt: 1, TaskID: "fetch", Class: "agent_error", Diagnosis: "410 Gone"}})},
			rr: fetchFailed(runner.ClassAgentError, true), step: executor.StepHalt, halt: executor.HaltSameFailure},
		{name: "budget class", rr: fetchFailed(runner.ClassBudget, true), step: executor.StepHalt, halt: executor.HaltBudget},
		{name: "tokens spent", opts: []executor.Option{executor.WithBudget(executor.Budget{MaxTokens: 10}, &meter{usage: llm.Usage{PromptTokens: 10}})},
			rr: fetchFailed(runner.ClassAgentError, true), step: executor.StepHalt, halt: executor.HaltBudget},
		{name: "calls spent", opts: []executor.Option{executor.WithBudget(executor.Budget{MaxCalls: 2}, &meter{calls: 2})},
			rr: fetchFailed(runner.ClassAgentError, true), step: executor.StepHalt, halt: executor.HaltBudget},
		{name: "max replans", opts: []executor.Option{executor.WithMaxReplans(0)},
			rr: fetchFailed(runner.ClassAgentError, true), step: executor.StepHalt, halt: executor.HaltMaxReplans},
		{name: "max replans per task", opts: []executor.Option{executor.WithMaxReplansPerTask(0)},
			rr: fetchFailed(runner.ClassAgentError, true), step: executor.StepHalt, halt: executor.HaltMaxReplansPerTask},
		{name: "consecutive failures", opts: []executor.Option{executor.WithMaxConsecutiveFailures(1)},
			rr: fetchFailed(runner.ClassAgentError, false), step: executor.StepHalt, halt: executor.HaltConsecutiveFailures},
		{name: "progress resets the failures in a row", opts: []executor.Option{executor.WithMaxConsecutiveFailures(1)},
			rr: fetchFailed(runner.ClassAgentError, true), step: executor.StepRepair},
		{name: "flaky streak", opts: []executor.Option{executor.WithMaxFlakyStreak(1)},
			rr: flaky, retried: map[string]bool{"prep": true}, step: executor.StepHalt, halt: executor.HaltFlakyStreak},
		{name: "flaky streak off", opts: []executor.Option{executor.WithMaxFlakyStreak(0)},
			rr: flaky, retried: map[string]bool{"prep": true}, step: executor.StepRepair},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r *executor.Replanning
			if tt.noPlan {
				d, err := mustPlan(t, twoTasks).DAG()
				require.NoError(t, err)
				r, err = executor.NewReplanning("base", d, tt.opts...)
				require.NoError(t, err)
			} else {
				r = newReplanning(t, tt.opts...)
			}
			dec := r.Ran(tt.rr, tt.retried, tt.err)
			require.Equal(t, tt.step, dec.Step, dec.Step.String())
			res := r.Result()
			assert.Equal(t, tt.halt, res.Halt)
			assert.Equal(t, res.ReplanCount+1, res.ExecutionAttempts, "the run counts, as the history does")
			switch tt.step {
			case executor.StepHalt:
				var he *executor.HaltError
				require.ErrorAs(t, res.Err, &he)
				assert.Equal(t, tt.halt, he.Halt)
				assert.Equal(t, []runner.EventKind{executor.EventHalted}, kindsOf(dec.Events))
				assert.Equal(t, "base", dec.Events[0].RunID)
			case executor.StepRepair:
				assert.Equal(t, "fetch", dec.Failure.TaskID)
				assert.Equal(t, []runner.EventKind{executor.EventReplanRequested}, kindsOf(dec.Events))
			default:
				assert.Empty(t, dec.Events)
				assert.Equal(t, tt.rr.Status, res.Status)
			}
		})
	}
}

func TestReplanningRepaired(t *testing.T) {
	refusing := critic.Report{Issues: []critic.Issue{{Check: "x", Severity: critic.Warning, Message: "suspect"}}}
	tests := []struct {
		name   string
		opts   []executor.Option
		repair *executor.Repair
		err    error
		noPlan bool // the repair has no plan
		check  bool // nd is the repair's DAG
		rep    critic.Report
		step   executor.Step
		halt   string
		cause  error
		count  int // the repairs counted
	}{
		{name: "adopted", repair: &executor.Repair{Reason: "mirror"}, check: true, step: executor.StepRun, count: 1},
		{name: "gave up", repair: &executor.Repair{GaveUp: true, Reason: "gone for good"}, step: executor.StepHalt, halt: executor.HaltGaveUp},
		{name: "planner error", err: errBoom, step: executor.StepHalt, halt: executor.HaltReplanFailed, cause: errBoom},
		{name: "no plan", repair: &executor.Repair{}, noPlan: true, step: executor.StepHalt, halt: executor.HaltReplanFailed},
		{name: "cannot run", repair: &executor.Repair{}, check: false, step: executor.StepHalt, halt: executor.HaltReplanFailed, cause: executor.ErrRefused},
		{name: "refused at the gate", opts: []executor.Option{executor.WithGate(critic.GateWarning)}, repair: &executor.Repair{},
			check: true, rep: refusing, step: executor.StepHalt, halt: executor.HaltReplanFailed, cause: executor.ErrRefused},
		{name: "the gate lets it by", repair: &executor.Repair{}, check: true, rep: refusing, step: executor.StepRun, count: 1},
		{name: "over budget", opts: []executor.Option{executor.WithBudget(executor.Budget{MaxTokens: 100}, nil)},
			repair: &executor.Repair{Usage: llm.Usage{PromptTokens: 100}}, check: true, step: executor.StepHalt, halt: executor.HaltBudget, count: 1},
		{name: "plan growth", opts: []executor.Option{executor.WithMaxPlanGrowth(1)},
			repair: &executor.Repair{}, check: true, step: executor.StepHalt, halt: executor.HaltPlanGrowth, count: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReplanning(t, tt.opts...)
			require.Equal(t, executor.StepRepair, r.Ran(fetchFailed(runner.ClassAgentError, true), nil, nil).Step)
			var nd *plan.DAG
			if tt.repair != nil && !tt.repair.GaveUp && !tt.noPlan {
				extra := 0
				if tt.halt == executor.HaltPlanGrowth {
					extra = 2
				}
				tt.repair.Plan = repairPlan(t, extra)
				if tt.check {
					var err error
					nd, err = tt.repair.Plan.DAG()
					require.NoError(t, err)
				}
			}
			if tt.repair != nil {
				r.Spend(tt.repair.Usage)
			}
			dec := r.Repaired(tt.repair, tt.err, nd, tt.rep)
			require.Equal(t, tt.step, dec.Step, dec.Step.String())
			res := r.Result()
			assert.Equal(t, tt.halt, res.Halt)
			assert.Equal(t, tt.count, res.ReplanCount)
			assert.Len(t, res.History, tt.count)
			assert.Equal(t, "fetch", dec.Failure.TaskID)
			if tt.step == executor.StepHalt {
				var he *executor.HaltError
				require.ErrorAs(t, res.Err, &he)
				assert.Equal(t, tt.halt, he.Halt)
				if tt.cause != nil {
					require.ErrorIs(t, res.Err, tt.cause)
				}
				want := []runner.EventKind{executor.EventHalted}
				if tt.halt == executor.HaltReplanFailed {
					want = []runner.EventKind{executor.EventReplanFailed, executor.EventHalted}
				}
				assert.Equal(t, want, kindsOf(dec.Events))
				next := r.Next()
				assert.Equal(t, "base", next.ID, "a halt runs no new version")
				assert.Nil(t, next.Commit)
				return
			}
			assert.Empty(t, dec.Events)
			next := r.Next()
			assert.Equal(t, "base.1", next.ID)
			assert.Equal(t, 1, next.Version)
			assert.Same(t, nd, next.DAG)
			assert.Equal(t, map[string]any{"prep": "ready"}, next.Initial)
			require.NotNil(t, next.Commit)
			assert.Equal(t, executor.PlanCommit{RunID: "base", Version: 1, Plan: tt.repair.Plan, Trial: &res.History[0]}, *next.Commit)
			assert.Equal(t, []runner.EventKind{executor.EventRepairAdopted}, kindsOf(next.Events))
			assert.Equal(t, next, r.Next(), "Next changes nothing")
			assert.Equal(t, executor.StepDone, r.Repaired(tt.repair, nil, nd, tt.rep).Step, "no repair is pending")
		})
	}
}

func TestReplanningEnds(t *testing.T) {
	t.Run("first commit, then none", func(t *testing.T) {
		r := newReplanning(t)
		c := r.Next().Commit
		require.NotNil(t, c)
		assert.Equal(t, 0, c.Version)
		assert.Nil(t, c.Trial)
		r.Ran(fetchFailed(runner.ClassAgentError, true), nil, nil)
		assert.Nil(t, r.Next().Commit)
	})
	t.Run("resumed", func(t *testing.T) {
		r := newReplanning(t, executor.WithHistory([]executor.Trial{{Attempt: 1, TaskID: "x"}}), executor.WithInitialResults(map[string]any{"prep": 1}))
		next := r.Next()
		assert.Nil(t, next.Commit)
		assert.Equal(t, "base.1", next.ID)
		assert.Equal(t, map[string]any{"prep": 1}, next.Initial)
		assert.Equal(t, 1, r.Result().ReplanCount)
	})
	t.Run("commit failed", func(t *testing.T) {
		r := newReplanning(t)
		r.CommitFailed(errBoom)
		assert.Equal(t, runner.StatusFailed, r.Result().Status)
		require.ErrorIs(t, r.Result().Err, runner.ErrJournal)
		require.ErrorIs(t, r.Result().Err, errBoom)
	})
	t.Run("out of time", func(t *testing.T) {
		r := newReplanning(t, executor.WithBudget(executor.Budget{MaxDuration: time.Minute}, nil))
		dec := r.Ran(fetchFailed(runner.ClassAgentError, true), nil, nil)
		dec = r.OutOfTime(context.DeadlineExceeded)
		assert.Equal(t, executor.StepHalt, dec.Step)
		assert.Equal(t, executor.HaltBudget, r.Result().Halt)
		require.ErrorIs(t, r.Result().Err, context.DeadlineExceeded)
		assert.ErrorContains(t, r.Result().Err, "wall time budget of 1m0s spent")
		assert.Equal(t, executor.StepDone, r.Repaired(&executor.Repair{}, nil, nil, critic.Report{}).Step)
	})
	t.Run("cancelled", func(t *testing.T) {
		r := newReplanning(t)
		err := r.Cancelled(context.Canceled)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, err, r.Result().Err)
		assert.Empty(t, r.Result().Halt)
	})
	t.Run("bad input", func(t *testing.T) {
		d, err := mustPlan(t, twoTasks).DAG()
		require.NoError(t, err)
		_, err = executor.NewReplanning("", d)
		require.ErrorIs(t, err, runner.ErrInvalidRunID)
		_, err = executor.NewReplanning("base", nil)
		require.Error(t, err)
		_, err = executor.NewReplanning("base", d, executor.WithRounds(2, executor.RoundPlannerFunc(nil)))
		require.Error(t, err)
	})
	t.Run("halt classes and cooldown", func(t *testing.T) {
		r := newReplanning(t, executor.WithHaltOn(runner.ClassTimeout), executor.WithCooldown(time.Second))
		assert.Equal(t, []runner.Class{runner.ClassPrecondition, runner.ClassTimeout, runner.ClassToolRefused}, r.HaltClasses())
		assert.Equal(t, time.Second, r.Cooldown())
	})
}

func TestRetriedTransiently(t *testing.T) {
	events := []runner.Event{
		{Kind: runner.EventTaskRetried, TaskID: "a", Err: errBoom},
		{Kind: runner.EventTaskRetried, TaskID: "b", Err: context.DeadlineExceeded},
		{Kind: runner.EventTaskRetried, TaskID: "c", Err: runner.ErrVerification},
		{Kind: runner.EventTaskFailed, TaskID: "d", Err: context.DeadlineExceeded},
	}
	assert.Equal(t, map[string]bool{"a": true, "b": true}, executor.RetriedTransiently(events))
	assert.Empty(t, executor.RetriedTransiently(nil))
}
