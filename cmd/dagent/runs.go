package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/store"
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
	fl.StringArrayVar(&f.status, "status", nil, "list the runs of `STATUS` only (repeatable): "+strings.Join(runStatuses, ", "))
	fl.BoolVar(&f.utc, "utc", false, "print times in UTC rather than the local time zone")
	cmd.AddCommand(newPrune())
	return cmd
}

// jsonRuns is the document of dagent runs --format json.
type jsonRuns struct {
	Version int       `json:"version"`
	Runs    []jsonRun `json:"runs"`
}

type runsFlags struct {
	db     dbFlags
	format string
	limit  int
	status []string
	utc    bool
}

// runStatuses are the statuses the commands show a run with.
var runStatuses = []string{
	store.StatusRunning, statusInterrupted, string(durable.StatusCompleted), string(durable.StatusFailed),
	string(durable.StatusWaiting), string(durable.StatusReplanRequired), string(durable.StatusCancelled),
}

// checkStatuses fails on a status no run is shown with.
func checkStatuses(statuses []string) error {
	for _, st := range statuses {
		if !slices.Contains(runStatuses, st) {
			return fmt.Errorf("unknown status %q; use one of %s", st, strings.Join(runStatuses, ", "))
		}
	}
	return nil
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

type jsonRun struct {
	ID       string     `json:"id"`
	Created  time.Time  `json:"created"`
	Updated  time.Time  `json:"updated"`
	Status   string     `json:"status"`
	Live     bool       `json:"live"`
	Owner    *jsonOwner `json:"owner"`
	Done     int        `json:"done"`
	Total    int        `json:"total"`
	Mission  string     `json:"mission"`
	PlanHash string     `json:"plan_hash"`
}

func listRuns(cmd *cobra.Command, f runsFlags) error {
	if f.limit < 0 {
		return fmt.Errorf("--limit %d: give a number of runs, or 0 for all", f.limit)
	}
	if err := checkStatuses(f.status); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	path, err := existing(f.db)
	if err != nil {
		// No journal yet: no run was journaled.
		if f.format == "json" {
			return encodeJSON(out, jsonRuns{Version: docVersion, Runs: []jsonRun{}})
		}
		fmt.Fprintf(out, "no runs: no journal at %s yet\n", f.db.path())
		return nil
	}
	s, err := openExisting(dbFlags{db: path})
	if err != nil {
		return err
	}
	defer s.Close()
	all, err := s.List(cmd.Context())
	if err != nil {
		return err
	}
	type shownRun struct {
		store.Summary
		status string
		live   bool
	}
	var runs []shownRun
	for _, r := range all {
		if f.limit > 0 && len(runs) == f.limit {
			break
		}
		status, live := liveStatus(r.Status, r.Owner)
		if len(f.status) == 0 || slices.Contains(f.status, status) {
			runs = append(runs, shownRun{r, status, live})
		}
	}
	if f.format == "json" {
		doc := make([]jsonRun, 0, len(runs))
		for _, r := range runs {
			doc = append(doc, jsonRun{ID: r.ID, Created: r.Created, Updated: r.Updated, Status: r.Status, Live: r.live, Owner: ownerDoc(r.Owner),
				Done: r.Done, Total: r.Total, Mission: r.Mission, PlanHash: r.PlanHash})
		}
		return encodeJSON(out, jsonRuns{Version: docVersion, Runs: doc})
	}
	if len(runs) == 0 {
		if len(all) > 0 {
			fmt.Fprintf(out, "no runs of status %s in %s\n", strings.Join(f.status, " or "), s.Path())
			return nil
		}
		fmt.Fprintf(out, "no runs in %s\n", s.Path())
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tSTATUS\tTASKS\tPLAN")
	for _, r := range runs {
		total := "?"
		if r.Total > 0 {
			total = fmt.Sprint(r.Total)
		}
		what := cmp.Or(prose.Excerpt(r.Mission, 60), "plan "+r.PlanHash)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%s\t%s\n", r.ID, stamp(r.Created, f.utc), r.status, r.Done, total, what)
	}
	return tw.Flush()
}
