package durable_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/golden"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var temperature = 0.2

func fullSpec(t *testing.T) durable.Spec {
	t.Helper()
	p, err := plan.Parse([]byte(`{"mission": "check the repository", "tasks": [
		{"id": "vet", "agent": "go-vet", "input": "vet it"},
		{"id": "report", "agent": "health-report", "input": "sum up", "depends_on": ["vet"]}]}`))
	require.NoError(t, err)
	return durable.Spec{
		Plan: p, Mission: "check the repository", Catalog: "/srv/registry.yaml", Dir: "/srv",
		CatalogDigest: "sha256:6d1c8f0e3b7a9d2c4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5",
		Runner:        durable.RunnerSpec{Concurrency: 4, Schedule: runner.Eager, TaskTimeout: 90 * time.Second},
		Replan: &durable.ReplanSpec{MaxReplans: 2, MaxReplansPerTask: 1, Cooldown: time.Second,
			HaltOn: []runner.Class{runner.ClassTimeout, "sandbox_violation"}, NoHaltOn: []runner.Class{runner.ClassPrecondition},
			MaxConsecutiveFailures: 4, MaxFlakyStreak: 2, MaxPlanGrowth: 7},
		Budget: executor.Budget{MaxTokens: 200000, MaxCalls: 50, MaxDuration: 10 * time.Minute},
		LLM:    durable.LLMSpec{Model: "small", Brief: true, MaxCorrections: 1, Temperature: &temperature, MaxTurns: 3},
		Gate:   critic.GateWarning,
		Judge:  &durable.JudgeSpec{Model: "judge-model", MaxCalls: 20},
	}
}

// TestSpecJSON pins the spec's JSON form and checks that it reads back to
// the same spec.
func TestSpecJSON(t *testing.T) {
	spec := fullSpec(t)
	out, err := json.MarshalIndent(spec, "", "  ")
	require.NoError(t, err)
	golden.Check(t, "testdata/spec.golden.json", append(out, '\n'))

	var back durable.Spec
	require.NoError(t, json.Unmarshal(out, &back))
	again, err := json.MarshalIndent(back, "", "  ")
	require.NoError(t, err)
	assert.JSONEq(t, string(out), string(again))
	assert.Equal(t, spec.Runner, back.Runner)
	assert.Equal(t, spec.Replan, back.Replan)
	assert.Equal(t, spec.Budget, back.Budget)
	assert.Equal(t, spec.LLM, back.LLM)
	assert.Equal(t, spec.CatalogDigest, back.CatalogDigest)
	assert.Equal(t, spec.Gate, back.Gate)
	assert.Equal(t, spec.Judge, back.Judge)
	require.NotNil(t, back.Plan)
	assert.Len(t, back.Plan.Tasks, 2)
}

func TestSpecUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string
		is        error
	}{
		{"newer version", `{"version": 2}`, "unsupported spec version 2", durable.ErrSpecVersion},
		{"version zero", `{"version": 0}`, "unsupported spec version 0", durable.ErrSpecVersion},
		{"unknown key", `{"version": 1, "runner": {"concurency": 3}}`, `unknown field "concurency"`, nil},
		{"bad schedule", `{"version": 1, "runner": {"schedule": "soon"}}`, "runner.schedule", nil},
		{"bad duration", `{"version": 1, "runner": {"task_timeout": "3 apples"}}`, "3 apples", nil},
		{"bad plan", `{"version": 1, "plan": {"tasks": [{"id": "a", "type": "nap"}]}}`, "spec: plan:", plan.ErrInvalid},
		{"trailing", `{"version": 1} {}`, "after top-level value", nil},
		{"bad gate", `{"version": 1, "gate": "sometimes"}`, `spec: gate: unknown gate "sometimes"`, nil},
		{"bad halt class", `{"version": 1, "replan": {"halt_on": ["Timeout"]}}`, `spec: replan: bad halt class "Timeout"`, durable.ErrHaltClass},
		{"halt class both ways", `{"version": 1, "replan": {"halt_on": ["timeout"], "no_halt_on": ["timeout"]}}`, "both halt_on and no_halt_on name it", durable.ErrHaltClass},
		{"bad temperature", `{"version": 1, "llm": {"temperature": "hot"}}`, "temperature", nil},
		{"bad flaky streak", `{"version": 1, "replan": {"max_flaky_streak": 1.5}}`, "max_flaky_streak", nil},
		{"unknown judge key", `{"version": 1, "judge": {"modle": "m"}}`, `unknown field "modle"`, nil},
		{"legacy unknown key", `{"registy": "r.yaml"}`, `unknown field "registy"`, nil},
		{"legacy bad duration", `{"timeout": "soon"}`, "spec (unversioned): timeout", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s durable.Spec
			err := s.UnmarshalJSON([]byte(tt.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
		})
	}
}

