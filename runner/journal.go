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

// commit hands o to the journal; when that fails, the task fails with
// ErrJournal and halts the run, and o says so.
func (r *run) commit(ctx context.Context, o *outcome) {
	if r.journal == nil || ctx.Err() != nil && o.status == TaskFailed && o.action == actNone {
		return
	}
	st := &r.state[o.i]
	c := Commit{
		RunID: r.id, TaskID: st.res.ID, Status: o.status, Attempts: o.attempts, Output: o.output,
		Err: o.err, Diagnosis: o.diagnosis, Started: st.res.Started, Duration: time.Since(st.res.Started), Usage: o.usage,
	}
	if err := r.journal.Commit(context.WithoutCancel(ctx), c); err != nil {
		*o = outcome{i: o.i, status: TaskFailed, action: actHalt, attempts: o.attempts, output: o.output,
			err: fmt.Errorf("%w: %w", ErrJournal, err), diagnosis: o.diagnosis, usage: o.usage}
	}
}
