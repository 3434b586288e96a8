package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/spf13/cobra"
)

func newReplay() *cobra.Command {
	var (
		db     dbFlags
		format string
	)
	cmd := &cobra.Command{
		Use:   "replay RUN",
		Short: "Run a journaled run again on its recorded LLM exchanges and compare",
		Long: `Run a journaled run again from the start, with its plan and options, every
LLM request answered from the exchanges the journal recorded — no server,
no key, no network — and compare the outcome with the journal's.

The registry's command workers run again for real (they are not LLM
calls). Outputs the run started with (--initial-results) are given again,
and human reviews get the decisions they got. The replay is not journaled.

The replay diverges when a request was not recorded (the prompts changed,
or a worker's output did), or when the run's status, or a task's status or
output, differs from the journal's. For a run that did not finish (its
process died, or it was cancelled) only the tasks it finished are compared.

Exit codes: 0 the replay is identical, 1 it diverged (the differences are
listed), 2 usage or input error. --format json prints {"run_id",
"identical", "status", "recorded_status", "differences": [...]}.`,
		Example: `  dagent replay 20250101T120000-1a2b3c4d`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("unknown format %q; use text or json", format)
			}
			return replayRun(cmd, args[0], db, format)
		},
	}
	db.register(cmd, false)
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: text or json")
	return cmd
}

// watcher is the LLM of a replay: the journal's exchanges, noting every
// request that was not recorded.
type watcher struct {
	c llm.Client

	mu      sync.Mutex
	missing []string
}

func (w *watcher) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := w.c.Complete(ctx, req)
	if errors.Is(err, llm.ErrNotRecorded) {
		key, _ := llm.RequestKey(req)
		last := ""
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == llm.RoleUser {
				last = req.Messages[i].Content
				break
			}
		}
		w.mu.Lock()
		w.missing = append(w.missing, fmt.Sprintf("a request that was not recorded (key %.12s): last user message %q", key, oneLine(strings.ReplaceAll(last, "\n", " "), 100)))
		w.mu.Unlock()
	}
	return resp, err
}

type jsonReplay struct {
	RunID          string   `json:"run_id"`
	Identical      bool     `json:"identical"`
	Status         string   `json:"status"`
	RecordedStatus string   `json:"recorded_status"`
	Differences    []string `json:"differences"`
}

func replayRun(cmd *cobra.Command, id string, db dbFlags, format string) error {
	s, err := openExisting(db)
	if err != nil {
		return err
	}
	rec, err := loadRun(cmd.Context(), s, id)
	s.Close()
	if err != nil {
		return err
	}
	o, err := parseOptions(rec)
	if err != nil {
		return err
	}
	f, err := o.flags()
	if err != nil {
		return fmt.Errorf("run %s: %w", rec.ID, err)
	}
	reg, err := loadRegistry(cmd, f.registry)
	if err != nil {
		return err
	}
	d, err := planOf(cmd, rec, catalog(reg)...)
	if err != nil {
		return err
	}
	if d == nil && o.Mission == "" {
		return fmt.Errorf("run %s has no plan in the journal", rec.ID)
	}
	replayer, err := store.Replayer(rec)
	if err != nil {
		return err
	}
	w := &watcher{c: replayer}
	a := &launch{dag: d, mission: o.Mission, reg: reg, f: f, runID: rec.ID, llm: w, quiet: true}
	if d != nil && a.mission == "" {
		a.mission = d.Plan().Mission
	}
	a.initial, a.reviews, err = replayInputs(rec)
	if err != nil {
		return err
	}
	res, err := a.exec(cmd)
	var code exitCode
	if res == nil && !errors.As(err, &code) {
		return err
	}
	doc := jsonReplay{RunID: rec.ID, RecordedStatus: rec.Status, Differences: slices.Clone(w.missing)}
	if res == nil {
		doc.Status = "not run (" + describe(err) + ")"
		doc.Differences = append(doc.Differences, "the replay ran no plan: "+describe(err))
	} else {
		doc.Status = string(res.Status)
		doc.Differences = append(doc.Differences, compareRun(rec, res)...)
	}
	if doc.Differences == nil {
		doc.Differences = []string{}
	}
	doc.Identical = len(doc.Differences) == 0
	out := cmd.OutOrStdout()
	if format == "json" {
		err = encodeJSON(out, doc)
	} else {
		err = writeReplay(out, rec, doc)
	}
	if err != nil {
		return err
	}
	if !doc.Identical {
		return exitCode(exitInvalid)
	}
	return nil
}

