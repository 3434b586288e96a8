package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/spf13/cobra"
)

// The journal: every dagent run is recorded in a SQLite database, by
// default .dagent/dagent.db under the working directory.
const (
	envDB     = "DAGENT_DB"
	defaultDB = ".dagent/dagent.db"
)

// statusCancelled is the journal status of a run that was interrupted
// (Ctrl-C, SIGTERM): the runner calls it failed, and it can be resumed.
const statusCancelled = "cancelled"

// dbFlags are the flags of the commands that read or write the journal.
type dbFlags struct {
	db  string
	off bool // --no-journal
}

func (f *dbFlags) register(cmd *cobra.Command, canSkip bool) {
	cmd.Flags().StringVar(&f.db, "db", "", "journal database `PATH` (default $"+envDB+", else "+defaultDB+" under the working directory)")
	if canSkip {
		cmd.Flags().BoolVar(&f.off, "no-journal", false, "do not journal the run (it cannot be resumed, shown or replayed)")
	}
}

// path is the database to use: --db, $DAGENT_DB, or the default.
func (f *dbFlags) path() string {
	return cmp.Or(f.db, os.Getenv(envDB), defaultDB)
}

// openStore opens the journal to write to it, creating it if need be.
func openStore(path string) (*store.SQLite, error) {
	s, err := store.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return s, nil
}

// openExisting opens the journal to read a run from it; a database that
// does not exist is an error that says where it was looked for.
func openExisting(f dbFlags) (*store.SQLite, error) {
	path := f.path()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no journal at %s: runs are journaled there by dagent run (pass --db PATH or set %s for another database)", path, envDB)
	}
	return openStore(path)
}

// loadRun loads the run id from s; id may also be a prefix of one run's
// id.
func loadRun(ctx context.Context, s store.Store, id string) (*store.Record, error) {
	rec, err := s.Load(ctx, id)
	if !errors.Is(err, store.ErrNotFound) || id == "" {
		return rec, err
	}
	runs, lerr := s.List(ctx)
	if lerr != nil {
		return nil, lerr
	}
	var match []string
	for _, r := range runs {
		if strings.HasPrefix(r.ID, id) {
			match = append(match, r.ID)
		}
	}
	switch len(match) {
	case 0:
		return nil, fmt.Errorf("no run %s in the journal (dagent runs lists them)", id)
	case 1:
		return s.Load(ctx, match[0])
	}
	return nil, fmt.Errorf("%q is the beginning of %d runs' ids (%s, ...); give more of it", id, len(match), strings.Join(match[:2], ", "))
}

// newRunID returns an id that sorts by start time and is unique in
// practice, like the runner's.
func newRunID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// runOptions are the settings of a run the journal keeps, so that resume
// and replay run it as it ran. Durations are Go duration strings.
type runOptions struct {
	// Registry is the registry file, absolute; empty for none.
	Registry    string `json:"registry,omitempty"`
	Dir         string `json:"dir,omitempty"` // the working directory
	Concurrency int    `json:"concurrency"`
	Schedule    string `json:"schedule"`
	Timeout     string `json:"timeout"`

	// Replanning: the run went through the executor.
	Replan            bool   `json:"replan,omitempty"`
	Mission           string `json:"mission,omitempty"`
	MaxReplans        int    `json:"max_replans,omitempty"`
	MaxReplansPerTask int    `json:"max_replans_per_task,omitempty"`
	Cooldown          string `json:"replan_cooldown,omitempty"`

	// Budgets.
	MaxTokens int    `json:"max_tokens,omitempty"`
	MaxCalls  int    `json:"max_llm_calls,omitempty"`
	Deadline  string `json:"deadline,omitempty"`

	// The LLM.
	Model          string `json:"model,omitempty"`
	Brief          bool   `json:"brief,omitempty"`
	MaxCorrections int    `json:"max_corrections,omitempty"`
}

// optionsOf are the settings of a run with flags f.
func optionsOf(f runFlags) (runOptions, error) {
	o := runOptions{
		Concurrency: f.concurrency, Schedule: f.schedule, Timeout: f.timeout.String(),
		Replan: f.replanning(), Mission: f.mission,
		MaxTokens: f.maxTokens, MaxCalls: f.maxCalls,
		Model: strings.TrimSpace(f.llm.model), Brief: f.llm.brief, MaxCorrections: f.llm.fixes,
	}
	if f.registry != "" {
		abs, err := filepath.Abs(f.registry)
		if err != nil {
			return o, err
		}
		o.Registry = abs
	}
	if dir, err := os.Getwd(); err == nil {
		o.Dir = dir
	}
	if o.Replan {
		o.MaxReplans, o.MaxReplansPerTask = f.maxReplans, f.maxReplansPerTask
		o.Cooldown = f.cooldown.String()
	}
	if f.deadline > 0 {
		o.Deadline = f.deadline.String()
	}
	return o, nil
}

