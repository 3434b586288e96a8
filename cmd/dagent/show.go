package main

import (
	"encoding/json"
	"fmt"
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

func newShow() *cobra.Command {
	var (
		db     dbFlags
		format string
	)
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show a journaled run: its tasks, outputs and timeline",
		Long: `Show a run of the journal: its status, each task's status, attempts,
duration and diagnosis, the output of every task that has one, and the
timeline of its events (those of every resume included). RUN is a run id
as dagent runs lists it, or enough of its beginning to name one run.

The run's status is running while its process, which owns it, is alive,
and interrupted when that process died while it ran (the journal holds it
as running); the owner is shown. A task's status is the one the journal
committed; a task with none is pending, or — from the events — skipped
(downstream of a failed gate) or running (in flight when the process
stopped; a resume runs it again).

--format json prints {"run_id", "status" (the journal's), "live" (a live
process owns the run), "owner" ({"pid", "host", "started", "heartbeat"} or
null), "error", "created", "updated",
"mission", "options" (the run's spec: {"version", "plan", "mission",
"catalog", "dir", "runner", "replan", "budget", "llm"}), "plan" (the first),
"tasks": {ID: {"status", "attempts", "output", "error", "diagnosis",
"started", "duration_ms", "usage", "committed"}}, "order": [task ids, the
current plan's first, in plan order], "events": [{"seq", "kind", "time",
"task_id", "data"}], "llm_exchanges"}.`,
		Example: `  dagent show 20250101T120000-1a2b3c4d
  dagent show 20250101T12 --format json | jq '.tasks.report.output'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openExisting(db)
			if err != nil {
				return err
			}
			defer closeStore(cmd, s)
			r, err := durable.Load(cmd.Context(), s, args[0])
			if err != nil {
				return notFound(args[0], err)
			}
			if format == "json" {
				return encodeJSON(cmd.OutOrStdout(), showDoc(r))
			}
			return writeShow(cmd.OutOrStdout(), r)
		},
	}
	db.register(cmd, false)
	formatFlag(cmd, &format)
	return cmd
}

type jsonShow struct {
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
func showDoc(r *durable.Run) jsonShow {
	rec, first := r.Record, r.Spec.Plan
	if len(r.Plans) > 0 {
		first = r.Plans[0]
	}
	_, live := liveStatus(string(r.Status), rec.Owner)
	doc := jsonShow{
		RunID: r.ID, Status: string(r.Status), Live: live, Owner: ownerDoc(rec.Owner), Error: textOrNil(r.Error), Created: r.Created, Updated: r.Updated,
		Mission: rec.Mission, Options: specDoc(r), Plan: first,
		Tasks: make(map[string]jsonShowTask, len(r.Tasks)), Order: r.Order, Events: []jsonEvent{}, Exchanges: len(rec.Exchanges),
	}
	for id, v := range r.Tasks {
		jt := jsonShowTask{
			Status: v.Status, Attempts: v.Attempts, Output: rawOrNull(v.Output), Error: textOrNil(v.Error), Diagnosis: v.Diagnosis,
			Started: timeOrNil(v.Started), DurationMS: v.Duration.Milliseconds(), Usage: v.Tokens,
		}
		if v.Committed {
			jt.Committed = timeOrNil(v.Task.Committed)
		}
		doc.Tasks[id] = jt
	}
	for _, e := range rec.Events {
		doc.Events = append(doc.Events, jsonEvent{Seq: e.Seq, Kind: e.Kind, Time: e.Time, TaskID: e.TaskID, Data: e.Data})
	}
	return doc
}

func writeShow(w io.Writer, r *durable.Run) error {
	status, live := liveStatus(string(r.Status), r.Record.Owner)
	fmt.Fprintf(w, "run %s  %s\n", r.ID, status)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "started\t%s\n", r.Created.Local().Format(time.DateTime))
	fmt.Fprintf(tw, "updated\t%s (%s later)\n", r.Updated.Local().Format(time.DateTime), round(r.Updated.Sub(r.Created)))
	switch o := r.Record.Owner; {
	case live:
		fmt.Fprintf(tw, "owner\tprocess %d on %s, since %s, last heartbeat %s ago\n", o.PID, o.Host, o.Started.Local().Format(time.DateTime), round(time.Since(o.Heartbeat)))
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
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tATTEMPTS\tDURATION\tDIAGNOSIS")
	for _, id := range r.Order {
		v := r.Tasks[id]
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", id, v.Status, v.Attempts, round(v.Duration), prose.Excerpt(why, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, id := range r.Order {
		if out := r.Tasks[id].Output; len(out) > 0 && string(out) != "null" {
			fmt.Fprintf(w, "\n== %s ==\n%s\n", id, strings.TrimRight(textOf(out), "\n"))
		}
	}

	if len(r.Record.Events) > 0 {
		fmt.Fprintf(w, "\nEVENTS\n")
	}
	starts, last := 0, runner.EventKind("")
	for _, e := range r.Record.Events {
		ev, err := e.Runner(r.ID)
		if err != nil {
			return err
		}
		line := eventLine(ev)
		switch {
		// A run starts again when a repair plan runs, or when it is
		// resumed.
		case ev.Kind == runner.EventRunStarted && last == executor.EventRepairAdopted:
			line = "run of a repair plan started"
		case ev.Kind == runner.EventRunStarted:
			if line = "run started"; starts > 0 {
				line = "run resumed"
			}
			starts++
		case ev.Kind == runner.EventRunFinished && ev.Err != nil:
			line += ": " + prose.Excerpt(ev.Err.Error(), 100)
		}
		last = ev.Kind
		fmt.Fprintf(w, "%4d  %s  %s\n", e.Seq, e.Time.Local().Format("15:04:05.000"), line)
	}
	return nil
}
