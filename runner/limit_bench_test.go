package runner_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dagent-dev/dagent/internal/plantest"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// BenchmarkScheduleControls measures the scheduling overhead per task of
// BenchmarkSchedule's plan of 1,000 no-op tasks under the scheduling
// controls: none (the plan of BenchmarkSchedule, run by a registry
// worker), every task a priority, and the worker's max concurrency at
// half the runner's concurrency, so that ready tasks are parked.
func BenchmarkScheduleControls(b *testing.B) {
	const n = 1_000
	for _, s := range []runner.Schedule{runner.Phased, runner.Eager} {
		for _, control := range []string{"none", "priority", "capped"} {
			b.Run(fmt.Sprintf("%s/%s", s, control), func(b *testing.B) {
				p := plantest.Layered(10, n/10, "noop")
				w := registry.Worker{Agent: noop}
				switch control {
				case "priority":
					for i := range p.Tasks {
						p.Tasks[i].Priority = i % 7
					}
				case "capped":
					w.MaxConcurrency = runner.DefaultConcurrency / 2
				}
				reg := registry.New()
				if err := reg.Register("noop", w); err != nil {
					b.Fatal(err)
				}
				rn := runner.New(runner.WithRegistry(reg), runner.WithSchedule(s))
				d, err := rn.Check(p)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					res, err := rn.Run(context.Background(), d)
					if err == nil && res.Status != runner.StatusCompleted {
						err = fmt.Errorf("run %s: %w", res.Status, res.Err)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/task")
			})
		}
	}
}
