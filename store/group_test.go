package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/plantest"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// gatedStore holds the first batch it is given until release is closed,
// fails the batches fail says to fail, and remembers the tasks of each
// batch and which tasks are durable (their batch committed).
type gatedStore struct {
	store.Store
	entered, release chan struct{}
	fail             func(n int) error // of the n-th batch, from 0

	mu      sync.Mutex
	batches [][]string
	durable map[string]bool
}

func newGatedStore(s store.Store) *gatedStore {
	return &gatedStore{Store: s, entered: make(chan struct{}), release: make(chan struct{}), durable: map[string]bool{}}
}

func (g *gatedStore) CommitBatch(ctx context.Context, runID string, b store.Batch) error {
	if len(b.Tasks) == 0 {
		return g.Store.CommitBatch(ctx, runID, b)
	}
	g.mu.Lock()
	n := len(g.batches)
	var ids []string
	for _, t := range b.Tasks {
		ids = append(ids, t.ID)
	}
	g.batches = append(g.batches, ids)
	g.mu.Unlock()
	if n == 0 {
		close(g.entered)
		<-g.release
	}
	if g.fail != nil {
		if err := g.fail(n); err != nil {
			return err
		}
	}
	if err := g.Store.CommitBatch(ctx, runID, b); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range ids {
		g.durable[id] = true
	}
	return nil
}

func (g *gatedStore) isDurable(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.durable[id]
}

func (g *gatedStore) batchesHolding(ids []string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	n := 0
	for _, b := range g.batches {
		for _, id := range b {
			if want[id] {
				n++
				break
			}
		}
	}
	return n
}

// commitWhileInFlight commits "first", which its store holds, then n more
// tasks at once while it is in flight, and returns the ids of the n and
// their errors once the store has been released and every commit returned.
// Each commit checks that its task was durable when it returned.
func commitWhileInFlight(t *testing.T, g *gatedStore, j *store.Journal, n int) (first error, ids []string, errs []error) {
	t.Helper()
	firstDone := make(chan error, 1)
	go func() { firstDone <- j.Commit(ctx, runner.Commit{TaskID: "first", Status: runner.TaskDone, Output: 0}) }()
	<-g.entered
	ids, errs = make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		ids[i] = fmt.Sprintf("t%02d", i)
		wg.Go(func() {
			errs[i] = j.Commit(ctx, runner.Commit{TaskID: ids[i], Status: runner.TaskDone, Output: i})
			if errs[i] == nil {
				assert.True(t, g.isDurable(ids[i]), "%s returned before its batch committed", ids[i])
			}
		})
	}
	// Let the commits queue behind the one in flight; none may return.
	time.Sleep(50 * time.Millisecond)
	select {
	case <-firstDone:
		t.Fatal("the first commit returned while its transaction was in flight")
	default:
	}
	close(g.release)
	wg.Wait()
	return <-firstDone, ids, errs
}

// Commits that arrive while a commit is in flight share the next
// transaction, and each returns only once the transaction holding it has
// committed.
func TestJournalGroupsCommits(t *testing.T) {
	s := open(t)
	createRun(t, s, "r", onePlan())
	g := newGatedStore(s)
	j := store.NewJournal(g, "r")
	const n = 20
	first, ids, errs := commitWhileInFlight(t, g, j, n)
	require.NoError(t, first)
	for i, err := range errs {
		require.NoError(t, err, ids[i])
	}
	assert.True(t, g.isDurable("first"))
	assert.Less(t, g.batchesHolding(ids), n/2, "the commits share transactions: %v", g.batches)
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Len(t, rec.Tasks, n+1)
}

