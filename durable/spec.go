package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// ReplanSpec bounds the repairs of a run; zero fields are the executor's
// defaults, as [ReplanDefaults] writes them out.
type ReplanSpec struct {
	MaxReplans        int
	MaxReplansPerTask int
	// Cooldown is waited before each repair.
	Cooldown time.Duration
}

// ReplanDefaults are the executor's limits of a run that replans.
func ReplanDefaults() *ReplanSpec {
	return &ReplanSpec{MaxReplans: executor.DefaultMaxReplans, MaxReplansPerTask: executor.DefaultMaxReplansPerTask}
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
	if b := s.Budget; b.MaxTokens < 0 || b.MaxCalls < 0 || b.MaxDuration < 0 {
		bad("budget: max_tokens, max_llm_calls and deadline must not be negative")
	}
	if s.LLM.MaxCorrections < 0 {
		bad("llm.max_corrections is %d; want 0 or more", s.LLM.MaxCorrections)
	}
	if s.Gate != "" {
		if _, err := critic.ParseGate(string(s.Gate)); err != nil {
			bad("gate: %v", err)
		}
	}
	return errors.Join(errs...)
}

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
	Version int             `json:"version"`
	Plan    json.RawMessage `json:"plan"`
	Mission string          `json:"mission,omitempty"`
	Catalog string          `json:"catalog,omitempty"`
	Digest  string          `json:"catalog_digest,omitempty"`
	Dir     string          `json:"dir,omitempty"`
	Runner  runnerDoc       `json:"runner"`
	Replan  *replanDoc      `json:"replan"`
	Budget  budgetDoc       `json:"budget"`
	LLM     llmDoc          `json:"llm"`
	Gate    string          `json:"gate,omitempty"`
}

type runnerDoc struct {
	Concurrency int      `json:"concurrency"`
	Schedule    string   `json:"schedule"`
	TaskTimeout duration `json:"task_timeout"`
}

type replanDoc struct {
	MaxReplans        int      `json:"max_replans"`
	MaxReplansPerTask int      `json:"max_replans_per_task"`
	Cooldown          duration `json:"cooldown"`
}

type budgetDoc struct {
	MaxTokens int      `json:"max_tokens"`
	MaxCalls  int      `json:"max_llm_calls"`
	Deadline  duration `json:"deadline"`
}

type llmDoc struct {
	Model          string `json:"model,omitempty"`
	Brief          bool   `json:"brief,omitempty"`
	MaxCorrections int    `json:"max_corrections"`
	PlanOnly       bool   `json:"plan_only,omitempty"`
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
//	 "replan": null or {"max_replans", "max_replans_per_task", "cooldown"},
//	 "budget": {"max_tokens", "max_llm_calls", "deadline"},
//	 "llm": {"model", "brief", "max_corrections"},
//	 "gate": "never", "critical", "warning" or "info"}
//
// Durations are written as Go writes them ("2m0s"); "mission", "catalog",
// "catalog_digest", "dir", "model", "brief" and "gate" are left out when
// empty, so that a document without one reads as before.
func (s Spec) MarshalJSON() ([]byte, error) {
	doc := specDoc{
		Version: SpecVersion, Plan: json.RawMessage("null"), Mission: s.Mission, Catalog: s.Catalog, Digest: s.CatalogDigest, Dir: s.Dir,
		Runner: runnerDoc{Concurrency: s.Runner.Concurrency, Schedule: s.Runner.Schedule.String(), TaskTimeout: duration(s.Runner.TaskTimeout)},
		Budget: budgetDoc{MaxTokens: s.Budget.MaxTokens, MaxCalls: s.Budget.MaxCalls, Deadline: duration(s.Budget.MaxDuration)},
		LLM:    llmDoc{Model: s.LLM.Model, Brief: s.LLM.Brief, MaxCorrections: s.LLM.MaxCorrections, PlanOnly: s.LLM.PlanOnly},
		Gate:   string(s.Gate),
	}
	if s.Plan != nil {
		raw, err := s.Plan.Canonical()
		if err != nil {
			return nil, fmt.Errorf("spec: plan: %w", err)
		}
		doc.Plan = raw
	}
	if r := s.Replan; r != nil {
		doc.Replan = &replanDoc{MaxReplans: r.MaxReplans, MaxReplansPerTask: r.MaxReplansPerTask, Cooldown: duration(r.Cooldown)}
	}
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
	out := Spec{Mission: doc.Mission, Catalog: doc.Catalog, CatalogDigest: doc.Digest, Dir: doc.Dir,
		Runner: RunnerSpec{Concurrency: doc.Runner.Concurrency, TaskTimeout: time.Duration(doc.Runner.TaskTimeout)},
		Budget: executor.Budget{MaxTokens: doc.Budget.MaxTokens, MaxCalls: doc.Budget.MaxCalls, MaxDuration: time.Duration(doc.Budget.Deadline)},
		LLM:    LLMSpec{Model: doc.LLM.Model, Brief: doc.LLM.Brief, MaxCorrections: doc.LLM.MaxCorrections, PlanOnly: doc.LLM.PlanOnly},
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
		out.Replan = &ReplanSpec{MaxReplans: r.MaxReplans, MaxReplansPerTask: r.MaxReplansPerTask, Cooldown: time.Duration(r.Cooldown)}
	}
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
