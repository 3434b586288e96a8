package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// SpecVersion is the version of the JSON form of a [Spec] this package
// writes; it reads that version and the ones before it.
const SpecVersion = 1

// MaxTemperature is the highest sampling temperature a spec may set.
const MaxTemperature = 2.0

// ErrSpecVersion: a spec's JSON form has a version this package does not
// read — written by a newer dagent, or not a version at all.
var ErrSpecVersion = errors.New("unsupported spec version")

// Spec is everything a run needs to start, and to start again in another
// process or on another machine: what it runs, on which catalog, with
// which settings. The journal keeps it with the run: the plan once, as
// the run's first plan version, and the rest as JSON ([Spec.MarshalJSON]
// of the spec without its plan); what the run did since — the repair
// plans it adopted, the results of its tasks — is in the journal beside
// it. [Load] reads it back whole, as does a journal of an earlier dagent,
// whose spec holds the plan.
//
// The zero Spec is no run: it has neither a plan nor a mission. A Spec with
// a plan and nothing else runs the plan with the runner's defaults.
type Spec struct {
	// Plan is the plan the run starts with; nil to start from Mission,
	// which the planner plans first.
	Plan *plan.Plan
	// Mission is what the run is for, and what its repairs work toward.
	// Empty: the plan's mission.
	Mission string
	// Catalog names the host's catalog of workers and tools the plan runs
	// on — for the dagent command, the path of a registry file. The journal
	// keeps the name, never the catalog: a host resolves it when the run
	// starts or resumes ([WithCatalog]). Empty: no catalog.
	Catalog string
	// CatalogDigest is the digest of the catalog the run started on, as
	// its [CatalogFunc] gave it: [Start] records it, and [Resume] and
	// [Replay] refuse a catalog of another digest. Empty: none recorded.
	CatalogDigest string
	// Dir is the working directory the run started in, for a host whose
	// workers depend on it.
	Dir string
	// Runner holds the runner's settings.
	Runner RunnerSpec
	// Replan, when set, repairs the plan with the planner when a run asks
	// for a new plan. Without it, such a run ends replan_required.
	Replan *ReplanSpec
	// Rounds, when above 0, plans the mission in rounds, at most Rounds of
	// them ([executor.WithRounds]): the planner writes the tasks of a round,
	// sees their results, and goes on, delivers or gives up. Each round is
	// a plan version of the journal, so that a run resumes at the round it
	// reached. A run in rounds makes no repair: its Replan, when set, holds
	// only the halts (HaltOn, NoHaltOn, MaxConsecutiveFailures,
	// MaxFlakyStreak); nil is the executor's defaults.
	Rounds int
	// Budget bounds the LLM calls and the wall time of the run, planning
	// and repairs included.
	Budget executor.Budget
	// LLM holds the settings of the planner and of the plan's LLM agents.
	LLM LLMSpec
	// Gate is the critic's gate: a plan, the first and each repair, with
	// an issue at its severity or worse is refused before it runs
	// ([executor.WithGate]). Kept with the run, so that a resumed run's
	// repairs meet the gate its first plan met. Empty:
	// [critic.GateCritical].
	Gate critic.Gate
	// Judge, when set, has an LLM judge the rubric of every task that has
	// one, once its predicate passes ([runner.WithJudge]). Nil: rubrics
	// are not checked.
	Judge *JudgeSpec
	// Memory is the summary of earlier runs the planner of the mission
	// was shown ([WithMemory]). The run sets it, so that the journal keeps
	// what the planner read and a replay asks it the same; a host leaves
	// it nil.
	Memory *metaplanner.Memory
}

// JudgeSpec configures the LLM judge of a run's rubrics. The judge asks
// the run's LLM, so that its calls count in the run's [Spec.Budget] and
// usage, and are journaled with the run's other exchanges.
type JudgeSpec struct {
	// Model names the judge's model; empty: the run's.
	Model string
	// MaxCalls bounds the judge's calls, within the run's budget; 0 is no
	// bound of its own.
	MaxCalls int
}

