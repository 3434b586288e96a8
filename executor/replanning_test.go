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
		r, err := executor.NewReplanning("base", nil, executor.WithRounds(2, executor.RoundPlannerFunc(nil)))
		require.NoError(t, err, "in rounds, the planner plans the first round")
		assert.Equal(t, executor.StepRound, r.Start().Step)
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

// roundAfter is a Replanning in rounds of twoTasks whose first round ran
// as rr and that asks the round planner next.
func roundAfter(t *testing.T, rr *runner.Result, opts ...executor.Option) (*executor.Replanning, executor.Decision) {
	t.Helper()
	d, err := mustPlan(t, twoTasks).DAG()
	require.NoError(t, err)
	r, err := executor.NewReplanning("base", d, append([]executor.Option{executor.WithRounds(2, executor.RoundPlannerFunc(nil))}, opts...)...)
	require.NoError(t, err)
	require.Equal(t, executor.StepRun, r.Start().Step)
	require.NotNil(t, r.Next().Commit)
	return r, r.Ran(rr, nil, nil)
}

func TestReplanningRoundRan(t *testing.T) {
	waiting := fetchFailed(runner.ClassAgentError, true)
	waiting.Status = runner.StatusWaiting
	tests := []struct {
		name    string
		opts    []executor.Option
		rr      *runner.Result
		retried map[string]bool
		step    executor.Step
		halt    string
	}{
		{name: "asks", rr: fetchFailed(runner.ClassAgentError, true), step: executor.StepRound},
		{name: "waits for a review", rr: waiting, step: executor.StepDone},
		{name: "class that halts", rr: fetchFailed(runner.ClassPrecondition, true), step: executor.StepHalt, halt: executor.HaltPrecondition},
		{name: "budget", opts: []executor.Option{executor.WithBudget(executor.Budget{MaxCalls: 1}, &meter{calls: 1})},
			rr: fetchFailed(runner.ClassAgentError, true), step: executor.StepHalt, halt: executor.HaltBudget},
		{name: "consecutive failures", opts: []executor.Option{executor.WithMaxConsecutiveFailures(1)},
			rr: fetchFailed(runner.ClassAgentError, false), step: executor.StepHalt, halt: executor.HaltConsecutiveFailures},
		{name: "flaky streak", opts: []executor.Option{executor.WithMaxFlakyStreak(1)},
			rr: fetchFailed(runner.ClassAgentError, true), retried: map[string]bool{"prep": true}, step: executor.StepHalt, halt: executor.HaltFlakyStreak},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := mustPlan(t, twoTasks).DAG()
			require.NoError(t, err)
			r, err := executor.NewReplanning("base", d, append([]executor.Option{executor.WithRounds(2, executor.RoundPlannerFunc(nil))}, tt.opts...)...)
			require.NoError(t, err)
			dec := r.Ran(tt.rr, tt.retried, nil)
			require.Equal(t, tt.step, dec.Step, dec.Step.String())
			assert.Equal(t, tt.halt, r.Result().Halt)
			if tt.step == executor.StepRound {
				require.NotNil(t, dec.Round)
				assert.Equal(t, 2, dec.Round.Round)
				assert.Equal(t, []string{"sum"}, dec.Round.Pending)
				require.Len(t, dec.Round.Failed, 1)
				assert.Equal(t, "fetch", dec.Round.Failed[0].TaskID)
				assert.Equal(t, map[string]any{"prep": "ready"}, dec.Round.Completed)
				assert.Equal(t, []runner.EventKind{executor.EventRoundRequested}, kindsOf(dec.Events))
			}
		})
	}
}

