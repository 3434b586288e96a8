package executor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wide is a plan that runs, though the critic warns of it: eleven tasks in
// one phase (parallel_explosion) and no gate after them (missing_gate).
func wide(t *testing.T) *plan.Plan {
	var b strings.Builder
	b.WriteString(`{"tasks": [`)
	for i := range 11 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": "t%d", "input": "part %d"}`, i, i)
	}
	b.WriteString(`]}`)
	return mustPlan(t, b.String())
}

func TestGate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []executor.Option
		refused bool
	}{
		{"default", nil, false},
		{"critical", []executor.Option{executor.WithGate(critic.GateCritical)}, false},
		{"never", []executor.Option{executor.WithGate(critic.GateNever)}, false},
		{"warning", []executor.Option{executor.WithGate(critic.GateWarning)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkers()
			res, err := executor.Execute(context.Background(), wide(t), mission, w.options(tc.opts...)...)
			if !tc.refused {
				require.NoError(t, err)
				assert.Equal(t, runner.StatusCompleted, res.Status)
				assert.Len(t, w.counts(), 11)
				assert.True(t, res.Report.Has(critic.Warning), "the warnings are in the report")
				return
			}
			require.ErrorIs(t, err, executor.ErrRefused)
			assert.Nil(t, res)
			assert.Empty(t, w.counts(), "nothing runs")
			var refused *executor.RefusedError
			require.ErrorAs(t, err, &refused)
			assert.Equal(t, critic.GateWarning, refused.Gate)
			assert.True(t, strings.HasPrefix(err.Error(), "plan refused by the critic at gate warning: 2 issues; warning: "), err.Error())
		})
	}
}

// A plan that cannot run is refused at every gate, never too.
func TestGateNeverStillRefusesWhatCannotRun(t *testing.T) {
	p, _ := plan.Parse([]byte(`{"tasks": [{"id": "a", "input": "A", "depends_on": ["b"]}, {"id": "b", "input": "B", "depends_on": ["a"]}]}`))
	w := newWorkers()
	_, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithGate(critic.GateNever))...)
	require.ErrorIs(t, err, executor.ErrRefused)
	assert.True(t, strings.HasPrefix(err.Error(), "plan refused by the critic: 1 critical issue; critical: task a: depends_on: dependency cycle"), err.Error())
	assert.Empty(t, w.counts())
}

// The gate applies to repair plans too: a repair with a warning is refused
// at gate warning, and the execution halts.
func TestGateRefusesRepairs(t *testing.T) {
	p := mustPlan(t, `{"tasks": [{"id": "x", "input": "X", "on_failure": "replan"}]}`)
	w := newWorkers().set("x", fail(errBoom))
	rp := newReplanner(reply{plan: wide(t)})
	res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp), executor.WithGate(critic.GateWarning))...)
	require.NoError(t, err)
	assert.Equal(t, executor.HaltReplanFailed, res.Halt)
	var refused *executor.RefusedError
	require.ErrorAs(t, res.Err, &refused)
	assert.Equal(t, critic.GateWarning, refused.Gate)
	assert.Equal(t, map[string]int{"x": 1}, w.counts(), "the repair never ran")
}