// RunnerSpec is how a plan runs; zero fields are the runner's defaults.
type RunnerSpec struct {
	// Concurrency bounds the tasks running at once; 0 is
	// [runner.DefaultConcurrency].
	Concurrency int
	// Schedule is [runner.Phased] or [runner.Eager].
	Schedule runner.Schedule
	// TaskTimeout bounds each attempt of a task that sets no timeout; 0 is
	// [runner.DefaultTaskTimeout].
	TaskTimeout time.Duration
}

// ReplanSpec bounds the repairs of a run; [ReplanDefaults] writes out the
// executor's defaults.
type ReplanSpec struct {
	MaxReplans        int
	MaxReplansPerTask int
	// Cooldown is waited before each repair.
	Cooldown time.Duration
	// HaltOn names the failure classes that halt the run instead of going
	// to the planner besides [executor.DefaultHaltClasses], and NoHaltOn
	// those that do not, default ones included ([executor.WithHaltOn],
	// [executor.WithoutHaltOn]). Both empty: the executor's defaults, which
	// is how a spec written before they could be set reads.
	HaltOn, NoHaltOn []runner.Class
	// MaxConsecutiveFailures bounds the failed executions in a row that
	// finish no new task ([executor.WithMaxConsecutiveFailures]); 0 is
	// [executor.DefaultMaxConsecutiveFailures].
	MaxConsecutiveFailures int
	// MaxFlakyStreak bounds the tasks in a row that pass only on a retry
	// after an error or a timeout, before a failure
	// ([executor.WithMaxFlakyStreak]); 0 turns the halt off, as it is in
	// a run journaled before the halt existed.
	MaxFlakyStreak int
	// MaxPlanGrowth bounds the tasks a repair plan may add to the run's
	// first plan ([executor.WithMaxPlanGrowth]); 0 turns the halt off, as
	// it is in a run journaled before the halt existed.
	MaxPlanGrowth int
}

// ReplanDefaults are the executor's limits of a run that replans.
func ReplanDefaults() *ReplanSpec {
	return &ReplanSpec{
		MaxReplans: executor.DefaultMaxReplans, MaxReplansPerTask: executor.DefaultMaxReplansPerTask,
		MaxConsecutiveFailures: executor.DefaultMaxConsecutiveFailures,
		MaxFlakyStreak:         executor.DefaultMaxFlakyStreak, MaxPlanGrowth: executor.DefaultMaxPlanGrowth,
	}
}

// options are the executor's options of the limits of r.
func (r *ReplanSpec) options() []executor.Option {
	return append([]executor.Option{
		executor.WithMaxReplans(r.MaxReplans),
		executor.WithMaxReplansPerTask(r.MaxReplansPerTask),
		executor.WithCooldown(r.Cooldown),
		executor.WithMaxPlanGrowth(r.MaxPlanGrowth),
	}, r.haltOptions()...)
}

// haltOptions are the options of r's halts, which a run in rounds has too.
func (r *ReplanSpec) haltOptions() []executor.Option {
	opts := []executor.Option{
		executor.WithMaxFlakyStreak(r.MaxFlakyStreak),
		executor.WithHaltOn(r.HaltOn...),
		executor.WithoutHaltOn(r.NoHaltOn...),
	}
	if r.MaxConsecutiveFailures > 0 {
		opts = append(opts, executor.WithMaxConsecutiveFailures(r.MaxConsecutiveFailures))
	}
	return opts
}

// LLMSpec holds the settings of the run's LLM calls.
type LLMSpec struct {
	// Model names the model of the planner and of the plan's LLM agents;
	// empty: the client's default.
	Model string
	// Brief gives the planner short prompts, for models with a small
	// context.
	Brief bool
	// MaxCorrections bounds the corrections the planner may make to a plan
	// the critic finds critical issues in; 0 is none. The dagent command
	// starts runs with [metaplanner.DefaultMaxCorrections].
	MaxCorrections int
	// Temperature, when set, is the sampling temperature of the planner
	// and of the plan's LLM agents, from 0 to 2; nil: the server's
	// default.
	Temperature *float64
	// MaxTurns bounds the tool-calling turns of each attempt of a plan's
	// LLM agent ([github.com/dagent-dev/dagent/llmagent.Agent]); 0 is
	// [github.com/dagent-dev/dagent/llmagent.DefaultMaxTurns].
	MaxTurns int
	// PlanOnly forbids the planner the direct answer and the question for
	// the user ([metaplanner.WithForbiddenRoutes]), for runs nobody
	// attends: the mission is planned or the run fails.
	PlanOnly bool
}

