package runner_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// Initial results are done with no attempts, never run, and flow to their
// dependents through Depends, templates and inputs.
func TestInitialResults(t *testing.T) {
	rec := newRecorder()
	ev := &events{}
	p := planOf(
		task("a", "in"),
		task("b", "in", deps("a")),
		task("c", "got {{results.b.items.1}}", deps("b"), inputs(map[string]plan.InputRef{"first": {From: "b", Slot: "items.0"}})),
	)
	res := run(t, p, rec, runner.WithObserver(ev), runner.WithInitialResults(map[string]any{
		"a": "A",
		"b": map[string]any{"items": []any{"x", "y"}},
	}))
	require.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, []string{"c"}, rec.ran())
	for _, id := range []string{"a", "b"} {
		assert.Equal(t, runner.TaskDone, res.Tasks[id].Status)
		assert.Zero(t, res.Tasks[id].Attempts)
		assert.Empty(t, ev.of(id), "a task done from initial results has no events")
	}
	assert.Equal(t, "A", res.Tasks["a"].Output)
	req := rec.requests("c")[0]
	assert.Equal(t, "got y", req.Input)
	assert.Equal(t, map[string]any{"b": map[string]any{"items": []any{"x", "y"}}}, req.Depends)
	assert.Equal(t, map[string]any{"first": "x"}, req.Inputs)
	assert.Empty(t, req.Skipped)
}

// A dependent of an initial result that reads a task further upstream waits
// for it: here "c" reads "a", which is not done, through "b", which is.
func TestInitialResultWithUpstreamPending(t *testing.T) {
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(s.String(), func(t *testing.T) {
			rec := newRecorder().on("a", output("A"))
			p := planOf(
				task("a", "in"),
				task("b", "in", deps("a")),
				task("c", "a={{results.a}} b={{results.b}}", deps("b")),
			)
			res := run(t, p, rec, runner.WithSchedule(s), runner.WithInitialResults(map[string]any{"b": "B"}))
			require.Equal(t, runner.StatusCompleted, res.Status)
			assert.Equal(t, []string{"a", "c"}, rec.ran())
			assert.Equal(t, "a=A b=B", rec.requests("c")[0].Input)
		})
	}
}

func TestTemplates(t *testing.T) {
	up := map[string]any{
		"title": "Report",
		"n":     json.Number("12345678901234567890"),
		"f":     3.5,
		"ok":    true,
		"none":  nil,
		"items": []any{map[string]any{"name": "first", "tags": []any{"a", "b"}}, map[string]any{"name": "<second & third>"}},
		"obj":   map[string]any{"k": "v", "a": []any{1, 2}},
	}
	cases := []struct{ input, want string }{
		{"{{results.up.title}}", "Report"},
		{"n={{results.up.n}}", "n=12345678901234567890"},
		{"{{results.up.f}} {{results.up.ok}} {{results.up.none}}", "3.5 true null"},
		{"{{results.up.items.0.name}}/{{results.up.items.1.name}}", "first/<second & third>"},
		{"{{results.up.items.0.tags}}", `["a","b"]`},
		{"{{results.up.obj}}", `{"a":[1,2],"k":"v"}`},
		{"{{ results.up.title }}", "Report"},
		{"{{results.1.2}} and {{results.1.2.x}}", `{"x":"dotted"} and dotted`},
		{"{{results.1}}", "one"},
		{"{{other}} {{results.up.title}}", "{{other}} Report"},
		{"plain", "plain"},
	}
	for _, c := range cases {
		t.Run(c.input, func(t *testing.T) {
			rec := newRecorder()
			p := planOf(task("up", "in"), task("1.2", "in"), task("1", "in"), task("t", c.input, deps("up", "1.2", "1")))
			res := run(t, p, rec, runner.WithInitialResults(map[string]any{
				"up": up, "1.2": map[string]any{"x": "dotted"}, "1": "one",
			}))
			require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Tasks["t"].Err)
			assert.Equal(t, []string{"t"}, rec.ran())
			assert.Equal(t, c.want, rec.requests("t")[0].Input)
		})
	}
}

