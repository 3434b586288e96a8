// Package runflags holds the command-line flags of a run that its
// [durable.Spec] keeps — schedule, concurrency, timeouts, the critic's
// gate, replanning and rounds, halts, budgets, the judge — so that every
// binary that starts runs reads them alike: their names, defaults, help,
// checks and conversion to a spec.
package runflags

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// Flags are the values of the run flags; [Flags.Register] binds them.
type Flags struct {
	Concurrency int
	Schedule    string
	Timeout     time.Duration
	Gate        string

	// Replanning.
	Replan            bool
	Mission           string
	MaxReplans        int
	MaxReplansPerTask int
	Cooldown          time.Duration
	HaltOn, NoHaltOn  []string
	MaxFailures       int
	MaxFlaky          int
	MaxGrowth         int

	// Rounds is the most rounds of a mission planned in rounds; 0 plans
	// none.
	Rounds int

	// Budgets.
	MaxTokens int
	MaxCalls  int
	Deadline  time.Duration

	// MaxTurns bounds the tool-calling turns of the plan's LLM agents.
	MaxTurns int

	// The judge of rubrics.
	Judge         bool
	JudgeModel    string
	JudgeMaxCalls int

	fs *pflag.FlagSet
}

// replanOnly are the flags that only replanning uses.
var replanOnly = []string{"max-replans", "max-replans-per-task", "replan-cooldown", "halt-on", "no-halt-on",
	"max-consecutive-failures", "max-flaky-streak", "max-plan-growth"}

// haltFlags are the flags of replanning that a run in rounds takes too:
// its halts.
var haltFlags = []string{"halt-on", "no-halt-on", "max-consecutive-failures", "max-flaky-streak"}

// Register binds f to its flags in fs, with their defaults and help.
func (f *Flags) Register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.IntVar(&f.Concurrency, "concurrency", runner.DefaultConcurrency, "most tasks running at once")
	fs.StringVar(&f.Schedule, "schedule", "phased", "phased (a phase starts when the one before settled) or eager (a task starts when its own dependencies settled)")
	fs.DurationVar(&f.Timeout, "timeout", runner.DefaultTaskTimeout, "timeout of each attempt of a task that sets none")
	fs.BoolVar(&f.Replan, "replan", false, "repair the plan with the meta-planner when a run asks for a new plan")
	fs.StringVar(&f.Mission, "mission", "", "the mission: without PLAN, plan it first; with PLAN, what replans work toward (default the plan's mission); implies --replan")
	fs.IntVar(&f.MaxReplans, "max-replans", executor.DefaultMaxReplans, "most replans in all")
	fs.IntVar(&f.MaxReplansPerTask, "max-replans-per-task", executor.DefaultMaxReplansPerTask, "most replans one task may cause")
	fs.DurationVar(&f.Cooldown, "replan-cooldown", 0, "wait this long before each replan")
	fs.StringSliceVar(&f.HaltOn, "halt-on", nil, "halt instead of replanning when a task fails with this class (besides tool_refused and precondition_failed); repeatable")
	fs.StringSliceVar(&f.NoHaltOn, "no-halt-on", nil, "replan a failure of this class that halts by default (tool_refused, precondition_failed); repeatable")
	fs.IntVar(&f.MaxFailures, "max-consecutive-failures", executor.DefaultMaxConsecutiveFailures, "halt after this many failed executions in a row that finish no new task")
	fs.IntVar(&f.MaxFlaky, "max-flaky-streak", executor.DefaultMaxFlakyStreak, "halt a failed run after this many tasks in a row passed only on a retry after an error or a timeout; 0 is no limit")
	fs.IntVar(&f.MaxGrowth, "max-plan-growth", executor.DefaultMaxPlanGrowth, "halt at a repair plan with more than this many tasks beyond the first plan's; 0 is no limit")
	fs.IntVar(&f.MaxTurns, "max-turns", llmagent.DefaultMaxTurns, "most tool-calling turns of each attempt of the plan's LLM agents")
	fs.IntVar(&f.Rounds, "rounds", 0, "plan the mission in rounds, at most this many: the planner writes the tasks it can justify, sees their results, and goes on, delivers or gives up; replaces --replan")
	fs.IntVar(&f.MaxTokens, "max-tokens", 0, "most LLM tokens (prompt and completion) of the command; 0 is no limit")
	fs.IntVar(&f.MaxCalls, "max-llm-calls", 0, "most LLM calls of the command; 0 is no limit")
	fs.DurationVar(&f.Deadline, "deadline", 0, "most wall time of the command, planning and replanning included; 0 is no limit")
	fs.BoolVar(&f.Judge, "judge", false, "have an LLM judge each task's rubric once its predicate passes")
	fs.StringVar(&f.JudgeModel, "judge-model", "", "model of the judge (default the run's); implies --judge")
	fs.IntVar(&f.JudgeMaxCalls, "judge-max-calls", 0, "most LLM calls of the judge; 0 is no limit of its own; implies --judge")
	fs.StringVar(&f.Gate, "gate", string(critic.GateCritical),
		"refuse a plan (and each repair) with an issue of this severity or worse: critical (a plan that cannot run as written), warning, info or never")
}

// Replanning reports whether the run goes through the executor's
// replanning: --replan or --mission, and no --rounds.
func (f *Flags) Replanning() bool { return f.Rounds == 0 && (f.Replan || f.Mission != "") }

// changed reports whether the flag name was set on the command line.
func (f *Flags) changed(name string) bool { return f.fs != nil && f.fs.Changed(name) }

