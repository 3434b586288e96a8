package durable_test

import (
	"context"
	"testing"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The spec's gate refuses a plan the critic warns of, in a run that
// replans and in one that does not; the default gate runs it.
func TestStartGate(t *testing.T) {
	// disconnected_flow: b and c use nothing of what they depend on, a
	// warning, not a reason the plan cannot run.
	warned := chain
	for _, tc := range []struct {
		name    string
		gate    critic.Gate
		replan  bool
		refused bool
	}{
		{"default", "", false, false},
		{"never", critic.GateNever, false, false},
		{"warning", critic.GateWarning, false, true},
		{"default, replanning", "", true, false},
		{"warning, replanning", critic.GateWarning, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t)
			w := newWorkers()
			spec := durable.Spec{Plan: mustPlan(t, warned), Gate: tc.gate}
			if tc.replan {
				spec.Replan = durable.ReplanDefaults()
			}
			out, err := durable.Start(ctx, s, spec, durable.WithAgent("wc", w.agent()), durable.WithLLM((&planner{}).client()))
			if !tc.refused {
				require.NoError(t, err)
				assert.Equal(t, durable.StatusCompleted, out.Status)
				assert.Equal(t, 3, w.total())
				return
			}
			require.ErrorIs(t, err, executor.ErrRefused)
			var refused *executor.RefusedError
			require.ErrorAs(t, err, &refused)
			assert.Equal(t, tc.gate, refused.Gate)
			assert.Contains(t, err.Error(), "[disconnected_flow]")
			assert.Zero(t, w.total(), "nothing runs")
			if !tc.replan {
				runs, err := s.List(ctx)
				require.NoError(t, err)
				assert.Empty(t, runs, "a refused run is not journaled")
			}
		})
	}
}

// The gate is kept with the run: a resumed run reads it back.
func TestGateIsJournaled(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	spec := durable.Spec{Plan: mustPlan(t, `{"tasks": [{"id": "a", "agent": "wc", "input": "one"}]}`), Gate: critic.GateWarning}
	_, err := durable.Start(ctx, s, spec, durable.WithAgent("wc", newWorkers().agent()), durable.WithRunID("g1"))
	require.NoError(t, err)
	r, err := durable.Load(ctx, s, "g1")
	require.NoError(t, err)
	assert.Equal(t, critic.GateWarning, r.Spec.Gate)
}