// Dotted ids work as task ids for the agent that produces them.
func TestDottedIDsRun(t *testing.T) {
	rec := newRecorder().on("1.1", output(map[string]any{"v": "x"}))
	p := planOf(
		task("1.1", "in"),
		task("1.2", "v={{results.1.1.v}}", deps("1.1")),
	)
	res := run(t, p, rec)
	require.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, "v=x", rec.requests("1.2")[0].Input)
}

// A template or an inputs slot that names a missing value fails the task
// with ErrMissingValue, without calling the agent and without retries.
func TestMissingValue(t *testing.T) {
	cases := map[string]mod{
		"template":              func(tk *plan.Task) { tk.Input = "x={{results.up.nope.0}}" },
		"index":                 func(tk *plan.Task) { tk.Input = "x={{results.up.list.5}}" },
		"slot":                  inputs(map[string]plan.InputRef{"x": {From: "up", Slot: "nope"}}),
		"slot through a string": inputs(map[string]plan.InputRef{"x": {From: "up", Slot: "name.first"}}),
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder().on("up", output(map[string]any{"name": "N", "list": []any{1}}))
			ev := &events{}
			p := planOf(
				task("up", "in"),
				task("t", "in", deps("up"), m, onFailure(plan.PolicyRetry), retries(3)),
				task("after", "in", deps("t")),
			)
			res := run(t, p, rec, runner.WithObserver(ev))
			tr := res.Tasks["t"]
			assert.Equal(t, runner.TaskFailed, tr.Status)
			assert.ErrorIs(t, tr.Err, runner.ErrMissingValue)
			assert.Equal(t, 1, tr.Attempts)
			assert.Zero(t, rec.count("t"), "the agent is not called")
			assert.Equal(t, runner.StatusFailed, res.Status)
			assert.ErrorIs(t, res.Err, runner.ErrMissingValue)
			assert.Equal(t, []runner.EventKind{runner.EventTaskStarted, runner.EventTaskFailed}, kinds(ev.of("t")))
		})
	}
	t.Run("non-critical skip", func(t *testing.T) {
		rec := newRecorder()
		p := planOf(
			task("up", "in"),
			task("t", "{{results.up.x}}", deps("up"), nonCritical(), onFailure(plan.PolicyRetry)),
			task("after", "in", deps("t")),
		)
		res := run(t, p, rec)
		assert.Equal(t, runner.StatusCompleted, res.Status)
		assert.Equal(t, runner.TaskSkipped, res.Tasks["t"].Status)
		assert.Equal(t, []string{"t"}, rec.requests("after")[0].Skipped)
	})
}

func TestInputsWiring(t *testing.T) {
	rec := newRecorder().
		on("fetch", output(map[string]any{"query": "golang", "meta": map[string]any{"page": json.Number("2")}, "hits": []any{"a", "b"}}))
	p := planOf(
		task("fetch", "in"),
		task("other", "in"),
		task("use", "in", deps("fetch", "other"), inputs(map[string]plan.InputRef{
			"q":     {From: "fetch", Slot: "query"},
			"page":  {From: "fetch", Slot: "meta.page"},
			"hit":   {From: "fetch", Slot: "hits.1"},
			"whole": {From: "other"},
		})),
	)
	res := run(t, p, rec)
	require.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, map[string]any{"q": "golang", "page": json.Number("2"), "hit": "b", "whole": "ok"}, rec.requests("use")[0].Inputs)
	assert.Nil(t, rec.requests("fetch")[0].Inputs, "a task without inputs gets none")
}