func TestReplanningRounded(t *testing.T) {
	more := mustPlan(t, `{"tasks": [{"id": "prep", "input": "Prepare"},
		{"id": "mirror", "input": "Fetch from the mirror", "depends_on": ["prep"]}]}`).Tasks[1:]
	tests := []struct {
		name   string
		opts   []executor.Option
		answer *executor.RoundAnswer
		err    error
		check  bool
		step   executor.Step
		halt   string
	}{
		{name: "continue", answer: &executor.RoundAnswer{Action: executor.RoundContinue, Tasks: more}, check: true, step: executor.StepRun},
		{name: "done", answer: &executor.RoundAnswer{Action: executor.RoundDone, Deliverable: []string{"prep"}}, step: executor.StepDone},
		{name: "failed", answer: &executor.RoundAnswer{Action: executor.RoundFailed, Reason: "no mirror"}, step: executor.StepHalt, halt: executor.HaltGaveUp},
		{name: "error", err: errBoom, step: executor.StepHalt, halt: executor.HaltReplanFailed},
		{name: "no answer", step: executor.StepHalt, halt: executor.HaltReplanFailed},
		{name: "bad answer", answer: &executor.RoundAnswer{Action: executor.RoundDone, Deliverable: []string{"sum"}}, step: executor.StepHalt, halt: executor.HaltReplanFailed},
		{name: "cannot run", answer: &executor.RoundAnswer{Action: executor.RoundContinue, Tasks: more}, step: executor.StepHalt, halt: executor.HaltReplanFailed},
		{name: "past the rounds", opts: []executor.Option{executor.WithRounds(1, executor.RoundPlannerFunc(nil))},
			answer: &executor.RoundAnswer{Action: executor.RoundContinue, Tasks: more}, check: true, step: executor.StepHalt, halt: executor.HaltMaxRounds},
		{name: "budget", opts: []executor.Option{executor.WithBudget(executor.Budget{MaxTokens: 5}, nil)},
			answer: &executor.RoundAnswer{Action: executor.RoundContinue, Tasks: more, Usage: llm.Usage{CompletionTokens: 5}}, check: true, step: executor.StepHalt, halt: executor.HaltBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, dec := roundAfter(t, fetchFailed(runner.ClassAgentError, true), tt.opts...)
			require.Equal(t, executor.StepRound, dec.Step)
			if tt.answer != nil {
				r.Spend(tt.answer.Usage)
			}
			var nd *plan.DAG
			if next := r.RoundPlan("mission", tt.answer); next != nil && tt.check {
				var err error
				nd, err = next.DAG()
				require.NoError(t, err)
			}
			dec = r.Rounded(tt.answer, tt.err, nd, critic.Report{})
			require.Equal(t, tt.step, dec.Step, dec.Step.String())
			res := r.Result()
			assert.Equal(t, tt.halt, res.Halt)
			switch tt.step {
			case executor.StepRun:
				next := r.Next()
				assert.Equal(t, "base.1", next.ID)
				assert.Equal(t, []string{"prep", "mirror"}, taskIDs(next.DAG.Plan()))
				assert.Equal(t, "mission", next.DAG.Plan().Mission)
				require.NotNil(t, next.Commit)
				require.NotNil(t, next.Commit.Trial)
				assert.Equal(t, executor.Trial{Attempt: 1, Round: 2, TaskID: "fetch", Class: "agent_error", Diagnosis: "410 Gone", NewTaskCount: 1}, *next.Commit.Trial)
				assert.Equal(t, 2, res.Rounds)
				assert.Equal(t, []runner.EventKind{executor.EventRoundAdopted}, kindsOf(next.Events))
				r.CommitFailed(errBoom)
				assert.Equal(t, 1, res.Rounds, "a round not committed does not count")
				assert.Equal(t, []string{"prep", "fetch", "sum"}, taskIDs(res.Plan))
			case executor.StepDone:
				assert.Equal(t, runner.StatusCompleted, res.Status)
				assert.Equal(t, []string{"prep"}, res.Deliverable)
				assert.Equal(t, []runner.EventKind{executor.EventRoundsDone}, kindsOf(dec.Events))
			default:
				var he *executor.HaltError
				require.ErrorAs(t, res.Err, &he)
				assert.Equal(t, tt.halt, he.Halt)
			}
			assert.Equal(t, executor.StepDone, r.Rounded(tt.answer, tt.err, nd, critic.Report{}).Step, "no round is pending")
		})
	}
}

func TestReplanningFirstRound(t *testing.T) {
	r, err := executor.NewReplanning("base", nil, executor.WithRounds(2, executor.RoundPlannerFunc(nil)))
	require.NoError(t, err)
	dec := r.Start()
	require.Equal(t, executor.StepRound, dec.Step)
	assert.Equal(t, 1, dec.Round.Round)
	assert.Nil(t, dec.Round.Plan)
	a := &executor.RoundAnswer{Action: executor.RoundContinue, Tasks: mustPlan(t, `{"tasks": [{"id": "a", "input": "A"}]}`).Tasks}
	nd, err := r.RoundPlan("mission", a).DAG()
	require.NoError(t, err)
	rep := critic.Report{Summary: "fine"}
	require.Equal(t, executor.StepRun, r.Rounded(a, nil, nd, rep).Step)
	next := r.Next()
	assert.Equal(t, "base", next.ID)
	require.NotNil(t, next.Commit)
	assert.Nil(t, next.Commit.Trial)
	assert.Equal(t, rep, r.Result().Report)
	assert.Equal(t, 1, r.Result().Rounds)
	assert.Empty(t, r.Result().History)
}

func taskIDs(p *plan.Plan) []string {
	var ids []string
	for _, t := range p.Tasks {
		ids = append(ids, t.ID)
	}
	return ids
}
