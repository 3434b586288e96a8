package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/dagent-dev/dagent/runner"
)

// ScopeName is the instrumentation scope of the spans and instruments an
// [Observer] makes.
const ScopeName = "github.com/dagent-dev/dagent/telemetry"

// Observer turns the events of runs into OpenTelemetry traces and
// metrics: give it to [runner.WithObserver], executor.WithObserver or
// durable.WithObserver, and wrap the LLM clients of the runs with
// [Observer.Client]. One Observer serves any number of runs, also at once,
// and is safe for concurrent use. Create it with [New].
type Observer struct {
	tracer trace.Tracer
	m      *instruments
	t      *traces
}

var _ runner.ContextObserver = (*Observer)(nil)

// Option configures [New].
type Option func(*config)

type config struct {
	tp trace.TracerProvider
	mp metric.MeterProvider
}

// WithTracerProvider makes the spans with tp. Default, and when tp is nil:
// the global provider (otel.GetTracerProvider), which makes no spans until
// a program sets one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider makes the instruments with mp. Default, and when mp is
// nil: the global provider (otel.GetMeterProvider), which records nothing
// until a program sets one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// New returns an Observer that makes its spans and instruments with the
// providers opts give. It fails when the meter provider refuses an
// instrument.
func New(opts ...Option) (*Observer, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	m, err := newInstruments(c.mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL)))
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	tracer := c.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))
	return &Observer{tracer: tracer, m: m, t: newTraces(tracer)}, nil
}

// Observe implements [runner.Observer]: it records e in the run's trace and
// in the metrics. Events may come live or from a journal after the fact:
// the metrics take every duration from the events, none from the clock.
// Feed each event once: a counter counts what it is given.
func (o *Observer) Observe(e runner.Event) {
	ctx := o.t.observe(e)
	o.m.observe(ctx, e)
}

// Context implements [runner.ContextObserver]: the context of a run holds
// its span, and that of an attempt the attempt's, so that the calls made
// under it, those of [Observer.Client] among them, are its children.
func (o *Observer) Context(ctx context.Context, e runner.Event) context.Context {
	return o.t.context(ctx, e)
}
