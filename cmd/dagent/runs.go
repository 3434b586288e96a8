package main

import (
	"cmp"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/spf13/cobra"
)

func newRuns() *cobra.Command {
	var (
		db     dbFlags
		format string
	)
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the journaled runs",
		Long: `List the runs in the journal, newest first: id, when it started, status,
tasks done of the plan's tasks, and the mission (or the plan's hash when it
has none).

The status is running while a run runs: its process, which owns it, is
alive. A run whose process died while it ran (kill -9, a crash, a reboot)
is interrupted: dagent resume RUN continues such a run. The others are
completed, failed, waiting (for review), replan_required and cancelled
(interrupted with Ctrl-C).

--format json prints {"version": 1, "runs": [{"id", "created", "updated",
"status", "live", "owner", "done", "total", "mission", "plan_hash"}]}: "status" is the
journal's (running for an interrupted run too), "live" whether a live
process owns the run, and "owner" that process, {"pid", "host",
"started", "heartbeat"}, or null.`,
		Example: `  dagent runs
  dagent runs --db /var/lib/dagent/runs.db --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listRuns(cmd, db, format)
		},
	}
	db.register(cmd, false)
	formatFlag(cmd, &format)
	return cmd
}

// jsonRuns is the document of dagent runs --format json.
type jsonRuns struct {
	Version int       `json:"version"`
	Runs    []jsonRun `json:"runs"`
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

func listRuns(cmd *cobra.Command, db dbFlags, format string) error {
	s, err := openExisting(db)
	if err != nil {
		return err
	}
	defer s.Close()
	runs, err := s.List(cmd.Context())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if format == "json" {
		doc := make([]jsonRun, 0, len(runs))
		for _, r := range runs {
			_, live := liveStatus(r.Status, r.Owner)
			doc = append(doc, jsonRun{ID: r.ID, Created: r.Created, Updated: r.Updated, Status: r.Status, Live: live, Owner: ownerDoc(r.Owner),
				Done: r.Done, Total: r.Total, Mission: r.Mission, PlanHash: r.PlanHash})
		}
		return encodeJSON(out, jsonRuns{Version: docVersion, Runs: doc})
	}
	if len(runs) == 0 {
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
		status, _ := liveStatus(r.Status, r.Owner)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%s\t%s\n", r.ID, r.Created.Local().Format(time.DateTime), status, r.Done, total, what)
	}
	return tw.Flush()
}