// A spec written before gates could be set has no "gate": it reads as
// the critical gate, and writes back without one.
func TestSpecWithoutGate(t *testing.T) {
	doc := `{"version": 1, "plan": null, "mission": "m", "runner": {"concurrency": 0, "schedule": "phased", "task_timeout": "0s"}, "replan": null, "budget": {"max_tokens": 0, "max_llm_calls": 0, "deadline": "0s"}, "llm": {"max_corrections": 0}}`
	var s durable.Spec
	require.NoError(t, json.Unmarshal([]byte(doc), &s))
	assert.Empty(t, s.Gate)
	assert.Equal(t, critic.GateCritical, must(critic.ParseGate(string(s.Gate))))
	out, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, doc, string(out))
	assert.NotContains(t, string(out), "gate")
	assert.Nil(t, s.Judge, "a spec written before judges has none")
	assert.NotContains(t, string(out), "judge")
}

// A spec written before halt classes could be set has no "halt_on" or
// "no_halt_on": it reads as the executor's default halts, and writes
// back without them.
func TestSpecWithoutHalts(t *testing.T) {
	doc := `{"version": 1, "plan": null, "mission": "m", "runner": {"concurrency": 0, "schedule": "phased", "task_timeout": "0s"}, "replan": {"max_replans": 5, "max_replans_per_task": 3, "cooldown": "0s"}, "budget": {"max_tokens": 0, "max_llm_calls": 0, "deadline": "0s"}, "llm": {"max_corrections": 0}}`
	var s durable.Spec
	require.NoError(t, json.Unmarshal([]byte(doc), &s))
	assert.Equal(t, &durable.ReplanSpec{MaxReplans: 5, MaxReplansPerTask: 3}, s.Replan)
	out, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, doc, string(out))
	assert.NotContains(t, string(out), "halt")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A spec written before the halts on flaky tasks and on plan growth, and
// before temperatures and turns could be set, reads as the run had it:
// those halts off, the executor's bound on failures in a row, the
// server's temperature and the agents' default turns. It writes back
// without them.
func TestSpecBeforeHaltsAndLLMSettings(t *testing.T) {
	doc := `{"version": 1, "plan": null, "mission": "m", "runner": {"concurrency": 0, "schedule": "phased", "task_timeout": "0s"}, "replan": {"max_replans": 5, "max_replans_per_task": 3, "cooldown": "0s"}, "budget": {"max_tokens": 0, "max_llm_calls": 0, "deadline": "0s"}, "llm": {"max_corrections": 2}}`
	var s durable.Spec
	require.NoError(t, json.Unmarshal([]byte(doc), &s))
	assert.Equal(t, &durable.ReplanSpec{MaxReplans: 5, MaxReplansPerTask: 3}, s.Replan)
	assert.Equal(t, durable.LLMSpec{MaxCorrections: 2}, s.LLM)
	out, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, doc, string(out))
}

// A temperature of 0 is kept: it is not the server's default.
func TestSpecZeroTemperature(t *testing.T) {
	zero := 0.0
	out, err := json.Marshal(durable.Spec{Mission: "m", LLM: durable.LLMSpec{Temperature: &zero}})
	require.NoError(t, err)
	assert.Contains(t, string(out), `"temperature":0`)
	var back durable.Spec
	require.NoError(t, json.Unmarshal(out, &back))
	require.NotNil(t, back.LLM.Temperature)
	assert.Zero(t, *back.LLM.Temperature)
}

