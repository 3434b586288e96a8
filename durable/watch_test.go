package durable_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/store"
)

// liveOwner is an owner of this host whose process lives until the test
// ends, or until kill is called.
func liveOwner(t *testing.T) (o store.Owner, kill func()) {
	t.Helper()
	host, err := os.Hostname()
	require.NoError(t, err)
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command")
	}
	var once sync.Once
	kill = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait() // reaped: its pid is free
		})
	}
	t.Cleanup(kill)
	return store.Owner{ID: "owner", PID: cmd.Process.Pid, Host: host, Started: time.Now()}, kill
}

// ownedRun creates run r in s, owned by o.
func ownedRun(t *testing.T, s store.Store, o store.Owner) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	require.NoError(t, s.Acquire(ctx, "r", o, nil))
}

// collector keeps the events Watch passes on.
type collector struct {
	mu     sync.Mutex
	events []store.Event
	calls  int
}

func (c *collector) fn(events []store.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.events = append(c.events, events...)
	return nil
}

func (c *collector) seqs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, e := range c.events {
		out = append(out, e.Seq)
	}
	return out
}

func seqs(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// Watch passes on every event another writer journals, each once and in
// order, from the one asked for, until the owner ends the run.
func TestWatchARunWrittenMeanwhile(t *testing.T) {
	for _, after := range []int{0, 7} {
		t.Run(fmt.Sprint("after ", after), func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t)
			o, _ := liveOwner(t)
			ownedRun(t, s, o)
			for i := range 7 {
				require.NoError(t, s.AppendEvents(ctx, "r", []store.Event{{Kind: "task_started", TaskID: fmt.Sprint("t", i)}}))
			}
			// The owner, in another goroutine as it would be in another
			// process: events in batches, then the end of the run.
			wrote := make(chan error, 1)
			go func() {
				wrote <- func() error {
					for i := range 20 {
						batch := []store.Event{{Kind: "task_finished", TaskID: fmt.Sprint("t", i)}, {Kind: "task_started", TaskID: fmt.Sprint("u", i)}}
						if err := s.AppendEvents(ctx, "r", batch); err != nil {
							return err
						}
						time.Sleep(time.Millisecond)
					}
					if err := s.AppendEvents(ctx, "r", []store.Event{{Kind: "run_finished"}}); err != nil {
						return err
					}
					if err := s.SetStatus(ctx, "r", string(durable.StatusCompleted), ""); err != nil {
						return err
					}
					return s.Release(ctx, "r", o)
				}()
			}()
			var c collector
			status, err := durable.Watch(ctx, s, "r", after, 2*time.Millisecond, c.fn)
			require.NoError(t, err)
			require.NoError(t, <-wrote)
			assert.Equal(t, durable.StatusCompleted, status)
			assert.Equal(t, seqs(after+1, 48), c.seqs(), "every event after the one asked for, once, in order")
			assert.Greater(t, c.calls, 1, "as they come")
		})
	}
}

// Watch stops when the run's process dies, with what it journaled.
func TestWatchARunWhoseProcessDies(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	o, kill := liveOwner(t)
	ownedRun(t, s, o)
	done := make(chan struct{})
	var status durable.Status
	var err error
	var c collector
	go func() {
		defer close(done)
		status, err = durable.Watch(ctx, s, "r", 0, time.Millisecond, c.fn)
	}()
	require.NoError(t, s.AppendEvents(ctx, "r", []store.Event{{Kind: "task_started", TaskID: "a"}}))
	require.Eventually(t, func() bool { return len(c.seqs()) == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, s.AppendEvents(ctx, "r", []store.Event{{Kind: "task_started", TaskID: "b"}}))
	kill()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Watch went on after the run's process died")
	}
	require.NoError(t, err)
	assert.Equal(t, durable.StatusInterrupted, status)
	assert.Equal(t, []int{1, 2}, c.seqs())
}

func TestWatchStops(t *testing.T) {
	s := openStore(t)
	o, _ := liveOwner(t)
	ownedRun(t, s, o)
	require.NoError(t, s.AppendEvents(context.Background(), "r", []store.Event{{Kind: "task_started", TaskID: "a"}}))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var c collector
	_, err := durable.Watch(ctx, s, "r", 0, time.Millisecond, func(events []store.Event) error {
		cancel()
		return c.fn(events)
	})
	assert.ErrorIs(t, err, context.Canceled, "when ctx ends")
	assert.Equal(t, []int{1}, c.seqs())

	stop := errors.New("enough")
	_, err = durable.Watch(context.Background(), s, "r", 0, time.Millisecond, func([]store.Event) error { return stop })
	assert.ErrorIs(t, err, stop, "when fn fails")

	_, err = durable.Watch(context.Background(), s, "nope", 0, time.Millisecond, c.fn)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = durable.Watch(context.Background(), s, "r", 0, 0, c.fn)
	assert.ErrorContains(t, err, "give a positive one")
}

// A run that ended is watched at once: its events, and its status.
func TestWatchARunThatEnded(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.CreateRun(ctx, store.Run{ID: "r"}))
	require.NoError(t, s.AppendEvents(ctx, "r", []store.Event{{Kind: "run_started"}, {Kind: "run_finished"}}))
	require.NoError(t, s.SetStatus(ctx, "r", string(durable.StatusFailed), "boom"))
	var c collector
	status, err := durable.Watch(ctx, s, "r", 1, time.Hour, c.fn)
	require.NoError(t, err)
	assert.Equal(t, durable.StatusFailed, status)
	assert.Equal(t, []int{2}, c.seqs())
}

func TestAwaitStop(t *testing.T) {
	ctx := context.Background()
	t.Run("the owner stops the run", func(t *testing.T) {
		s := openStore(t)
		o, _ := liveOwner(t)
		ownedRun(t, s, o)
		owner, err := durable.Cancel(ctx, s, "r")
		require.NoError(t, err)
		require.Equal(t, o.ID, owner.ID)
		go func() {
			for {
				if asked, err := s.CancelRequested(ctx, "r", o); err != nil || asked {
					break
				}
				time.Sleep(time.Millisecond)
			}
			_ = s.SetStatus(ctx, "r", string(durable.StatusCancelled), "")
			_ = s.Release(ctx, "r", o)
		}()
		status, err := durable.AwaitStop(ctx, s, "r", 5*time.Second)
		require.NoError(t, err)
		assert.Equal(t, durable.StatusCancelled, status)
	})
	t.Run("the owner dies", func(t *testing.T) {
		s := openStore(t)
		o, kill := liveOwner(t)
		ownedRun(t, s, o)
		time.AfterFunc(10*time.Millisecond, kill)
		status, err := durable.AwaitStop(ctx, s, "r", 5*time.Second)
		require.NoError(t, err)
		assert.Equal(t, durable.StatusInterrupted, status)
	})
	t.Run("the wait ends first", func(t *testing.T) {
		s := openStore(t)
		o, _ := liveOwner(t)
		ownedRun(t, s, o)
		for _, wait := range []time.Duration{0, 30 * time.Millisecond} {
			start := time.Now()
			status, err := durable.AwaitStop(ctx, s, "r", wait)
			require.NoError(t, err)
			assert.Equal(t, durable.StatusRunning, status)
			assert.GreaterOrEqual(t, time.Since(start), wait)
		}
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(10*time.Millisecond, cancel)
		status, err := durable.AwaitStop(cctx, s, "r", time.Minute)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, durable.StatusRunning, status, "the status last read")
		_, err = durable.AwaitStop(ctx, s, "nope", time.Minute)
		assert.ErrorIs(t, err, store.ErrNotFound)
	})
}
