package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/store"
	"github.com/spf13/cobra"
)

type pruneFlags struct {
	db     dbFlags
	format string
	before string
	status []string
	dryRun bool
	utc    bool
}

func newPrune() *cobra.Command {
	var f pruneFlags
	cmd := &cobra.Command{
		Use:   "prune --before DATE|DURATION",
		Short: "Delete the runs that ended before a time",
		Long: `Delete from the journal the runs last updated before a time, with all
they hold: plan versions, tasks and their outputs, events, LLM exchanges.

--before is a date (2026-11-01, local midnight), a time (2026-11-01
15:04:05 local, or RFC 3339) or an age: a Go duration (72h) or days (30d).
The runs deleted are those whose process ended them — completed, failed,
waiting, replan_required and cancelled — or those of the statuses given
with --status (repeatable; interrupted too). A run a live process owns is
never deleted: one that runs, or one resumed meanwhile. --dry-run lists
the runs it would delete and deletes none.

--format json prints {"dry_run", "deleted": [{"id", "status", "updated"}]}.`,
		Example: `  dagent runs prune --before 30d --dry-run
  dagent runs prune --before 2026-11-01 --status failed --status interrupted`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return prune(cmd, f)
		},
	}
	f.db.register(cmd, false)
	formatFlag(cmd, &f.format)
	fl := cmd.Flags()
	fl.StringVar(&f.before, "before", "", "delete the runs last updated before this `DATE|DURATION` (2026-11-01, 72h, 30d)")
	fl.StringArrayVar(&f.status, "status", nil, "delete the runs of `STATUS` only (repeatable; default: "+statusNames(durable.EndedStatuses())+")")
	fl.BoolVar(&f.dryRun, "dry-run", false, "list the runs that would be deleted, and delete none")
	fl.BoolVar(&f.utc, "utc", false, "print times in UTC rather than the local time zone")
	_ = cmd.MarkFlagRequired("before")
	return cmd
}

// cutoff reads --before: a date, a time, or an age before now.
func cutoff(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.DateOnly, time.DateTime, "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--before %q: give a date (2026-11-01), a time (2026-11-01 15:04:05, or RFC 3339) or an age (72h, 30d)", s)
}

func prune(cmd *cobra.Command, f pruneFlags) error {
	before, err := cutoff(f.before, time.Now())
	if err != nil {
		return err
	}
	statuses, err := parseStatuses(f.status)
	if err != nil {
		return err
	}
	if slices.Contains(statuses, durable.StatusRunning) {
		return errors.New("--status running: a run a live process owns is never deleted")
	}
	if len(statuses) == 0 {
		statuses = durable.EndedStatuses()
	}
	path, err := existing(f.db)
	if err != nil {
		return err
	}
	var s *store.SQLite
	if f.dryRun {
		s, err = openExisting(dbFlags{db: path})
	} else {
		s, err = openStore(path)
	}
	if err != nil {
		return err
	}
	defer closeStore(cmd, s)
	res, err := durable.Prune(cmd.Context(), s, durable.PruneQuery{Before: before, Statuses: statuses, DryRun: f.dryRun})
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.format == "json" {
		return encodeJSON(out, struct {
			DryRun  bool             `json:"dry_run"`
			Deleted []durable.Pruned `json:"deleted"`
		}{f.dryRun, res.Deleted})
	}
	verb := "deleted"
	if f.dryRun {
		verb = "would delete"
	}
	for _, r := range res.Deleted {
		fmt.Fprintf(out, "%s %s  %s, updated %s\n", verb, r.ID, r.Status, stamp(r.Updated, f.utc))
	}
	fmt.Fprintf(out, "%s %s of status %s last updated before %s from %s\n", verb, prose.Plural(len(res.Deleted), "run"),
		statusNames(statuses), stamp(before, f.utc), s.Path())
	if res.Kept > 0 {
		fmt.Fprintf(out, "kept %s resumed meanwhile\n", prose.Plural(res.Kept, "run"))
	}
	return nil
}
