package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/climain"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/internal/runflags"
	"github.com/dagent-dev/dagent/llm/openai"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/temporal"
)

// maxPlanBytes bounds what is read of a plan file: beyond the size
// plan.Parse takes by default, the plan is refused.
const maxPlanBytes = 64 << 20

type startFlags struct {
	conn   connFlags
	queue  string
	runID  string
	wait   bool
	format string
	// heartbeat is the run's heartbeat timeout; 0 is the workflow's
	// default.
	heartbeat time.Duration
	// allowUnknown runs a plan with keys that look misspelt.
	allowUnknown bool
	spec         runflags.Flags

	model       string
	brief       bool
	fixes       int
	planOnly    bool
	temperature float64
}

func newStart() *cobra.Command {
	var f startFlags
	cmd := &cobra.Command{
		Use:   "start [PLAN] --task-queue QUEUE",
		Short: "Start a run of a plan on the workers of a task queue",
		Long: `Start a run of PLAN (a path, or - for standard input) on the workers of a task
queue: the workflow execution whose id is the run id (--run-id, else a new
one, printed). Without PLAN, --mission MISSION is planned first by the
planner of a worker, and its plan runs. The run flags are those of dagent run, and mean the same:
--concurrency, --schedule, --timeout, --gate, --replan and its limits,
--mission, the budgets, --max-turns, the judge, and the LLM's
settings (--model, --temperature, --brief, --max-corrections,
--plan-only), which the workers' LLM follows. The plan is checked against
the workers' registry when the run starts, on a worker.

Without --wait, start prints the run id and exits 0 once the run is
started. With --wait, it waits for the run to end, or to wait for a
review, and prints it as dagent run does: a summary (text) or the JSON
result document of dagent run (--format json). The exit codes are dagent
run's: 0 completed, 1 failed (or the plan is invalid, problems on standard
error), 2 usage or input error, 3 waiting for review (decide with
dagent-temporal approve or reject), 4 replan required, 5 the planner
answered the mission directly, 6 it asked a question, 130 or 143 when
Ctrl-C or SIGTERM stopped the waiting — the run goes on; dagent-temporal
cancel stops it.`,
		Example: `  dagent-temporal start plan.json --task-queue dagent --wait
  dagent-temporal start plan.json --task-queue dagent --run-id nightly-2025-01-01 --replan --max-replans 2
  dagent-temporal start plan.json --task-queue dagent --wait --format json > run.json
  dagent-temporal start --mission "summarise the week's sales" --task-queue dagent --wait`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) > 0 {
				path = args[0]
			}
			return startRun(cmd, path, f)
		},
	}
	fl := cmd.Flags()
	f.conn.register(cmd)
	fl.StringVar(&f.queue, "task-queue", "", "Temporal task `QUEUE` of the workers")
	fl.StringVar(&f.runID, "run-id", "", "id of the run and of its workflow execution, part of every request's idempotency key: letters, digits and . _ : -, at most 128 bytes (default: a new one)")
	fl.BoolVar(&f.wait, "wait", false, "wait for the run to end or to wait for a review, and print its result")
	fl.DurationVar(&f.heartbeat, "heartbeat-timeout", temporal.DefaultHeartbeatTimeout, "how long an attempt's worker may send no heartbeat before the attempt is made again on another worker; attempts heartbeat every third of it when the workers' --heartbeat is longer")
	fl.BoolVar(&f.allowUnknown, "allow-unknown-keys", false, "run a plan even though some of its unknown keys look like misspelt known keys, without them")
	f.spec.Register(fl)
	fl.StringVar(&f.model, "model", "", "model of the planner and the plan's LLM agents (default the workers' $"+openai.EnvModel+")")
	fl.BoolVar(&f.brief, "brief", false, "give the planner short prompts, for models with a small context (local models of 2-4k tokens)")
	fl.IntVar(&f.fixes, "max-corrections", metaplanner.DefaultMaxCorrections, "times the planner may correct a plan the critic finds critical issues in (each resends the plan and the findings)")
	fl.Float64Var(&f.temperature, "temperature", 0, "sampling temperature of every LLM call, from 0 to 2 (default: the server's)")
	fl.BoolVar(&f.planOnly, "plan-only", false, "forbid the planner to answer the mission directly or to ask a question")
	formatFlag(cmd, &f.format)
	_ = cmd.MarkFlagRequired("task-queue")
	return cmd
}

