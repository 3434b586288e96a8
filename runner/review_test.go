package runner_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// reviewPlan: draft → rev (human review) → publish; an independent chain
// i1 → i2 → i3 spans the same phases and more.
func reviewPlan(revMods ...mod) *plan.Plan {
	return planOf(
		task("draft", "Write"),
		task("rev", "Check this draft: {{results.draft}}", append([]mod{deps("draft"), review()}, revMods...)...),
		task("publish", "Publish {{results.rev}}", deps("rev")),
		task("i1", "in"),
		task("i2", "in", deps("i1")),
		task("i3", "in", deps("i2")),
		task("i4", "in", deps("i3")),
	)
}

func TestReviewWaitsAndResumes(t *testing.T) {
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(s.String(), func(t *testing.T) {
			rec := newRecorder().on("draft", output("the draft"))
			ev := &events{}
			res := run(t, reviewPlan(), rec, runner.WithSchedule(s), runner.WithObserver(ev), runner.WithRunID("r1"))

			assert.Equal(t, runner.StatusWaiting, res.Status)
			assert.NoError(t, res.Err)
			assert.Equal(t, map[string]runner.TaskStatus{
				"draft": runner.TaskDone, "rev": runner.TaskWaiting, "publish": runner.TaskPending,
				"i1": runner.TaskDone, "i2": runner.TaskDone, "i3": runner.TaskDone, "i4": runner.TaskDone,
			}, statuses(res))
			assert.Equal(t, []runner.PendingReview{{
				TaskID:   "rev",
				Prompt:   "Check this draft: the draft",
				Upstream: map[string]any{"draft": "the draft"},
			}}, res.PendingReviews)
			assert.Zero(t, res.Tasks["rev"].Attempts)
			assert.Zero(t, rec.count("publish"))
			assert.Equal(t, runner.EventTaskWaiting, ev.of("rev")[len(ev.of("rev"))-1].Kind)
			assert.Equal(t, int64(5), rec.calls.Load())

			// Resume: nothing done runs again.
			rec2 := newRecorder()
			res2 := run(t, reviewPlan(), rec2, runner.WithSchedule(s), runner.WithRunID("r1"),
				runner.WithInitialResults(res.Outputs()),
				runner.WithReviews(map[string]runner.Decision{"rev": runner.Approve()}))
			assert.Equal(t, runner.StatusCompleted, res2.Status)
			assert.Equal(t, []string{"publish"}, rec2.ran())
			assert.Equal(t, int64(1), rec2.calls.Load())
			assert.Equal(t, "approve", res2.Tasks["rev"].Output)
			assert.Equal(t, runner.TaskDone, res2.Tasks["rev"].Status)
			assert.Equal(t, 1, res2.Tasks["rev"].Attempts)
			req := rec2.requests("publish")[0]
			assert.Equal(t, "Publish approve", req.Input)
			assert.Equal(t, map[string]any{"rev": "approve"}, req.Depends)
			for _, id := range []string{"draft", "i1", "i2", "i3", "i4"} {
				assert.Equal(t, runner.TaskDone, res2.Tasks[id].Status)
				assert.Zero(t, res2.Tasks[id].Attempts, "%s came from the initial results", id)
			}
			assert.Empty(t, res2.PendingReviews)
		})
	}
}

// A waiting review's events are task_started then task_waiting.
func TestReviewWaitingEvents(t *testing.T) {
	ev := &events{}
	res := run(t, planOf(task("rev", "Look", review())), newRecorder(), runner.WithObserver(ev))
	require.Equal(t, runner.StatusWaiting, res.Status)
	assert.Equal(t, []runner.EventKind{runner.EventTaskStarted, runner.EventTaskWaiting}, kinds(ev.of("rev")))
}

