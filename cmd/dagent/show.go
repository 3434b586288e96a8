package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dagent-dev/dagent/internal/prose"
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

A task's status is the one the journal committed; a task with none is
pending, or — from the events — skipped (downstream of a failed gate) or
running (in flight when the process stopped; a resume runs it again).

--format json prints {"run_id", "status", "error", "created", "updated",
"mission", "options", "plan", "tasks": {ID: {"status", "attempts",
"output", "error", "diagnosis", "started", "duration_ms", "usage",
"committed"}}, "order": [task ids, plan order first], "events": [{"seq",
"kind", "time", "task_id", "data"}], "llm_exchanges"}.`,
		Example: `  dagent show 20250101T120000-1a2b3c4d
  dagent show 20250101T12 --format json | jq '.tasks.report.output'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("unknown format %q; use text or json", format)
			}
			s, err := openExisting(db)
			if err != nil {
				return err
			}
			defer s.Close()
			rec, err := loadRun(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			if format == "json" {
				return encodeJSON(cmd.OutOrStdout(), showDoc(rec))
			}
			return writeShow(cmd.OutOrStdout(), rec)
		},
	}
	db.register(cmd, false)
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: text or json")
	return cmd
}

// taskView is a task of a journaled run as the journal knows it.
type taskView struct {
	store.Task
	committed bool
}