// Check reports what makes s unable to run, naming the field: no plan and
// no mission, negative limits, a replanning run with no mission.
func (s *Spec) Check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("spec: "+format, args...)) }
	mission := s.Mission
	if mission == "" && s.Plan != nil {
		mission = s.Plan.Mission
	}
	switch {
	case s.Plan == nil && strings.TrimSpace(s.Mission) == "":
		bad("no plan and no mission: a run needs one of them")
	case s.Replan != nil && strings.TrimSpace(mission) == "":
		bad("replan: a run that replans needs a mission, and neither the spec nor its plan has one")
	case s.Rounds > 0 && strings.TrimSpace(mission) == "":
		bad("rounds: a run in rounds needs a mission, and neither the spec nor its plan has one")
	}
	switch {
	case s.Rounds < 0:
		bad("rounds is %d; want 0 (no rounds) or more", s.Rounds)
	case s.Rounds > 0 && s.Replan != nil && (s.Replan.MaxReplans != 0 || s.Replan.MaxReplansPerTask != 0 || s.Replan.Cooldown != 0 || s.Replan.MaxPlanGrowth != 0):
		bad("rounds and replan: a run in rounds makes no repair; its replan holds only the halts (halt_on, no_halt_on, max_consecutive_failures, max_flaky_streak)")
	}
	if s.Runner.Concurrency < 0 {
		bad("runner.concurrency is %d; want 0 (the default) or more", s.Runner.Concurrency)
	}
	if s.Runner.Schedule != runner.Phased && s.Runner.Schedule != runner.Eager {
		bad("runner.schedule is %d; want runner.Phased or runner.Eager", s.Runner.Schedule)
	}
	if s.Runner.TaskTimeout < 0 {
		bad("runner.task_timeout is %s; want 0 (the default) or more", s.Runner.TaskTimeout)
	}
	if r := s.Replan; r != nil && (r.MaxReplans < 0 || r.MaxReplansPerTask < 0 || r.Cooldown < 0) {
		bad("replan: max_replans, max_replans_per_task and cooldown must not be negative")
	}
	if r := s.Replan; r != nil {
		if err := checkHalts(r.HaltOn, r.NoHaltOn); err != nil {
			bad("replan: %v", err)
		}
	}
	if r := s.Replan; r != nil && (r.MaxConsecutiveFailures < 0 || r.MaxFlakyStreak < 0 || r.MaxPlanGrowth < 0) {
		bad("replan: max_consecutive_failures, max_flaky_streak and max_plan_growth must not be negative")
	}
	if b := s.Budget; b.MaxTokens < 0 || b.MaxCalls < 0 || b.MaxDuration < 0 {
		bad("budget: max_tokens, max_llm_calls and deadline must not be negative")
	}
	if s.LLM.MaxCorrections < 0 {
		bad("llm.max_corrections is %d; want 0 or more", s.LLM.MaxCorrections)
	}
	if t := s.LLM.Temperature; t != nil && !(*t >= 0 && *t <= MaxTemperature) {
		bad("llm.temperature is %g; want 0 to %g", *t, MaxTemperature)
	}
	if s.LLM.MaxTurns < 0 {
		bad("llm.max_turns is %d; want 0 (the default) or more", s.LLM.MaxTurns)
	}
	if s.Gate != "" {
		if _, err := critic.ParseGate(string(s.Gate)); err != nil {
			bad("gate: %v", err)
		}
	}
	if s.Judge != nil && s.Judge.MaxCalls < 0 {
		bad("judge.max_calls is %d; want 0 (no bound of its own) or more", s.Judge.MaxCalls)
	}
	return errors.Join(errs...)
}

// checkHalts reports a class of on or off that is not a valid class, or
// one that both name.
func checkHalts(on, off []runner.Class) error {
	for _, c := range slices.Concat(on, off) {
		if !c.Valid() {
			return fmt.Errorf("%w %q: a class is a lower-case identifier, such as %s", ErrHaltClass, c, runner.ClassToolRefused)
		}
	}
	for _, c := range on {
		if slices.Contains(off, c) {
			return fmt.Errorf("%w %q: both halt_on and no_halt_on name it", ErrHaltClass, c)
		}
	}
	return nil
}

