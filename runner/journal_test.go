package runner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// journal records commits, and fails for one task when told to.
type journal struct {
	mu      sync.Mutex
	commits []runner.Commit
	failFor string
}

func (j *journal) Commit(_ context.Context, c runner.Commit) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if c.TaskID == j.failFor {
		return errors.New("disk full")
	}
	j.commits = append(j.commits, c)
	return nil
}

func (j *journal) ids() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for _, c := range j.commits {
		out = append(out, c.TaskID+":"+string(c.Status))
	}
	return out
}

// Every final state is committed before the task counts as settled: before
// its dependents start.
func TestJournalCommitsBeforeDependentsStart(t *testing.T) {
	j := &journal{}
	var seen []string
	rec := newRecorder()
	rec.fallback = func(_ context.Context, req agent.Request) (any, error) {
		if req.TaskID == "b" {
			seen = j.ids()
		}
		if req.TaskID == "s" {
			return nil, errBoom
		}
		return "ok " + req.TaskID, nil
	}
	p := planOf(
		task("a", "x"),
		task("s", "y", nonCritical(), onFailure(plan.PolicySkip)),
		task("b", "z", deps("a", "s")),
		task("r", "review", review(), deps("b")),
	)
	res := run(t, p, rec, runner.WithJournal(j))
	require.Equal(t, runner.StatusWaiting, res.Status)
	assert.ElementsMatch(t, []string{"a:done", "s:skipped"}, seen, "b started after a and s were committed")
	assert.ElementsMatch(t, []string{"a:done", "s:skipped", "b:done", "r:waiting"}, j.ids())
	for _, c := range j.commits {
		assert.NotEmpty(t, c.RunID)
		if c.TaskID == "a" {
			assert.Equal(t, "ok a", c.Output)
			assert.Equal(t, 1, c.Attempts)
			assert.False(t, c.Started.IsZero())
		}
	}
}

// A journal that cannot commit halts the run: nothing goes on with state
// it could lose.
func TestJournalFailureHalts(t *testing.T) {
	j := &journal{failFor: "a"}
	res := run(t, planOf(task("a", "x"), task("b", "y", deps("a"))), newRecorder(), runner.WithJournal(j))
	assert.Equal(t, runner.StatusFailed, res.Status)
	assert.Equal(t, runner.TaskFailed, res.Tasks["a"].Status)
	assert.ErrorIs(t, res.Tasks["a"].Err, runner.ErrJournal)
	assert.Equal(t, runner.TaskPending, res.Tasks["b"].Status)
}

// A task that the run's cancellation ended has no final state: it is not
// committed, so a resumed run runs it again.
func TestJournalSkipsCancelledTasks(t *testing.T) {
	noLeaks(t)
	j := &journal{}
	ctx, cancel := context.WithCancel(context.Background())
	rec := newRecorder().on("a", func(ctx context.Context, _ agent.Request) (any, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_, err := runner.New(runner.WithAgent(worker, rec), runner.WithJournal(j)).RunPlan(ctx, planOf(task("a", "x")))
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, slices.ContainsFunc(j.ids(), func(s string) bool { return s == "a:failed" }), "%v", j.ids())
	assert.Empty(t, j.ids())
}

// heldJournal is an AsyncJournal that answers no commit until release,
// which answers every commit held so far (with err for failFor), or at
// once when it is not holding.
type heldJournal struct {
	journal
	hold    bool
	held    []heldCommit
	arrived chan struct{} // receives a value for each commit handed over
}

type heldCommit struct {
	c    runner.Commit
	done func(error)
}

func newHeldJournal(hold bool) *heldJournal {
	return &heldJournal{hold: hold, arrived: make(chan struct{}, 100)}
}

func (j *heldJournal) CommitAsync(ctx context.Context, c runner.Commit, done func(error)) {
	j.mu.Lock()
	if j.hold {
		j.held = append(j.held, heldCommit{c, done})
		j.mu.Unlock()
		j.arrived <- struct{}{}
		return
	}
	j.mu.Unlock()
	done(j.Commit(ctx, c)) // before CommitAsync returns
}

// await waits for n commits to be handed over.
func (j *heldJournal) await(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-j.arrived:
		case <-time.After(10 * time.Second):
			t.Fatalf("fewer than %d commits were handed over", n)
		}
	}
}

