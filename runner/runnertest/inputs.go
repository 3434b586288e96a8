package runnertest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// testConditions: a task's condition sees its raw input and its
// dependencies' outputs, and decides whether it runs before anything else
// of it is prepared. False skips it as condition_not_met with no call and
// one task_skipped event; its dependents run, told it was skipped. A
// condition that cannot be evaluated fails the task for on_failure, at
// once, without a retry.
func testConditions(t *testing.T, k *kit) {
	triage := output(map[string]any{"severity": "low"})
	const broken = `(> (get-in data/depends ["triage" "score"]) 3)`
	cases := []struct {
		name string
		when string
		mods []mod
		page want
		run  runner.Status
	}{
		{name: "true runs the task", when: `(= (get-in data/depends ["triage" "severity"]) "low")`,
			page: done(1, "ok"), run: runner.StatusCompleted},
		{name: "the raw input is bound", when: `(= data/input "page {{results.triage}}")`,
			page: done(1, "ok"), run: runner.StatusCompleted},
		{name: "false skips it", when: `(= (get-in data/depends ["triage" "severity"]) "high")`,
			page: want{status: runner.TaskSkipped, class: runner.ClassConditionNotMet, err: runner.ErrConditionNotMet,
				diagnosis: `predicate returned false: (= (get-in data/depends ["triage" "severity"]) "high")`},
			run: runner.StatusCompleted},
		{name: "a string skips it with that reason", when: `(if (= (get-in data/depends ["triage" "severity"]) "high") true "only severe incidents page")`,
			page: want{status: runner.TaskSkipped, class: runner.ClassConditionNotMet, err: runner.ErrConditionNotMet, diagnosis: "only severe incidents page"},
			run:  runner.StatusCompleted},
		{name: "an error fails a critical task and halts the run", when: broken, mods: []mod{onFailure(plan.PolicyRetry), retries(3)},
			page: want{status: runner.TaskFailed, attempts: 1, class: runner.ClassCondition, err: runner.ErrCondition, diagnosis: "condition could not be evaluated: ", diagPrefix: true},
			run:  runner.StatusFailed},
		{name: "an error follows on_failure skip", when: broken, mods: []mod{onFailure(plan.PolicySkip)},
			page: want{status: runner.TaskSkipped, attempts: 1, class: runner.ClassCondition, err: runner.ErrCondition, diagnosis: "condition could not be evaluated: ", diagPrefix: true},
			run:  runner.StatusCompleted},
		{name: "an error follows on_failure replan", when: broken, mods: []mod{onFailure(plan.PolicyReplan)},
			page: want{status: runner.TaskFailed, attempts: 1, class: runner.ClassCondition, err: runner.ErrCondition, diagnosis: "condition could not be evaluated: ", diagPrefix: true},
			run:  runner.StatusReplanRequired},
	}
	for _, sched := range []runner.Schedule{runner.Phased, runner.Eager} {
		for _, c := range cases {
			t.Run(sched.String()+"/"+c.name, func(t *testing.T) {
				rec := newRecorder().on("triage", triage)
				p := planOf(
					task("triage", "rate it"),
					task("page", "page {{results.triage}}", append([]mod{deps("triage"), when(c.when)}, c.mods...)...),
					task("last", "in", deps("page")),
				)
				s := scenarioOf(p, rec)
				s.Schedule = sched
				res, evs := k.run(t, s)
				assert.Equal(t, c.run, res.Status)
				checkTask(t, res, "page", c.page)
				assert.Equal(t, c.page.status == runner.TaskDone, rec.count("page") == 1, "whether the worker ran")
				assert.LessOrEqual(t, rec.count("page"), 1)
				switch {
				case c.page.class == runner.ClassConditionNotMet:
					assert.Equal(t, []runner.EventKind{runner.EventTaskSkipped}, kinds(of(evs, "page")))
					fallthrough
				case c.run == runner.StatusCompleted:
					checkTask(t, res, "last", done(1, "ok"))
					if c.page.status == runner.TaskSkipped {
						assert.Equal(t, []string{"page"}, rec.requests("last")[0].Skipped)
					}
				case c.run == runner.StatusFailed:
					failedBy(t, res, "page", runner.ErrCondition)
					assert.Equal(t, []runner.EventKind{runner.EventTaskStarted, runner.EventTaskFailed}, kinds(of(evs, "page")))
				}
			})
		}
	}
}

// testTemplatesAndInputs: templates are expanded from upstream outputs,
// inputs wired from their slots, params passed; a dependency's output is
// in Depends.
func testTemplatesAndInputs(t *testing.T, k *kit) {
	rec := newRecorder().
		on("fetch", output(map[string]any{"query": "golang", "meta": map[string]any{"page": json.Number("2")}, "hits": []any{"a", "b"}})).
		on("1.1", output(map[string]any{"v": "x"}))
	p := planOf(
		task("fetch", "in"),
		task("other", "in"),
		task("use", "q={{results.fetch.query}} hit={{results.fetch.hits.1}}", deps("fetch", "other"), inputs(map[string]plan.InputRef{
			"q":     {From: "fetch", Slot: "query"},
			"page":  {From: "fetch", Slot: "meta.page"},
			"hit":   {From: "fetch", Slot: "hits.1"},
			"whole": {From: "other"},
		}), func(t *plan.Task) { t.Params = map[string]any{"lang": "go"} }),
		task("1.1", "in"),
		task("1.2", "v={{results.1.1.v}}", deps("1.1")),
	)
	res, _ := k.run(t, scenarioOf(p, rec))
	completed(t, res)
	use := rec.requests("use")
	require.Len(t, use, 1)
	assert.Equal(t, "q=golang hit=b", use[0].Input)
	assert.Equal(t, "q={{results.fetch.query}} hit={{results.fetch.hits.1}}", use[0].Template)
	assert.Equal(t, map[string]any{"results.fetch.query": "golang", "results.fetch.hits.1": "b"}, use[0].Refs)
	assert.Equal(t, map[string]any{"q": "golang", "page": json.Number("2"), "hit": "b", "whole": "ok"}, use[0].Inputs)
	assert.Equal(t, map[string]any{"lang": "go"}, use[0].Params)
	assert.Equal(t, "ok", use[0].Depends["other"])
	assert.Equal(t, res.Tasks["fetch"].Output, use[0].Depends["fetch"])
	assert.Nil(t, rec.requests("fetch")[0].Inputs, "a task without inputs gets none")
	assert.Equal(t, "v=x", rec.requests("1.2")[0].Input, "dotted ids")
}

