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

// followPoll is how often following a run reads the journal, read-only,
// for the events after the last one printed.
const followPoll = 200 * time.Millisecond

// follow prints r's header and timeline, then its events as its process
// appends them, until the run is no longer running: it ended, or its
// process died. Ctrl-C stops following.
func follow(cmd *cobra.Command, s *store.SQLite, r *durable.Run, f showFlags) error {
	ctx, stop := interruptible(cmd)
	defer stop()
	w := cmd.OutOrStdout()
	asJSON := f.format == "json"
	if !asJSON {
		if _, _, err := writeHeader(w, r, f.utc); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nEVENTS\n")
	}
	tl := timeline{runID: r.ID, utc: f.utc}
	print := func(events []store.Event) error {
		for _, e := range events {
			var err error
			if asJSON {
				err = jsonv.Encode(w, durable.NewEventDoc(e))
			} else {
				err = tl.write(w, e)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	events := r.Record.Events
	if err := print(events); err != nil {
		return err
	}
	seen := 0
	if n := len(events); n > 0 {
		seen = events[n-1].Seq
	}
	status, err := durable.Watch(ctx, s, r.ID, seen, followPoll, print)
	if err != nil {
		return followErr(ctx, err)
	}
	if !asJSON {
		fmt.Fprintf(w, "run %s %s\n", r.ID, status)
	}
	return nil
}

// followErr is an error of following: none when Ctrl-C stopped it.
func followErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}
