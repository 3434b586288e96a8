package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/spf13/cobra"
)

// Exit codes of dagent run beyond the shared ones.
const (
	exitWaiting = 3
	exitReplan  = 4
)

type runFlags struct {
	registry    string
	concurrency int
	schedule    string
	reviews     string
	initial     string
	timeout     time.Duration
	format      string
	runID       string
}

func newRun() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run PLAN",
		Short: "Run a plan",
		Long: `Run a plan: every task on its agent, in parallel phases, each output checked
by its verification predicate, failures handled by the task's policies.

Tasks name workers of the registry (--registry, a YAML or JSON file of
trusted commands). The text format prints one line per state change, then a
summary table and the outputs of the final tasks; --format json prints one
JSON document: {"run_id", "status", "error", "duration_ms", "tasks": {ID:
{"status", "attempts", "output", "error", "diagnosis", "duration_ms"}},
"pending_reviews": [{"task_id", "prompt", "upstream"}], "replan": {"task_id",
"output", "diagnosis", "completed"}}.

A run that waits for human review is resumed by running the plan again with
the earlier result (--initial-results, the JSON result or an object of task
id to output) and the decisions (--reviews, an object of task id to
"approve", "reject" or {"approved": bool, "comment": "...", "output": ...}).
Resuming from a JSON result keeps its run id, so the tasks that run again get
the same idempotency keys.

Exit codes: 0 completed, 1 failed (or the plan or registry is invalid,
problems on standard error), 2 usage or input error, 3 waiting for review,
4 replan required. Interrupting the run (Ctrl-C) cancels it; finished results
are kept and printed.`,
		Example: `  dagent run examples/health/plan.json --registry examples/health/registry.yaml
  dagent run examples/pipeline/plan.json --registry examples/pipeline/registry.yaml --format json > run.json
  dagent run examples/pipeline/plan.json --registry examples/pipeline/registry.yaml \
      --initial-results run.json --reviews examples/pipeline/reviews.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPlan(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.registry, "registry", "", "registry file (YAML or JSON) of the workers tasks may use")
	fl.IntVar(&f.concurrency, "concurrency", runner.DefaultConcurrency, "most tasks running at once")
	fl.StringVar(&f.schedule, "schedule", "phased", "phased (a phase starts when the one before settled) or eager (a task starts when its own dependencies settled)")
	fl.StringVar(&f.reviews, "reviews", "", "JSON file of review decisions by task id")
	fl.StringVar(&f.initial, "initial-results", "", "JSON file of task outputs by id, or an earlier --format json result; those tasks are not run again")
	fl.DurationVar(&f.timeout, "timeout", runner.DefaultTaskTimeout, "timeout of each attempt of a task that sets none")
	fl.StringVarP(&f.format, "format", "f", "text", "output format: text or json")
	fl.StringVar(&f.runID, "run-id", "", "id of the run, part of every request's idempotency key (default: the --initial-results run's id, else a new one)")
	return cmd
}

func runPlan(cmd *cobra.Command, path string, f runFlags) error {
	if f.format != "text" && f.format != "json" {
		return fmt.Errorf("unknown format %q; use text or json", f.format)
	}
	schedule, err := runner.ParseSchedule(f.schedule)
	if err != nil {
		return err
	}
	p, reg, err := loadWith(cmd, path, f.registry)
	if err != nil {
		return err
	}
	opts := []runner.Option{
		runner.WithRegistry(reg),
		runner.WithConcurrency(f.concurrency),
		runner.WithSchedule(schedule),
		runner.WithTaskTimeout(f.timeout),
	}
	if f.reviews != "" {
		decisions, err := readReviews(cmd, f.reviews)
		if err != nil {
			return err
		}
		opts = append(opts, runner.WithReviews(decisions))
	}
	runID := f.runID
	if f.initial != "" {
		outputs, earlier, err := readInitial(cmd, f.initial)
		if err != nil {
			return err
		}
		opts = append(opts, runner.WithInitialResults(outputs))
		runID = cmp.Or(runID, earlier)
	}
	if runID != "" {
		opts = append(opts, runner.WithRunID(runID))
	}
	out := cmd.OutOrStdout()
	if f.format == "text" {
		opts = append(opts, runner.WithObserver(&progress{w: out}))
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := runner.New(opts...).Run(ctx, p)
	if res == nil {
		if errors.Is(err, plan.ErrInvalid) {
			fmt.Fprintln(cmd.ErrOrStderr(), err)
			return exitCode(exitInvalid)
		}
		return err
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(cmd.ErrOrStderr(), "dagent:", err)
	}
	if f.format == "json" {
		err = writeJSONResult(out, res)
	} else {
		err = writeSummary(out, p, res, path)
	}
	if err != nil {
		return err
	}
	switch res.Status {
	case runner.StatusCompleted:
		return nil
	case runner.StatusWaiting:
		return exitCode(exitWaiting)
	case runner.StatusReplanRequired:
		return exitCode(exitReplan)
	}
	return exitCode(exitInvalid)
}

// readJSON reads a JSON file ("-" for stdin) with numbers kept exact.
func readJSON(cmd *cobra.Command, path, what string) (any, error) {
	data, err := read(cmd.InOrStdin(), path, what)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", what, path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: %s: more than one JSON value", what, path)
	}
	return v, nil
}

func readReviews(cmd *cobra.Command, path string) (map[string]runner.Decision, error) {
	v, err := readJSON(cmd, path, "reviews")
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("reviews: %s: want an object of task id to decision", path)
	}
	decisions := make(map[string]runner.Decision, len(m))
	for id, raw := range m {
		d, err := runner.ParseDecision(raw)
		if err != nil {
			return nil, fmt.Errorf("reviews: %s: task %s: %w", path, id, err)
		}
		decisions[id] = d
	}
	return decisions, nil
}

// readInitial reads task outputs by id, or the done tasks' outputs and the
// run id of an earlier JSON result.
func readInitial(cmd *cobra.Command, path string) (outputs map[string]any, runID string, err error) {
	v, err := readJSON(cmd, path, "initial results")
	if err != nil {
		return nil, "", err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("initial results: %s: want an object of task id to output, or a dagent run result", path)
	}
	tasks, isResult := m["tasks"].(map[string]any)
	if _, hasStatus := m["status"].(string); !isResult || !hasStatus {
		return m, "", nil
	}
	outputs = make(map[string]any, len(tasks))
	for id, t := range tasks {
		tm, ok := t.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("initial results: %s: tasks.%s is not an object", path, id)
		}
		if tm["status"] == string(runner.TaskDone) {
			outputs[id] = tm["output"]
		}
	}
	runID, _ = m["run_id"].(string)
	return outputs, runID, nil
}

// jsonResult is the --format json document.
type jsonResult struct {
	RunID          string              `json:"run_id"`
	Status         runner.Status       `json:"status"`
	Error          *string             `json:"error"`
	DurationMS     int64               `json:"duration_ms"`
	Tasks          map[string]jsonTask `json:"tasks"`
	PendingReviews []jsonReview        `json:"pending_reviews"`
	Replan         *jsonReplan         `json:"replan"`
}

type jsonTask struct {
	Status     runner.TaskStatus `json:"status"`
	Attempts   int               `json:"attempts"`
	Output     any               `json:"output"`
	Error      *string           `json:"error"`
	Diagnosis  string            `json:"diagnosis"`
	DurationMS int64             `json:"duration_ms"`
}

type jsonReview struct {
	TaskID   string         `json:"task_id"`
	Prompt   string         `json:"prompt"`
	Upstream map[string]any `json:"upstream"`
}

type jsonReplan struct {
	TaskID    string   `json:"task_id"`
	Output    any      `json:"output"`
	Diagnosis string   `json:"diagnosis"`
	Completed []string `json:"completed"`
}

func errText(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

func writeJSONResult(w io.Writer, res *runner.Result) error {
	doc := jsonResult{
		RunID:          res.RunID,
		Status:         res.Status,
		Error:          errText(res.Err),
		DurationMS:     res.Duration.Milliseconds(),
		Tasks:          make(map[string]jsonTask, len(res.Tasks)),
		PendingReviews: []jsonReview{},
	}
	for id, t := range res.Tasks {
		doc.Tasks[id] = jsonTask{Status: t.Status, Attempts: t.Attempts, Output: t.Output, Error: errText(t.Err), Diagnosis: t.Diagnosis, DurationMS: t.Duration.Milliseconds()}
	}
	for _, r := range res.PendingReviews {
		doc.PendingReviews = append(doc.PendingReviews, jsonReview{TaskID: r.TaskID, Prompt: r.Prompt, Upstream: r.Upstream})
	}
	if r := res.Replan; r != nil {
		doc.Replan = &jsonReplan{TaskID: r.TaskID, Output: r.Output, Diagnosis: r.Diagnosis, Completed: slices.Clip(append([]string{}, r.Completed...))}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
