package temporal_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"strings"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/temporal"
)

// A worker process runs the workflow and the activities on the host's
// registry; a client starts runs, answers their reviews and reads their
// results.
func Example() {
	ctx := context.Background()
	c, err := client.Dial(client.Options{HostPort: "localhost:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// The worker.
	reg := registry.New() // the host's trusted workers and tools
	w := worker.New(c, "dagent", worker.Options{})
	temporal.Register(w, temporal.NewActivities(reg))
	if err := w.Start(); err != nil {
		log.Fatal(err)
	}
	defer w.Stop()

	// The client.
	p, err := plan.Parse([]byte(`{"tasks": [{"id": "a", "agent": "shell", "input": "make"}]}`))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := temporal.Start(ctx, c, "dagent", "run-1", durable.Spec{Plan: p}); err != nil {
		log.Fatal(err)
	}
	snap, err := temporal.Tasks(ctx, c, "run-1")
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range snap.PendingReviews {
		if err := temporal.Decide(ctx, c, "run-1", r.TaskID, runner.Approve()); err != nil {
			log.Fatal(err)
		}
	}
	out, err := temporal.Result(ctx, c, "run-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Run.Status)
}

// The workflow in the SDK's test environment: the same registration as a
// worker's.
func ExampleWorkflow_Run() {
	reg := registry.New()
	upper := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: strings.ToUpper(req.Input)}, nil
	})
	if err := reg.Register("upper", registry.Worker{Agent: upper}); err != nil {
		log.Fatal(err)
	}
	p, err := plan.Parse([]byte(`{"tasks": [
		{"id": "a", "agent": "upper", "input": "hello"},
		{"id": "b", "agent": "upper", "input": "{{results.a}} again", "depends_on": ["a"],
		 "verification": "(= data/result \"HELLO AGAIN\")"}]}`))
	if err != nil {
		log.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	temporal.Register(env, temporal.NewActivities(reg))
	env.ExecuteWorkflow(temporal.WorkflowName, temporal.Input{RunID: "example", Spec: durable.Spec{Plan: p}})
	var out temporal.Outcome
	if err := env.GetWorkflowResult(&out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Run.Status, out.Run.Tasks["b"].Output)
	// Output: completed HELLO AGAIN
}
