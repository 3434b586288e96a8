package runner_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

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
