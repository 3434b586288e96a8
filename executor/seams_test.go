package executor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// trace is an observer and a journal writing to one log, so that a test
// sees in which order commits and events came.
type trace struct {
	mu      sync.Mutex
	events  []runner.Event
	commits []executor.PlanCommit
	log     []string
	fail    map[int]error // CommitPlan's error, by version
}

func (tr *trace) Observe(e runner.Event) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.events = append(tr.events, e)
	tr.log = append(tr.log, string(e.Kind)+" "+e.RunID)
}

func (tr *trace) CommitPlan(_ context.Context, c executor.PlanCommit) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.commits = append(tr.commits, c)
	tr.log = append(tr.log, fmt.Sprintf("commit %s v%d", c.RunID, c.Version))
	return tr.fail[c.Version]
}

// lines is the log without the events of tasks and phases.
func (tr *trace) lines() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []string
	for _, l := range tr.log {
		kind, _, _ := strings.Cut(l, " ")
		switch runner.EventKind(kind) {
		case runner.EventTaskStarted, runner.EventTaskFinished, runner.EventTaskFailed, runner.EventTaskSkipped,
			runner.EventTaskRetried, runner.EventTaskVerified, runner.EventTaskWaiting,
			runner.EventPhaseStarted, runner.EventPhaseFinished:
			continue
		}
		out = append(out, l)
	}
	return out
}

// of returns the events of kind.
func (tr *trace) of(kind runner.EventKind) []runner.Event {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []runner.Event
	for _, e := range tr.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// TestExecuteEvents: the executor's events sit between its runs, in order,
// under its base id, with the repair's version and counts; the runs are
// named base, base.1, ...
func TestExecuteEvents(t *testing.T) {
	tests := []struct {
		name    string
		workers map[string]behaviour
		replies []reply
		want    []string
		halt    string
	}{
		{
			name:    "one repair",
			workers: map[string]behaviour{"x": fail(errBoom)},
			replies: []reply{{plan: mustPlan(t, aThenY)}},
			want: []string{
				"run_started ex", "run_finished ex",
				"replan_requested ex", "repair_adopted ex",
				"run_started ex.1", "run_finished ex.1",
			},
		},
		{
			name:    "same failure twice",
			workers: map[string]behaviour{"x": fail(errBoom)},
			replies: []reply{{plan: mustPlan(t, aThenX)}},
			want: []string{
				"run_started ex", "run_finished ex",
				"replan_requested ex", "repair_adopted ex",
				"run_started ex.1", "run_finished ex.1",
				"execution_halted ex",
			},
			halt: executor.HaltSameFailure,
		},
		{
			name:    "no repair",
			workers: map[string]behaviour{"x": fail(errBoom)},
			replies: []reply{{err: errExhausted}},
			want: []string{
				"run_started ex", "run_finished ex",
				"replan_requested ex", "replan_failed ex", "execution_halted ex",
			},
			halt: executor.HaltReplanFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkers()
			for id, b := range tt.workers {
				w.set(id, b)
			}
			tr := &trace{}
			res, err := executor.Execute(context.Background(), mustPlan(t, aThenX), mission, w.options(
				executor.WithReplanner(newReplanner(tt.replies...)), executor.WithRunID("ex"), executor.WithObserver(tr))...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, tr.lines())
			assert.Equal(t, "ex", res.RunID)
			assert.Equal(t, tt.halt, res.Halt)

			req := tr.of(executor.EventReplanRequested)
			require.Len(t, req, 1)
			assert.Equal(t, "x", req[0].TaskID)
			assert.Equal(t, runner.ClassAgentError, req[0].Class)
			assert.Equal(t, "boom", req[0].Diagnosis)
			assert.Equal(t, 0, req[0].Version, "the plan that failed")
			assert.Zero(t, req[0].Seq)

			if adopted := tr.of(executor.EventRepairAdopted); len(adopted) > 0 {
				require.Len(t, adopted, 1)
				a := adopted[0]
				assert.Equal(t, 1, a.Version)
				assert.Equal(t, 2, a.Tasks)
				assert.Equal(t, res.History[0].NewTaskCount, a.NewTasks)
				assert.Equal(t, "x", a.TaskID, "the failure it repairs")
			}
			if halted := tr.of(executor.EventHalted); tt.halt != "" {
				require.Len(t, halted, 1)
				assert.Equal(t, tt.halt, halted[0].Halt)
				assert.Equal(t, res.Err, halted[0].Err)
			} else {
				assert.Empty(t, halted)
			}
			if failed := tr.of(executor.EventReplanFailed); tt.halt == executor.HaltReplanFailed {
				require.Len(t, failed, 1)
				assert.ErrorIs(t, failed[0].Err, errExhausted)
				assert.Equal(t, "x", failed[0].TaskID)
			}
		})
	}
}