// flags are the run flags that reproduce o.
func (o runOptions) flags() (runFlags, error) {
	f := runFlags{
		registry: o.Registry, concurrency: o.Concurrency, schedule: cmp.Or(o.Schedule, "phased"),
		format: "text", replan: o.Replan, mission: o.Mission,
		maxReplans: o.MaxReplans, maxReplansPerTask: o.MaxReplansPerTask,
		maxTokens: o.MaxTokens, maxCalls: o.MaxCalls,
		llm: llmFlags{model: o.Model, brief: o.Brief, fixes: o.MaxCorrections},
	}
	if f.concurrency == 0 {
		f.concurrency = runner.DefaultConcurrency
	}
	var err error
	parse := func(s string, d *time.Duration, def time.Duration) {
		if s == "" {
			*d = def
			return
		}
		v, perr := time.ParseDuration(s)
		if perr != nil && err == nil {
			err = fmt.Errorf("the journaled options hold a bad duration %q: %w", s, perr)
		}
		*d = v
	}
	parse(o.Timeout, &f.timeout, runner.DefaultTaskTimeout)
	parse(o.Cooldown, &f.cooldown, 0)
	parse(o.Deadline, &f.deadline, 0)
	return f, err
}

// parseOptions reads a journaled run's options.
func parseOptions(rec *store.Record) (runOptions, error) {
	var o runOptions
	if len(rec.Spec) == 0 {
		return o, nil
	}
	if err := json.Unmarshal(rec.Spec, &o); err != nil {
		return o, fmt.Errorf("run %s: its journaled options: %w", rec.ID, err)
	}
	return o, nil
}

// runJournal journals one command's run. The run is written to the
// journal when it first has something to keep — its first event, task or
// LLM exchange — so that a command that runs nothing (the plan was refused,
// no LLM is configured) leaves no run behind.
type runJournal struct {
	s *store.SQLite
	j *store.Journal

	mu       sync.Mutex
	create   *store.Run     // the run to create; nil: it is journaled already
	seed     map[string]any // outputs to commit as done when it is created
	started  bool           // the run is in the journal, and marked running
	startErr error
}

