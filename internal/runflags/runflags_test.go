package runflags_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/internal/runflags"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

func parse(t *testing.T, args ...string) *runflags.Flags {
	t.Helper()
	var f runflags.Flags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.Register(fs)
	require.NoError(t, fs.Parse(args))
	return &f
}

func TestSpec(t *testing.T) {
	f := parse(t, "--concurrency", "3", "--schedule", "eager", "--timeout", "5s", "--replan", "--max-replans", "2",
		"--halt-on", "agent_error", "--max-tokens", "10", "--judge-model", "m", "--max-turns", "4", "--gate", "warning")
	require.NoError(t, f.Check(false))
	spec, err := f.Spec()
	require.NoError(t, err)
	assert.Equal(t, 3, spec.Runner.Concurrency)
	assert.Equal(t, runner.Eager, spec.Runner.Schedule)
	assert.Equal(t, 5*time.Second, spec.Runner.TaskTimeout)
	assert.Equal(t, critic.GateWarning, spec.Gate)
	require.NotNil(t, spec.Replan)
	assert.Equal(t, 2, spec.Replan.MaxReplans)
	assert.Equal(t, []runner.Class{"agent_error"}, spec.Replan.HaltOn)
	assert.Equal(t, 10, spec.Budget.MaxTokens)
	require.NotNil(t, spec.Judge)
	assert.Equal(t, "m", spec.Judge.Model)
	assert.Equal(t, 4, spec.LLM.MaxTurns)
}

func TestSpecDefaults(t *testing.T) {
	f := parse(t)
	require.NoError(t, f.Check(false))
	spec, err := f.Spec()
	require.NoError(t, err)
	assert.Nil(t, spec.Replan)
	assert.Nil(t, spec.Judge)
	assert.Zero(t, spec.LLM.MaxTurns, "an unset --max-turns leaves the LLM's default")
	assert.Equal(t, runner.DefaultConcurrency, spec.Runner.Concurrency)
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		initial bool
		want    string
	}{
		{"empty mission", []string{"--mission", " "}, false, "the mission is empty"},
		{"rounds and replan", []string{"--rounds", "2", "--replan"}, false, "--rounds and --replan cannot be combined: a run in rounds does not replan"},
		{"rounds and initial", []string{"--rounds", "2"}, true, "--initial-results cannot be combined with --rounds: a run in rounds keeps its own results"},
		{"replan flag alone", []string{"--max-replans", "2"}, false, "--max-replans needs --replan or --mission"},
		{"repair flag with rounds", []string{"--rounds", "2", "--max-plan-growth", "1"}, false, "--max-plan-growth cannot be combined with --rounds: a run in rounds makes no repair"},
		{"replan and initial", []string{"--replan"}, true, "--initial-results cannot be combined with --replan or --mission: replanning keeps its own results"},
		{"bad class", []string{"--replan", "--halt-on", "Bad"}, false, `bad class "Bad" for --halt-on or --no-halt-on`},
		{"both halts", []string{"--replan", "--halt-on", "x", "--no-halt-on", "x"}, false, `--halt-on and --no-halt-on both name "x"`},
		{"no turns", []string{"--max-turns", "0"}, false, "--max-turns is 0; want 1 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := parse(t, tt.args...).Check(tt.initial)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	assert.NoError(t, parse(t, "--rounds", "2", "--halt-on", "agent_error").Check(false), "a run in rounds takes the halts")
}

func TestSpecBadValues(t *testing.T) {
	_, err := parse(t, "--gate", "").Spec()
	assert.EqualError(t, err, `unknown --gate "": use critical, warning, info or never`)
	_, err = parse(t, "--schedule", "soon").Spec()
	assert.Error(t, err)
}

func TestCheckPlan(t *testing.T) {
	none, with := &plan.Plan{}, &plan.Plan{Mission: "m"}
	assert.EqualError(t, parse(t, "--replan").CheckPlan(none), "--replan needs a mission: the plan has none; pass --mission MISSION")
	assert.EqualError(t, parse(t, "--rounds", "2").CheckPlan(none), "--rounds needs a mission: the plan has none; pass --mission MISSION")
	assert.NoError(t, parse(t, "--replan").CheckPlan(with))
	assert.NoError(t, parse(t, "--replan", "--mission", "m").CheckPlan(none))
	assert.NoError(t, parse(t).CheckPlan(none))
}

func Example() {
	var f runflags.Flags
	fs := pflag.NewFlagSet("start", pflag.ContinueOnError)
	f.Register(fs)
	_ = fs.Parse([]string{"--concurrency", "8", "--replan", "--mission", "Check the repository"})
	if err := f.Check(false); err != nil {
		fmt.Println(err)
		return
	}
	spec, err := f.Spec()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(spec.Runner.Concurrency, spec.Mission, spec.Replan.MaxReplans)
	// Output: 8 Check the repository 5
}
