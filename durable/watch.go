package durable

import (
	"context"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// shownNow reads how run id of s is shown now, and whether a live process
// owns it, from its summary: reading the whole run would read its outputs
// and events too.
func shownNow(ctx context.Context, s store.Store, id string) (Status, bool, error) {
	runs, _, err := s.Runs(ctx, store.RunQuery{IDs: []string{id}})
	if err != nil {
		return "", false, err
	}
	if len(runs) == 0 {
		return "", false, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
	}
	status, live := shown(Status(runs[0].Status), runs[0].Owner)
	return status, live, nil
}

// watchIdle is how many reads without an event make [Watch] ask whether
// the run's owner still lives: a process that dies appends nothing more.
const watchIdle = 10

// Watch follows run id of s as a live process runs it: it calls fn with
// the events journaled after event number after ([store.Event.Seq]; 0 for
// all), in order and each once, reading the journal every `every`, until
// no live process owns the run ([Alive]) — it ended, or its process died —
// and then returns the run's status as shown ([Run.Shown]). Events the run
// got before it stopped are all passed to fn before Watch returns.
//
// Watch reads the run's owner at once, after each run_finished event, and
// after ten reads without an event; the rest of the time it reads only the
// events after the last it passed on, so that following a run costs the
// store little. It returns fn's error, a store's ([store.ErrNotFound] for
// an unknown run), or ctx's when ctx ends first.
func Watch(ctx context.Context, s store.Store, id string, after int, every time.Duration, fn func(events []store.Event) error) (Status, error) {
	if every <= 0 {
		return "", fmt.Errorf("watch run %s: the time between reads is %s: give a positive one", id, every)
	}
	pass := func(events []store.Event) error {
		if len(events) == 0 {
			return nil
		}
		after = events[len(events)-1].Seq
		return fn(events)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for check, idle := true, 0; ; {
		if check {
			status, live, err := shownNow(ctx, s, id)
			if err != nil {
				return "", err
			}
			if !live {
				// What was appended before the run stopped.
				events, err := s.EventsAfter(ctx, id, after)
				if err != nil {
					return "", err
				}
				if err := pass(events); err != nil {
					return "", err
				}
				return status, nil
			}
			check, idle = false, 0
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-t.C:
		}
		events, err := s.EventsAfter(ctx, id, after)
		if err != nil {
			return "", err
		}
		if err := pass(events); err != nil {
			return "", err
		}
		idle++
		if len(events) > 0 {
			idle = 0
		}
		for _, e := range events {
			check = check || runner.EventKind(e.Kind) == runner.EventRunFinished
		}
		check = check || idle >= watchIdle
	}
}