// release answers the commits held, in order, and stops holding.
func (j *heldJournal) release() {
	j.mu.Lock()
	held := j.held
	j.held, j.hold = nil, false
	j.mu.Unlock()
	for _, h := range held {
		h.done(j.Commit(context.Background(), h.c))
	}
}

// With an AsyncJournal, a task waiting for its commit holds no place: with
// a concurrency of 2, all six tasks of a layer run while none of their
// commits is answered; and it is not settled: the task after them starts
// only once all six are durable.
func TestAsyncJournalGivesPlacesAwayButSettlesWhenDurable(t *testing.T) {
	for _, sched := range []runner.Schedule{runner.Eager, runner.Phased} {
		t.Run(sched.String(), func(t *testing.T) {
			noLeaks(t)
			j := newHeldJournal(true)
			var seen []string
			rec := newRecorder().on("z", func(context.Context, agent.Request) (any, error) {
				seen = j.ids()
				return "ok", nil
			})
			layer := []string{"a", "b", "c", "d", "e", "f"}
			var tasks []plan.Task
			for _, id := range layer {
				tasks = append(tasks, task(id, "x"))
			}
			tasks = append(tasks, task("z", "y", deps(layer...)))
			type ran struct {
				res *runner.Result
				err error
			}
			out := make(chan ran, 1)
			go func() {
				res, err := runner.New(runner.WithAgent(worker, rec), runner.WithJournal(j), runner.WithConcurrency(2),
					runner.WithSchedule(sched)).RunPlan(context.Background(), planOf(tasks...))
				out <- ran{res, err}
			}()
			j.await(t, len(layer))
			assert.Empty(t, j.ids(), "no commit was answered yet")
			assert.Len(t, rec.ran(), len(layer), "the layer ran with its commits outstanding")
			j.release()
			r := <-out
			require.NoError(t, r.err)
			assert.Equal(t, runner.StatusCompleted, r.res.Status)
			assert.ElementsMatch(t, []string{"a:done", "b:done", "c:done", "d:done", "e:done", "f:done"}, seen,
				"z started once the layer was durable")
		})
	}
}

// The answer of an AsyncJournal is the task's fate as much as Commit's: a
// failed commit fails the task with ErrJournal and halts the run, whether
// it comes later or before CommitAsync returns.
func TestAsyncJournalFailureHalts(t *testing.T) {
	for _, hold := range []bool{true, false} {
		t.Run(fmt.Sprintf("held=%v", hold), func(t *testing.T) {
			j := newHeldJournal(hold)
			j.failFor = "a"
			if hold {
				go func() {
					j.await(t, 1)
					j.release()
				}()
			}
			res := run(t, planOf(task("a", "x"), task("b", "y", deps("a"))), newRecorder(), runner.WithJournal(j))
			assert.Equal(t, runner.StatusFailed, res.Status)
			assert.Equal(t, runner.TaskFailed, res.Tasks["a"].Status)
			assert.ErrorIs(t, res.Tasks["a"].Err, runner.ErrJournal)
			assert.Equal(t, runner.TaskPending, res.Tasks["b"].Status)
		})
	}
}

// A task the run's cancellation ended is not handed to an AsyncJournal
// either.
func TestAsyncJournalSkipsCancelledTasks(t *testing.T) {
	noLeaks(t)
	j := newHeldJournal(false)
	ctx, cancel := context.WithCancel(context.Background())
	rec := newRecorder().on("a", func(ctx context.Context, _ agent.Request) (any, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_, err := runner.New(runner.WithAgent(worker, rec), runner.WithJournal(j)).RunPlan(ctx, planOf(task("a", "x")))
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, j.ids())
}
