package runner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/verify"
)

func when(src string) mod { return func(t *plan.Task) { t.When = src } }

var schedules = []runner.Schedule{runner.Phased, runner.Eager}

// A task's condition sees its raw input and its dependencies' results; it
// decides whether the task runs before anything else of it is prepared.
func TestConditionOutcomes(t *testing.T) {
	triage := output(map[string]any{"severity": "low"})
	cases := []struct {
		name     string
		when     string
		mods     []mod
		status   runner.TaskStatus
		class    runner.Class
		sentinel error
		diag     string
		run      runner.Status
		attempts int
		called   bool
	}{
		{name: "true runs the task", when: `(= (get-in data/depends ["triage" "severity"]) "low")`,
			status: runner.TaskDone, run: runner.StatusCompleted, attempts: 1, called: true},
		{name: "the raw input is bound", when: `(= data/input "page {{results.triage}}")`,
			status: runner.TaskDone, run: runner.StatusCompleted, attempts: 1, called: true},
		{name: "false skips it", when: `(= (get-in data/depends ["triage" "severity"]) "high")`,
			status: runner.TaskSkipped, class: runner.ClassConditionNotMet, sentinel: runner.ErrConditionNotMet,
			diag: `predicate returned false: (= (get-in data/depends ["triage" "severity"]) "high")`, run: runner.StatusCompleted},
		{name: "nil skips it", when: `(get data/depends "nothing")`,
			status: runner.TaskSkipped, class: runner.ClassConditionNotMet, sentinel: runner.ErrConditionNotMet,
			diag: `predicate returned nil; a predicate must return true, false or a diagnosis string: (get data/depends "nothing")`, run: runner.StatusCompleted},
		{name: "a string skips it with that reason", when: `(if (= (get-in data/depends ["triage" "severity"]) "high") true "only severe incidents page")`,
			status: runner.TaskSkipped, class: runner.ClassConditionNotMet, sentinel: runner.ErrConditionNotMet,
			diag: "only severe incidents page", run: runner.StatusCompleted},
		{name: "data/result is nil", when: `(nil? data/result)`,
			status: runner.TaskDone, run: runner.StatusCompleted, attempts: 1, called: true},
		{name: "an error fails a critical task and halts the run", when: `(> (get-in data/depends ["triage" "score"]) 3)`,
			status: runner.TaskFailed, class: runner.ClassCondition, sentinel: runner.ErrCondition, run: runner.StatusFailed, attempts: 1},
		{name: "an error is not retried", when: `(> (get-in data/depends ["triage" "score"]) 3)`, mods: []mod{onFailure(plan.PolicyRetry), retries(3)},
			status: runner.TaskFailed, class: runner.ClassCondition, sentinel: runner.ErrCondition, run: runner.StatusFailed, attempts: 1},
		{name: "an error follows on_failure skip", when: `(> (get-in data/depends ["triage" "score"]) 3)`, mods: []mod{onFailure(plan.PolicySkip)},
			status: runner.TaskSkipped, class: runner.ClassCondition, sentinel: runner.ErrCondition, run: runner.StatusCompleted, attempts: 1},
		{name: "an error of a task that is not critical", when: `(> (get-in data/depends ["triage" "score"]) 3)`, mods: []mod{nonCritical()},
			status: runner.TaskSkipped, class: runner.ClassCondition, sentinel: runner.ErrCondition, run: runner.StatusCompleted, attempts: 1},
		{name: "an error follows on_failure replan", when: `(> (get-in data/depends ["triage" "score"]) 3)`, mods: []mod{onFailure(plan.PolicyReplan)},
			status: runner.TaskFailed, class: runner.ClassCondition, sentinel: runner.ErrCondition, run: runner.StatusReplanRequired, attempts: 1},
	}
	for _, sched := range schedules {
		for _, c := range cases {
			t.Run(sched.String()+"/"+c.name, func(t *testing.T) {
				rec := newRecorder().on("triage", triage)
				p := planOf(
					task("triage", "rate it"),
					task("page", "page {{results.triage}}", append([]mod{deps("triage"), when(c.when)}, c.mods...)...),
				)
				res := run(t, p, rec, runner.WithSchedule(sched))
				assert.Equal(t, c.run, res.Status)
				got := res.Tasks["page"]
				assert.Equal(t, c.status, got.Status)
				assert.Equal(t, c.class, got.Class)
				assert.Equal(t, c.attempts, got.Attempts)
				assert.Equal(t, c.called, rec.count("page") == 1, "whether the worker ran")
				assert.LessOrEqual(t, rec.count("page"), 1)
				if c.sentinel == nil {
					assert.NoError(t, got.Err)
					return
				}
				require.ErrorIs(t, got.Err, c.sentinel)
				if c.diag != "" {
					assert.Equal(t, c.diag, got.Diagnosis)
					assert.Equal(t, "condition not met: "+c.diag, got.Err.Error())
				}
			})
		}
	}
}

