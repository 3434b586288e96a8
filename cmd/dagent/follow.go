package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/store"
	"github.com/spf13/cobra"
)

// Following a run: the journal is read, read-only, every followPoll for
// the events after the last one printed. The run's status is read again
// when it may have ended: after its runner's run_finished event, and after
// followIdle without an event (its process may have died).
const (
	followPoll = 200 * time.Millisecond
	followIdle = 2 * time.Second
)

// follow prints r's header and timeline, then its events as its process
// appends them, until the run is no longer running: it ended, or its
// process died. Ctrl-C stops following.
func follow(cmd *cobra.Command, s *store.SQLite, r *durable.Run, f showFlags) error {
	ctx, stop := interruptible(cmd)
	defer stop()
	w := cmd.OutOrStdout()
	asJSON := f.format == "json"
	if !asJSON {
		if _, err := writeHeader(w, r, f.utc); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nEVENTS\n")
	}
	tl := timeline{runID: r.ID, utc: f.utc}
	seen, idle := 0, time.Duration(0)
	print := func(events []store.Event) error {
		for _, e := range events {
			var err error
			if asJSON {
				err = jsonv.Encode(w, eventDoc(e))
			} else {
				err = tl.write(w, e)
			}
			if err != nil {
				return err
			}
			seen = e.Seq
		}
		return nil
	}
	if err := print(r.Record.Events); err != nil {
		return err
	}
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for check := true; ; {
		if check {
			rec, err := s.Load(ctx, r.ID)
			if err != nil {
				return followErr(ctx, err)
			}
			if status, live := liveStatus(rec.Status, rec.Owner); !live {
				// What was appended before the run ended.
				events, err := s.EventsAfter(ctx, r.ID, seen)
				if err != nil {
					return followErr(ctx, err)
				}
				if err := print(events); err != nil {
					return err
				}
				if !asJSON {
					fmt.Fprintf(w, "run %s %s\n", r.ID, status)
				}
				return nil
			}
			check, idle = false, 0
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		events, err := s.EventsAfter(ctx, r.ID, seen)
		if err != nil {
			return followErr(ctx, err)
		}
		if err := print(events); err != nil {
			return err
		}
		idle += followPoll
		if len(events) > 0 {
			idle = 0
		}
		for _, e := range events {
			check = check || e.Kind == "run_finished"
		}
		check = check || idle >= followIdle
	}
}

// followErr is an error of following: none when Ctrl-C stopped it.
func followErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}