// TestExecuteNewRunID: without WithRunID the execution gets an id that
// sorts by time, and its repair runs under id.1.
func TestExecuteNewRunID(t *testing.T) {
	w := newWorkers().set("x", fail(errBoom))
	tr := &trace{}
	res, err := executor.Execute(context.Background(), mustPlan(t, aThenX), mission, w.options(
		executor.WithReplanner(newReplanner(reply{plan: mustPlan(t, aThenY)})), executor.WithObserver(tr))...)
	require.NoError(t, err)
	assert.Regexp(t, `^\d{8}T\d{6}-[0-9a-f]{8}$`, res.RunID)
	var runs []string
	for _, e := range tr.of(runner.EventRunStarted) {
		runs = append(runs, e.RunID)
	}
	assert.Equal(t, []string{res.RunID, res.RunID + ".1"}, runs)
	assert.False(t, res.Started.IsZero())
}

// TestExecuteObserverPanics: an observer's panic on an executor's event
// is recovered and returned; the execution goes on.
func TestExecuteObserverPanics(t *testing.T) {
	w := newWorkers().set("x", fail(errBoom))
	o := runner.ObserverFunc(func(e runner.Event) {
		if e.Kind == executor.EventReplanRequested {
			panic("no")
		}
	})
	res, err := executor.Execute(context.Background(), mustPlan(t, aThenX), mission, w.options(
		executor.WithReplanner(newReplanner(reply{plan: mustPlan(t, aThenY)})), executor.WithObserver(o))...)
	var pe *runner.ObserverPanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, executor.EventReplanRequested, pe.Event.Kind)
	assert.Equal(t, runner.StatusCompleted, res.Status)
}

// TestExecuteJournal: each plan is committed before it runs, with its
// version and the trial that made it; a commit that fails ends the
// execution failed before the plan runs.
func TestExecuteJournal(t *testing.T) {
	errDisk := errors.New("disk full")
	tests := []struct {
		name    string
		fail    map[int]error
		want    []string
		calls   map[string]int
		status  runner.Status
		commits int
	}{
		{
			name: "every plan before it runs",
			want: []string{
				"commit j v0", "run_started j", "run_finished j",
				"replan_requested j", "commit j v1", "repair_adopted j",
				"run_started j.1", "run_finished j.1",
			},
			calls:  map[string]int{"a": 1, "x": 1, "y": 1},
			status: runner.StatusCompleted, commits: 2,
		},
		{
			name:   "the first plan not committed",
			fail:   map[int]error{0: errDisk},
			want:   []string{"commit j v0"},
			calls:  map[string]int{},
			status: runner.StatusFailed, commits: 1,
		},
		{
			name: "the repair not committed",
			fail: map[int]error{1: errDisk},
			want: []string{
				"commit j v0", "run_started j", "run_finished j",
				"replan_requested j", "commit j v1",
			},
			calls:  map[string]int{"a": 1, "x": 1},
			status: runner.StatusFailed, commits: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkers().set("x", fail(errBoom))
			tr := &trace{fail: tt.fail}
			p, repair := mustPlan(t, aThenX), mustPlan(t, aThenY)
			res, err := executor.Execute(context.Background(), p, mission, w.options(
				executor.WithReplanner(newReplanner(reply{plan: repair})), executor.WithRunID("j"),
				executor.WithObserver(tr), executor.WithJournal(tr))...)
			require.NoError(t, err)
			require.NotNil(t, res)
			assert.Equal(t, tt.want, tr.lines())
			assert.Equal(t, tt.calls, w.counts())
			assert.Equal(t, tt.status, res.Status)

			require.Len(t, tr.commits, tt.commits)
			first := tr.commits[0]
			assert.Equal(t, executor.PlanCommit{RunID: "j", Version: 0, Plan: p}, first)
			if tt.commits > 1 {
				second := tr.commits[1]
				assert.Equal(t, 1, second.Version)
				assert.Same(t, repair, second.Plan)
				require.NotNil(t, second.Trial)
				assert.Equal(t, executor.Trial{Attempt: 1, TaskID: "x", Class: "agent_error", Diagnosis: "boom", NewTaskCount: 1}, *second.Trial)
			}
			if tt.fail != nil {
				assert.ErrorIs(t, res.Err, errDisk)
				assert.ErrorIs(t, res.Err, runner.ErrJournal)
				assert.Empty(t, res.Halt, "not a halt of replanning")
				assert.Same(t, p, res.Plan, "the repair did not run")
			}
		})
	}
}

