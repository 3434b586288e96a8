package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/dagent-dev/dagent/internal/llmtest"
)

// clearOTelEnv unsets the OpenTelemetry variables of the environment the
// tests run in: the commands run in-process must not export to whatever
// collector the machine names.
func clearOTelEnv() {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "OTEL_") {
			os.Unsetenv(name)
		}
	}
}

func TestReadOTelConfig(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want otelConfig
		err  string
	}{
		{name: "nothing set", want: otelConfig{}},
		{name: "only other variables", env: map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}, want: otelConfig{}},
		{name: "an endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"},
			want: otelConfig{traces: "http/protobuf", metrics: "http/protobuf"}},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			want: otelConfig{traces: "grpc", metrics: "grpc"}},
		{name: "a protocol per signal", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector:4317",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf"},
			want: otelConfig{traces: "grpc", metrics: "http/protobuf"}},
		{name: "traces only", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://localhost:4318/v1/traces"},
			want: otelConfig{traces: "http/protobuf"}},
		{name: "metrics off", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318", "OTEL_METRICS_EXPORTER": "none"},
			want: otelConfig{traces: "http/protobuf"}},
		{name: "sdk disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318", "OTEL_SDK_DISABLED": "true"},
			want: otelConfig{}},
		{name: "http/json", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			err: `OTEL_EXPORTER_OTLP_PROTOCOL is "http/json": dagent exports over grpc or http/protobuf`},
		{name: "a signal's protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "udp"},
			err: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL is "udp": dagent exports over grpc or http/protobuf`},
		{name: "an endpoint with no scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
			err: `OTEL_EXPORTER_OTLP_ENDPOINT is "localhost:4318": want a URL such as http://localhost:4318`},
		{name: "a signal's endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "ftp://x"},
			err: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is "ftp://x": want a URL such as http://localhost:4318`},
		{name: "another exporter", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318", "OTEL_TRACES_EXPORTER": "zipkin"},
			err: `OTEL_TRACES_EXPORTER is "zipkin": dagent exports with otlp, or none`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readOTelConfig(func(k string) string { return tt.env[k] })
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestStartOTelWithoutEndpointSetsNothingUp(t *testing.T) {
	stop, err := startOTel(func(k string) string {
		return map[string]string{"OTEL_SERVICE_NAME": "dagent"}[k]
	}, io.Discard)
	require.NoError(t, err)
	stop()
	assert.Nil(t, otelObserver.Load())
	assert.Nil(t, otelOptions())
}

func TestBadOTelVariableIsAUsageError(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	code, stdout, stderr := dagent(t, `{"tasks": [{"id": "a", "type": "human_review"}]}`, "run", "-", "--no-journal")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "dagent: OTEL_EXPORTER_OTLP_PROTOCOL is \"http/json\": dagent exports over grpc or http/protobuf\n", stderr)
}

// TestOnlyRunsExport: the commands that neither run nor plan set nothing
// up, whatever the OpenTelemetry variables say: they connect to no
// collector, wait for none at exit, and take no variable for an error.
func TestOnlyRunsExport(t *testing.T) {
	// A collector that accepts connections and never answers: an export
	// at exit would wait for it.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { lis.Close() })
	var connections atomic.Int64
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			connections.Add(1)
			t.Cleanup(func() { conn.Close() })
		}
	}()
	dir := writeFiles(t, map[string]string{"plan.json": `{"agents": {"w": {"prompt": "You write."}}, "tasks": [{"id": "a", "agent": "w", "input": "x"}]}`})
	plan := filepath.Join(dir, "plan.json")
	for _, env := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + lis.Addr().String()},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + lis.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + lis.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
	} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		for _, args := range [][]string{{"version"}, {"lint", plan}, {"fmt", plan}, {"graph", plan}, {"schema"}} {
			began := time.Now()
			code, _, stderr := dagent(t, "", args...)
			assert.Equal(t, exitOK, code, "%v %v: %s", env, args, stderr)
			assert.Empty(t, stderr, "%v %v", env, args)
			assert.Less(t, time.Since(began), 2*time.Second, "%v %v", env, args)
		}
	}
	time.Sleep(100 * time.Millisecond)
	assert.Zero(t, connections.Load(), "no command connected to the collector")
}

// collector receives OTLP exports, over HTTP or gRPC.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	colmetricpb.UnimplementedMetricsServiceServer

	mu      sync.Mutex
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricpb.ExportMetricsServiceRequest
}

func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.traces = append(c.traces, req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// metricsService is the collector's metrics service: its Export has the
// trace service's name.
type metricsService struct{ *collector }

func (m metricsService) Export(_ context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.metrics = append(m.metrics, req)
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

// serveHTTP is OTLP/HTTP with protobuf bodies.
func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		var req coltracepb.ExportTraceServiceRequest
		if err = proto.Unmarshal(body, &req); err == nil {
			resp, err = c.Export(r.Context(), &req)
		}
	case "/v1/metrics":
		var req colmetricpb.ExportMetricsServiceRequest
		if err = proto.Unmarshal(body, &req); err == nil {
			resp, err = metricsService{c}.Export(r.Context(), &req)
		}
	default:
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// spans returns every span received, and the service name of each.
func (c *collector) spans() (spans []*tracepb.Span, services []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, req := range c.traces {
		for _, rs := range req.GetResourceSpans() {
			service := ""
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					spans = append(spans, s)
					services = append(services, service)
				}
			}
		}
	}
	return spans, services
}

