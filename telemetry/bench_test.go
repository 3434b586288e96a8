package telemetry_test

import (
	"context"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/plantest"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/telemetry"
)

// BenchmarkOverhead measures what telemetry adds to each task of a run of
// 1,000 no-op tasks (10 phases of 100, each task depending on two of the
// phase before): without observers; with an observer that does nothing,
// which is what any observer costs (the event bus); with an Observer on
// the no-op providers; and with an Observer on the SDK, its spans to an
// in-memory exporter through a synchronous processor (WithSyncer: each
// span is exported as it ends, with no batching and none dropped) and its
// metrics to a manual reader.
func BenchmarkOverhead(b *testing.B) {
	const tasks = 1_000
	noop := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{Output: "ok"}, nil })
	cases := []struct {
		name string
		// obs returns the case's observer, nil for none, and what to do
		// after each run.
		obs func(b *testing.B) (runner.Observer, func())
	}{
		{"none", func(*testing.B) (runner.Observer, func()) { return nil, func() {} }},
		{"observer", func(*testing.B) (runner.Observer, func()) {
			return runner.ObserverFunc(func(runner.Event) {}), func() {}
		}},
		{"noop", func(b *testing.B) (runner.Observer, func()) {
			obs, err := telemetry.New(telemetry.WithTracerProvider(tracenoop.NewTracerProvider()), telemetry.WithMeterProvider(metricnoop.NewMeterProvider()))
			if err != nil {
				b.Fatal(err)
			}
			return obs, func() {}
		}},
		{"inmemory", func(b *testing.B) (runner.Observer, func()) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() {
				_ = tp.Shutdown(context.Background())
				_ = mp.Shutdown(context.Background())
			})
			obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithMeterProvider(mp))
			if err != nil {
				b.Fatal(err)
			}
			// Every span is exported, and let go after the run, as a
			// collector takes them.
			return obs, exp.Reset
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			opts := []runner.Option{runner.WithAgent("noop", noop)}
			obs, after := c.obs(b)
			if obs != nil {
				opts = append(opts, runner.WithObserver(obs))
			}
			rn := runner.New(opts...)
			d, err := rn.Check(plantest.Layered(10, tasks/10, "noop"))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := rn.Run(context.Background(), d)
				if err != nil || res.Status != runner.StatusCompleted {
					b.Fatalf("run: %v %v", res, err)
				}
				after()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/tasks/1000, "µs/task")
		})
	}
}
