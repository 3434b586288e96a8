package web

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/store/sqlite"
)

// A run under way is read at each read, though it does not change: a task
// that starts commits nothing. Once its process lets it go, it is not.
func TestTailReadsTheRunsUnderWay(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "dagent.db"))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	release := make(chan struct{})
	gate := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		select {
		case <-release:
			return agent.Result{Output: req.Input}, nil
		case <-ctx.Done():
			return agent.Result{}, ctx.Err()
		}
	})
	p, err := plan.Parse([]byte(`{"tasks": [
		{"id": "a", "agent": "gate", "input": "x"},
		{"id": "b", "agent": "gate", "input": "y", "depends_on": ["a"]}]}`))
	require.NoError(t, err)

	var mu sync.Mutex
	var got []string
	tl := newTail(s, runner.ObserverFunc(func(e runner.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(e.Kind)+" "+e.TaskID)
	}), time.Now())
	observed := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
	ran := make(chan error, 1)
	go func() {
		_, err := durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("gate", gate), durable.WithRunID("r"))
		ran <- err
	}()
	// journaled waits for the journal to end with the start of task id.
	journaled := func(id string) {
		require.Eventually(t, func() bool {
			events, err := s.EventsAfter(ctx, "r", 0)
			return err == nil && len(events) > 0 && events[len(events)-1].Kind == string(runner.EventTaskStarted) && events[len(events)-1].TaskID == id
		}, 10*time.Second, time.Millisecond)
	}
	journaled("a")
	require.NoError(t, tl.next(ctx))
	assert.Equal(t, []string{"run_started ", "phase_started ", "task_started a"}, observed())
	assert.Equal(t, map[string]bool{"r": true}, tl.active)

	// No run changed after the reads to come: only those under way are
	// read.
	tl.read = time.Now().Add(time.Hour)
	release <- struct{}{}
	journaled("b")
	require.NoError(t, tl.next(ctx))
	assert.Equal(t, []string{"run_started ", "phase_started ", "task_started a",
		"task_finished a", "phase_finished ", "phase_started ", "task_started b"}, observed())

	release <- struct{}{}
	require.NoError(t, <-ran)
	require.NoError(t, tl.next(ctx))
	require.NoError(t, tl.next(ctx))
	assert.Equal(t, []string{"task_finished b", "phase_finished ", "run_finished "}, observed()[7:])
	assert.Empty(t, tl.active, "a run that ended, whose process let it go, is not read again")
	runs, _, err := s.Runs(ctx, store.RunQuery{})
	require.NoError(t, err)
	assert.Nil(t, runs[0].Owner)
}

// A run still for a while is forgotten, and its events are not given
// again when it changes: only those that came after.
func TestTailForgetsStillRuns(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "dagent.db"))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	now := time.Now()
	var got []string
	tl := newTail(s, runner.ObserverFunc(func(e runner.Event) { got = append(got, e.TaskID) }), now.Add(-3*time.Hour))

	then := now.Add(-2 * time.Hour)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r", Created: then}))
	require.NoError(t, s.AppendEvents(ctx, "r", []store.Event{
		{Kind: string(runner.EventTaskStarted), TaskID: "a", Time: then},
		{Kind: string(runner.EventTaskFinished), TaskID: "a", Time: then},
	}))
	require.NoError(t, s.SetStatus(ctx, "r", "completed", ""))
	require.NoError(t, tl.next(ctx))
	assert.Equal(t, []string{"a", "a"}, got)
	require.Contains(t, tl.seen, "r")

	// Listed last long ago, and not since.
	tl.seen["r"] = seenRun{seq: tl.seen["r"].seq, listed: then}
	tl.read = time.Now().Add(time.Hour)
	require.NoError(t, tl.next(ctx))
	assert.NotContains(t, tl.seen, "r", "forgotten")

	// Resumed: the events that come now are given, those of before are
	// not given again.
	require.NoError(t, s.AppendEvents(ctx, "r", []store.Event{{Kind: string(runner.EventTaskStarted), TaskID: "b", Time: time.Now()}}))
	require.NoError(t, s.SetStatus(ctx, "r", "running", ""))
	tl.read = time.Now()
	require.NoError(t, tl.next(ctx))
	assert.Equal(t, []string{"a", "a", "b"}, got)
	assert.Equal(t, map[string]bool{"r": true}, tl.active)
}