// begin prepares the journaling of a's run: a new run, or — when a.resume
// is set, or a run with the same id and plan is journaled already (dagent
// run --initial-results of an earlier result, or --run-id) — the
// continuation of the journaled one.
func (rj *runJournal) begin(ctx context.Context, a *launch) error {
	rj.j = store.NewJournal(lazyRun{Store: rj.s, rj: rj}, a.runID)
	if a.resume {
		return nil
	}
	var raw json.RawMessage
	if a.dag != nil {
		var err error
		if raw, err = a.plan().Canonical(); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	rec, err := rj.s.Load(ctx, a.runID)
	switch {
	case err == nil:
		// The id is journaled already: go on with that run if it ran this
		// plan.
		if a.dag == nil || a.f.replanning() || !bytes.Equal(rec.Plan, raw) {
			return fmt.Errorf("run %s is in the journal %s already, with another plan or replanning: give this run another --run-id, or resume that one with dagent resume %s", a.runID, rj.s.Path(), a.runID)
		}
		rj.seed = make(map[string]any, len(a.seed))
		for id, out := range a.seed {
			if t, ok := rec.Tasks[id]; !ok || t.Status != string(runner.TaskDone) {
				rj.seed[id] = out
			}
		}
		return nil
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("journal: %w", err)
	}
	opts, err := optionsOf(a.f)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	optsRaw, err := json.Marshal(opts)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	mission := a.mission
	if mission == "" && a.dag != nil {
		mission = a.plan().Mission
	}
	rj.create = &store.Run{ID: a.runID, Plan: raw, Mission: mission, Spec: optsRaw}
	rj.seed = a.seed
	return nil
}

// start puts the run in the journal, once: it creates it (with the outputs
// it starts with committed as done tasks that took no attempt, so that a
// resume finds them too), or marks the journaled run running again.
func (rj *runJournal) start(ctx context.Context, runID string) error {
	rj.mu.Lock()
	defer rj.mu.Unlock()
	if rj.started || rj.startErr != nil {
		return rj.startErr
	}
	ctx = context.WithoutCancel(ctx)
	err := func() error {
		if rj.create != nil {
			if err := rj.s.CreateRun(ctx, *rj.create); err != nil {
				return err
			}
		} else if err := rj.s.SetStatus(ctx, runID, store.StatusRunning, ""); err != nil {
			return err
		}
		for _, id := range slices.Sorted(maps.Keys(rj.seed)) {
			raw, err := json.Marshal(rj.seed[id])
			if err != nil {
				return fmt.Errorf("initial result for %s: %w", id, err)
			}
			if err := rj.s.CommitTask(ctx, runID, store.Task{ID: id, Status: string(runner.TaskDone), Output: raw}); err != nil {
				return err
			}
		}
		return nil
	}()
	rj.started, rj.startErr = err == nil, err
	return err
}

// lazyRun is the store the Journal writes to: it puts the run in the
// journal before the run's first write.
type lazyRun struct {
	store.Store
	rj *runJournal
}

func (l lazyRun) AppendEvents(ctx context.Context, runID string, events []store.Event) error {
	if err := l.rj.start(ctx, runID); err != nil {
		return err
	}
	return l.Store.AppendEvents(ctx, runID, events)
}

func (l lazyRun) CommitTask(ctx context.Context, runID string, t store.Task) error {
	if err := l.rj.start(ctx, runID); err != nil {
		return err
	}
	return l.Store.CommitTask(ctx, runID, t)
}

func (l lazyRun) SetStatus(ctx context.Context, runID, status, errText string) error {
	if err := l.rj.start(ctx, runID); err != nil {
		return err
	}
	return l.Store.SetStatus(ctx, runID, status, errText)
}

func (l lazyRun) RecordExchange(ctx context.Context, runID, key string, exchange json.RawMessage) error {
	if err := l.rj.start(ctx, runID); err != nil {
		return err
	}
	return l.Store.RecordExchange(ctx, runID, key, exchange)
}

// finish records how the run ended, when it is in the journal. res is nil
// when no plan ran; err is the command's error. A run that failed because
// it was cancelled (Ctrl-C, SIGTERM) is journaled as cancelled.
func (rj *runJournal) finish(cmd *cobra.Command, runID string, res *runner.Result, err error) {
	rj.mu.Lock()
	started, startErr := rj.started, rj.startErr
	rj.mu.Unlock()
	if startErr != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "dagent: journal:", startErr)
		return
	}
	if !started {
		return
	}
	status, text := string(runner.StatusFailed), describe(err)
	if res != nil {
		status, text = string(res.Status), errString(res.Err)
		if res.Status == runner.StatusFailed && errors.Is(res.Err, context.Canceled) {
			status = statusCancelled
		}
	}
	ctx := context.WithoutCancel(cmd.Context())
	if serr := rj.s.SetStatus(ctx, runID, status, text); serr != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "dagent: journal:", serr)
	}
	if jerr := rj.j.Err(); jerr != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "dagent: journal:", jerr)
	}
}

func (rj *runJournal) close(cmd *cobra.Command) {
	if err := rj.s.Close(); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "dagent: journal:", err)
	}
}

// describe is the journal's text of a command's error.
func describe(err error) string {
	var code exitCode
	if errors.As(err, &code) {
		switch int(code) {
		case exitAnswered:
			return "the planner answered the mission directly"
		case exitClarify:
			return "the planner asks a clarifying question"
		case exitInvalid:
			return "the plan was invalid, or refused by the critic"
		}
	}
	return errString(err)
}

// planOf parses a journaled run's plan and checks it with opts. The
// problems of a plan that no longer checks (the registry changed) are
// printed on stderr, one per line.
func planOf(cmd *cobra.Command, rec *store.Record, opts ...plan.Option) (*plan.DAG, error) {
	if len(rec.Plan) == 0 || string(rec.Plan) == "null" {
		return nil, nil
	}
	p, err := plan.Parse(rec.Plan)
	var d *plan.DAG
	if err == nil {
		d, err = p.DAG(opts...)
	}
	if problems := plan.Problems(err); problems != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "dagent: the plan of run %s is no longer valid:\n", rec.ID)
		for _, prob := range problems {
			fmt.Fprintln(cmd.ErrOrStderr(), prob.Error())
		}
		return nil, exitCode(exitInvalid)
	}
	return d, err
}