// Check rejects flags that do not go together or are out of range;
// initial says whether the run starts from earlier results, which
// neither replanning nor rounds take.
func (f *Flags) Check(initial bool) error {
	if f.Mission != "" && strings.TrimSpace(f.Mission) == "" {
		return errors.New("the mission is empty")
	}
	switch {
	case f.Rounds < 0:
		return errors.New("--rounds must not be negative")
	case f.Rounds > 0 && f.Replan:
		return errors.New("--rounds and --replan cannot be combined: a run in rounds does not replan")
	case f.Rounds > 0 && initial:
		return errors.New("--initial-results cannot be combined with --rounds: a run in rounds keeps its own results")
	}
	if !f.Replanning() {
		for _, name := range replanOnly {
			if f.Rounds > 0 && slices.Contains(haltFlags, name) {
				continue
			}
			if f.Rounds > 0 && f.changed(name) {
				return fmt.Errorf("--%s cannot be combined with --rounds: a run in rounds makes no repair", name)
			}
			if f.changed(name) {
				return fmt.Errorf("--%s needs --replan or --mission", name)
			}
		}
	} else if initial {
		return errors.New("--initial-results cannot be combined with --replan or --mission: replanning keeps its own results")
	}
	switch {
	case f.MaxReplans < 0, f.MaxReplansPerTask < 0:
		return errors.New("--max-replans and --max-replans-per-task must not be negative")
	case f.MaxTokens < 0, f.MaxCalls < 0:
		return errors.New("--max-tokens and --max-llm-calls must not be negative")
	case f.Deadline < 0, f.Cooldown < 0:
		return errors.New("--deadline and --replan-cooldown must not be negative")
	case f.MaxFailures < 1:
		return fmt.Errorf("--max-consecutive-failures is %d; want 1 or more", f.MaxFailures)
	case f.MaxFlaky < 0, f.MaxGrowth < 0:
		return errors.New("--max-flaky-streak and --max-plan-growth must not be negative (0 is no limit)")
	case f.MaxTurns < 1:
		return fmt.Errorf("--max-turns is %d; want 1 or more", f.MaxTurns)
	case f.JudgeMaxCalls < 0:
		return errors.New("--judge-max-calls must not be negative")
	}
	for _, c := range slices.Concat(f.HaltOn, f.NoHaltOn) {
		if !runner.Class(c).Valid() {
			return fmt.Errorf("bad class %q for --halt-on or --no-halt-on: a class is a lower-case identifier, such as tool_refused, precondition_failed or agent_error", c)
		}
	}
	for _, c := range f.HaltOn {
		if slices.Contains(f.NoHaltOn, c) {
			return fmt.Errorf("--halt-on and --no-halt-on both name %q", c)
		}
	}
	return nil
}

// Spec is the spec of the run the flags describe: its gate, mission,
// runner settings, budget, judge, rounds and replanning, and the LLM's
// turns when --max-turns is set. The caller adds the plan (then checks it
// with [Flags.CheckPlan]), the catalog, the directory and the rest of
// the LLM's settings.
func (f *Flags) Spec() (durable.Spec, error) {
	schedule, err := runner.ParseSchedule(f.Schedule)
	if err != nil {
		return durable.Spec{}, err
	}
	gate, err := critic.ParseGate(f.Gate)
	if err != nil || f.Gate == "" {
		return durable.Spec{}, fmt.Errorf("unknown --gate %q: use critical, warning, info or never", f.Gate)
	}
	spec := durable.Spec{
		Gate:    gate,
		Mission: f.Mission,
		Runner:  durable.RunnerSpec{Concurrency: f.Concurrency, Schedule: schedule, TaskTimeout: f.Timeout},
		Budget:  executor.Budget{MaxTokens: f.MaxTokens, MaxCalls: f.MaxCalls, MaxDuration: f.Deadline},
	}
	if f.changed("max-turns") {
		spec.LLM.MaxTurns = f.MaxTurns
	}
	if f.Judge || f.JudgeModel != "" || f.JudgeMaxCalls > 0 {
		spec.Judge = &durable.JudgeSpec{Model: strings.TrimSpace(f.JudgeModel), MaxCalls: f.JudgeMaxCalls}
	}
	if f.Rounds > 0 {
		spec.Rounds = f.Rounds
		// A run in rounds makes no repair; its halts are those of a run
		// that replans, kept with it.
		spec.Replan = &durable.ReplanSpec{HaltOn: classes(f.HaltOn), NoHaltOn: classes(f.NoHaltOn),
			MaxConsecutiveFailures: f.MaxFailures, MaxFlakyStreak: f.MaxFlaky}
	}
	if f.Replanning() {
		spec.Replan = &durable.ReplanSpec{MaxReplans: f.MaxReplans, MaxReplansPerTask: f.MaxReplansPerTask, Cooldown: f.Cooldown,
			HaltOn: classes(f.HaltOn), NoHaltOn: classes(f.NoHaltOn),
			MaxConsecutiveFailures: f.MaxFailures, MaxFlakyStreak: f.MaxFlaky, MaxPlanGrowth: f.MaxGrowth}
	}
	return spec, nil
}

// CheckPlan rejects a run in rounds or that replans whose plan p has no
// mission when no --mission gives one: nothing says what to work toward.
func (f *Flags) CheckPlan(p *plan.Plan) error {
	if p == nil || f.Mission != "" || strings.TrimSpace(p.Mission) != "" {
		return nil
	}
	switch {
	case f.Rounds > 0:
		return errors.New("--rounds needs a mission: the plan has none; pass --mission MISSION")
	case f.Replanning():
		return errors.New("--replan needs a mission: the plan has none; pass --mission MISSION")
	}
	return nil
}

// classes are the classes named by flag values.
func classes(names []string) []runner.Class {
	var out []runner.Class
	for _, n := range names {
		out = append(out, runner.Class(n))
	}
	return out
}