// An approved decision's Output becomes the task's output and is verified
// like any output; a rejection fails the task with ErrRejected through
// on_failure, never retried.
func TestReviewDecisions(t *testing.T) {
	cases := []struct {
		name     string
		mods     []mod
		decision runner.Decision
		status   runner.TaskStatus
		run      runner.Status
		output   any
		publish  runner.TaskStatus
		err      error
	}{
		{name: "approve", decision: runner.Approve(),
			status: runner.TaskDone, run: runner.StatusCompleted, output: "approve", publish: runner.TaskDone},
		{name: "approve with output", decision: runner.Decision{Approved: true, Output: map[string]any{"text": "edited"}},
			status: runner.TaskDone, run: runner.StatusCompleted, output: map[string]any{"text": "edited"}, publish: runner.TaskDone},
		{name: "reject stop critical", decision: runner.Reject("too long"),
			status: runner.TaskFailed, run: runner.StatusFailed, publish: runner.TaskPending, err: runner.ErrRejected},
		{name: "reject retry critical", mods: []mod{onFailure(plan.PolicyRetry), retries(3)}, decision: runner.Reject("too long"),
			status: runner.TaskFailed, run: runner.StatusFailed, publish: runner.TaskPending, err: runner.ErrRejected},
		{name: "reject skip", mods: []mod{onFailure(plan.PolicySkip)}, decision: runner.Reject(""),
			status: runner.TaskSkipped, run: runner.StatusCompleted, publish: runner.TaskDone, err: runner.ErrRejected},
		{name: "reject replan", mods: []mod{onFailure(plan.PolicyReplan)}, decision: runner.Reject("wrong approach"),
			status: runner.TaskFailed, run: runner.StatusReplanRequired, publish: runner.TaskPending, err: runner.ErrRejected},
		{name: "approved output fails verification", mods: []mod{verifies(`(= data/result "yes")`), onVerify(plan.PolicyRetry)},
			decision: runner.Decision{Approved: true, Output: "no"},
			status:   runner.TaskFailed, run: runner.StatusFailed, output: "no", publish: runner.TaskPending, err: runner.ErrVerification},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := newRecorder().on("draft", output("the draft"))
			res := run(t, reviewPlan(c.mods...), rec, runner.WithReviews(map[string]runner.Decision{"rev": c.decision}))
			rev := res.Tasks["rev"]
			assert.Equal(t, c.status, rev.Status)
			assert.Equal(t, c.run, res.Status)
			assert.Equal(t, 1, rev.Attempts, "a decision is never retried")
			assert.Equal(t, c.output, rev.Output)
			assert.Equal(t, c.publish, res.Tasks["publish"].Status)
			if c.err != nil {
				assert.ErrorIs(t, rev.Err, c.err)
			} else {
				assert.NoError(t, rev.Err)
			}
			if c.decision.Comment != "" {
				assert.Contains(t, rev.Err.Error(), c.decision.Comment)
			}
			assert.Empty(t, res.PendingReviews)
			assert.Equal(t, 1, rec.count("draft"))
		})
	}
}

// Two reviews in one phase both wait; deciding one leaves the other
// waiting.
func TestParallelReviews(t *testing.T) {
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		t.Run(s.String(), func(t *testing.T) {
			p := planOf(
				task("a", "A"),
				task("r2", "second {{results.a}}", deps("a"), review()),
				task("r1", "first", deps("a"), review()),
				task("after1", "in", deps("r1")),
				task("after2", "in", deps("r2")),
				task("both", "in", deps("r1", "r2")),
			)
			rec := newRecorder()
			res := run(t, p, rec, runner.WithSchedule(s))
			require.Equal(t, runner.StatusWaiting, res.Status)
			require.Len(t, res.PendingReviews, 2)
			assert.Equal(t, "r2", res.PendingReviews[0].TaskID, "plan order")
			assert.Equal(t, "second ok", res.PendingReviews[0].Prompt)
			assert.Equal(t, "r1", res.PendingReviews[1].TaskID)
			assert.Equal(t, map[string]any{"a": "ok"}, res.PendingReviews[1].Upstream)

			rec2 := newRecorder()
			res2 := run(t, p, rec2, runner.WithSchedule(s), runner.WithInitialResults(res.Outputs()),
				runner.WithReviews(map[string]runner.Decision{"r1": runner.Approve()}))
			assert.Equal(t, runner.StatusWaiting, res2.Status)
			require.Len(t, res2.PendingReviews, 1)
			assert.Equal(t, "r2", res2.PendingReviews[0].TaskID)
			assert.Equal(t, []string{"after1"}, rec2.ran())
			assert.Equal(t, runner.TaskPending, res2.Tasks["both"].Status)

			rec3 := newRecorder()
			res3 := run(t, p, rec3, runner.WithSchedule(s), runner.WithInitialResults(res2.Outputs()),
				runner.WithReviews(map[string]runner.Decision{"r2": {Approved: true, Output: "fine"}}))
			assert.Equal(t, runner.StatusCompleted, res3.Status)
			assert.Equal(t, []string{"after2", "both"}, rec3.ran())
			assert.Equal(t, map[string]any{"r1": "approve", "r2": "fine"}, rec3.requests("both")[0].Depends)
		})
	}
}

func TestUnknownTaskIDs(t *testing.T) {
	p := reviewPlan()
	cases := map[string]runner.RunOption{
		"initial result":       runner.WithInitialResults(map[string]any{"nope": 1}),
		"review":               runner.WithReviews(map[string]runner.Decision{"nope": runner.Approve()}),
		"review of non-review": runner.WithReviews(map[string]runner.Decision{"draft": runner.Approve()}),
	}
	for name, opt := range cases {
		t.Run(name, func(t *testing.T) {
			noLeaks(t)
			rec := newRecorder()
			res, err := runWithErr(t, p, rec, opt)
			assert.ErrorIs(t, err, runner.ErrUnknownTask)
			assert.Nil(t, res)
			assert.Zero(t, rec.calls.Load())
		})
	}
}