// The error of a transaction reaches every commit it holds; commits after
// it go on.
func TestJournalGroupFailureReachesEveryCommit(t *testing.T) {
	s := open(t)
	createRun(t, s, "r", onePlan())
	g := newGatedStore(s)
	diskFull := errors.New("disk full")
	g.fail = func(n int) error {
		if n == 1 {
			return diskFull
		}
		return nil
	}
	j := store.NewJournal(g, "r")
	first, ids, errs := commitWhileInFlight(t, g, j, 20)
	require.NoError(t, first)
	g.mu.Lock()
	failed := g.batches[1]
	g.mu.Unlock()
	require.NotEmpty(t, failed)
	inFailed := map[string]bool{}
	for _, id := range failed {
		inFailed[id] = true
	}
	for i, err := range errs {
		if inFailed[ids[i]] {
			assert.ErrorIs(t, err, diskFull, "%s was in the failed transaction", ids[i])
			assert.False(t, g.isDurable(ids[i]))
		} else {
			assert.NoError(t, err, ids[i])
		}
	}
	require.NoError(t, j.Commit(ctx, runner.Commit{TaskID: "after", Status: runner.TaskDone}), "the journal goes on")
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Len(t, rec.Tasks, 20+2-len(failed))
	for id := range inFailed {
		assert.NotContains(t, rec.Tasks, id)
	}
}

// Events ride in the transactions of the commits; when they cannot be
// written, the commits are written without them.
func TestJournalEventsDoNotFailCommits(t *testing.T) {
	s := open(t)
	createRun(t, s, "r", onePlan())
	j := store.NewJournal(&failingStore{Store: s, failEvents: true}, "r")
	j.Observe(runner.Event{Kind: runner.EventTaskStarted, RunID: "r", TaskID: "a"})
	require.NoError(t, j.Commit(ctx, runner.Commit{TaskID: "a", Status: runner.TaskDone, Output: 1}))
	j.Observe(runner.Event{Kind: runner.EventRunFinished, RunID: "r", Status: runner.StatusCompleted})
	require.ErrorContains(t, j.Err(), "disk full")
	rec, err := s.Load(ctx, "r")
	require.NoError(t, err)
	assert.Contains(t, rec.Tasks, "a")
}

// A run's tasks do not wait for their commits in their places: while the
// first transaction is in flight, every other task of a layer runs, with a
// concurrency of 2, and at most one more transaction holds all of them.
func TestJournalBatchesOutgrowConcurrency(t *testing.T) {
	s := open(t)
	const n = 40
	p := plantest.Layered(1, n, "noop")
	createRun(t, s, "r", p)
	g := newGatedStore(s)
	j := store.NewJournal(g, "r")
	// A task has run for this test once its commit is handed to the
	// journal: counting in the worker would release the transaction while
	// the last task's commit is still on its way.
	handed := &countingJournal{Journal: j, n: n, all: make(chan struct{})}
	noop := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{Output: "ok"}, nil
	})
	var atRelease int32
	go func() {
		<-g.entered
		select {
		case <-handed.all:
		case <-time.After(5 * time.Second):
		}
		atRelease = handed.count.Load()
		close(g.release)
	}()
	rn := runner.New(runner.WithAgent("noop", noop), runner.WithConcurrency(2), runner.WithJournal(handed))
	res, err := rn.RunPlan(ctx, p, runner.WithRunID("r"))
	require.NoError(t, err)
	require.Equal(t, runner.StatusCompleted, res.Status)
	g.mu.Lock()
	defer g.mu.Unlock()
	assert.EqualValues(t, n, atRelease, "every task ran while the first transaction was in flight")
	assert.LessOrEqual(t, len(g.batches), 2, "%v", g.batches)
}

// countingJournal closes all once n commits have been handed to the
// journal.
type countingJournal struct {
	*store.Journal
	n     int32
	count atomic.Int32
	all   chan struct{}
}

func (c *countingJournal) CommitAsync(ctx context.Context, cm runner.Commit, done func(error)) {
	c.Journal.CommitAsync(ctx, cm, done)
	if c.count.Add(1) == c.n {
		close(c.all)
	}
}
