package durable_test

import (
	"context"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Cancel asks a live owner to stop its run: the task in flight ends, the
// run is cancelled and a resume finishes it.
func TestCancelLiveRun(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	w := newWorkers()
	g := newGate(w, "b")
	done := make(chan error, 1)
	var out *durable.Outcome
	go func() {
		var err error
		out, err = durable.Start(ctx, s, durable.Spec{Plan: mustPlan(t, chain)}, durable.WithAgent("wc", g.agent()), durable.WithRunID("r"))
		done <- err
	}()
	<-g.started
	owner, err := durable.Cancel(ctx, s, "r")
	require.NoError(t, err)
	require.NotNil(t, owner, "the run's owner is asked")
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, durable.ErrCancelRequested)
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not stop when it was cancelled")
	}
	require.NotNil(t, out)
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, string(durable.StatusCancelled), rec.Status)
	assert.Nil(t, rec.Owner, "the owner gave the lease up")
	assert.Equal(t, 0, w.count("c"))

	_, err = durable.Cancel(ctx, s, "r")
	assert.ErrorIs(t, err, durable.ErrEnded, "a cancelled run")

	res, err := durable.Resume(ctx, s, "r", durable.WithAgent("wc", w.agent()))
	require.NoError(t, err)
	assert.Equal(t, "completed", string(res.Result.Status), "the cancel request was for the first owner")
}

// A run no live process owns is marked cancelled at once.
func TestCancelInterruptedRun(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	w := newWorkers()
	crashed(t, s, w)
	require.NoError(t, s.SetStatus(ctx, "r", store.StatusRunning, ""))
	owner, err := durable.Cancel(ctx, s, "r")
	require.NoError(t, err)
	assert.Nil(t, owner)
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, string(durable.StatusCancelled), rec.Status)
	assert.Nil(t, rec.Owner)

	_, err = durable.Cancel(ctx, s, "nope")
	assert.ErrorIs(t, err, store.ErrNotFound)
}