// A task skipped by its condition is skipped like any other: its
// dependents run, the skipped task named in the request's Skipped and
// absent from its Depends, its templates empty and its inputs left out. A
// dependent that must not run without it says so in a condition of its
// own. The same holds for a synthesis gate and a human review: a skipped
// gate has not failed, and a skipped review waits for no one.
func TestConditionDependentsFollowTheSkippedRules(t *testing.T) {
	for _, sched := range schedules {
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
			res := run(t, p, rec, runner.WithSchedule(sched))
			require.Equal(t, runner.StatusCompleted, res.Status)
			assert.Equal(t, map[string]runner.TaskStatus{
				"triage": runner.TaskDone, "page": runner.TaskSkipped, "merge": runner.TaskSkipped, "approve": runner.TaskSkipped,
				"report": runner.TaskDone, "follow_up": runner.TaskSkipped, "last": runner.TaskDone,
			}, statuses(res))
			for _, id := range []string{"page", "merge", "approve", "follow_up"} {
				assert.Equal(t, runner.ClassConditionNotMet, res.Tasks[id].Class, id)
				assert.Zero(t, rec.count(id), "%s never ran", id)
			}
			assert.Empty(t, res.PendingReviews, "a skipped review waits for no one")
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

// A condition skip emits task_skipped alone, and is committed like any
// final state.
func TestConditionSkipEventsAndJournal(t *testing.T) {
	for _, sched := range schedules {
		t.Run(sched.String(), func(t *testing.T) {
			ev := &events{}
			j := &journal{}
			p := planOf(task("a", "x"), task("b", "y", deps("a"), when(`false`)), task("c", "z", deps("b")))
			res := run(t, p, newRecorder(), runner.WithObserver(ev), runner.WithJournal(j), runner.WithSchedule(sched))
			require.Equal(t, runner.StatusCompleted, res.Status)
			assert.Equal(t, []runner.EventKind{runner.EventTaskSkipped}, kinds(ev.of("b")))
			skipped := ev.of("b")[0]
			assert.ErrorIs(t, skipped.Err, runner.ErrConditionNotMet)
			assert.Equal(t, "predicate returned false: false", skipped.Diagnosis)
			assert.Equal(t, []string{"a:done", "b:skipped", "c:done"}, j.ids())
			for _, c := range j.commits {
				if c.TaskID == "b" {
					assert.Zero(t, c.Attempts)
					assert.ErrorIs(t, c.Err, runner.ErrConditionNotMet)
				}
			}
		})
	}
}

// A resumed run, which runs again every task that is not done, evaluates
// the condition again over the same results of its dependencies: it skips
// the task again, and no worker runs.
func TestConditionResumeSkipsAgain(t *testing.T) {
	rec := newRecorder()
	p := planOf(task("a", "x"), task("b", "y", deps("a"), when(`(= (get data/depends "a") "go")`)))
	res := run(t, p, rec, runner.WithInitialResults(map[string]any{"a": "stop"}))
	require.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, runner.TaskSkipped, res.Tasks["b"].Status)
	assert.Zero(t, rec.calls.Load())
}

// A condition that does not compile makes the plan invalid before any task
// starts, reported with the field that holds it.
func TestConditionThatDoesNotCompile(t *testing.T) {
	rec := newRecorder()
	p := planOf(task("a", "x"), task("b", "y", deps("a"), when(`(= 1`), verifies(`(nope)`)))
	res, err := runWithErr(t, p, rec)
	require.Error(t, err)
	assert.Nil(t, res)
	assert.ErrorIs(t, err, plan.ErrInvalid)
	var pe *runner.PredicateError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, "when", pe.Field)
	lines := strings.Split(err.Error(), "\n")
	assert.True(t, strings.HasPrefix(lines[0], "task b: when: "), lines[0])
	assert.Contains(t, err.Error(), "task b: verification: ", "every predicate that does not compile is reported at once")
	assert.Zero(t, rec.calls.Load())
}

// The condition is compiled once per run, with the plan's other
// predicates, whatever the number of tasks that share it.
func TestConditionCompiledOnceInTheSet(t *testing.T) {
	set := verify.NewSet()
	shared := `(some? (get data/depends "a"))`
	p := planOf(task("a", "x"), task("b", "y", deps("a"), when(shared), verifies(shared)), task("c", "z", deps("a"), when(shared)))
	res := run(t, p, newRecorder(), runner.WithPredicates(set))
	require.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, 1, set.Len())
}