// TestExecuteResume: an execution resumed from its history and results
// goes on at the version it was at, under that version's run id, with its
// limits counting the history, and runs no finished task again.
func TestExecuteResume(t *testing.T) {
	earlier := []executor.Trial{
		{Attempt: 1, TaskID: "x", Class: "agent_error", Diagnosis: "first", NewTaskCount: 1},
		{Attempt: 2, TaskID: "x", Class: "agent_error", Diagnosis: "second", NewTaskCount: 0},
	}
	tests := []struct {
		name     string
		history  []executor.Trial
		plan     string
		workers  map[string]behaviour
		replies  []reply
		opts     []executor.Option
		runs     []string
		commits  []int
		calls    map[string]int
		status   runner.Status
		halt     string
		replans  int
		attempts int
	}{
		{
			name:    "completes at the version it was at",
			history: earlier, plan: aThenY,
			runs: []string{"r.2"}, calls: map[string]int{"y": 1},
			status: runner.StatusCompleted, replans: 2, attempts: 3,
		},
		{
			name:    "repairs on from there",
			history: earlier, plan: aThenY,
			workers: map[string]behaviour{"y": fail(errBoom)},
			replies: []reply{{plan: mustPlan(t, aThenZ)}},
			runs:    []string{"r.2", "r.3"}, commits: []int{3}, calls: map[string]int{"y": 1, "z": 1},
			status: runner.StatusCompleted, replans: 3, attempts: 4,
		},
		{
			name:    "max replans counts the history",
			history: earlier, plan: aThenY,
			workers: map[string]behaviour{"y": failNumbered()},
			replies: []reply{{plan: mustPlan(t, aThenZ)}},
			opts:    []executor.Option{executor.WithMaxReplans(2)},
			runs:    []string{"r.2"}, calls: map[string]int{"y": 1},
			status: runner.StatusFailed, halt: executor.HaltMaxReplans, replans: 2, attempts: 3,
		},
		{
			name:    "max replans per task counts the history",
			history: earlier, plan: aThenX,
			workers: map[string]behaviour{"x": failNumbered()},
			replies: []reply{{plan: mustPlan(t, aThenZ)}},
			opts:    []executor.Option{executor.WithMaxReplansPerTask(2)},
			runs:    []string{"r.2"}, calls: map[string]int{"x": 1},
			status: runner.StatusFailed, halt: executor.HaltMaxReplansPerTask, replans: 2, attempts: 3,
		},
		{
			name:    "a failure of the history is not new",
			history: earlier, plan: aThenX,
			workers: map[string]behaviour{"x": fail(errors.New("second"))},
			replies: []reply{{plan: mustPlan(t, aThenZ)}},
			runs:    []string{"r.2"}, calls: map[string]int{"x": 1},
			status: runner.StatusFailed, halt: executor.HaltSameFailure, replans: 2, attempts: 3,
		},
		{
			name: "at version 0",
			plan: aThenX,
			runs: []string{"r"}, calls: map[string]int{"x": 1},
			status: runner.StatusCompleted, replans: 0, attempts: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkers()
			for id, b := range tt.workers {
				w.set(id, b)
			}
			tr := &trace{}
			rp := newReplanner(tt.replies...)
			history := slices.Clone(tt.history)
			opts := append([]executor.Option{
				executor.WithReplanner(rp), executor.WithRunID("r"), executor.WithObserver(tr), executor.WithJournal(tr),
				executor.WithHistory(history), executor.WithInitialResults(map[string]any{"a": "A-out", "gone": "from an earlier plan"}),
			}, tt.opts...)
			res, err := executor.Execute(context.Background(), mustPlan(t, tt.plan), mission, w.options(opts...)...)
			require.NoError(t, err)

			var runs []string
			for _, e := range tr.of(runner.EventRunStarted) {
				runs = append(runs, e.RunID)
			}
			assert.Equal(t, tt.runs, runs)
			var versions []int
			for _, c := range tr.commits {
				versions = append(versions, c.Version)
				require.NotNil(t, c.Trial)
				assert.Equal(t, c.Version, c.Trial.Attempt, "the k-th repair makes version k")
			}
			assert.Equal(t, tt.commits, versions, "the plan it resumes with is committed already")
			assert.Equal(t, tt.calls, w.counts(), "a, done before, does not run again")
			assert.Equal(t, tt.status, res.Status, "%v", res.Err)
			assert.Equal(t, tt.halt, res.Halt)
			assert.Equal(t, tt.replans, res.ReplanCount)
			assert.Len(t, res.History, tt.replans)
			assert.Equal(t, tt.history, res.History[:len(tt.history)], "the history goes on")
			assert.Equal(t, tt.attempts, res.ExecutionAttempts)
			assert.Equal(t, runner.TaskDone, res.Tasks["a"].Status)
			assert.Zero(t, res.Tasks["a"].Attempts)
			assert.Equal(t, "A-out", res.Outputs()["a"])
			assert.Equal(t, tt.history, history, "the caller's history is not changed")
			for _, c := range rp.received() {
				assert.Equal(t, "from an earlier plan", c.completed["gone"], "every result is handed to the replanner")
			}
		})
	}
}

