package durable_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// A task skipped by its condition is journaled as skipped, with no
// attempt. A resume runs again what is not done, so it evaluates the
// condition again over the same journaled outputs: the same verdict, and
// the task's worker still never runs.
func TestConditionSkipIsJournaledAndResumed(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	w.fail["c"] = true
	p := mustPlan(t, `{"tasks": [
	{"id": "a", "agent": "wc", "input": "one"},
	{"id": "b", "agent": "wc", "input": "x", "depends_on": ["a"], "when": "(> (get-in data/depends [\"a\" \"words\"]) 1)"},
	{"id": "c", "agent": "wc", "input": "y", "depends_on": ["a"]}]}`)
	out, err := durable.Start(context.Background(), s, durable.Spec{Plan: p}, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusFailed, out.Status, "c failed")

	r, err := durable.Load(context.Background(), s, "r")
	require.NoError(t, err)
	assert.Equal(t, string(runner.TaskSkipped), r.Tasks["b"].Status)
	assert.True(t, r.Tasks["b"].Committed)

	w.fail["c"] = false
	out, err = durable.Resume(context.Background(), s, "r", durable.WithAgent("wc", w.agent()))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	b := out.Result.Tasks["b"]
	assert.Equal(t, runner.TaskSkipped, b.Status)
	assert.Equal(t, runner.ClassConditionNotMet, b.Class)
	assert.Equal(t, 1, w.count("a"), "a done task never runs again")
	assert.Zero(t, w.count("b"), "the skipped task's worker never runs")
	assert.Equal(t, 2, w.count("c"))
}

// A condition that does not compile refuses the run before it is
// journaled.
func TestConditionThatDoesNotCompileIsNotJournaled(t *testing.T) {
	s := openStore(t)
	p := mustPlan(t, `{"tasks": [{"id": "a", "agent": "wc", "input": "x"}, {"id": "b", "agent": "wc", "depends_on": ["a"], "when": "(= 1"}]}`)
	_, err := durable.Start(context.Background(), s, durable.Spec{Plan: p}, durable.WithAgent("wc", newWorkers().agent()))
	require.ErrorIs(t, err, plan.ErrInvalid)
	assert.Contains(t, err.Error(), "task b: when: ")
	runs, err := s.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, runs)
}
