package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/dagent-dev/dagent/telemetry"
	"github.com/dagent-dev/dagent/telemetry/prom"
	"github.com/dagent-dev/dagent/web"
)

// A host serves its journal; a decision made on a run's page resumes the
// run with the host's workers.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "web")
	defer os.RemoveAll(dir)
	s, _ := sqlite.Open(filepath.Join(dir, "dagent.db"))
	defer s.Close()
	p, _ := plan.Parse([]byte(`{"tasks": [
		{"id": "draft", "agent": "echo", "input": "hello"},
		{"id": "approve", "type": "human_review", "input": "Send it?", "depends_on": ["draft"]}]}`))
	ctx := context.Background()
	durable.Start(ctx, s, durable.Spec{Plan: p}, durable.WithAgent("echo", echo), durable.WithRunID("r1"))

	h, err := web.New(web.Options{
		Store: s,
		Addr:  "127.0.0.1:7700",
		Decide: func(ctx context.Context, id string, d map[string]runner.Decision, by string) error {
			_, err := durable.Resume(ctx, s, id, durable.WithAgent("echo", echo), durable.WithReviews(d), durable.WithReviewer(by))
			return err
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()

	req := httptest.NewRequest(http.MethodGet, "/runs/r1", nil)
	req.Host = "127.0.0.1:7700"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	fmt.Println(w.Code, strings.Contains(w.Body.String(), "Send it?"))
	// Output: 200 true
}

// A server that other machines can reach needs a token.
func ExampleCheckAddr() {
	fmt.Println(web.CheckAddr("127.0.0.1:7700", ""))
	fmt.Println(web.CheckAddr("0.0.0.0:7700", ""))
	fmt.Println(web.CheckAddr("0.0.0.0:7700", "s3cret"))
	// Output:
	// <nil>
	// a server that listens beyond loopback needs a token: 0.0.0.0:7700 is not a loopback address
	// <nil>
}

// A server serves at /metrics the metrics of the runs the journal gets
// while it runs, whichever process runs them: its Observer, package
// telemetry's on a Prometheus exporter, is given their events.
func ExampleNew_metrics() {
	dir, _ := os.MkdirTemp("", "web")
	defer os.RemoveAll(dir)
	s, _ := sqlite.Open(filepath.Join(dir, "dagent.db"))
	defer s.Close()
	ex, _ := prom.New()
	obs, _ := telemetry.New(telemetry.WithMeterProvider(ex.MeterProvider()), telemetry.WithTracerProvider(tracenoop.NewTracerProvider()))
	h, err := web.New(web.Options{Store: s, Addr: "127.0.0.1:7700", Metrics: ex, Observer: obs})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()

	// Another process may run it: the server reads the journal.
	p, _ := plan.Parse([]byte(`{"tasks": [{"id": "a", "agent": "echo", "input": "hello"}]}`))
	durable.Start(context.Background(), s, durable.Spec{Plan: p}, durable.WithAgent("echo", echo))

	for range 100 {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Host = "127.0.0.1:7700"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		for line := range strings.Lines(w.Body.String()) {
			if strings.HasPrefix(line, `dagent_runs_total{dagent_run_status="completed"`) {
				fmt.Print("runs completed: ", line[strings.LastIndex(line, " ")+1:])
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Output: runs completed: 1
}
