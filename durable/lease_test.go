package durable_test

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gate makes a task's worker wait, once, until it is opened.
type gate struct {
	w       *workers
	task    string
	started chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate(w *workers, task string) *gate {
	return &gate{w: w, task: task, started: make(chan struct{}), open: make(chan struct{})}
}

func (g *gate) agent() agent.Agent {
	inner := g.w.agent()
	return agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		if req.TaskID == g.task {
			g.once.Do(func() { close(g.started) })
			select {
			case <-g.open:
			case <-ctx.Done():
				return agent.Result{}, ctx.Err()
			}
		}
		return inner.Run(ctx, req)
	})
}

// crashed leaves run "r" of chain stopped with a done and b in flight.
func crashed(t *testing.T, s store.Store, w *workers) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.crash["b"] = cancel
	_, err := durable.Start(ctx, s, durable.Spec{Plan: mustPlan(t, chain)}, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"))
	require.ErrorIs(t, err, context.Canceled)
}

// Two resumes of one run at once: the second is refused while the first
// runs, and no task runs twice.
func TestTwoResumesAtOnce(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	w := newWorkers()
	crashed(t, s, w)
	g := newGate(w, "b")

	first := make(chan error, 1)
	go func() {
		_, err := durable.Resume(ctx, s, "r", durable.WithAgent("wc", g.agent()))
		first <- err
	}()
	<-g.started
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	require.NotNil(t, rec.Owner, "the running resume owns the run")
	assert.Equal(t, os.Getpid(), rec.Owner.PID)
	assert.True(t, durable.Alive(*rec.Owner, durable.DefaultStaleAfter))

	_, err = durable.Resume(ctx, s, "r", durable.WithAgent("wc", w.agent()))
	require.ErrorIs(t, err, store.ErrOwned)
	var owned *store.OwnedError
	require.ErrorAs(t, err, &owned)
	assert.Equal(t, rec.Owner.ID, owned.Owner.ID)
	_, err = durable.Start(ctx, s, durable.Spec{Plan: mustPlan(t, chain)}, durable.WithAgent("wc", w.agent()), durable.WithRunID("r"))
	require.ErrorIs(t, err, store.ErrOwned, "a start that continues the run is refused too")

	close(g.open)
	require.NoError(t, <-first)
	assert.Equal(t, 1, w.count("a"))
	assert.Equal(t, 2, w.count("b"), "in flight at the crash, then once")
	assert.Equal(t, 1, w.count("c"))
	rec, err = s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, "completed", rec.Status)
	assert.Nil(t, rec.Owner, "the lease is given up at the end")

	out, err := durable.Resume(ctx, s, "r", durable.WithAgent("wc", w.agent()))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	assert.Equal(t, 4, w.total(), "nothing ran again")
}

// Resumes racing each other: whichever order they take the lease in,
// every task runs once after the crash.
func TestResumesRace(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	w := newWorkers()
	crashed(t, s, w)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, err := durable.Resume(ctx, s, "r", durable.WithAgent("wc", w.agent()))
			if err != nil {
				assert.ErrorIs(t, err, store.ErrOwned)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, w.count("a"))
	assert.Equal(t, 2, w.count("b"))
	assert.Equal(t, 1, w.count("c"))
}

// deadPID is the id of a process of this host that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true command")
	}
	return cmd.Process.Pid
}

