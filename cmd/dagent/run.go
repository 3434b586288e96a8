package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
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

	// Replanning.
	replan            bool
	mission           string
	maxReplans        int
	maxReplansPerTask int
	cooldown          time.Duration

	// Budgets.
	maxTokens int
	maxCalls  int
	deadline  time.Duration

	llm llmFlags
	db  dbFlags
}

// replanOnly are the flags that only replanning uses.
var replanOnly = []string{"max-replans", "max-replans-per-task", "replan-cooldown"}

func newRun() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [PLAN]",
		Short: "Run a plan",
		Long: `Run a plan: every task on its agent, in parallel phases, each output checked
by its verification predicate, failures handled by the task's policies.

Tasks name workers of the registry (--registry, a YAML or JSON file of
trusted commands) or LLM agents the plan defines ("default" is a plain
model without tools); the LLM agents run on the LLM described below, which
only a plan that has such tasks needs. The text format prints one line per
state change, then a summary table and the outputs of the final tasks;
--format json prints one JSON document: {"version": 1, "run_id", "status",
"error", "duration_ms", "tasks": {ID: {"status", "attempts", "output",
"error", "class", "diagnosis", "duration_ms", "usage"}}, "pending_reviews":
[{"task_id", "prompt", "upstream"}], "replan": {"task_id", "output",
"diagnosis", "completed"}}; a task's "class" and "usage" are left out when
empty.

With --replan, a run that asks for a new plan — a task with on_failure
"replan" failed, or a critical task failed — is repaired: the meta-planner
writes a plan of the unfinished tail toward the mission (the plan's
"mission", or --mission) and that plan runs, reusing every finished
result, until the plan completes or a limit halts replanning
(--max-replans in all, --max-replans-per-task, the same failure twice, the
budgets). The critic reviews the plan first and refuses one with critical
issues (the findings on standard error, exit 1). With --mission and no
PLAN, the meta-planner writes the plan first, then it runs the same way;
when the model answers the mission directly or asks a question instead,
that is printed and the exit code is 5 or 6, as with dagent plan. The text
format then adds a line per replan and why replanning halted; the JSON
document adds "replan_count", "execution_attempts", "usage":
{"prompt_tokens", "completion_tokens"} (every LLM call of the command),
"replan_history": [{"attempt", "task_id", "class", "diagnosis", "output",
"new_task_count"}], "halt" (null, or max_replans, max_replans_per_task,
same_failure, consecutive_failures, budget_exceeded or replan_failed) and
"plan" (the plan that ran last).

--max-tokens and --max-llm-calls bound the LLM calls of the command (agents
and planner); a call beyond them fails. --deadline bounds its wall time.

The LLM is any OpenAI-compatible server: OPENAI_API_KEY for api.openai.com,
OPENAI_BASE_URL (e.g. http://localhost:8080/v1) for another, DAGENT_MODEL or
--model for the model. --record FILE appends every exchange to FILE;
--replay FILE answers from such a recording without a server or a key.

Every run is journaled in a SQLite database, .dagent/dagent.db under the
working directory (--db PATH or $DAGENT_DB for another, --no-journal for
none): each task's final state is committed before the run goes on, so
that dagent resume RUN continues a run that crashed, was cancelled or waits
for review, never running a done task again; dagent runs lists the runs,
dagent show RUN shows one, dagent replay RUN runs one again on its recorded
LLM exchanges. The text format prints "run ID" first, when the run starts.

A run that waits for human review is resumed with dagent resume ID --review
TASK=approve (or =reject), or by running the plan again with
the earlier result (--initial-results, the JSON result or an object of task
id to output) and the decisions (--reviews, an object of task id to
"approve", "reject" or {"approved": bool, "comment": "...", "output": ...}).
Resuming from a JSON result keeps its run id, so the tasks that run again get
the same idempotency keys.

Exit codes: 0 completed, 1 failed (or the plan or registry is invalid,
problems on standard error; or the critic refused the plan; or no valid
plan of the mission), 2 usage or input error (no LLM configured for a
command that needs one), 3 waiting for review, 4 replan required, 5 the
model answered the mission directly, 6 the model asks a question about the
mission. Interrupting the run (Ctrl-C) cancels it; finished results are
kept and printed.`,
		Example: `  dagent run examples/health/plan.json --registry examples/health/registry.yaml
  dagent run examples/pipeline/plan.json --registry examples/pipeline/registry.yaml --format json > run.json
  dagent resume "$(jq -r .run_id run.json)" --review review=approve
  dagent run examples/pipeline/plan.json --registry examples/pipeline/registry.yaml \
      --initial-results run.json --reviews examples/pipeline/reviews.json
  dagent run plan.json --registry registry.yaml --replan --max-tokens 200000
  dagent run --mission "Check the health of this repository" --registry registry.yaml
  dagent run --mission "Summarise the open issues" --replay session.jsonl --format json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			return runPlan(cmd, path, f)
		},
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
	fl.BoolVar(&f.replan, "replan", false, "repair the plan with the meta-planner when a run asks for a new plan")
	fl.StringVar(&f.mission, "mission", "", "the mission: without PLAN, plan it first; with PLAN, what replans work toward (default the plan's mission); implies --replan")
	fl.IntVar(&f.maxReplans, "max-replans", executor.DefaultMaxReplans, "most replans in all")
	fl.IntVar(&f.maxReplansPerTask, "max-replans-per-task", executor.DefaultMaxReplansPerTask, "most replans one task may cause")
	fl.DurationVar(&f.cooldown, "replan-cooldown", 0, "wait this long before each replan")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "most LLM tokens (prompt and completion) of the command; 0 is no limit")
	fl.IntVar(&f.maxCalls, "max-llm-calls", 0, "most LLM calls of the command; 0 is no limit")
	fl.DurationVar(&f.deadline, "deadline", 0, "most wall time of the command, planning and replanning included; 0 is no limit")
	f.llm.register(cmd)
	f.db.register(cmd, true)
	return cmd
}

// replanning reports whether the run goes through the executor.
func (f *runFlags) replanning() bool { return f.replan || f.mission != "" }

// check rejects flags that do not go together.
func (f *runFlags) check(cmd *cobra.Command, path string) error {
	if f.format != "text" && f.format != "json" {
		return fmt.Errorf("unknown format %q; use text or json", f.format)
	}
	if path == "" && f.mission == "" {
		return errors.New("run needs a PLAN, or --mission MISSION to plan one first")
	}
	if f.mission != "" && strings.TrimSpace(f.mission) == "" {
		return errors.New("the mission is empty")
	}
	if !f.replanning() {
		for _, name := range replanOnly {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("--%s needs --replan or --mission", name)
			}
		}
	} else if f.initial != "" {
		return errors.New("--initial-results cannot be combined with --replan or --mission: replanning keeps its own results")
	}
	switch {
	case f.maxReplans < 0, f.maxReplansPerTask < 0:
		return errors.New("--max-replans and --max-replans-per-task must not be negative")
	case f.maxTokens < 0, f.maxCalls < 0:
		return errors.New("--max-tokens and --max-llm-calls must not be negative")
	case f.deadline < 0, f.cooldown < 0:
		return errors.New("--deadline and --replan-cooldown must not be negative")
	}
	return nil
}

func runPlan(cmd *cobra.Command, path string, f runFlags) error {
	if err := f.check(cmd, path); err != nil {
		return err
	}
	if _, err := runner.ParseSchedule(f.schedule); err != nil {
		return err
	}
	var (
		d   *plan.DAG
		reg *registry.Registry
		err error
	)
	if path != "" {
		d, reg, err = loadWith(cmd, path, f.registry)
	} else {
		reg, err = loadRegistry(cmd, f.registry)
	}
	if err != nil {
		return err
	}
	mission := f.mission
	if d != nil && f.replanning() && mission == "" {
		if mission = d.Plan().Mission; strings.TrimSpace(mission) == "" {
			return errors.New("--replan needs a mission: the plan has none; pass --mission MISSION")
		}
	}
	a := &launch{dag: d, mission: mission, reg: reg, f: f, runID: f.runID}
	if f.reviews != "" {
		if a.reviews, err = readReviews(cmd, f.reviews); err != nil {
			return err
		}
	}
	if f.initial != "" {
		outputs, earlier, err := readInitial(cmd, f.initial)
		if err != nil {
			return err
		}
		a.initial, a.seed = outputs, maps.Clone(outputs)
		a.runID = cmp.Or(a.runID, earlier)
	}
	if !f.db.off {
		s, err := openStore(f.db.path())
		if err != nil {
			return fmt.Errorf("%w (--no-journal runs without it)", err)
		}
		a.journal = &runJournal{s: s}
		defer a.journal.close(cmd)
	}
	_, err = a.exec(cmd)
	return err
}

// launch is one run of a plan by the CLI: dagent run, resume or replay.
type launch struct {
	dag     *plan.DAG // the checked plan; nil: plan the mission first
	mission string    // what replans work toward
	reg     *registry.Registry
	f       runFlags
	runID   string                     // empty: a new one
	initial map[string]any             // outputs of the tasks done already
	seed    map[string]any             // the --initial-results, journaled as done
	reviews map[string]runner.Decision // review decisions by task id
	journal *runJournal                // nil: not journaled
	resume  bool                       // the run is journaled already: go on with it
	llm     llm.Client                 // set: the answers of every LLM request (replay)
	quiet   bool                       // print nothing (replay)
}

// plan is the plan of the launch, nil when the mission is to be planned.
func (a *launch) plan() *plan.Plan {
	if a.dag == nil {
		return nil
	}
	return a.dag.Plan()
}

// exec runs a and prints its outcome. It returns the run's result (nil
// when nothing ran) and the command's error, which carries the exit code.
func (a *launch) exec(cmd *cobra.Command) (res *runner.Result, err error) {
	f := a.f
	schedule, err := runner.ParseSchedule(f.schedule)
	if err != nil {
		return nil, err
	}
	l := newLazyLLM(f.llm, llm.Budget{MaxTokens: f.maxTokens, MaxCalls: f.maxCalls})
	l.base = a.llm
	defer func() { err = closeLLM(cmd, l, err) }()
	if a.runID == "" {
		a.runID = newRunID(time.Now())
	}
	if a.journal != nil {
		if err := a.journal.begin(cmd.Context(), a); err != nil {
			return nil, err
		}
		l.wrap = a.journal.j.RecordLLM
		defer func() { a.journal.finish(cmd, a.runID, res, err) }()
	}
	opts := []runner.Option{
		runner.WithRegistry(a.reg),
		runner.WithPlanAgents(planAgents(l, a.reg)),
		runner.WithConcurrency(f.concurrency),
		runner.WithSchedule(schedule),
		runner.WithTaskTimeout(f.timeout),
	}
	if a.journal != nil {
		opts = append(opts, runner.WithJournal(a.journal.j), runner.WithObserver(a.journal.j))
	}
	out := cmd.OutOrStdout()
	var prog *progress
	if f.format == "text" && !a.quiet {
		// The run's id comes first, when it starts (or its plan is made).
		prog = &progress{w: out, announce: sync.OnceFunc(func() { fmt.Fprintf(out, "run %s\n", a.runID) })}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.deadline)
		defer cancel()
	}
	if f.replanning() {
		return execute(ctx, cmd, executeArgs{plan: a.plan(), mission: a.mission, reg: a.reg, llm: l, runner: opts, reviews: a.reviews, progress: prog, f: f, runID: a.runID, quiet: a.quiet})
	}
	if prog != nil {
		opts = append(opts, runner.WithObserver(prog))
	}
	res, err = runner.New(opts...).Run(ctx, a.dag, runner.WithRunID(a.runID),
		runner.WithInitialResults(a.initial), runner.WithReviews(a.reviews))
	if res == nil {
		if errors.Is(err, plan.ErrInvalid) {
			fmt.Fprintln(cmd.ErrOrStderr(), err)
			return nil, exitCode(exitInvalid)
		}
		return nil, err
	}
	if a.quiet {
		return res, runExit(res.Status)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(cmd.ErrOrStderr(), "dagent:", err)
	}
	if f.format == "json" {
		err = writeJSONResult(out, res)
	} else {
		x := summaryExtra{}
		if a.journal != nil {
			x.journaled = a.runID
		}
		err = writeSummary(out, a.plan(), res, x)
	}
	if err != nil {
		return res, err
	}
	return res, runExit(res.Status)
}

// runExit is the exit of a run that ended with status s.
func runExit(s runner.Status) error {
	switch s {
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
	v, err := jsonv.DecodeBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", what, path, err)
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
// run id of an earlier JSON result (an object with "tasks" and "status").
func readInitial(cmd *cobra.Command, path string) (outputs map[string]any, runID string, err error) {
	data, err := read(cmd.InOrStdin(), path, "initial results")
	if err != nil {
		return nil, "", err
	}
	v, err := jsonv.DecodeBytes(data)
	if err != nil {
		return nil, "", fmt.Errorf("initial results: %s: %w", path, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("initial results: %s: want an object of task id to output, or a dagent run result", path)
	}
	_, isResult := m["tasks"].(map[string]any)
	if _, hasStatus := m["status"].(string); !isResult || !hasStatus {
		return m, "", nil
	}
	var res runner.Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, "", fmt.Errorf("initial results: %s: %w", path, err)
	}
	return res.Outputs(), res.RunID, nil
}

func writeJSONResult(w io.Writer, res *runner.Result) error {
	return encodeJSON(w, res)
}
