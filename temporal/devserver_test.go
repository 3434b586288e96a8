package temporal

import (
	"bytes"
	"context"
	"flag"
	"go/build"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

// record makes TestRunPlanOnDevServer write the history of its run to
// historyFile, for TestReplayRunPlan:
//
//	go test -run TestRunPlanOnDevServer -record
var record = flag.Bool("record", false, "write the dev server run's history to "+historyFile)

// temporalCLI finds the temporal CLI: $DAGENT_TEMPORAL_CLI, else temporal
// on PATH, else the one go install puts in $GOPATH/bin. Empty if none.
func temporalCLI() string {
	if p := os.Getenv("DAGENT_TEMPORAL_CLI"); p != "" {
		return p
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		gopath = build.Default.GOPATH
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "temporal")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// TestRunPlanOnDevServer runs RunPlan on a real Temporal dev server,
// started here from the temporal CLI and stopped after.
func TestRunPlanOnDevServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no dev server")
	}
	cli := temporalCLI()
	if cli == "" {
		t.Skip("no temporal CLI: set DAGENT_TEMPORAL_CLI, put temporal on PATH, or " +
			"CGO_ENABLED=0 go install github.com/temporalio/cli/cmd/temporal@v1.5.1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var out bytes.Buffer // the server's output, shown if the test fails
	start := time.Now()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: cli,
		// The SDK's default logger writes every poll at debug level.
		ClientOptions: &client.Options{Logger: log.NewStructuredLogger(
			slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))},
		LogLevel: "error",
		Stdout:   &out,
		Stderr:   &out,
	})
	if err != nil {
		t.Fatalf("starting the dev server (%s): %v\n%s", cli, err, out.String())
	}
	t.Logf("dev server ready at %s in %v", srv.FrontendHostPort(), time.Since(start).Round(time.Millisecond))
	defer func() {
		srv.Client().Close()
		if err := srv.Stop(); err != nil {
			t.Logf("stopping the dev server: %v", err)
		}
		if t.Failed() {
			t.Logf("dev server output:\n%s", out.String())
		}
	}()

	const queue = "dagent-test"
	w := worker.New(srv.Client(), queue, worker.Options{})
	w.RegisterWorkflow(RunPlan)
	w.RegisterActivity(RunTask)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	run, err := srv.Client().ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "runplan-diamond",
		TaskQueue: queue,
	}, RunPlan, diamond)
	if err != nil {
		t.Fatal(err)
	}
	var got []Result
	if err := run.Get(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, diamondResults) {
		t.Fatalf("results:\n got %v\nwant %v", got, diamondResults)
	}
	t.Logf("workflow done %v after start", time.Since(start).Round(time.Millisecond))

	// The history the CLI exports (as the SDK's docs suggest) replays too.
	cliJSON, err := exec.CommandContext(ctx, cli, "workflow", "show",
		"--address", srv.FrontendHostPort(), "--workflow-id", run.GetID(), "--run-id", run.GetRunID(),
		"--output", "json").Output()
	if err != nil {
		t.Fatalf("temporal workflow show: %v", err)
	}
	exported := filepath.Join(t.TempDir(), "history.json")
	if err := os.WriteFile(exported, cliJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(RunPlan)
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, exported); err != nil {
		t.Fatalf("replaying the CLI's export: %v", err)
	}

	if *record {
		hist := &historypb.History{}
		it := srv.Client().GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			hist.Events = append(hist.Events, ev)
		}
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(historyFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d events to %s", len(hist.Events), historyFile)
	}
}
