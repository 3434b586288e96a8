package runner_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/runner/runnertest"
)

// inProcess drives the conformance kit with runner.Runner.
type inProcess struct{}

// Caps: observers see every event as it is emitted.
func (inProcess) Caps() runnertest.Caps { return runnertest.Caps{LiveEvents: true} }

func (inProcess) Run(t *testing.T, s runnertest.Scenario) (*runner.Result, []runner.Event) {
	t.Helper()
	noLeaks(t)
	reg, err := s.Registry()
	require.NoError(t, err)
	var (
		mu  sync.Mutex
		evs []runner.Event
	)
	opts := []runner.Option{
		runner.WithRegistry(reg),
		runner.WithSchedule(s.Schedule),
		runner.WithBackoff(s.Backoff),
		runner.WithMaxRequestBytes(s.MaxRequestBytes),
		runner.WithoutRetryOn(s.NoRetry...),
		runner.WithObserver(runner.ObserverFunc(func(e runner.Event) {
			mu.Lock()
			evs = append(evs, e)
			mu.Unlock()
			if s.Observe != nil {
				s.Observe(e)
			}
		})),
	}
	for _, name := range slices.Sorted(maps.Keys(s.Agents)) {
		opts = append(opts, runner.WithAgent(name, s.Agents[name]))
	}
	if s.Concurrency != 0 {
		opts = append(opts, runner.WithConcurrency(s.Concurrency))
	}
	if s.TaskTimeout != 0 {
		opts = append(opts, runner.WithTaskTimeout(s.TaskTimeout))
	}
	if s.Judge != nil {
		opts = append(opts, runner.WithJudge(s.Judge))
	}
	res, err := runner.New(opts...).RunPlan(context.Background(), s.Plan,
		runner.WithRunID(s.RunID), runner.WithInitialResults(s.Initial), runner.WithReviews(s.Reviews))
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	return res, slices.Clone(evs)
}

// The in-process runner passes the conformance kit.
func TestConformance(t *testing.T) {
	runnertest.Run(t, inProcess{})
}

// Without live events, as a driver that hands its events over at the end
// runs it: the checks that need them are left out, the others pass.
func TestConformanceWithoutLiveEvents(t *testing.T) {
	runnertest.Run(t, runnertest.DriverFunc(inProcess{}.Run))
}
