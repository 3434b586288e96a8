package durable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/store"
)

// ErrEnded: [Cancel] was asked to cancel a run that ended already.
var ErrEnded = errors.New("the run has ended")

// Cancel cancels the journaled run id of s from any process. A run that
// a live process owns ([Alive]) is asked to stop, through the store: its
// owner sees the request within a fraction of a second and stops the run
// as its context ending would — the tasks in flight end, the run is
// cancelled and can be resumed — and Cancel returns that owner without
// waiting for it. A run no live process owns — interrupted, or waiting
// for review — is marked cancelled at once, and Cancel returns nil. A
// run that ended (completed, failed, cancelled, replan_required) is
// refused with [ErrEnded]; an unknown one with [store.ErrNotFound].
func Cancel(ctx context.Context, s store.Store, id string) (*store.Owner, error) {
	rec, err := s.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	owner := rec.Owner
	if owner == nil || !Alive(*owner, DefaultStaleAfter) {
		if st := Status(rec.Status); st != StatusRunning && st != StatusWaiting {
			return nil, fmt.Errorf("run %s is %s: %w", id, st, ErrEnded)
		}
		// The lease keeps a process that resumes the run meanwhile from
		// running it while it is marked cancelled.
		ls, err := takeLease(ctx, s, id, config{})
		var owned *store.OwnedError
		if !errors.As(err, &owned) {
			if err != nil {
				return nil, err
			}
			err = s.SetStatus(ctx, id, string(StatusCancelled), ErrCancelRequested.Error())
			return nil, errors.Join(err, ls.release(ctx))
		}
		owner = &owned.Owner
	}
	if err := s.RequestCancel(ctx, id, *owner); err != nil {
		if errors.Is(err, store.ErrNotOwner) {
			// The owner ended the run, or gave it up, meanwhile.
			return Cancel(ctx, s, id)
		}
		return nil, err
	}
	return owner, nil
}

// stopPoll is how often [AwaitStop] reads the run.
const stopPoll = 200 * time.Millisecond

// AwaitStop waits, up to wait, for run id of s to stop after a [Cancel]
// asked its owner to: until no live process owns it ([Alive]) — its owner
// stopped it, or died. It reads the run at once, then five times a second,
// and returns the run's status as shown ([Run.Shown]) when it last read it:
// cancelled (or the status the run ended with meanwhile), interrupted for
// an owner that died, running when wait passed first. When ctx ends first,
// it returns ctx's error with the status last read, running if none was.
func AwaitStop(ctx context.Context, s store.Store, id string, wait time.Duration) (Status, error) {
	deadline := time.Now().Add(wait)
	status := StatusRunning
	for {
		st, live, err := shownNow(ctx, s, id)
		if err != nil {
			if ctx.Err() != nil {
				return status, ctx.Err()
			}
			return "", err
		}
		status = st
		if !live || time.Now().After(deadline) {
			return status, nil
		}
		select {
		case <-ctx.Done():
			return status, ctx.Err()
		case <-time.After(stopPoll):
		}
	}
}