// Which owners a resume takes the run from: dead ones, stale ones, and
// any with WithTakeover.
func TestResumeTakesOverDeadOwners(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	ctx := context.Background()
	tests := []struct {
		name  string
		owner store.Owner
		opts  []durable.Option
		taken bool
	}{
		{"this host, process gone", store.Owner{ID: "x", PID: deadPID(t), Host: host}, nil, true},
		{"this host, process alive", store.Owner{ID: "x", PID: os.Getppid(), Host: host}, nil, false},
		{"this process, a lease it does not hold", store.Owner{ID: "x", PID: os.Getpid(), Host: host}, nil, true},
		{"another host, fresh heartbeat", store.Owner{ID: "x", PID: 1, Host: "elsewhere"}, nil, false},
		{"another host, stale heartbeat", store.Owner{ID: "x", PID: 1, Host: "elsewhere", Heartbeat: time.Now().Add(-time.Minute)}, nil, true},
		{"another host, stale for a shorter window", store.Owner{ID: "x", PID: 1, Host: "elsewhere", Heartbeat: time.Now().Add(-time.Second)},
			[]durable.Option{durable.WithStaleAfter(500 * time.Millisecond)}, true},
		{"alive, taken over", store.Owner{ID: "x", PID: os.Getppid(), Host: host}, []durable.Option{durable.WithTakeover()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t)
			w := newWorkers()
			crashed(t, s, w)
			require.NoError(t, s.SetStatus(ctx, "r", store.StatusRunning, ""))
			require.NoError(t, s.Acquire(ctx, "r", tt.owner, func(store.Owner) bool { return true }))
			out, err := durable.Resume(ctx, s, "r", append(tt.opts, durable.WithAgent("wc", w.agent()))...)
			if !tt.taken {
				require.ErrorIs(t, err, store.ErrOwned)
				assert.Equal(t, 2, w.total(), "nothing ran")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, durable.StatusCompleted, out.Status)
			assert.Equal(t, 1, w.count("a"))
		})
	}
}

// A run taken over while it runs stops at its next heartbeat, and writes
// nothing more.
func TestLeaseLost(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	w := newWorkers()
	crashed(t, s, w)
	g := newGate(w, "b")
	done := make(chan error, 1)
	go func() {
		_, err := durable.Resume(ctx, s, "r", durable.WithAgent("wc", g.agent()), durable.WithStaleAfter(30*time.Millisecond))
		done <- err
	}()
	<-g.started
	thief := store.Owner{ID: "thief", PID: 1, Host: "elsewhere"}
	require.NoError(t, s.Acquire(ctx, "r", thief, func(store.Owner) bool { return true }))
	select {
	case err := <-done:
		require.ErrorIs(t, err, durable.ErrLeaseLost)
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not stop when its lease was taken")
	}
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, "running", rec.Status, "the status is the new owner's to set")
	require.NotNil(t, rec.Owner)
	assert.Equal(t, "thief", rec.Owner.ID)
	assert.Equal(t, 0, w.count("c"))
}

// The run is in the journal, owned, before its first task starts and
// before the planner of its mission is asked.
func TestRunIsJournaledBeforeItsFirstSideEffect(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var seen *store.Record
	first := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		if seen == nil {
			rec, err := s.Load(ctx, "r")
			if err != nil {
				return agent.Result{}, err
			}
			seen = rec
		}
		return agent.Result{Output: "ok"}, nil
	})
	out, err := durable.Start(ctx, s, durable.Spec{Plan: mustPlan(t, chain)}, durable.WithAgent("wc", first), durable.WithRunID("r"))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	require.NotNil(t, seen, "the run was in the journal when its first task started")
	assert.Equal(t, "running", seen.Status)
	assert.NotNil(t, seen.Owner)
	require.Len(t, seen.Plans, 1, "with its plan")

	m := &planner{answers: []string{`{"route": "plan", "plan": ` + chain + `}`}}
	var asked *store.Record
	client := durable.ClientFunc(func(string, bool) (llm.Client, error) {
		return llmFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
			if asked == nil {
				asked, _ = s.Load(ctx, "m")
			}
			return m.Complete(ctx, req)
		}), nil
	})
	_, err = durable.Start(ctx, s, durable.Spec{Mission: "count the words"}, durable.WithLLM(client),
		durable.WithAgent("wc", newWorkers().agent()), durable.WithRunID("m"))
	require.NoError(t, err)
	require.NotNil(t, asked, "the run was in the journal when the planner was asked")
}

type llmFunc func(ctx context.Context, req llm.Request) (llm.Response, error)

func (f llmFunc) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	return f(ctx, req)
}
