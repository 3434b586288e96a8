package temporal

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/runner/runnertest"
)

// onTemporal drives the conformance kit with the workflow in the SDK's
// test environment: every attempt and judgement an activity, the kit's
// agents and workers those of the activities. The workflow's observer
// hands the kit each event as the workflow emits it, while the other
// activities run.
type onTemporal struct{}

func (onTemporal) Caps() runnertest.Caps { return runnertest.Caps{LiveEvents: true} }

func (onTemporal) Run(t *testing.T, s runnertest.Scenario) (*runner.Result, []runner.Event) {
	t.Helper()
	reg, err := s.Registry()
	require.NoError(t, err)
	opts := []Option{WithJudge(s.Judge)}
	for _, name := range slices.Sorted(maps.Keys(s.Agents)) {
		opts = append(opts, WithAgent(name, s.Agents[name]))
	}
	in := Input{
		RunID: s.RunID,
		Spec: durable.Spec{Plan: s.Plan, Runner: durable.RunnerSpec{
			Concurrency: s.Concurrency, Schedule: s.Schedule, TaskTimeout: s.TaskTimeout,
		}},
		Backoff: &s.Backoff, NoRetry: s.NoRetry, MaxRequestBytes: s.MaxRequestBytes,
		EndWaiting: true,
	}
	if s.Judge != nil {
		in.Spec.Judge = &durable.JudgeSpec{}
	}
	if s.Initial != nil {
		in.Initial, err = jsonv.Marshal(s.Initial)
		require.NoError(t, err)
	}
	for _, id := range slices.Sorted(maps.Keys(s.Reviews)) {
		rv, err := NewReview(id, s.Reviews[id])
		require.NoError(t, err)
		in.Reviews = append(in.Reviews, rv)
	}
	var (
		evs []runner.Event
		res *runner.Result
	)
	env := quietSuite().NewTestWorkflowEnvironment()
	observe := func(e runner.Event) {
		evs = append(evs, e)
		if s.Observe != nil {
			s.Observe(e)
		}
	}
	w := &Workflow{Observe: observe, finished: func(r *runner.Result) { res = r }}
	w.Register(env)
	NewActivities(reg, opts...).Register(env)
	env.ExecuteWorkflow(WorkflowName, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out Outcome
	require.NoError(t, env.GetWorkflowResult(&out))
	require.NotNil(t, out.Run)
	require.NotNil(t, res)
	// What the client reads is the result's JSON form.
	assertSameJSON(t, res, out.Run)
	return res, evs
}

// The workflow passes the conformance kit.
func TestConformance(t *testing.T) {
	runnertest.Run(t, onTemporal{})
}

// assertSameJSON checks that want and got have the same JSON form.
func assertSameJSON(t *testing.T, want, got *runner.Result) {
	t.Helper()
	a, err := want.MarshalJSON()
	require.NoError(t, err)
	b, err := got.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, string(a), string(b))
}