// sum is the total of the int sum name over its data points.
func (c *collector) sum(name string) (total int64, found bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, req := range c.metrics {
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					if m.GetName() != name {
						continue
					}
					found = true
					for _, dp := range m.GetSum().GetDataPoints() {
						total += dp.GetAsInt()
					}
				}
			}
		}
	}
	return total, found
}

// otelEnv is the test's environment, with no OpenTelemetry variables but
// vars.
func otelEnv(vars ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return append(env, vars...)
}

// spanInt is the value of a span's int attribute.
func spanInt(s *tracepb.Span, key string) int64 {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue().GetIntValue()
		}
	}
	return 0
}

func TestRunExportsTracesAndMetrics(t *testing.T) {
	bin := binary(t)
	startLLM(t, script{kindAgent: {"Hello, user!"}})
	dir := writeFiles(t, map[string]string{
		"plan.json": `{"agents": {"writer": {"prompt": "You write greetings."}},
			"tasks": [{"id": "a", "agent": "echo"},
			          {"id": "poem", "agent": "writer", "depends_on": ["a"], "input": "Write about {{results.a.n}}"}]}`,
		"registry.yaml": shRegistry,
	})
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			c := &collector{}
			var endpoint string
			if protocol == "grpc" {
				lis, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				srv := grpc.NewServer()
				coltracepb.RegisterTraceServiceServer(srv, c)
				colmetricpb.RegisterMetricsServiceServer(srv, metricsService{c})
				go func() { _ = srv.Serve(lis) }()
				t.Cleanup(srv.Stop)
				endpoint = "http://" + lis.Addr().String()
			} else {
				srv := httptest.NewServer(c)
				t.Cleanup(srv.Close)
				endpoint = srv.URL
			}
			cmd := exec.Command(bin, "run", filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"))
			cmd.Env = otelEnv("OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL="+protocol)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.NotContains(t, string(out), "telemetry", "the export did not fail")

			// The run's spans arrived by the time the process ended: the
			// exit flushed them.
			spans, services := c.spans()
			var names []string
			byID := make(map[string]*tracepb.Span)
			for k, s := range spans {
				names = append(names, s.GetName())
				byID[string(s.GetSpanId())] = s
				assert.Equal(t, "dagent", services[k])
			}
			slices.Sort(names)
			assert.Equal(t, []string{"attempt 1", "attempt 1", "chat test-model", "dagent run", "phase 0", "phase 1", "task a", "task poem"}, names)
			for _, s := range spans {
				if s.GetName() == "chat test-model" {
					parent := byID[string(s.GetParentSpanId())]
					require.NotNil(t, parent)
					assert.Equal(t, "attempt 1", parent.GetName())
					task := byID[string(parent.GetParentSpanId())]
					require.NotNil(t, task)
					assert.Equal(t, "task poem", task.GetName())
					assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, s.GetKind())
					assert.Equal(t, int64(llmtest.PromptTokens), spanInt(s, "gen_ai.usage.input_tokens"))
				}
			}

			tasks, ok := c.sum("dagent.tasks")
			require.True(t, ok, "the metrics arrived")
			assert.Equal(t, int64(2), tasks)
			calls, _ := c.sum("dagent.llm.calls")
			assert.Equal(t, int64(1), calls)
		})
	}
}

func TestRunWithoutOTelVariablesExportsNothing(t *testing.T) {
	bin := binary(t)
	// A collector on the default ports, should dagent export there.
	var connections atomic.Int64
	listening := 0
	for _, addr := range []string{"127.0.0.1:4317", "127.0.0.1:4318", "[::1]:4317", "[::1]:4318"} {
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		listening++
		t.Cleanup(func() { lis.Close() })
		go func() {
			for {
				conn, err := lis.Accept()
				if err != nil {
					return
				}
				connections.Add(1)
				conn.Close()
			}
		}()
	}
	if listening == 0 {
		t.Skip("the default OTLP ports are taken")
	}
	dir := writeFiles(t, map[string]string{
		"plan.json":     `{"tasks": [{"id": "a", "agent": "echo"}]}`,
		"registry.yaml": shRegistry,
	})
	cmd := exec.Command(bin, "run", filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"), "--no-journal")
	// Variables that say how to export, but none where to: nothing is.
	cmd.Env = otelEnv("OTEL_SERVICE_NAME=dagent", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_HEADERS=a=b")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	time.Sleep(100 * time.Millisecond)
	assert.Zero(t, connections.Load())
}

func TestExportingCommandsAreCommands(t *testing.T) {
	root := newRoot(strings.NewReader(""), io.Discard, io.Discard)
	for name := range exportingCommands {
		cmd, _, err := root.Find([]string{name})
		require.NoError(t, err, name)
		assert.Equal(t, name, cmd.Name())
	}
}