// ErrHaltClass is matched by the error of a spec whose halt_on or
// no_halt_on holds a class that is not one, or a class both name.
var ErrHaltClass = errors.New("bad halt class")

// mission is what the run works toward: the spec's, else the plan's.
func (s *Spec) mission() string {
	if s.Mission == "" && s.Plan != nil {
		return s.Plan.Mission
	}
	return s.Mission
}

// specDoc is the JSON form of a Spec. The order of its fields is the
// order of the keys in the document.
type specDoc struct {
	Version int                 `json:"version"`
	Plan    json.RawMessage     `json:"plan"`
	Mission string              `json:"mission,omitempty"`
	Catalog string              `json:"catalog,omitempty"`
	Digest  string              `json:"catalog_digest,omitempty"`
	Dir     string              `json:"dir,omitempty"`
	Runner  runnerDoc           `json:"runner"`
	Replan  *replanDoc          `json:"replan"`
	Rounds  int                 `json:"rounds,omitempty"`
	Budget  budgetDoc           `json:"budget"`
	LLM     llmDoc              `json:"llm"`
	Gate    string              `json:"gate,omitempty"`
	Judge   *judgeDoc           `json:"judge,omitempty"`
	Memory  *metaplanner.Memory `json:"memory,omitempty"`
}

type judgeDoc struct {
	Model    string `json:"model,omitempty"`
	MaxCalls int    `json:"max_calls"`
}

type runnerDoc struct {
	Concurrency int      `json:"concurrency"`
	Schedule    string   `json:"schedule"`
	TaskTimeout duration `json:"task_timeout"`
}

type replanDoc struct {
	MaxReplans             int      `json:"max_replans"`
	MaxReplansPerTask      int      `json:"max_replans_per_task"`
	Cooldown               duration `json:"cooldown"`
	HaltOn                 []string `json:"halt_on,omitempty"`
	NoHaltOn               []string `json:"no_halt_on,omitempty"`
	MaxConsecutiveFailures int      `json:"max_consecutive_failures,omitempty"`
	MaxFlakyStreak         int      `json:"max_flaky_streak,omitempty"`
	MaxPlanGrowth          int      `json:"max_plan_growth,omitempty"`
}

type budgetDoc struct {
	MaxTokens int      `json:"max_tokens"`
	MaxCalls  int      `json:"max_llm_calls"`
	Deadline  duration `json:"deadline"`
}

type llmDoc struct {
	Model          string   `json:"model,omitempty"`
	Brief          bool     `json:"brief,omitempty"`
	MaxCorrections int      `json:"max_corrections"`
	Temperature    *float64 `json:"temperature,omitempty"`
	MaxTurns       int      `json:"max_turns,omitempty"`
	PlanOnly       bool     `json:"plan_only,omitempty"`
}

