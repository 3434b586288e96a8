package prom_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/llmtest"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/telemetry"
	"github.com/dagent-dev/dagent/telemetry/prom"
)

// scrape gets /metrics from h and parses it.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// value is the value of the sample of family name whose labels include
// labels: a counter's value, a histogram's count.
func value(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f := families[name]
	require.NotNil(t, f, "no metric %s", name)
	for _, m := range f.GetMetric() {
		if has(m, labels) {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				return m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("no sample of %s with %v", name, labels)
	return 0
}

// histogramSum is the sum of the sample of histogram name with labels.
func histogramSum(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	for _, m := range families[name].GetMetric() {
		if has(m, labels) {
			return m.GetHistogram().GetSampleSum()
		}
	}
	t.Fatalf("no sample of %s with %v", name, labels)
	return 0
}

func has(m *dto.Metric, labels map[string]string) bool {
	found := 0
	for _, lp := range m.GetLabel() {
		if v, ok := labels[lp.GetName()]; ok && v == lp.GetValue() {
			found++
		}
	}
	return found == len(labels)
}

func TestHandlerServesTheInstruments(t *testing.T) {
	ex, err := prom.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = ex.Shutdown(context.Background()) })
	obs, err := telemetry.New(telemetry.WithMeterProvider(ex.MeterProvider()))
	require.NoError(t, err)

	srv := llmtest.Start(t, "test-model", func(map[string]any) (string, error) { return "fine", nil })
	c, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), Model: "test-model", MaxRetries: -1})
	require.NoError(t, err)
	model := obs.Client(c, "openai")
	w := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		if req.TaskID == "bad" {
			return agent.Result{}, errors.New("down")
		}
		resp, err := model.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: req.Input}}})
		return agent.Result{Output: resp.Message.Content}, err
	})
	p, err := plan.Parse([]byte(`{"tasks": [
		{"id": "a", "agent": "w", "input": "x"},
		{"id": "b", "agent": "w", "input": "y", "depends_on": ["a"]},
		{"id": "bad", "agent": "w", "input": "z", "on_failure": "skip"}]}`))
	require.NoError(t, err)
	res, err := runner.New(runner.WithAgent("w", w), runner.WithObserver(obs)).RunPlan(context.Background(), p)
	require.NoError(t, err)
	require.Equal(t, runner.StatusCompleted, res.Status)

	m := scrape(t, ex)
	assert.Equal(t, 2.0, value(t, m, "dagent_tasks_total", map[string]string{"dagent_task_status": "done"}))
	assert.Equal(t, 1.0, value(t, m, "dagent_tasks_total", map[string]string{"dagent_task_status": "skipped", "dagent_failure_class": "agent_error"}))
	assert.Equal(t, 2.0, value(t, m, "dagent_task_duration_seconds", map[string]string{"dagent_task_status": "done"}))
	assert.Equal(t, 1.0, value(t, m, "dagent_runs_total", map[string]string{"dagent_run_status": "completed"}))
	assert.Equal(t, 1.0, value(t, m, "dagent_run_duration_seconds", map[string]string{"dagent_run_status": "completed"}))
	assert.Equal(t, res.Duration.Seconds(), histogramSum(t, m, "dagent_run_duration_seconds", map[string]string{"dagent_run_status": "completed"}))
	call := map[string]string{"gen_ai_operation_name": "chat", "gen_ai_provider_name": "openai", "gen_ai_request_model": "test-model"}
	assert.Equal(t, 2.0, value(t, m, "dagent_llm_calls_total", call))
	assert.Equal(t, 2.0, value(t, m, "gen_ai_client_operation_duration_seconds", call))
	input := map[string]string{"gen_ai_token_type": "input", "gen_ai_request_model": "test-model"}
	assert.Equal(t, 2.0, value(t, m, "gen_ai_client_token_usage", input))
	assert.Equal(t, float64(2*llmtest.PromptTokens), histogramSum(t, m, "gen_ai_client_token_usage", input))
}

func TestExportersAreApart(t *testing.T) {
	one, err := prom.New()
	require.NoError(t, err)
	two, err := prom.New()
	require.NoError(t, err, "a second exporter in the process registers in a registry of its own")
	obs, err := telemetry.New(telemetry.WithMeterProvider(one.MeterProvider()))
	require.NoError(t, err)
	obs.Observe(runner.Event{Kind: runner.EventRunFinished, RunID: "r", Status: runner.StatusCompleted})
	assert.Contains(t, scrape(t, one), "dagent_runs_total")
	assert.NotContains(t, scrape(t, two), "dagent_runs_total")
}

// A web server serves the metrics of the runs it observes, or reads from
// a journal, at /metrics.
func ExampleNew() {
	ex, err := prom.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = ex.Shutdown(context.Background()) }()
	obs, err := telemetry.New(telemetry.WithMeterProvider(ex.MeterProvider()), telemetry.WithTracerProvider(tracenoop.NewTracerProvider()))
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", ex)

	obs.Observe(runner.Event{Kind: runner.EventRunFinished, RunID: "r1", Status: runner.StatusCompleted, Duration: 3 * time.Second})

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if strings.HasPrefix(line, "dagent_runs_total") || strings.HasPrefix(line, "dagent_run_duration_seconds_sum") {
			fmt.Print(line)
		}
	}
	// Output:
	// dagent_run_duration_seconds_sum{dagent_run_status="completed",otel_scope_name="github.com/dagent-dev/dagent/telemetry",otel_scope_schema_url="https://opentelemetry.io/schemas/1.41.0",otel_scope_version=""} 3
	// dagent_runs_total{dagent_run_status="completed",otel_scope_name="github.com/dagent-dev/dagent/telemetry",otel_scope_schema_url="https://opentelemetry.io/schemas/1.41.0",otel_scope_version=""} 1
}
