package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/agent"
)

// ErrJournal: the journal could not make a task's final state durable, so
// the run halted rather than go on with state it could lose.
var ErrJournal = errors.New("journal commit failed")

// Journal makes each task's final state durable before the run goes on.
// The runner calls Commit on the task's goroutine, before the task counts
// as settled: before its dependents start and before its final event. A
// task the run's cancellation ended is not committed: it has no final
// state, and a resumed run runs it again.
type Journal interface {
	Commit(ctx context.Context, c Commit) error
}

// An AsyncJournal is a [Journal] that makes commits durable in the
// background, typically several in one write (group commit). The runner
// finds it by type assertion and uses it instead of Commit: it hands the
// journal a task's final state and gives the task's place to the next
// ready task at once, while the task itself still counts as settled —
// its dependents start, its final event is emitted, its phase may end —
// only once done reports the state durable. Commits that wait for the
// journal do not count against the run's concurrency, so a slow write
// gathers every task that finishes meanwhile rather than holding up the
// workers.
type AsyncJournal interface {
	Journal
	// CommitAsync hands c to the journal and returns without waiting for
	// the write. The journal calls done exactly once, on any goroutine and
	// possibly before CommitAsync returns: with nil once c is durable, or
	// with the error that keeps it from being. ctx carries values only:
	// the commit goes on when ctx is cancelled, as an outcome already
	// reached must not be lost.
	CommitAsync(ctx context.Context, c Commit, done func(error))
}

// Commit is a task's final state, as the journal records it.
type Commit struct {
	RunID     string
	TaskID    string
	Status    TaskStatus
	Attempts  int
	Output    any
	Err       error
	Diagnosis string
	Started   time.Time
	Duration  time.Duration
	Usage     agent.Usage
}

// WithJournal makes every task's final state durable in j before the run
// goes on; see Journal.
func WithJournal(j Journal) Option {
	return func(rn *Runner) { rn.journal = j }
}

// journals reports whether o is to be committed: there is a journal, and
// o is a final state rather than the end the run's cancellation gave an
// attempt.
func (r *run) journals(o *outcome) bool {
	return r.journal != nil && (r.ctx.Err() == nil || o.status != TaskFailed || o.action != actNone)
}

// commitOf is o as the journal records it.
func (r *run) commitOf(o *outcome) Commit {
	st := &r.state[o.i]
	return Commit{
		RunID: r.id, TaskID: st.res.ID, Status: o.status, Attempts: o.attempts, Output: o.output,
		Err: o.err, Diagnosis: o.diagnosis, Started: st.res.Started, Duration: time.Since(st.res.Started), Usage: o.usage,
	}
}

// commit hands o to the journal, when o is to be committed, and waits for
// it to be durable.
func (r *run) commit(o *outcome) {
	if r.journals(o) {
		*o = committed(*o, r.journal.Commit(context.WithoutCancel(r.ctx), r.commitOf(o)))
	}
}

// committed is o once the journal has answered err: when the commit
// failed, the task fails with ErrJournal and halts the run.
func committed(o outcome, err error) outcome {
	if err == nil {
		return o
	}
	return outcome{i: o.i, status: TaskFailed, action: actHalt, attempts: o.attempts, output: o.output,
		err: fmt.Errorf("%w: %w", ErrJournal, err), diagnosis: o.diagnosis, usage: o.usage}
}