// planIDs lists the task ids of a canonical plan, in order.
func planIDs(raw json.RawMessage) []string {
	var v struct {
		Tasks []struct {
			ID string `json:"id"`
		} `json:"tasks"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	ids := make([]string, len(v.Tasks))
	for i, t := range v.Tasks {
		ids[i] = t.ID
	}
	return ids
}

// taskViews returns the tasks of rec in plan order, then those the plan
// does not have (added by replans) by id. A task never committed takes its
// status from the events of the last (re)start of the run: skipped,
// running (in flight then), or pending.
func taskViews(rec *store.Record) (order []string, views map[string]taskView) {
	order = planIDs(rec.Plan)
	inPlan := make(map[string]bool, len(order))
	for _, id := range order {
		inPlan[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(rec.Tasks)) {
		if !inPlan[id] {
			order = append(order, id)
			inPlan[id] = true
		}
	}
	derived := map[string]string{}
	for _, e := range rec.Events {
		switch runner.EventKind(e.Kind) {
		case runner.EventRunStarted:
			clear(derived)
		case runner.EventTaskStarted, runner.EventTaskRetried:
			derived[e.TaskID] = string(runner.TaskRunning)
		case runner.EventTaskSkipped:
			derived[e.TaskID] = string(runner.TaskSkipped)
		case runner.EventTaskFinished, runner.EventTaskFailed, runner.EventTaskWaiting:
			delete(derived, e.TaskID) // committed, or lost with the process
		}
	}
	views = make(map[string]taskView, len(order))
	for _, id := range order {
		if t, ok := rec.Tasks[id]; ok {
			views[id] = taskView{Task: t, committed: true}
			continue
		}
		status := derived[id]
		if status == "" {
			status = string(runner.TaskPending)
		}
		views[id] = taskView{Task: store.Task{ID: id, Status: status}}
	}
	return order, views
}

type jsonShow struct {
	RunID     string                  `json:"run_id"`
	Status    string                  `json:"status"`
	Error     *string                 `json:"error"`
	Created   time.Time               `json:"created"`
	Updated   time.Time               `json:"updated"`
	Mission   string                  `json:"mission"`
	Options   json.RawMessage         `json:"options"`
	Plan      json.RawMessage         `json:"plan"`
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

func showDoc(rec *store.Record) jsonShow {
	order, views := taskViews(rec)
	doc := jsonShow{
		RunID: rec.ID, Status: rec.Status, Error: textOrNil(rec.Error), Created: rec.Created, Updated: rec.Updated,
		Mission: rec.Mission, Options: rawOrNull(rec.Spec), Plan: rawOrNull(rec.Plan),
		Tasks: make(map[string]jsonShowTask, len(views)), Order: order, Events: []jsonEvent{}, Exchanges: len(rec.Exchanges),
	}
	for id, v := range views {
		jt := jsonShowTask{
			Status: v.Status, Attempts: v.Attempts, Output: rawOrNull(v.Output), Error: textOrNil(v.Error), Diagnosis: v.Diagnosis,
			Started: timeOrNil(v.Started), DurationMS: v.Duration.Milliseconds(), Usage: v.Tokens,
		}
		if v.committed {
			jt.Committed = timeOrNil(v.Committed)
		}
		doc.Tasks[id] = jt
	}
	for _, e := range rec.Events {
		doc.Events = append(doc.Events, jsonEvent{Seq: e.Seq, Kind: e.Kind, Time: e.Time, TaskID: e.TaskID, Data: e.Data})
	}
	return doc
}

func writeShow(w io.Writer, rec *store.Record) error {
	fmt.Fprintf(w, "run %s  %s\n", rec.ID, rec.Status)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "started\t%s\n", rec.Created.Local().Format(time.DateTime))
	fmt.Fprintf(tw, "updated\t%s (%s later)\n", rec.Updated.Local().Format(time.DateTime), round(rec.Updated.Sub(rec.Created)))
	if rec.Mission != "" {
		fmt.Fprintf(tw, "mission\t%s\n", oneLine(rec.Mission, 200))
	}
	if o, err := parseOptions(rec); err == nil && o.Registry != "" {
		fmt.Fprintf(tw, "registry\t%s\n", o.Registry)
	}
	if rec.Error != "" {
		fmt.Fprintf(tw, "error\t%s\n", oneLine(rec.Error, 200))
	}
	if n := len(rec.Exchanges); n > 0 {
		fmt.Fprintf(tw, "llm\t%s recorded\n", prose.Plural(n, "exchange"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	order, views := taskViews(rec)
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tATTEMPTS\tDURATION\tDIAGNOSIS")
	for _, id := range order {
		v := views[id]
		why := v.Diagnosis
		if why == "" && v.Status != string(runner.TaskDone) {
			why = v.Error
		}
		if !v.committed && v.Status == string(runner.TaskRunning) {
			why = "in flight when the run stopped; a resume runs it again"
			if rec.Status == store.StatusRunning {
				why = "running, or in flight when the process died; a resume runs it again"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", id, v.Status, v.Attempts, round(v.Duration), oneLine(why, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, id := range order {
		v := views[id]
		if len(v.Output) == 0 || string(v.Output) == "null" {
			continue
		}
		fmt.Fprintf(w, "\n== %s ==\n%s\n", id, strings.TrimRight(rawText(v.Output), "\n"))
	}

	if len(rec.Events) > 0 {
		fmt.Fprintf(w, "\nEVENTS\n")
		// A run starts again when it is resumed, or — in a run that
		// replans, which is never resumed — when a repair plan runs.
		again := "run resumed"
		if o, err := parseOptions(rec); err == nil && o.Replan {
			again = "run of a repair plan started"
		}
		starts := 0
		for _, e := range rec.Events {
			line := eventLine(e)
			if e.Kind == string(runner.EventRunStarted) {
				if starts++; starts > 1 {
					line = again
				}
			}
			fmt.Fprintf(w, "%4d  %s  %s\n", e.Seq, e.Time.Local().Format("15:04:05.000"), line)
		}
	}
	return nil
}

// rawText is a JSON value as text: a string as it is, anything else
// indented.
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}

// eventLine describes a journaled event as the progress of dagent run
// does.
func eventLine(e store.Event) string {
	var d store.EventData
	_ = json.Unmarshal(e.Data, &d)
	switch runner.EventKind(e.Kind) {
	case runner.EventRunStarted:
		return "run started"
	case runner.EventRunFinished:
		line := "run " + d.Status
		if d.Error != "" {
			line += ": " + oneLine(d.Error, 100)
		}
		return line
	case runner.EventPhaseStarted:
		return fmt.Sprintf("phase %d started", d.Phase)
	case runner.EventPhaseFinished:
		return fmt.Sprintf("phase %d settled in %s", d.Phase, round(d.Duration))
	case runner.EventTaskStarted:
		return e.TaskID + ": started"
	case runner.EventTaskVerified:
		switch {
		case d.Passed:
			return e.TaskID + ": verification passed"
		case d.Error != "":
			return e.TaskID + ": verification error: " + oneLine(d.Error, 100)
		}
		return e.TaskID + ": verification failed: " + oneLine(d.Diagnosis, 100)
	case runner.EventTaskRetried:
		return fmt.Sprintf("%s: retry %d after: %s", e.TaskID, d.Attempt-1, oneLine(d.Diagnosis, 100))
	case runner.EventTaskFinished:
		return fmt.Sprintf("%s: done in %s", e.TaskID, round(d.Duration))
	case runner.EventTaskFailed:
		return e.TaskID + ": failed: " + oneLine(d.Error, 100)
	case runner.EventTaskSkipped:
		return e.TaskID + ": skipped: " + oneLine(d.Error, 100)
	case runner.EventTaskWaiting:
		return e.TaskID + ": waiting for review"
	}
	if e.TaskID != "" {
		return e.TaskID + ": " + e.Kind
	}
	return e.Kind
}