func TestParseDecision(t *testing.T) {
	cases := []struct {
		in      string // JSON
		want    runner.Decision
		wantErr string
	}{
		{in: `"approve"`, want: runner.Decision{Approved: true, Output: "approve"}},
		{in: `"approved"`, want: runner.Decision{Approved: true, Output: "approved"}},
		{in: `" Approve "`, want: runner.Decision{Approved: true, Output: " Approve "}},
		{in: `"reject"`, want: runner.Decision{}},
		{in: `"rejected"`, want: runner.Decision{}},
		{in: `{"approved": true}`, want: runner.Decision{Approved: true, Output: map[string]any{"approved": true}}},
		{in: `{"approved": true, "comment": "fine", "output": {"text": "edited"}}`,
			want: runner.Decision{Approved: true, Comment: "fine", Output: map[string]any{"text": "edited"}}},
		{in: `{"approved": true, "output": null}`, want: runner.Decision{Approved: true}},
		{in: `{"approved": false, "comment": "too long"}`,
			want: runner.Decision{Comment: "too long", Output: map[string]any{"approved": false, "comment": "too long"}}},
		{in: `"maybe"`, wantErr: "neither approve nor reject"},
		{in: `""`, wantErr: "neither approve nor reject"},
		{in: `{"approved": "yes"}`, wantErr: `"approved": true or false`},
		{in: `{"comment": "x"}`, wantErr: `"approved": true or false`},
		{in: `{"approved": true, "comment": 3}`, wantErr: "comment must be a string"},
		{in: `{"approved": true, "verdict": "ok"}`, wantErr: `unknown key "verdict"`},
		{in: `true`, wantErr: "neither"},
		{in: `42`, wantErr: "neither"},
		{in: `null`, wantErr: "neither"},
		{in: `["approve"]`, wantErr: "neither"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			var v any
			require.NoError(t, json.Unmarshal([]byte(c.in), &v))
			got, err := runner.ParseDecision(v)
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				assert.Equal(t, runner.Decision{}, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// A parsed decision drives a review like a built one.
func TestParsedDecisionResumes(t *testing.T) {
	var v any
	require.NoError(t, json.NewDecoder(strings.NewReader(`{"approved": true, "output": {"n": 3}}`)).Decode(&v))
	d, err := runner.ParseDecision(v)
	require.NoError(t, err)
	rec := newRecorder()
	p := planOf(task("rev", "Look", review()), task("next", "n={{results.rev.n}}", deps("rev")))
	res := run(t, p, rec, runner.WithReviews(map[string]runner.Decision{"rev": d}))
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, "n=3", rec.requests("next")[0].Input)
}

// An approved output that cannot be made JSON-shaped fails the review
// through on_failure.
func TestReviewOutputNotJSON(t *testing.T) {
	rec := newRecorder()
	p := planOf(task("rev", "Look", review(), onFailure(plan.PolicySkip)), task("next", "in", deps("rev")))
	res := run(t, p, rec, runner.WithReviews(map[string]runner.Decision{"rev": {Approved: true, Output: make(chan int)}}))
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, runner.TaskSkipped, res.Tasks["rev"].Status)
	assert.ErrorContains(t, res.Tasks["rev"].Err, "not JSON-shaped")
	assert.Equal(t, []string{"rev"}, rec.requests("next")[0].Skipped)
}

func TestParseDecisions(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    map[string]runner.Decision
		wantErr string
	}{
		{name: "words and objects", in: `{"a": "approve", "b": "reject", "c": {"approved": true, "output": {"n": 12345678901234567890}}}`,
			want: map[string]runner.Decision{
				"a": {Approved: true, Output: "approve"},
				"b": {},
				"c": {Approved: true, Output: map[string]any{"n": json.Number("12345678901234567890")}},
			}},
		{name: "no decisions", in: `{}`, want: map[string]runner.Decision{}},
		{name: "not an object", in: `["approve"]`, wantErr: "want an object of task id to decision"},
		{name: "null", in: `null`, wantErr: "want an object of task id to decision"},
		{name: "a bad decision names its task", in: `{"a": "approve", "b": "maybe"}`, wantErr: `task b: decision "maybe" is neither approve nor reject`},
		{name: "the first bad task by id", in: `{"z": "no", "m": 1, "a": "approve"}`, wantErr: "task m: decision 1 is neither"},
		{name: "malformed", in: `{"a": `, wantErr: "unexpected EOF"},
		{name: "trailing data", in: `{"a": "approve"} {}`, wantErr: "after"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := runner.ParseDecisions([]byte(c.in))
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// FuzzParseDecisions checks that ParseDecisions never panics, and that
// what it accepts is what ParseDecision makes of each value. The seed
// corpus is testdata/fuzz/FuzzParseDecisions.
func FuzzParseDecisions(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := runner.ParseDecisions(data)
		if err != nil {
			require.Nil(t, got)
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var m map[string]any
		require.NoError(t, dec.Decode(&m), "accepted: %q", data)
		require.Len(t, got, len(m))
		for id, v := range m {
			want, err := runner.ParseDecision(v)
			require.NoError(t, err)
			require.Equal(t, want, got[id])
		}
	})
}
