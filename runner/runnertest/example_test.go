package runnertest_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/runner/runnertest"
)

// A driver maps a scenario to its own way of running plans — here the
// in-process runner's options — and hands back the result and the events.
// A test then runs every scenario against it: runnertest.Run(t, driver).
func ExampleRun() {
	driver := runnertest.DriverFunc(func(t *testing.T, s runnertest.Scenario) (*runner.Result, []runner.Event) {
		reg, err := s.Registry()
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu     sync.Mutex
			events []runner.Event
		)
		opts := []runner.Option{
			runner.WithRegistry(reg), runner.WithSchedule(s.Schedule), runner.WithBackoff(s.Backoff),
			runner.WithMaxRequestBytes(s.MaxRequestBytes), runner.WithoutRetryOn(s.NoRetry...),
			runner.WithObserver(runner.ObserverFunc(func(e runner.Event) {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
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
		if err != nil {
			t.Fatal(err)
		}
		return res, events
	})
	_ = driver // in a test: runnertest.Run(t, driver)
	fmt.Println(runnertest.Names()[:3])
	// Output: [FailureTable RetryCarriesDiagnosis RetryBudget]
}