// testMissingValue: a template or an inputs slot that names a missing
// value fails the task with ErrMissingValue, as invalid_output, without
// calling the agent and without retries; of several missing slots the
// diagnosis names the first by name.
func testMissingValue(t *testing.T, k *kit) {
	cases := []struct {
		name string
		m    mod
		diag string
	}{
		{"template", func(tk *plan.Task) { tk.Input = "x={{results.up.nope.0}}" }, ""},
		{"slot", inputs(map[string]plan.InputRef{"x": {From: "up", Slot: "nope"}}), ""},
		{"first of several slots", inputs(map[string]plan.InputRef{
			"d": {From: "up", Slot: "nope4"}, "b": {From: "up", Slot: "nope2"}, "c": {From: "up", Slot: "nope3"}, "a2": {From: "up", Slot: "name"},
			"e": {From: "up", Slot: "nope5"}, "b1": {From: "up", Slot: "nope1"},
		}), `missing upstream value: input "b": the output of "up" has no slot "nope2"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := newRecorder().on("up", output(map[string]any{"name": "N", "list": []any{1}}))
			p := planOf(
				task("up", "in"),
				task("t", "in", deps("up"), c.m, onFailure(plan.PolicyRetry), retries(3)),
				task("after", "in", deps("t")),
			)
			res, evs := k.run(t, scenarioOf(p, rec))
			w := want{status: runner.TaskFailed, attempts: 1, class: runner.ClassInvalidOutput, err: runner.ErrMissingValue,
				diagnosis: "missing upstream value: ", diagPrefix: true}
			if c.diag != "" {
				w.diagnosis, w.diagPrefix = c.diag, false
			}
			checkTask(t, res, "t", w)
			assert.Zero(t, rec.count("t"), "the agent is not called")
			failedBy(t, res, "t", runner.ErrMissingValue)
			assert.Equal(t, []runner.EventKind{runner.EventTaskStarted, runner.EventTaskFailed}, kinds(of(evs, "t")))
			checkTask(t, res, "after", want{status: runner.TaskPending})
		})
	}
}

// testInitialResults: tasks done before the run never run and keep no
// attempts; their outputs, given as Go values, flow to their dependents as
// JSON-shaped data.
func testInitialResults(t *testing.T, k *kit) {
	type article struct {
		Title string `json:"title"`
		Words int    `json:"words"`
	}
	rec := newRecorder()
	p := planOf(
		task("a", "in", verifies(`(broken`)),
		task("skipped-upstream", "in"),
		task("b", "title={{results.a.title}} words={{results.a.words}}", deps("a"),
			verifies(`(= (get-in data/depends ["a" "words"]) 12)`),
			inputs(map[string]plan.InputRef{"t": {From: "a", Slot: "title"}})),
		task("c", "in", deps("b", "skipped-upstream")),
	)
	s := scenarioOf(p, rec)
	s.Initial = map[string]any{"a": article{Title: "Go", Words: 12}, "skipped-upstream": "given"}
	res, evs := k.run(t, s)
	completed(t, res)
	assert.Equal(t, []string{"b", "c"}, rec.started())
	checkTask(t, res, "a", want{status: runner.TaskDone, output: map[string]any{"title": "Go", "words": json.Number("12")}})
	checkTask(t, res, "skipped-upstream", want{status: runner.TaskDone, output: "given"})
	assert.Empty(t, of(evs, "a"), "a task done before the run has no events")
	req := rec.requests("b")[0]
	assert.Equal(t, "title=Go words=12", req.Input)
	assert.Equal(t, map[string]any{"t": "Go"}, req.Inputs)
	assert.Equal(t, map[string]any{"skipped-upstream": "given", "b": "ok"}, rec.requests("c")[0].Depends)
}

// testRequestTooLarge: a task whose request exceeds the run's bound fails
// at once, without a call or a retry.
func testRequestTooLarge(t *testing.T, k *kit) {
	big := make([]byte, 300)
	for i := range big {
		big[i] = 'x'
	}
	rec := newRecorder().on("up", output(string(big)))
	p := planOf(
		task("up", "in"),
		task("t", "use {{results.up}}", deps("up"), onFailure(plan.PolicyRetry), retries(3), nonCritical()),
	)
	s := scenarioOf(p, rec)
	s.MaxRequestBytes = 200
	res, _ := k.run(t, s)
	completed(t, res)
	got := res.Tasks["t"]
	assert.Equal(t, runner.TaskSkipped, got.Status)
	assert.Equal(t, 1, got.Attempts)
	assert.ErrorIs(t, got.Err, runner.ErrRequestTooLarge)
	assert.Equal(t, runner.ClassAgentError, got.Class)
	assert.Equal(t, got.Err.Error(), got.Diagnosis)
	assert.Zero(t, rec.count("t"))
}
