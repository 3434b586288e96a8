package main

import (
	"encoding/json"
	"fmt"
	"github.com/dagent-dev/dagent/progress"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/plan"
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
				doc, err := taskDoc(r, f.task, f.noOutputs)
				if err != nil {
					return err
				}
				return encodeJSON(w, doc)
			case f.task != "":
				return writeTask(w, r, f)
			case f.format == "json":
				return encodeJSON(w, showDoc(r, f.noOutputs))
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

type jsonShow struct {
	Version   int                     `json:"version"`
	RunID     string                  `json:"run_id"`
	Status    string                  `json:"status"`
	Live      bool                    `json:"live"`
	Owner     *jsonOwner              `json:"owner"`
	Error     *string                 `json:"error"`
	Created   time.Time               `json:"created"`
	Updated   time.Time               `json:"updated"`
	Mission   string                  `json:"mission"`
	Options   json.RawMessage         `json:"options"`
	Plan      *plan.Plan              `json:"plan"`
	Tasks     map[string]jsonShowTask `json:"tasks"`
	Order     []string                `json:"order"`
	Events    []jsonEvent             `json:"events"`
	Exchanges int                     `json:"llm_exchanges"`
}

type jsonShowTask struct {
	Status     string          `json:"status"`
	Attempts   int             `json:"attempts"`
	Output     json.RawMessage `json:"output"`
	Error      *string         `json:"error"`
	Diagnosis  string          `json:"diagnosis"`
	Started    *time.Time      `json:"started"`
	DurationMS int64           `json:"duration_ms"`
	Usage      store.Usage     `json:"usage"`
	Committed  *time.Time      `json:"committed"`
}

type jsonEvent struct {
	Seq    int             `json:"seq"`
	Kind   string          `json:"kind"`
	Time   time.Time       `json:"time"`
	TaskID string          `json:"task_id,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
}

func rawOrNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func textOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// specDoc is the spec document of r as the run was given it, with its
// plan: the journal keeps the plan a run starts with once, as its plan
// version 0, and the spec beside it without the plan.
func specDoc(r *durable.Run) json.RawMessage {
	raw := rawOrNull(r.Record.Spec)
	if r.Spec.Plan == nil {
		return raw
	}
	var head struct {
		Version json.RawMessage `json:"version"`
		Plan    json.RawMessage `json:"plan"`
	}
	if json.Unmarshal(raw, &head) != nil || head.Version == nil || string(head.Plan) != "null" {
		return raw // a spec that holds its plan, or one of before versioned specs
	}
	var spec durable.Spec
	if json.Unmarshal(raw, &spec) != nil {
		return raw
	}
	spec.Plan = r.Spec.Plan
	doc, err := json.Marshal(spec)
	if err != nil {
		return raw
	}
	return doc
}

// showDoc is the JSON document of r. Its "options" are the run's spec
// document, and its "plan" the plan the run started with.
func showDoc(r *durable.Run, noOutputs bool) jsonShow {
	rec, first := r.Record, r.Spec.Plan
	if len(r.Plans) > 0 {
		first = r.Plans[0]
	}
	_, live := liveStatus(string(r.Status), rec.Owner)
	doc := jsonShow{
		Version: docVersion, RunID: r.ID, Status: string(r.Status), Live: live, Owner: ownerDoc(rec.Owner), Error: textOrNil(r.Error), Created: r.Created, Updated: r.Updated,
		Mission: rec.Mission, Options: specDoc(r), Plan: first,
		Tasks: make(map[string]jsonShowTask, len(r.Tasks)), Order: r.Order, Events: []jsonEvent{}, Exchanges: len(rec.Exchanges),
	}
	for id, v := range r.Tasks {
		jt := jsonShowTask{
			Status: v.Status, Attempts: v.Attempts, Output: outputOrNull(v.Output, noOutputs), Error: textOrNil(v.Error), Diagnosis: v.Diagnosis,
			Started: timeOrNil(v.Started), DurationMS: v.Duration.Milliseconds(), Usage: v.Tokens,
		}
		if v.Committed {
			jt.Committed = timeOrNil(v.Task.Committed)
		}
		doc.Tasks[id] = jt
	}
	for _, e := range rec.Events {
		doc.Events = append(doc.Events, eventDoc(e))
	}
	return doc
}

func eventDoc(e store.Event) jsonEvent {
	return jsonEvent{Seq: e.Seq, Kind: e.Kind, Time: e.Time, TaskID: e.TaskID, Data: e.Data}
}

// outputOrNull is an output in the JSON documents: null when left out.
func outputOrNull(b json.RawMessage, leftOut bool) json.RawMessage {
	if leftOut {
		return json.RawMessage("null")
	}
	return rawOrNull(b)
}

func writeShow(w io.Writer, r *durable.Run, f showFlags) error {
	live, err := writeHeader(w, r, f.utc)
	if err != nil {
		return err
	}
	status, _ := liveStatus(string(r.Status), r.Record.Owner)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tATTEMPTS\tDURATION\tDIAGNOSIS")
	for _, id := range r.Order {
		v := r.Tasks[id]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", id, v.Status, v.Attempts, progress.Round(v.Duration), prose.Excerpt(taskWhy(v, live, status), 80))
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

// writeHeader prints the run's status and settings, and says whether a
// live process owns it.
func writeHeader(w io.Writer, r *durable.Run, utc bool) (live bool, err error) {
	status, live := liveStatus(string(r.Status), r.Record.Owner)
	fmt.Fprintf(w, "run %s  %s\n", r.ID, status)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "started\t%s\n", stamp(r.Created, utc))
	fmt.Fprintf(tw, "updated\t%s (%s later)\n", stamp(r.Updated, utc), progress.Round(r.Updated.Sub(r.Created)))
	switch o := r.Record.Owner; {
	case live:
		fmt.Fprintf(tw, "owner\tprocess %d on %s, since %s, last heartbeat %s ago\n", o.PID, o.Host, stamp(o.Started, utc), progress.Round(time.Since(o.Heartbeat)))
	case status == statusInterrupted:
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
	return live, tw.Flush()
}

// taskWhy is what the task table says of a task: its diagnosis, its
// error, or why it is running.
func taskWhy(v durable.TaskView, live bool, status string) string {
	why := v.Diagnosis
	if why == "" && v.Status != string(runner.TaskDone) {
		why = v.Error
	}
	if !v.Committed && v.Status == string(runner.TaskRunning) {
		switch {
		case live:
			why = "running"
		case status == statusInterrupted:
			why = "in flight when the process died; a resume runs it again"
		default:
			why = "in flight when the run stopped; a resume runs it again"
		}
	}
	return why
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
	}
	tl.last = ev.Kind
	t := e.Time.Local()
	if tl.utc {
		t = e.Time.UTC()
	}
	_, err = fmt.Fprintf(w, "%4d  %s  %s\n", e.Seq, t.Format("15:04:05.000"), line)
	return err
}
