package durable_test

import (
	"context"
	"encoding/json"
	"os/user"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// decided returns the review_decided events of run id.
func decided(t *testing.T, s store.Store, id string) map[string]durable.ReviewDecision {
	t.Helper()
	rec, err := s.Load(context.Background(), id)
	require.NoError(t, err)
	out := map[string]durable.ReviewDecision{}
	for _, e := range rec.Events {
		if e.Kind != string(durable.EventReviewDecided) {
			continue
		}
		var d durable.ReviewDecision
		require.NoError(t, json.Unmarshal(e.Data, &d))
		out[e.TaskID] = d
		assert.WithinDuration(t, time.Now(), e.Time, time.Minute)
	}
	return out
}

func TestResumeRecordsTheDecisions(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	ctx := context.Background()
	p := mustPlan(t, `{"tasks": [
		{"id": "draft", "agent": "w", "input": "x"},
		{"id": "legal", "type": "human_review", "input": "Legal?", "depends_on": ["draft"]},
		{"id": "brand", "type": "human_review", "input": "On brand?", "depends_on": ["legal"]},
		{"id": "send", "agent": "w", "input": "y", "depends_on": ["brand"]}]}`)
	_, err := durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("w", w.agent()), durable.WithRunID("r"))
	require.NoError(t, err)
	assert.Empty(t, decided(t, s, "r"), "no decision yet")

	out, err := durable.Resume(ctx, s, "r", durable.WithAgent("w", w.agent()), durable.WithReviewer("Ada Lovelace"),
		durable.WithReviews(map[string]runner.Decision{"legal": {Approved: true, Comment: "cleared"}}))
	require.NoError(t, err)
	require.Equal(t, durable.StatusWaiting, out.Status)
	assert.Equal(t, map[string]durable.ReviewDecision{"legal": {By: "Ada Lovelace", Approved: true, Comment: "cleared"}}, decided(t, s, "r"))

	// legal is done: its decision, given again, is not one the resume
	// goes on with. Without a name, the decider is the process's user.
	out, err = durable.Resume(ctx, s, "r", durable.WithAgent("w", w.agent()),
		durable.WithReviews(map[string]runner.Decision{"legal": {Approved: true}, "brand": runner.Reject("off brand")}))
	require.NoError(t, err)
	require.Equal(t, durable.StatusFailed, out.Status)
	me, err := user.Current()
	require.NoError(t, err)
	got := decided(t, s, "r")
	assert.Equal(t, durable.ReviewDecision{By: me.Username, Approved: false, Comment: "off brand"}, got["brand"])
	assert.Equal(t, "Ada Lovelace", got["legal"].By, "the first decision of legal, recorded once")

	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	n := 0
	for _, e := range rec.Events {
		if e.Kind == string(durable.EventReviewDecided) {
			n++
		}
	}
	assert.Equal(t, 2, n)
}

// Decisions given when a run starts are journaled as a resume's are.
func TestStartRecordsTheDecisions(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	ctx := context.Background()
	p := mustPlan(t, `{"tasks": [
		{"id": "draft", "agent": "w", "input": "x"},
		{"id": "legal", "type": "human_review", "input": "Legal?", "depends_on": ["draft"]},
		{"id": "send", "agent": "w", "input": "y", "depends_on": ["legal"]}]}`)
	out, err := durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("w", w.agent()), durable.WithRunID("r"),
		durable.WithReviewer("Ada Lovelace"), durable.WithReviews(map[string]runner.Decision{"legal": runner.Approve()}))
	require.NoError(t, err)
	require.Equal(t, durable.StatusCompleted, out.Status)
	assert.Equal(t, map[string]durable.ReviewDecision{"legal": {By: "Ada Lovelace", Approved: true}}, decided(t, s, "r"))
}

func TestRefusedResumeRecordsNoDecision(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	ctx := context.Background()
	p := mustPlan(t, `{"tasks": [
		{"id": "legal", "type": "human_review", "input": "Legal?"},
		{"id": "send", "agent": "w", "input": "y", "depends_on": ["legal"]}]}`)
	_, err := durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("w", w.agent()), durable.WithRunID("r"))
	require.NoError(t, err)
	before, err := s.Load(ctx, "r")
	require.NoError(t, err)

	// Without its worker, the run's plan is not valid any more: the
	// resume is refused before anything runs.
	for _, d := range []runner.Decision{runner.Approve(), runner.Reject("no")} {
		_, err = durable.Resume(ctx, s, "r", durable.WithReviewer("Ada"), durable.WithReviews(map[string]runner.Decision{"legal": d}))
		require.Error(t, err)
		require.NotNil(t, plan.Problems(err), "%v", err)
	}
	after, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Empty(t, decided(t, s, "r"), "no decision of a resume that did not go on")
	assert.Equal(t, before.Events, after.Events, "nothing journaled")
	assert.Equal(t, string(durable.StatusWaiting), after.Status, "the run still waits for its review")

	out, err := durable.Resume(ctx, s, "r", durable.WithAgent("w", w.agent()), durable.WithReviewer("Ada"),
		durable.WithReviews(map[string]runner.Decision{"legal": runner.Approve()}))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	assert.Equal(t, map[string]durable.ReviewDecision{"legal": {By: "Ada", Approved: true}}, decided(t, s, "r"))
}
