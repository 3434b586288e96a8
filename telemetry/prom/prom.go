// Package prom serves the metrics of a [telemetry.Observer] to Prometheus:
// a meter provider whose instruments an [http.Handler] writes in the
// Prometheus text format, as a scrape of /metrics reads them. It links the
// OpenTelemetry SDK and the Prometheus client, which package telemetry
// does not.
//
// The names follow the OpenTelemetry-to-Prometheus translation: dots
// become underscores, the unit becomes a suffix and a counter ends in
// _total, so that dagent.tasks is dagent_tasks_total,
// dagent.task.duration is dagent_task_duration_seconds and
// gen_ai.client.token.usage is gen_ai_client_token_usage.
package prom

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Exporter is a meter provider and the handler that serves its metrics.
// Create it with [New].
type Exporter struct {
	provider *sdkmetric.MeterProvider
	handler  http.Handler
}

var _ http.Handler = (*Exporter)(nil)

// New returns an Exporter whose metrics are gathered in a registry of its
// own, not in Prometheus's default one, so that several may live in one
// process. opts configure its meter provider — a resource, views — as they
// do [sdkmetric.NewMeterProvider]'s; the exporter adds its own reader.
func New(opts ...sdkmetric.Option) (*Exporter, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("prom: %w", err)
	}
	return &Exporter{
		provider: sdkmetric.NewMeterProvider(append(opts, sdkmetric.WithReader(exp))...),
		handler:  promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
	}, nil
}

// MeterProvider is the provider to make the instruments with: give it to
// telemetry.WithMeterProvider.
func (e *Exporter) MeterProvider() metric.MeterProvider { return e.provider }

// ServeHTTP writes the metrics in the Prometheus text format (or in the
// format the request's Accept header asks for, as promhttp negotiates).
func (e *Exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.handler.ServeHTTP(w, r) }

// Shutdown stops the meter provider: the instruments it made record
// nothing more.
func (e *Exporter) Shutdown(ctx context.Context) error { return e.provider.Shutdown(ctx) }
