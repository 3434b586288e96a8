package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/spf13/cobra"
)

type resumeFlags struct {
	db      dbFlags
	format  string
	review  []string
	reviews string
	model   string
}

func newResume() *cobra.Command {
	var f resumeFlags
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Continue a journaled run that crashed, was cancelled or waits for review",
		Long: `Continue a run of the journal from where it stopped: a run whose process
died (kill -9, a crash, a reboot), a run interrupted with Ctrl-C, a run
that failed, or a run that waits for human review.

The run goes on under its id, with the plan and the options it was started
with (registry, concurrency, schedule, timeout, model, budgets). Every task
the journal holds as done keeps its output and never runs again; every
other task runs: those that had not started, those that failed or were
skipped, and the task that was in flight when the process died — which may
so run twice (at least once). Its request carries the same idempotency key
as the first time ("<run id>/<task id>/<attempt>"), so that a worker can
tell a repeat from a new request.

A run waiting for review takes the decisions with --review ID=approve or
--review ID=reject (repeatable), or --reviews FILE (a JSON object of task id
to "approve", "reject" or {"approved": bool, "comment": "...", "output":
...}). A review without a decision waits again. A completed run is printed
as it is; nothing runs.

Resuming a run that replans (dagent run --replan or --mission) is not
supported yet. The output and the exit codes are those of dagent run: 0
completed, 1 failed, 2 usage or input error, 3 waiting for review.`,
		Example: `  dagent resume 20250101T120000-1a2b3c4d
  dagent resume 20250101T120000-1a2b3c4d --review approve_draft=approve --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return resumeRun(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	f.db.register(cmd, false)
	fl.StringVarP(&f.format, "format", "f", "text", "output format: text or json")
	fl.StringArrayVar(&f.review, "review", nil, "decision of a review, `ID=approve` or ID=reject (repeatable)")
	fl.StringVar(&f.reviews, "reviews", "", "JSON file of review decisions by task id")
	fl.StringVar(&f.model, "model", "", "model for the run's LLM agents (default the model the run started with, else $DAGENT_MODEL)")
	return cmd
}

func resumeRun(cmd *cobra.Command, id string, rf resumeFlags) error {
	if rf.format != "text" && rf.format != "json" {
		return fmt.Errorf("unknown format %q; use text or json", rf.format)
	}
	reviews, err := reviewFlags(cmd, rf.review, rf.reviews)
	if err != nil {
		return err
	}
	s, err := openExisting(rf.db)
	if err != nil {
		return err
	}
	rj := &runJournal{s: s}
	defer rj.close(cmd)
	rec, err := loadRun(cmd.Context(), s, id)
	if err != nil {
		return err
	}
	o, err := parseOptions(rec)
	if err != nil {
		return err
	}
	if o.Replan {
		return fmt.Errorf("run %s replans (dagent run --replan or --mission), and resuming such a run is not supported yet; dagent show %s has its finished tasks", rec.ID, rec.ID)
	}
	f, err := o.flags()
	if err != nil {
		return fmt.Errorf("run %s: %w", rec.ID, err)
	}
	f.format = rf.format
	if rf.model != "" {
		f.llm.model = rf.model
	}
	reg, err := loadRegistry(cmd, f.registry)
	if err != nil {
		return err
	}
	d, err := planOf(cmd, rec, catalog(reg)...)
	if err != nil {
		return err
	}
	if d == nil {
		return fmt.Errorf("run %s has no plan in the journal", rec.ID)
	}
	p := d.Plan()
	for id := range reviews {
		if i := slices.IndexFunc(p.Tasks, func(t plan.Task) bool { return t.ID == id }); i < 0 || p.Tasks[i].Type != plan.TypeHumanReview {
			return fmt.Errorf("review decision for %q, which is not a human_review task of run %s", id, rec.ID)
		}
	}
	if rec.Status == string(runner.StatusCompleted) {
		return writeRecorded(cmd, rec, p, f.format)
	}
	done, _, err := store.Resume(rec)
	if err != nil {
		return err
	}
	if o.Dir != "" {
		if wd, err := os.Getwd(); err == nil && wd != o.Dir {
			fmt.Fprintf(cmd.ErrOrStderr(), "dagent: note: run %s started in %s; its workers now run in %s\n", rec.ID, o.Dir, wd)
		}
	}
	a := &launch{dag: d, mission: p.Mission, reg: reg, f: f, runID: rec.ID, initial: done, reviews: reviews, journal: rj, resume: true}
	_, err = a.exec(cmd)
	return err
}

// reviewFlags reads the decisions of --reviews FILE and --review ID=D
// (which win).
func reviewFlags(cmd *cobra.Command, flags []string, file string) (map[string]runner.Decision, error) {
	decisions := map[string]runner.Decision{}
	if file != "" {
		var err error
		if decisions, err = readReviews(cmd, file); err != nil {
			return nil, err
		}
	}
	for _, arg := range flags {
		id, v, ok := strings.Cut(arg, "=")
		if !ok || strings.TrimSpace(id) == "" {
			return nil, fmt.Errorf("--review %q: want ID=approve or ID=reject", arg)
		}
		d, err := runner.ParseDecision(v)
		if err != nil {
			return nil, fmt.Errorf("--review %s: %w", arg, err)
		}
		decisions[strings.TrimSpace(id)] = d
	}
	if len(decisions) == 0 {
		return nil, nil
	}
	return decisions, nil
}

// writeRecorded prints a finished run as the journal has it, as dagent run
// printed it, and returns its exit.
func writeRecorded(cmd *cobra.Command, rec *store.Record, p *plan.Plan, format string) error {
	res, err := recordResult(rec, p)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if format == "json" {
		err = writeJSONResult(out, res)
	} else {
		fmt.Fprintf(out, "run %s\n", rec.ID)
		err = writeSummary(out, p, res, summaryExtra{})
	}
	if err != nil {
		return err
	}
	return runExit(res.Status)
}

// recordResult rebuilds a run's result from the journal.
func recordResult(rec *store.Record, p *plan.Plan) (*runner.Result, error) {
	res := &runner.Result{RunID: rec.ID, Status: runner.Status(rec.Status), Tasks: map[string]*runner.TaskResult{}, Started: rec.Created, Duration: rec.Updated.Sub(rec.Created)}
	if rec.Error != "" {
		res.Err = errors.New(rec.Error)
	}
	outputs, _, err := store.Resume(rec)
	if err != nil {
		return nil, err
	}
	_, views := taskViews(rec)
	for _, id := range slices.Sorted(maps.Keys(views)) {
		v := views[id]
		t := &runner.TaskResult{ID: id, Status: runner.TaskStatus(v.Status), Attempts: v.Attempts, Output: outputs[id], Diagnosis: v.Diagnosis, Started: v.Started, Duration: v.Duration}
		if v.Error != "" {
			t.Err = errors.New(v.Error)
		}
		res.Tasks[id] = t
	}
	for i := range p.Tasks {
		if _, ok := res.Tasks[p.Tasks[i].ID]; !ok {
			res.Tasks[p.Tasks[i].ID] = &runner.TaskResult{ID: p.Tasks[i].ID, Status: runner.TaskPending}
		}
	}
	return res, nil
}