// Params reach the agent; the idempotency key is run/task/attempt.
func TestRequestFields(t *testing.T) {
	rec := newRecorder().on("a", byAttempt(fails(errBoom), output("fine")))
	p := planOf(
		task("a", "in", onFailure(plan.PolicyRetry), params(map[string]any{"lang": "go", "n": json.Number("3")})),
		task("b", "in", deps("a"), agentName("other")),
	)
	other := newRecorder()
	res := run(t, p, rec, runner.WithRunID("run-7"), runner.WithAgent("other", other))
	require.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, "run-7", res.RunID)
	reqs := rec.requests("a")
	require.Len(t, reqs, 2)
	for k, q := range reqs {
		assert.Equal(t, "run-7", q.RunID)
		assert.Equal(t, "a", q.TaskID)
		assert.Equal(t, worker, q.Agent)
		assert.Equal(t, map[string]any{"lang": "go", "n": json.Number("3")}, q.Params)
		assert.Equal(t, []string{"run-7/a/1", "run-7/a/2"}[k], q.IdempotencyKey)
		assert.Empty(t, q.Depends)
	}
	b := other.requests("b")
	require.Len(t, b, 1)
	assert.Equal(t, "other", b[0].Agent)
	assert.Equal(t, "run-7/b/1", b[0].IdempotencyKey)
	assert.Equal(t, map[string]any{"a": "fine"}, b[0].Depends)
}

// Without WithRunID every run gets its own id, used in the keys.
func TestRunIDDefault(t *testing.T) {
	rec := newRecorder()
	p := planOf(task("a", "in"))
	r1 := run(t, p, rec)
	r2 := run(t, p, rec)
	assert.NotEmpty(t, r1.RunID)
	assert.NotEqual(t, r1.RunID, r2.RunID)
	reqs := rec.requests("a")
	require.Len(t, reqs, 2)
	assert.Equal(t, r1.RunID+"/a/1", reqs[0].IdempotencyKey)
	assert.Equal(t, r1.RunID, reqs[0].RunID)
}

// Result.Outputs holds done tasks only.
func TestOutputs(t *testing.T) {
	rec := newRecorder().on("bad", fails(errBoom)).on("good", output(map[string]any{"k": 1}))
	p := planOf(task("good", "in"), task("bad", "in", onFailure(plan.PolicySkip)), task("rev", "r", review()))
	res := run(t, p, rec)
	assert.Equal(t, map[string]any{"good": map[string]any{"k": 1}}, res.Outputs())
}

// Initial results given as Go values are normalized like agent outputs, so
// that paths, templates and predicates see JSON-shaped data.
func TestInitialResultsNormalized(t *testing.T) {
	rec := newRecorder()
	p := planOf(
		task("a", "in"),
		task("b", "title={{results.a.title}} words={{results.a.words}}", deps("a"),
			verifies(`(= (get-in data/depends ["a" "words"]) 12)`),
			inputs(map[string]plan.InputRef{"t": {From: "a", Slot: "title"}})),
	)
	res := run(t, p, rec, runner.WithInitialResults(map[string]any{"a": article{Title: "Go", Words: 12}}))
	require.Equal(t, runner.StatusCompleted, res.Status, "%v", res.Err)
	req := rec.requests("b")[0]
	assert.Equal(t, "title=Go words=12", req.Input)
	assert.Equal(t, map[string]any{"t": "Go"}, req.Inputs)
	assert.Equal(t, map[string]any{"title": "Go", "words": json.Number("12"), "score": json.Number("0"), "tags": nil}, req.Depends["a"])

	_, err := runWithErr(t, p, rec, runner.WithInitialResults(map[string]any{"a": make(chan int)}))
	assert.ErrorIs(t, err, runner.ErrInvalidOption)
}

// Of several inputs whose slots are missing, the diagnosis names the first
// by name, whatever order the map gives: it goes into the journal and a
// retry's request, which must not differ from run to run.
func TestMissingSlotsNamedInOrder(t *testing.T) {
	for range 20 {
		rec := newRecorder().on("up", output(map[string]any{"name": "N"}))
		p := planOf(task("up", "in"), task("t", "in", deps("up"), inputs(map[string]plan.InputRef{
			"d": {From: "up", Slot: "nope4"}, "b": {From: "up", Slot: "nope2"}, "c": {From: "up", Slot: "nope3"}, "a2": {From: "up", Slot: "name"},
			"e": {From: "up", Slot: "nope5"}, "b1": {From: "up", Slot: "nope1"},
		})))
		res := run(t, p, rec)
		require.Equal(t, runner.TaskFailed, res.Tasks["t"].Status)
		assert.EqualError(t, res.Tasks["t"].Err, `missing upstream value: input "b": the output of "up" has no slot "nope2"`)
	}
}