func writeReplay(w interface{ Write([]byte) (int, error) }, rec *store.Record, doc jsonReplay) error {
	if doc.Identical {
		_, err := fmt.Fprintf(w, "replay of run %s: identical (%s, %s replayed)\n", rec.ID, doc.Status, prose.Plural(len(rec.Exchanges), "LLM exchange"))
		return err
	}
	fmt.Fprintf(w, "replay of run %s diverged (%s):\n", rec.ID, prose.Plural(len(doc.Differences), "difference"))
	for _, d := range doc.Differences {
		fmt.Fprintf(w, "  - %s\n", d)
	}
	return nil
}

// replayInputs are what a replay starts with: the outputs the run was
// given rather than produced (done in no attempt), and the review
// decisions the run got, read from its reviews' final states.
func replayInputs(rec *store.Record) (map[string]any, map[string]runner.Decision, error) {
	outputs, _, err := store.Resume(rec)
	if err != nil {
		return nil, nil, err
	}
	reviews := map[string]runner.Decision{}
	initial := map[string]any{}
	types := planTypes(rec.Plan)
	for id, t := range rec.Tasks {
		switch {
		case t.Status == string(runner.TaskDone) && t.Attempts == 0:
			initial[id] = outputs[id]
		case types[id] != "human_review":
		case t.Status == string(runner.TaskDone):
			reviews[id] = runner.Decision{Approved: true, Output: outputs[id]}
		case strings.HasPrefix(t.Error, runner.ErrRejected.Error()):
			comment := strings.TrimPrefix(strings.TrimPrefix(t.Error, runner.ErrRejected.Error()), ": ")
			reviews[id] = runner.Decision{Comment: comment}
		}
	}
	return initial, reviews, nil
}

// planTypes maps the task ids of a canonical plan to their types.
func planTypes(raw json.RawMessage) map[string]string {
	var v struct {
		Tasks []struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"tasks"`
	}
	_ = json.Unmarshal(raw, &v)
	m := make(map[string]string, len(v.Tasks))
	for _, t := range v.Tasks {
		m[t.ID] = t.Type
	}
	return m
}

// compareRun lists how the replay's result res differs from the journal's
// record: the run's status, and each task's status and output. A run that
// did not finish is compared on the tasks it committed only.
func compareRun(rec *store.Record, res *runner.Result) []string {
	var diffs []string
	finished := rec.Status != store.StatusRunning && rec.Status != statusCancelled
	if finished && rec.Status != string(res.Status) {
		diffs = append(diffs, fmt.Sprintf("the run %s; it was %s", res.Status, rec.Status))
	}
	order, views := taskViews(rec)
	seen := map[string]bool{}
	for _, id := range order {
		seen[id] = true
	}
	for id := range res.Tasks {
		if !seen[id] {
			order = append(order, id)
		}
	}
	for _, id := range order {
		v, recorded := views[id]
		if !finished && !v.committed {
			continue
		}
		want := string(runner.TaskPending)
		if recorded {
			want = v.Status
		}
		got := string(runner.TaskPending)
		t := res.Tasks[id]
		if t != nil {
			got = string(t.Status)
		}
		if want == string(runner.TaskRunning) {
			want = string(runner.TaskPending) // in flight when the run stopped
		}
		if got != want {
			diffs = append(diffs, fmt.Sprintf("task %s is %s; it was %s", id, got, want))
			continue
		}
		if got != string(runner.TaskDone) {
			continue
		}
		gotJSON, err := json.Marshal(t.Output)
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("task %s: its output is not JSON: %v", id, err))
			continue
		}
		if !sameJSON(gotJSON, v.Output) {
			diffs = append(diffs, fmt.Sprintf("task %s output %s; it was %s", id, oneLine(string(compact(gotJSON)), 120), oneLine(string(compact(v.Output)), 120)))
		}
	}
	return diffs
}

// sameJSON reports whether a and b are the same JSON value (numbers
// compared as written).
func sameJSON(a, b []byte) bool {
	return bytes.Equal(canonical(a), canonical(b))
}

func canonical(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	v, err := jsonv.DecodeBytes(b)
	if err != nil {
		return b
	}
	out, err := jsonv.Marshal(v)
	if err != nil {
		return b
	}
	return out
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}