func startRun(cmd *cobra.Command, path string, f startFlags) error {
	if path == "" && f.spec.Mission == "" {
		return errors.New("start needs a PLAN, or --mission MISSION to plan one first")
	}
	if f.runID != "" {
		if err := runner.CheckRunID(f.runID); err != nil {
			return fmt.Errorf("--run-id: %w", err)
		}
	}
	if f.heartbeat <= 0 {
		return fmt.Errorf("--heartbeat-timeout is %v; want more than 0", f.heartbeat)
	}
	if err := f.spec.Check(false); err != nil {
		return err
	}
	spec, err := f.spec.Spec()
	if err != nil {
		return err
	}
	spec.LLM = durable.LLMSpec{Model: strings.TrimSpace(f.model), Brief: f.brief, MaxCorrections: f.fixes, PlanOnly: f.planOnly,
		MaxTurns: spec.LLM.MaxTurns}
	if cmd.Flags().Changed("temperature") {
		if !(f.temperature >= 0 && f.temperature <= durable.MaxTemperature) {
			return fmt.Errorf("--temperature is %g; want 0 to %g", f.temperature, durable.MaxTemperature)
		}
		t := f.temperature
		spec.LLM.Temperature = &t
	}
	if path != "" {
		if spec.Plan, err = readPlan(cmd, path, f.allowUnknown); err != nil {
			return err
		}
		if err := f.spec.CheckPlan(spec.Plan); err != nil {
			return err
		}
	}
	if spec.Dir, err = os.Getwd(); err != nil {
		return err
	}
	runID := f.runID
	if runID == "" {
		runID = runner.NewRunID(time.Now())
	}
	c, err := f.conn.dial(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, stop := interruptible(cmd)
	defer stop()
	if err := spec.Check(); err != nil {
		return err
	}
	in := temporal.Input{RunID: runID, Spec: spec, HeartbeatTimeout: f.heartbeat}
	if _, err := temporal.StartWith(ctx, c, f.queue, in); err != nil {
		if errors.Is(err, temporal.ErrRunExists) {
			return fmt.Errorf("run %s exists already: give this run another --run-id, or see it with dagent-temporal show %s", runID, runID)
		}
		return cause(ctx, err)
	}
	if f.format == "text" || !f.wait {
		fmt.Fprintf(cmd.OutOrStdout(), "run %s\n", runID)
	}
	if !f.wait {
		return nil
	}
	return await(ctx, cmd, c, runID, f.format)
}

// readPlan reads and parses the plan at path ("-": standard input); its
// problems go to stderr, one a line. Keys the plan format does not know
// are reported, and a near miss of a known key refuses the plan, as dagent
// run refuses it, unless allowUnknown.
func readPlan(cmd *cobra.Command, path string, allowUnknown bool) (*plan.Plan, error) {
	var r io.Reader = cmd.InOrStdin()
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		r = file
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPlanBytes+1))
	if err != nil {
		return nil, fmt.Errorf("plan: %s: %w", path, err)
	}
	p, err := plan.Parse(data)
	if probs := plan.Problems(err); probs != nil {
		for _, prob := range probs {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", path, prob)
		}
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("plan: %s: %w", path, err)
	}
	if err := checkShape(cmd, path, p); err != nil {
		return nil, err
	}
	near := 0
	for _, u := range p.Unknown {
		where := ""
		if u.TaskID != "" {
			where = "task " + u.TaskID + ": "
		}
		if u.Suggestion == "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %sunknown key %q\n", path, prose.OneLine(where), u.Key)
			continue
		}
		near++
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %sunknown key %q; did you mean %q?\n", path, prose.OneLine(where), u.Key, u.Suggestion)
	}
	if near > 0 && !allowUnknown {
		msg := fmt.Sprintf("not started: %s near a known key, so the plan would not run as written; fix the plan, or pass --allow-unknown-keys",
			prose.Plural(near, "unknown key"))
		fmt.Fprintln(cmd.ErrOrStderr(), "dagent-temporal:", msg)
		return nil, climain.Reported{Code: exitFailed, Msg: msg}
	}
	return p, nil
}

// catalogCodes are the problems only the workers' catalog can tell: the
// workflow checks the plan against it when the run starts.
var catalogCodes = []plan.Code{plan.CodeUnknownAgent, plan.CodeUnknownTool, plan.CodeUndeclaredSlot, plan.CodeAgentIsWorker}

// checkShape checks p as far as it can be without the workers' catalog —
// dependencies, cycles, policies, predicates — taking every agent the
// plan does not define for a worker, and prints the problems found.
func checkShape(cmd *cobra.Command, path string, p *plan.Plan) error {
	var workers []string
	for _, t := range p.Tasks {
		if _, defined := p.Agents[t.Agent]; !defined && t.Agent != "" && t.Agent != plan.DefaultAgent {
			workers = append(workers, t.Agent)
		}
	}
	_, err := p.DAG(plan.WithWorkers(workers...))
	var shown []*plan.Problem
	for _, prob := range plan.Problems(err) {
		if !slices.Contains(catalogCodes, prob.Code) {
			shown = append(shown, prob)
		}
	}
	if len(shown) == 0 {
		return nil
	}
	for _, prob := range shown {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", path, prob)
	}
	return &plan.Error{Problems: shown}
}
