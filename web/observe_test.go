package web_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/dagent-dev/dagent/telemetry"
	"github.com/dagent-dev/dagent/telemetry/prom"
	"github.com/dagent-dev/dagent/web"
)

// recorder keeps the events it observes, by run.
type recorder struct {
	mu   sync.Mutex
	runs map[string][]runner.Event
}

func (r *recorder) Observe(e runner.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs == nil {
		r.runs = map[string][]runner.Event{}
	}
	r.runs[e.RunID] = append(r.runs[e.RunID], e)
}

func (r *recorder) of(id string) []runner.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]runner.Event(nil), r.runs[id]...)
}

// both gives each event to each observer.
type both []runner.Observer

func (b both) Observe(e runner.Event) {
	for _, o := range b {
		o.Observe(e)
	}
}

// scrape gets the metrics at /metrics of srv, in the Prometheus text
// format, as counters' values and histograms' counts by name and labels.
func scrape(t *testing.T, c *http.Client, url string) map[string]float64 {
	t.Helper()
	resp, err := c.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	values := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			key := name
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "dagent_task_status", "dagent_failure_class", "dagent_run_status", "gen_ai_token_type":
					key += fmt.Sprintf(" %s=%s", l.GetName(), l.GetValue())
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				values[key] = m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				values[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return values
}

// The server's observer gets the events that runs journaled by another
// process get while the server runs: all of a run that starts then, the
// rest of one under way, those of a run resumed then; each once, in
// order. Its metrics are served at /metrics.
func TestObserverOfTheJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dagent.db")
	open := func() *sqlite.Store {
		s, err := sqlite.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	// The server's journal, and another writer's handle on it.
	s, w := open(), open()
	ctx := context.Background()
	bad := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, fmt.Errorf("%w: empty", agent.ErrInvalidOutput)
	})

	// Before the server: a run that ended, one waiting for review, one
	// under way.
	start(t, w, "before", `{"tasks": [{"id": "a", "agent": "echo", "input": "x"}]}`)
	require.Equal(t, durable.StatusWaiting, start(t, w, "waiting", reviewPlan).Status)
	g := newGated()
	underway := make(chan error, 1)
	go func() {
		_, err := durable.Start(ctx, w, durable.Spec{Plan: mustPlan(t, `{"tasks": [
			{"id": "a", "agent": "echo", "input": "x"},
			{"id": "b", "agent": "gate", "input": "y", "depends_on": ["a"]}]}`)},
			durable.WithAgent("echo", echo), durable.WithAgent("gate", g), durable.WithRunID("underway"))
		underway <- err
	}()
	require.Equal(t, "b", <-g.started)
	require.Eventually(t, func() bool {
		// The journal writes in the background: until b's start is in
		// it, what came before may not be either.
		events, err := w.EventsAfter(ctx, "underway", 0)
		if err != nil || len(events) == 0 {
			return false
		}
		last := events[len(events)-1]
		return last.Kind == string(runner.EventTaskStarted) && last.TaskID == "b"
	}, 10*time.Second, time.Millisecond)
	journaled := map[string]int{} // the last event of each run before the server
	for _, id := range []string{"before", "waiting", "underway"} {
		events, err := w.EventsAfter(ctx, id, 0)
		require.NoError(t, err)
		journaled[id] = events[len(events)-1].Seq
	}

	ex, err := prom.New()
	require.NoError(t, err)
	obs, err := telemetry.New(telemetry.WithMeterProvider(ex.MeterProvider()), telemetry.WithTracerProvider(tracenoop.NewTracerProvider()))
	require.NoError(t, err)
	rec := &recorder{}
	const poll = 10 * time.Millisecond
	srv, h := serve(t, web.Options{Store: s, Metrics: ex, Observer: both{obs, rec}, Poll: poll})

	// While it runs: the run under way ends, a run starts and fails, the
	// waiting run is resumed and completes.
	g.release <- struct{}{}
	require.NoError(t, <-underway)
	start(t, w, "later", `{"tasks": [
		{"id": "x", "agent": "echo", "input": "x"},
		{"id": "y", "agent": "bad", "input": "y", "depends_on": ["x"]}]}`, durable.WithAgent("bad", bad))
	out, err := durable.Resume(ctx, w, "waiting", durable.WithAgent("echo", echo),
		durable.WithReviews(map[string]runner.Decision{"approve": {Approved: true}}))
	require.NoError(t, err)
	require.Equal(t, durable.StatusCompleted, out.Status)

	want := map[string]float64{
		// b of underway, x of later, approve and send of waiting.
		"dagent_tasks_total dagent_task_status=done":                                       4,
		"dagent_tasks_total dagent_failure_class=invalid_output dagent_task_status=failed": 1,
		"dagent_task_duration_seconds dagent_task_status=done":                             4,
		"dagent_task_duration_seconds dagent_task_status=failed":                           1,
		"dagent_runs_total dagent_run_status=completed":                                    2,
		"dagent_runs_total dagent_run_status=failed":                                       1,
		"dagent_run_duration_seconds dagent_run_status=completed":                          2,
		"dagent_run_duration_seconds dagent_run_status=failed":                             1,
		// x of later and send of waiting: the echo worker's.
		"dagent_task_tokens_total gen_ai_token_type=input":  6,
		"dagent_task_tokens_total gen_ai_token_type=output": 8,
	}
	c := browser(t)
	metrics := func() map[string]float64 {
		got := scrape(t, c, srv.URL)
		for k := range got {
			if _, ok := want[k]; !ok {
				delete(got, k)
			}
		}
		return got
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, want, metrics())
	}, 10*time.Second, poll)
	time.Sleep(20 * poll)
	assert.Equal(t, want, metrics(), "the server's reads give each event once")

	// The events the observer got are those journaled after the server
	// started, in order.
	for _, id := range []string{"before", "waiting", "underway", "later"} {
		events, err := w.EventsAfter(ctx, id, journaled[id])
		require.NoError(t, err)
		var wantEvents, got []string
		for _, e := range events {
			wantEvents = append(wantEvents, fmt.Sprintf("%s %s %s", e.Kind, e.TaskID, e.Time.Format(time.RFC3339Nano)))
		}
		for _, e := range rec.of(id) {
			got = append(got, fmt.Sprintf("%s %s %s", e.Kind, e.TaskID, e.Time.Format(time.RFC3339Nano)))
		}
		assert.Equal(t, wantEvents, got, id)
	}
	assert.Empty(t, rec.of("before"))
	assert.NotEmpty(t, rec.of("underway"))
	if evs := rec.of("waiting"); assert.NotEmpty(t, evs) {
		assert.Equal(t, durable.EventReviewDecided, evs[0].Kind, "the resume's decision comes first")
	}

	// Once the server is closed, its observer gets nothing more.
	require.NoError(t, h.Close())
	start(t, w, "after", `{"tasks": [{"id": "a", "agent": "echo", "input": "x"}]}`)
	time.Sleep(20 * poll)
	assert.Empty(t, rec.of("after"))
}