// TestSpecLegacy reads the settings a dagent journaled before versioned
// specs: the command's flags.
func TestSpecLegacy(t *testing.T) {
	var s durable.Spec
	require.NoError(t, json.Unmarshal([]byte(`{"registry": "/srv/r.yaml", "dir": "/srv", "concurrency": 3,
		"schedule": "eager", "timeout": "2m0s", "replan": true, "mission": "m", "max_replans": 4,
		"max_replans_per_task": 2, "replan_cooldown": "1s", "max_tokens": 10, "deadline": "1m0s", "model": "x"}`), &s))
	assert.Equal(t, durable.Spec{
		Mission: "m", Catalog: "/srv/r.yaml", Dir: "/srv",
		Runner: durable.RunnerSpec{Concurrency: 3, Schedule: runner.Eager, TaskTimeout: 2 * time.Minute},
		Replan: &durable.ReplanSpec{MaxReplans: 4, MaxReplansPerTask: 2, Cooldown: time.Second},
		Budget: executor.Budget{MaxTokens: 10, MaxDuration: time.Minute},
		LLM:    durable.LLMSpec{Model: "x", MaxCorrections: metaplanner.DefaultMaxCorrections},
	}, s)
}

func TestSpecCheck(t *testing.T) {
	tests := []struct {
		name string
		edit func(*durable.Spec)
		want string
	}{
		{"no plan, no mission", func(s *durable.Spec) { s.Plan, s.Mission = nil, "" }, "no plan and no mission"},
		{"replan without mission", func(s *durable.Spec) { s.Mission, s.Plan.Mission = "", "" }, "needs a mission"},
		{"negative concurrency", func(s *durable.Spec) { s.Runner.Concurrency = -1 }, "runner.concurrency is -1"},
		{"bad schedule", func(s *durable.Spec) { s.Runner.Schedule = 7 }, "runner.schedule is 7"},
		{"negative timeout", func(s *durable.Spec) { s.Runner.TaskTimeout = -time.Second }, "runner.task_timeout"},
		{"negative replans", func(s *durable.Spec) { s.Replan.MaxReplans = -1 }, "replan: max_replans"},
		{"negative budget", func(s *durable.Spec) { s.Budget.MaxCalls = -1 }, "budget:"},
		{"negative corrections", func(s *durable.Spec) { s.LLM.MaxCorrections = -2 }, "llm.max_corrections is -2"},
		{"bad gate", func(s *durable.Spec) { s.Gate = "sometimes" }, `gate: unknown gate "sometimes"`},
		{"bad halt class", func(s *durable.Spec) { s.Replan.NoHaltOn = []runner.Class{"tool refused"} }, `replan: bad halt class "tool refused"`},
		{"halt class both ways", func(s *durable.Spec) { s.Replan.HaltOn = s.Replan.NoHaltOn }, `replan: bad halt class "precondition_failed": both`},
		{"negative flaky streak", func(s *durable.Spec) { s.Replan.MaxFlakyStreak = -1 }, "replan: max_consecutive_failures, max_flaky_streak"},
		{"negative plan growth", func(s *durable.Spec) { s.Replan.MaxPlanGrowth = -1 }, "max_plan_growth must not be negative"},
		{"negative failures in a row", func(s *durable.Spec) { s.Replan.MaxConsecutiveFailures = -3 }, "max_consecutive_failures"},
		{"temperature too high", func(s *durable.Spec) { t := 2.5; s.LLM.Temperature = &t }, "llm.temperature is 2.5; want 0 to 2"},
		{"negative temperature", func(s *durable.Spec) { t := -0.1; s.LLM.Temperature = &t }, "llm.temperature is -0.1"},
		{"negative turns", func(s *durable.Spec) { s.LLM.MaxTurns = -1 }, "llm.max_turns is -1"},
		{"negative judge calls", func(s *durable.Spec) { s.Judge.MaxCalls = -1 }, "judge.max_calls is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fullSpec(t)
			require.NoError(t, s.Check())
			tt.edit(&s)
			err := s.Check()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// FuzzSpec checks that reading a spec never panics, and that whatever
// reads writes a document that reads back to the same document. The seed
// corpus is testdata/fuzz/FuzzSpec.
func FuzzSpec(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var s durable.Spec
		if json.Unmarshal(data, &s) != nil {
			return
		}
		out, err := json.Marshal(s)
		require.NoError(t, err)
		var back durable.Spec
		require.NoError(t, json.Unmarshal(out, &back), "the written form must read back:\n%s", out)
		again, err := json.Marshal(back)
		require.NoError(t, err)
		require.Equal(t, string(out), string(again))
	})
}