func TestNewTasks(t *testing.T) {
	old := &plan.Plan{Tasks: []plan.Task{plan.NewTask("a", "x"), plan.NewTask("b", "y")}}
	repair := &plan.Plan{Tasks: []plan.Task{plan.NewTask("a", "x"), plan.NewTask("b2", "y"), plan.NewTask("c", "z")}}
	assert.Equal(t, 2, executor.NewTasks(old, repair))
	assert.Equal(t, 3, executor.NewTasks(nil, repair))
	assert.Equal(t, 0, executor.NewTasks(repair, repair))
}

func TestHaltErrorMessage(t *testing.T) {
	f := executor.Failure{TaskID: "x", Class: "agent_error", Diagnosis: "boom"}
	tests := []struct {
		err  executor.HaltError
		want string
	}{
		{executor.HaltError{Halt: executor.HaltSameFailure, Failure: f}, "replanning halted (same_failure): task x failed the same way twice: boom"},
		{executor.HaltError{Halt: executor.HaltMaxReplans, Failure: f}, "replanning halted (max_replans): task x failed and no replan is left: boom"},
		{executor.HaltError{Halt: executor.HaltMaxReplansPerTask, Failure: f}, "replanning halted (max_replans_per_task): task x failed and no replan of it is left: boom"},
		{executor.HaltError{Halt: executor.HaltConsecutiveFailures, Failure: f}, "replanning halted (consecutive_failures): task x failed and too many executions in a row finished no new task: boom"},
		{executor.HaltError{Halt: executor.HaltBudget, Failure: f}, "replanning halted (budget_exceeded): task x failed and the budget is spent: boom"},
		{executor.HaltError{Halt: executor.HaltReplanFailed, Failure: f, Err: errExhausted}, "replanning halted (replan_failed): no repair plan after task x failed: replanner script exhausted"},
		{executor.HaltError{Halt: executor.HaltBudget, Err: context.DeadlineExceeded}, "replanning halted (budget_exceeded): context deadline exceeded"},
		{executor.HaltError{Halt: executor.HaltMaxReplans, Failure: executor.Failure{TaskID: "x"}, Err: errBoom}, "replanning halted (max_replans): task x failed and no replan is left: boom"},
		{executor.HaltError{Halt: executor.HaltMaxReplans}, "replanning halted (max_replans): the run failed and no replan is left"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.EqualError(t, &tt.err, tt.want)
			assert.ErrorIs(t, &tt.err, executor.ErrHalted)
			if tt.err.Err != nil {
				assert.ErrorIs(t, &tt.err, tt.err.Err)
			}
		})
	}
}
