package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
)

// TestHaltAndLLMFlagsBadInput: a bad value of a flag of the halts or of
// the LLM is a usage error that names the flag.
func TestHaltAndLLMFlagsBadInput(t *testing.T) {
	startLLM(t, script{})
	dir := writeFiles(t, map[string]string{
		"plan.json":     `{"mission": "m", "tasks": [{"id": "a", "agent": "echo"}]}`,
		"registry.yaml": shRegistry,
	})
	planPath, reg := filepath.Join(dir, "plan.json"), filepath.Join(dir, "registry.yaml")
	run := []string{"run", planPath, "--registry", reg}
	replan := with(run, "--replan")
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no failures in a row", with(replan, "--max-consecutive-failures", "0"), "dagent: --max-consecutive-failures is 0; want 1 or more\n"},
		{"negative flaky streak", with(replan, "--max-flaky-streak", "-1"), "dagent: --max-flaky-streak and --max-plan-growth must not be negative (0 is no limit)\n"},
		{"negative plan growth", with(replan, "--max-plan-growth", "-2"), "dagent: --max-flaky-streak and --max-plan-growth must not be negative (0 is no limit)\n"},
		{"failures in a row without replanning", with(run, "--max-consecutive-failures", "2"), "dagent: --max-consecutive-failures needs --replan or --mission\n"},
		{"flaky streak without replanning", with(run, "--max-flaky-streak", "2"), "dagent: --max-flaky-streak needs --replan or --mission\n"},
		{"plan growth without replanning", with(run, "--max-plan-growth", "2"), "dagent: --max-plan-growth needs --replan or --mission\n"},
		{"no turns", with(run, "--max-turns", "0"), "dagent: --max-turns is 0; want 1 or more\n"},
		{"too hot", with(run, "--temperature", "2.5"), "dagent: --temperature is 2.5; want 0 to 2\n"},
		{"below zero", with(run, "--temperature", "-0.5"), "dagent: --temperature is -0.5; want 0 to 2\n"},
		{"not a number", with(run, "--temperature", "warm"), `invalid argument "warm" for "--temperature" flag`},
		{"plan too hot", []string{"plan", "--temperature", "3", "Greet the user"}, "dagent: --temperature is 3; want 0 to 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := dagent(t, "", tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}

// TestRunTemperatureAndTurns: --temperature reaches every LLM call and
// --max-turns the LLM agents; the journal keeps both with the run.
func TestRunTemperatureAndTurns(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(`{"tasks": [{"id": "greet", "input": "Greet the user"}]}`)}, kindAgent: {"Hello!"}})
	db := filepath.Join(t.TempDir(), "dagent.db")
	code, doc, stderr := runJSON(t, "--mission", "Greet the user", "--temperature", "0.3", "--max-turns", "2", "--db", db)
	require.Equal(t, exitOK, code, stderr)
	for _, kind := range []string{kindPlan, kindAgent} {
		bodies := f.got(kind)
		require.NotEmpty(t, bodies, kind)
		assert.InDelta(t, 0.3, bodies[0]["temperature"], 1e-6, kind)
	}

	s, err := openStore(db)
	require.NoError(t, err)
	defer s.Close()
	r, err := durable.Load(context.Background(), s, doc["run_id"].(string))
	require.NoError(t, err)
	require.NotNil(t, r.Spec.LLM.Temperature)
	assert.InDelta(t, 0.3, *r.Spec.LLM.Temperature, 1e-9)
	assert.Equal(t, 2, r.Spec.LLM.MaxTurns)
	require.NotNil(t, r.Spec.Replan)
	assert.Equal(t, durable.ReplanDefaults(), r.Spec.Replan, "the halts' defaults are kept with the run")
}

// Without --temperature, the requests leave the temperature to the
// server.
func TestPlanTemperature(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(helloPlan), route(helloPlan)}})
	code, _, stderr := dagent(t, "", "plan", "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = dagent(t, "", "plan", "--temperature", "0", "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	bodies := f.got(kindPlan)
	require.Len(t, bodies, 2)
	assert.NotContains(t, bodies[0], "temperature")
	assert.Contains(t, bodies[1], "temperature", "a temperature of 0 is sent")
}

// TestRunMaxPlanGrowth: a repair that grows the plan past
// --max-plan-growth halts the run; the flag's default lets it run.
func TestRunMaxPlanGrowth(t *testing.T) {
	grown := `{"mission": "Check the flaky service", "tasks": [
		{"id": "a", "agent": "echo", "input": "go"},
		{"id": "w1", "agent": "echo", "depends_on": ["a"], "input": "wait"},
		{"id": "w2", "agent": "echo", "depends_on": ["w1"], "input": "wait more"},
		{"id": "b_again", "agent": "flaky", "depends_on": ["w2"], "input": "try again"}]}`
	for _, tt := range []struct {
		name  string
		args  []string
		code  int
		halt  any
		lines []string
	}{
		{"past the bound", []string{"--max-plan-growth", "1"}, exitInvalid, "plan_growth",
			[]string{"replanning halted (plan_growth): a repair plan grew past --max-plan-growth\n",
				"replanning halted (plan_growth): task b failed and its repair grew too much: the repair plan has 4 tasks, 2 more than the first plan; at most 1 more are allowed"}},
		{"the default", nil, exitOK, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			startLLM(t, script{kindRepair: {route(grown)}})
			dir := t.TempDir()
			reg := flakyRegistry(t, dir)
			planPath := filepath.Join(dir, "plan.json")
			require.NoError(t, os.WriteFile(planPath, []byte(flakyPlan), 0o600))
			code, stdout, stderr := dagent(t, "", append([]string{"run", planPath, "--registry", reg, "--replan"}, tt.args...)...)
			require.Equal(t, tt.code, code, stderr)
			for _, line := range tt.lines {
				assert.Contains(t, stdout, line)
			}

			require.NoError(t, os.Remove(filepath.Join(dir, "flaky-ran")))
			code, doc, stderr := runJSON(t, append([]string{planPath, "--registry", reg, "--replan"}, tt.args...)...)
			require.Equal(t, tt.code, code, stderr)
			assert.Equal(t, tt.halt, doc["halt"])
		})
	}
}

// with is a copy of args with more after it.
func with(args []string, more ...string) []string {
	return append(append([]string{}, args...), more...)
}