// duration is a time.Duration written as Go writes one: "1m30s".
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *duration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("want a duration such as \"30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// MarshalJSON writes s as a versioned document:
//
//	{"version": 1, "plan": the canonical plan or null, "mission",
//	 "catalog", "catalog_digest", "dir",
//	 "runner": {"concurrency", "schedule": "phased" or "eager", "task_timeout"},
//	 "replan": null or {"max_replans", "max_replans_per_task", "cooldown",
//	            "halt_on", "no_halt_on", "max_consecutive_failures",
//	            "max_flaky_streak", "max_plan_growth"},
//	 "rounds": the round budget of a run in rounds,
//	 "budget": {"max_tokens", "max_llm_calls", "deadline"},
//	 "llm": {"model", "brief", "max_corrections", "temperature", "max_turns",
//	         "plan_only"},
//	 "gate": "never", "critical", "warning" or "info",
//	 "judge": {"model", "max_calls"},
//	 "memory": {"runs", "agents", "tools"}}
//
// Durations are written as Go writes them ("2m0s"); "mission", "catalog",
// "catalog_digest", "dir", "rounds", "model", "brief", "gate",
// "temperature", "max_turns", "plan_only", "halt_on", "no_halt_on", the
// three last limits of "replan" and "judge" are left out when empty
// (zero, false), so that a document without one reads as before.
func (s Spec) MarshalJSON() ([]byte, error) {
	doc := specDoc{
		Version: SpecVersion, Plan: json.RawMessage("null"), Mission: s.Mission, Catalog: s.Catalog, Digest: s.CatalogDigest, Dir: s.Dir, Rounds: s.Rounds,
		Runner: runnerDoc{Concurrency: s.Runner.Concurrency, Schedule: s.Runner.Schedule.String(), TaskTimeout: duration(s.Runner.TaskTimeout)},
		Budget: budgetDoc{MaxTokens: s.Budget.MaxTokens, MaxCalls: s.Budget.MaxCalls, Deadline: duration(s.Budget.MaxDuration)},
		LLM: llmDoc{Model: s.LLM.Model, Brief: s.LLM.Brief, MaxCorrections: s.LLM.MaxCorrections,
			Temperature: s.LLM.Temperature, MaxTurns: s.LLM.MaxTurns, PlanOnly: s.LLM.PlanOnly},
		Gate: string(s.Gate),
	}
	if s.Plan != nil {
		raw, err := s.Plan.Canonical()
		if err != nil {
			return nil, fmt.Errorf("spec: plan: %w", err)
		}
		doc.Plan = raw
	}
	if r := s.Replan; r != nil {
		doc.Replan = &replanDoc{MaxReplans: r.MaxReplans, MaxReplansPerTask: r.MaxReplansPerTask, Cooldown: duration(r.Cooldown),
			HaltOn: classNames(r.HaltOn), NoHaltOn: classNames(r.NoHaltOn),
			MaxConsecutiveFailures: r.MaxConsecutiveFailures, MaxFlakyStreak: r.MaxFlakyStreak, MaxPlanGrowth: r.MaxPlanGrowth}
	}
	if j := s.Judge; j != nil {
		doc.Judge = &judgeDoc{Model: j.Model, MaxCalls: j.MaxCalls}
	}
	doc.Memory = s.Memory
	return jsonv.Marshal(doc)
}

// UnmarshalJSON reads s from the form [Spec.MarshalJSON] writes, strictly:
// an unknown key is an error that names it, a version above
// [SpecVersion] an error matching [ErrSpecVersion]. The plan is read by
// [plan.Parse]; it is checked when the run starts, against the catalog.
//
// A document without a "version" is the settings of a run journaled by a
// dagent before versioned specs, which this reads too.
func (s *Spec) UnmarshalJSON(data []byte) error {
	var head struct {
		Version *json.Number `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	if head.Version == nil {
		return s.unmarshalLegacy(data)
	}
	if n, err := head.Version.Int64(); err != nil || n < 1 || n > SpecVersion {
		return fmt.Errorf("spec: %w %s: this dagent reads versions up to %d", ErrSpecVersion, *head.Version, SpecVersion)
	}
	var doc specDoc
	if err := strict(data, &doc); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	out := Spec{Mission: doc.Mission, Catalog: doc.Catalog, CatalogDigest: doc.Digest, Dir: doc.Dir, Rounds: doc.Rounds,
		Runner: RunnerSpec{Concurrency: doc.Runner.Concurrency, TaskTimeout: time.Duration(doc.Runner.TaskTimeout)},
		Budget: executor.Budget{MaxTokens: doc.Budget.MaxTokens, MaxCalls: doc.Budget.MaxCalls, MaxDuration: time.Duration(doc.Budget.Deadline)},
		LLM: LLMSpec{Model: doc.LLM.Model, Brief: doc.LLM.Brief, MaxCorrections: doc.LLM.MaxCorrections,
			Temperature: doc.LLM.Temperature, MaxTurns: doc.LLM.MaxTurns, PlanOnly: doc.LLM.PlanOnly},
	}
	if doc.Runner.Schedule != "" {
		sched, err := runner.ParseSchedule(doc.Runner.Schedule)
		if err != nil {
			return fmt.Errorf("spec: runner.schedule: %w", err)
		}
		out.Runner.Schedule = sched
	}
	if doc.Gate != "" {
		// A document without a gate was written before gates could be
		// set, and keeps the critical gate those runs had.
		g, err := critic.ParseGate(doc.Gate)
		if err != nil {
			return fmt.Errorf("spec: gate: %w", err)
		}
		out.Gate = g
	}
	if r := doc.Replan; r != nil {
		out.Replan = &ReplanSpec{MaxReplans: r.MaxReplans, MaxReplansPerTask: r.MaxReplansPerTask, Cooldown: time.Duration(r.Cooldown),
			HaltOn: classes(r.HaltOn), NoHaltOn: classes(r.NoHaltOn),
			MaxConsecutiveFailures: r.MaxConsecutiveFailures, MaxFlakyStreak: r.MaxFlakyStreak, MaxPlanGrowth: r.MaxPlanGrowth}
		if err := checkHalts(out.Replan.HaltOn, out.Replan.NoHaltOn); err != nil {
			return fmt.Errorf("spec: replan: %w", err)
		}
	}
	if j := doc.Judge; j != nil {
		out.Judge = &JudgeSpec{Model: j.Model, MaxCalls: j.MaxCalls}
	}
	out.Memory = doc.Memory
	if len(doc.Plan) > 0 && string(doc.Plan) != "null" {
		p, err := plan.Parse(doc.Plan)
		if err != nil {
			return fmt.Errorf("spec: plan: %w", err)
		}
		out.Plan = p
	}
	*s = out
	return nil
}

// classNames are the names of classes; nil for none.
func classNames(cs []runner.Class) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c))
	}
	return out
}

// classes are the classes of names; nil for none.
func classes(names []string) []runner.Class {
	var out []runner.Class
	for _, n := range names {
		out = append(out, runner.Class(n))
	}
	return out
}

// legacyDoc is the form of a run's settings before versioned specs: the
// command's flags, durations as Go writes them, the plan kept apart.
type legacyDoc struct {
	Registry          string `json:"registry"`
	Dir               string `json:"dir"`
	Concurrency       int    `json:"concurrency"`
	Schedule          string `json:"schedule"`
	Timeout           string `json:"timeout"`
	Replan            bool   `json:"replan"`
	Mission           string `json:"mission"`
	MaxReplans        int    `json:"max_replans"`
	MaxReplansPerTask int    `json:"max_replans_per_task"`
	Cooldown          string `json:"replan_cooldown"`
	MaxTokens         int    `json:"max_tokens"`
	MaxCalls          int    `json:"max_llm_calls"`
	Deadline          string `json:"deadline"`
	Model             string `json:"model"`
	Brief             bool   `json:"brief"`
	MaxCorrections    *int   `json:"max_corrections"`
}

func (s *Spec) unmarshalLegacy(data []byte) error {
	var doc legacyDoc
	if err := strict(data, &doc); err != nil {
		return fmt.Errorf("spec (unversioned): %w", err)
	}
	out := Spec{Mission: doc.Mission, Catalog: doc.Registry, Dir: doc.Dir,
		Runner: RunnerSpec{Concurrency: doc.Concurrency},
		Budget: executor.Budget{MaxTokens: doc.MaxTokens, MaxCalls: doc.MaxCalls},
		// The command left out a count of corrections it did not change.
		LLM: LLMSpec{Model: doc.Model, Brief: doc.Brief, MaxCorrections: metaplanner.DefaultMaxCorrections},
	}
	if doc.MaxCorrections != nil {
		out.LLM.MaxCorrections = *doc.MaxCorrections
	}
	if doc.Schedule != "" {
		sched, err := runner.ParseSchedule(doc.Schedule)
		if err != nil {
			return fmt.Errorf("spec (unversioned): schedule: %w", err)
		}
		out.Runner.Schedule = sched
	}
	var errs []error
	parse := func(field, v string, d *time.Duration) {
		if v == "" {
			return
		}
		var err error
		if *d, err = time.ParseDuration(v); err != nil {
			errs = append(errs, fmt.Errorf("spec (unversioned): %s: %w", field, err))
		}
	}
	parse("timeout", doc.Timeout, &out.Runner.TaskTimeout)
	parse("deadline", doc.Deadline, &out.Budget.MaxDuration)
	if doc.Replan {
		out.Replan = &ReplanSpec{MaxReplans: doc.MaxReplans, MaxReplansPerTask: doc.MaxReplansPerTask}
		parse("replan_cooldown", doc.Cooldown, &out.Replan.Cooldown)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	*s = out
	return nil
}

// strict decodes one JSON object into v, refusing unknown keys and
// trailing data.
func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return jsonv.ErrTrailing
	}
	return nil
}
