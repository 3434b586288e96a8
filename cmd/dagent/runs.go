package main

import (
	"cmp"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/spf13/cobra"
)

func newRuns() *cobra.Command {
	var f runsFlags
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the journaled runs",
		Long: `List the runs in the journal, newest first: id, when it started, status,
tasks done of the plan's tasks, and the mission (or the plan's hash when it
has none). Times are in the local time zone, which they name (--utc: in
UTC). No journal yet is no runs.

The status is running while a run runs: its process, which owns it, is
alive. A run whose process died while it ran (kill -9, a crash, a reboot)
is interrupted: dagent resume RUN continues such a run. The others are
completed, failed, waiting (for review), replan_required and cancelled
(interrupted with Ctrl-C, or dagent cancel). --status S lists the runs of
status S only (repeatable), --limit N the newest N.

--format json prints {"version": 1, "runs": [{"id", "created", "updated",
"status", "live", "owner", "done", "total", "mission", "plan_hash"}]}: "status" is the
journal's (running for an interrupted run too), "live" whether a live
process owns the run, and "owner" that process, {"pid", "host",
"started", "heartbeat"}, or null.`,
		Example: `  dagent runs
  dagent runs --status failed --status interrupted --limit 5
  dagent runs --db /var/lib/dagent/runs.db --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listRuns(cmd, f)
		},
	}
	f.db.register(cmd, false)
	formatFlag(cmd, &f.format)
	fl := cmd.Flags()
	fl.IntVar(&f.limit, "limit", 0, "list the newest `N` runs only (0: all)")
	fl.StringArrayVar(&f.status, "status", nil, "list the runs of `STATUS` only (repeatable): "+statusNames(durable.ShownStatuses()))
	fl.BoolVar(&f.utc, "utc", false, "print times in UTC rather than the local time zone")
	cmd.AddCommand(newPrune())
	return cmd
}

// jsonRuns is the document of dagent runs --format json.
type jsonRuns struct {
	Version int               `json:"version"`
	Runs    []durable.Summary `json:"runs"`
}

type runsFlags struct {
	db     dbFlags
	format string
	limit  int
	status []string
	utc    bool
}

// statusNames lists statuses as the commands name them.
func statusNames(statuses []durable.Status) string {
	names := make([]string, len(statuses))
	for i, st := range statuses {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}

// parseStatuses reads --status values.
func parseStatuses(names []string) ([]durable.Status, error) {
	var statuses []durable.Status
	for _, name := range names {
		st, err := durable.ParseStatus(name)
		if err != nil {
			return nil, err
		}
		statuses = append(statuses, st)
	}
	return statuses, nil
}

// stamp is how the commands print a time: to the second, with its zone.
func stamp(t time.Time, utc bool) string {
	if utc {
		t = t.UTC()
	} else {
		t = t.Local()
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

func listRuns(cmd *cobra.Command, f runsFlags) error {
	if f.limit < 0 {
		return fmt.Errorf("--limit %d: give a number of runs, or 0 for all", f.limit)
	}
	statuses, err := parseStatuses(f.status)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	path, err := existing(f.db)
	if err != nil {
		// No journal yet: no run was journaled.
		if f.format == "json" {
			return encodeJSON(out, jsonRuns{Version: docVersion, Runs: []durable.Summary{}})
		}
		fmt.Fprintf(out, "no runs: no journal at %s yet\n", f.db.path())
		return nil
	}
	s, err := openExisting(dbFlags{db: path})
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := cmd.Context()
	page, err := durable.List(ctx, s, durable.Query{Statuses: statuses, Limit: f.limit})
	if err != nil {
		return err
	}
	if f.format == "json" {
		return encodeJSON(out, jsonRuns{Version: docVersion, Runs: page.Runs})
	}
	if len(page.Runs) == 0 {
		if len(statuses) > 0 {
			every, err := durable.List(ctx, s, durable.Query{Limit: 1})
			if err != nil {
				return err
			}
			if every.Total > 0 {
				fmt.Fprintf(out, "no runs of status %s in %s\n", strings.Join(f.status, " or "), s.Path())
				return nil
			}
		}
		fmt.Fprintf(out, "no runs in %s\n", s.Path())
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tSTATUS\tTASKS\tPLAN")
	for _, r := range page.Runs {
		total := "?"
		if r.Total > 0 {
			total = fmt.Sprint(r.Total)
		}
		what := cmp.Or(prose.Excerpt(r.Mission, 60), "plan "+r.PlanHash)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%s\t%s\n", r.ID, stamp(r.Created, f.utc), r.Status, r.Done, total, what)
	}
	return tw.Flush()
}
