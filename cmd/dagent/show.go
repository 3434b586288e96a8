package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/progress"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/spf13/cobra"
)

type showFlags struct {
	db        dbFlags
	format    string
	task      string
	noOutputs bool
	follow    bool
	utc       bool
}

func newShow() *cobra.Command {
	var f showFlags
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show a journaled run: its tasks, outputs and timeline",
		Long: `Show a run of the journal: its status, each task's status, attempts,
duration and diagnosis, the output of every task that has one, and the
timeline of its events (those of every resume included). RUN is a run id
as dagent runs lists it, or enough of its beginning to name one run. Times
are in the local time zone, which the run's start names (--utc: in UTC).

The run's status is running while its process, which owns it, is alive,
and interrupted when that process died while it ran (the journal holds it
as running); the owner is shown. A task's status is the one the journal
committed; a task with none is pending, or — from the events — skipped
(downstream of a failed gate) or running (in flight when the process
stopped; a resume runs it again). A run waiting for review shows each
review's prompt, what it reviews, and the command that resumes it.

--task ID shows one task: its input, status, attempts, output, error,
diagnosis and events. --no-outputs leaves the outputs out. --follow prints
the timeline as the run's process appends to it, until the run ends (like
tail -f; Ctrl-C stops following, not the run); with --format json, one
event per line.

--format json prints {"version" (1), "run_id", "status" (the journal's), "live" (a live
process owns the run), "owner" ({"pid", "host", "started", "heartbeat"} or
null), "error", "created", "updated",
"mission", "options" (the run's spec: {"version", "plan", "mission",
"catalog", "dir", "runner", "replan", "budget", "llm"}), "plan" (the first),
"tasks": {ID: {"status", "attempts", "output", "error", "diagnosis",
"started", "duration_ms", "usage", "committed"}}, "order": [task ids, the
current plan's first, in plan order], "events": [{"seq", "kind", "time",
"task_id", "data"}], "llm_exchanges"}; with --task, {"run_id", "task_id",
"input", "depends_on", and the task's fields and events}.`,
		Example: `  dagent show 20250101T120000-1a2b3c4d
  dagent show 20250101T12 --task report --no-outputs
  dagent show 20250101T12 --follow
  dagent show 20250101T12 --format json | jq '.tasks.report.output'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openExisting(f.db)
			if err != nil {
				return err
			}
			defer closeStore(cmd, s)
			r, err := durable.Load(cmd.Context(), s, args[0])
			if err != nil {
				return notFound(args[0], err)
			}
			w := cmd.OutOrStdout()
			switch {
			case f.follow:
				return follow(cmd, s, r, f)
			case f.task != "" && f.format == "json":
				d, err := r.Task(f.task)
				if err != nil {
					return err
				}
				return encodeJSON(w, d.Document(durable.DocOptions{NoOutputs: f.noOutputs}))
			case f.task != "":
				return writeTask(w, r, f)
			case f.format == "json":
				return encodeJSON(w, r.Document(durable.DocOptions{NoOutputs: f.noOutputs}))
			}
			return writeShow(w, r, f)
		},
	}
	f.db.register(cmd, false)
	formatFlag(cmd, &f.format)
	fl := cmd.Flags()
	fl.StringVar(&f.task, "task", "", "show the task `ID` only: its input, output, attempts, error, diagnosis and events")
	fl.BoolVar(&f.noOutputs, "no-outputs", false, "leave the tasks' outputs out")
	fl.BoolVar(&f.follow, "follow", false, "print the run's events as they are journaled, until the run ends")
	fl.BoolVar(&f.utc, "utc", false, "print times in UTC rather than the local time zone")
	cmd.MarkFlagsMutuallyExclusive("follow", "task")
	return cmd
}

func writeShow(w io.Writer, r *durable.Run, f showFlags) error {
	status, live, err := writeHeader(w, r, f.utc)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tATTEMPTS\tDURATION\tDIAGNOSIS")
	for _, id := range r.Order {
		v := r.Tasks[id]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", id, v.Status, v.Attempts, progress.Round(v.Duration), prose.Excerpt(v.Why(status, live), 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !f.noOutputs {
		for _, id := range r.Order {
			if out := r.Tasks[id].Output; len(out) > 0 && string(out) != "null" {
				fmt.Fprintf(w, "\n== %s ==\n%s\n", id, strings.TrimRight(progress.Text(out), "\n"))
			}
		}
	}
	if r.Status == durable.StatusWaiting {
		writeReviews(w, r, f.noOutputs)
	}

	if len(r.Record.Events) > 0 {
		fmt.Fprintf(w, "\nEVENTS\n")
	}
	tl := timeline{runID: r.ID, utc: f.utc}
	for _, e := range r.Record.Events {
		if err := tl.write(w, e); err != nil {
			return err
		}
	}
	return nil
}

// writeHeader prints the run's status and settings, and returns its
// status as shown and whether a live process owns it.
func writeHeader(w io.Writer, r *durable.Run, utc bool) (status durable.Status, live bool, err error) {
	status, live = r.Shown()
	fmt.Fprintf(w, "run %s  %s\n", r.ID, status)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "started\t%s\n", stamp(r.Created, utc))
	fmt.Fprintf(tw, "updated\t%s (%s later)\n", stamp(r.Updated, utc), progress.Round(r.Updated.Sub(r.Created)))
	switch o := r.Record.Owner; {
	case live:
		fmt.Fprintf(tw, "owner\tprocess %d on %s, since %s, last heartbeat %s ago\n", o.PID, o.Host, stamp(o.Started, utc), progress.Round(time.Since(o.Heartbeat)))
	case status == durable.StatusInterrupted:
		fmt.Fprintf(tw, "owner\tnone alive: its process died while it ran; dagent resume %s goes on with it\n", r.ID)
	}
	if m := r.Spec.Mission; m != "" {
		fmt.Fprintf(tw, "mission\t%s\n", prose.Excerpt(m, 200))
	}
	if r.Spec.Catalog != "" {
		fmt.Fprintf(tw, "registry\t%s\n", r.Spec.Catalog)
	}
	if r.Error != "" {
		fmt.Fprintf(tw, "error\t%s\n", prose.Excerpt(r.Error, 200))
	}
	if n := len(r.Record.Exchanges); n > 0 {
		fmt.Fprintf(tw, "llm\t%s recorded\n", prose.Plural(n, "exchange"))
	}
	return status, live, tw.Flush()
}

// timeline prints a run's events one by one, as show does.
type timeline struct {
	runID  string
	utc    bool
	starts int
	last   runner.EventKind
}

func (tl *timeline) write(w io.Writer, e store.Event) error {
	ev, err := e.Runner(tl.runID)
	if err != nil {
		return err
	}
	line := eventLine(ev)
	switch {
	// A run starts again when a repair plan runs, or when it is
	// resumed.
	case ev.Kind == runner.EventRunStarted && tl.last == executor.EventRepairAdopted:
		line = "run of a repair plan started"
	case ev.Kind == runner.EventRunStarted:
		if line = "run started"; tl.starts > 0 {
			line = "run resumed"
		}
		tl.starts++
	case ev.Kind == runner.EventRunFinished && ev.Err != nil:
		line += ": " + prose.Excerpt(ev.Err.Error(), 100)
	case ev.Kind == durable.EventReviewDecided:
		if d, ok := durable.DecisionOf(e); ok {
			line = e.TaskID + ": " + d.String()
		}
	}
	tl.last = ev.Kind
	t := e.Time.Local()
	if tl.utc {
		t = e.Time.UTC()
	}
	_, err = fmt.Fprintf(w, "%4d  %s  %s\n", e.Seq, t.Format("15:04:05.000"), line)
	return err
}
