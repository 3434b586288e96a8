package telemetry_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dagent-dev/dagent/telemetry"
)

// harness is an Observer on the SDK with in-memory spans and metrics.
type harness struct {
	obs    *telemetry.Observer
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	var err error
	h.obs, err = telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithMeterProvider(mp))
	require.NoError(t, err)
	return h
}

// ended returns the ended spans, checking that every span started ended.
func (h *harness) ended(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	started, ended := h.spans.Started(), h.spans.Ended()
	var open []string
	for _, s := range started {
		if s.EndTime().IsZero() {
			open = append(open, s.Name())
		}
	}
	require.Empty(t, open, "spans not ended")
	require.Len(t, ended, len(started))
	return ended
}

// tree draws the spans as a tree, two spaces an level, children ordered
// by name and then start; a span whose parent is not among them is a
// root.
func tree(spans []sdktrace.ReadOnlySpan) string {
	ids := make(map[[8]byte]bool)
	for _, s := range spans {
		ids[s.SpanContext().SpanID()] = true
	}
	children := make(map[[8]byte][]sdktrace.ReadOnlySpan)
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if p := s.Parent().SpanID(); s.Parent().IsValid() && ids[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var draw func(ss []sdktrace.ReadOnlySpan, depth int)
	draw = func(ss []sdktrace.ReadOnlySpan, depth int) {
		slices.SortFunc(ss, func(x, y sdktrace.ReadOnlySpan) int {
			return cmp.Or(strings.Compare(x.Name(), y.Name()), x.StartTime().Compare(y.StartTime()))
		})
		for _, s := range ss {
			b.WriteString(strings.Repeat("  ", depth) + s.Name() + "\n")
			draw(children[s.SpanContext().SpanID()], depth+1)
		}
	}
	draw(roots, 0)
	return b.String()
}

// find returns the spans named name that have every attribute of attrs.
func find(spans []sdktrace.ReadOnlySpan, name string, attrs ...attribute.KeyValue) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name && hasAll(s.Attributes(), attrs) {
			out = append(out, s)
		}
	}
	return out
}

// one returns the one span named name with attrs.
func one(t *testing.T, spans []sdktrace.ReadOnlySpan, name string, attrs ...attribute.KeyValue) sdktrace.ReadOnlySpan {
	t.Helper()
	found := find(spans, name, attrs...)
	require.Len(t, found, 1, "spans %q with %v", name, attrs)
	return found[0]
}

func hasAll(have []attribute.KeyValue, want []attribute.KeyValue) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h attribute.KeyValue) bool { return h.Key == w.Key && h.Value == w.Value }) {
			return false
		}
	}
	return true
}

// attr is the value of span's attribute key.
func attr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// childOf reports whether child's parent is parent.
func childOf(child, parent sdktrace.ReadOnlySpan) bool {
	return child.Parent().SpanID() == parent.SpanContext().SpanID() && child.SpanContext().TraceID() == parent.SpanContext().TraceID()
}

// metrics collects the metrics the harness recorded so far, by name.
func (h *harness) metrics(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	out := make(map[string]metricdata.Aggregation)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// counts maps each data point of the int sum name to its value, by its
// attributes written as k=v,k=v in key order.
func counts(t *testing.T, ms map[string]metricdata.Aggregation, name string) map[string]int64 {
	t.Helper()
	sum, ok := ms[name].(metricdata.Sum[int64])
	require.True(t, ok, "%s is not an int sum: %T", name, ms[name])
	out := make(map[string]int64)
	for _, dp := range sum.DataPoints {
		out[setString(dp.Attributes)] += dp.Value
	}
	return out
}

// histCounts maps each data point of the histogram name to its count and
// sum, by its attributes.
func histCounts[N int64 | float64](t *testing.T, ms map[string]metricdata.Aggregation, name string) map[string]metricdata.HistogramDataPoint[N] {
	t.Helper()
	h, ok := ms[name].(metricdata.Histogram[N])
	require.True(t, ok, "%s is not such a histogram: %T", name, ms[name])
	out := make(map[string]metricdata.HistogramDataPoint[N])
	for _, dp := range h.DataPoints {
		out[setString(dp.Attributes)] = dp
	}
	return out
}

func setString(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
	}
	return strings.Join(parts, ",")
}

// summary is a line per metric reader collected: an int sum's total, a
// float histogram's count and sum; sorted by name.
func summary(reader *sdkmetric.ManualReader) string {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		return err.Error()
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				var n int64
				for _, dp := range d.DataPoints {
					n += dp.Value
				}
				lines = append(lines, fmt.Sprintf("%s: %d", m.Name, n))
			case metricdata.Histogram[float64]:
				var n uint64
				var sum float64
				for _, dp := range d.DataPoints {
					n, sum = n+dp.Count, sum+dp.Sum
				}
				lines = append(lines, fmt.Sprintf("%s: %d recorded, sum %g", m.Name, n, sum))
			}
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
