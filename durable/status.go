package durable

import (
	"context"
	"errors"

	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// Status is the status of a journaled run: the runner's statuses of a run
// that ended, and two of the journal's own.
type Status string

// The statuses of a journaled run.
const (
	// StatusRunning: the run is running — or its process died, and it
	// stays running until it is resumed; the run's owner
	// ([store.Record.Owner], [Alive]) tells the two apart.
	StatusRunning Status = store.StatusRunning
	// StatusCancelled: the run was interrupted (its context was
	// cancelled); it can be resumed.
	StatusCancelled Status = "cancelled"
	// StatusInterrupted is not journaled: it is how a run the journal
	// holds as running is shown when no live process owns it — its
	// process died (kill -9, a crash, a reboot). Resume continues it.
	StatusInterrupted Status = "interrupted"

	StatusCompleted      = Status(runner.StatusCompleted)
	StatusFailed         = Status(runner.StatusFailed)
	StatusWaiting        = Status(runner.StatusWaiting)
	StatusReplanRequired = Status(runner.StatusReplanRequired)
)

// Finished reports whether a run of status s ended on its own: completed,
// failed, waiting for review or asking for a new plan. A running or
// cancelled run stopped part of the way.
func (s Status) Finished() bool {
	return s != StatusRunning && s != StatusCancelled
}

// statusOf is the journal's status of a run that ended with res: the
// runner's, except that a run that failed because its context was
// cancelled is cancelled.
func statusOf(res *runner.Result) Status {
	if res.Status == runner.StatusFailed && errors.Is(res.Err, context.Canceled) {
		return StatusCancelled
	}
	return Status(res.Status)
}
