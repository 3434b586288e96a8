package temporal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/temporal"
	"github.com/dagent-dev/dagent/temporal/internal/devserver"
)

// The benchmarks of this file measure what running on Temporal costs: a
// fan plan of trivial Go agents (each returns at once) run in process, on
// a Temporal dev server through the dagent workflow, and on the same
// server through a plain workflow that runs the same attempt activities,
// with the same requests and options, phase by phase, with no dagent
// logic. They report ns/task and tasks/s:
//
//	cd temporal && go test -run '^$' -bench DevServer -benchtime 3x
//
// The machine's other load moves these figures much from run to run:
// BenchmarkDevServerOverhead/paired alternates the two workflows and
// reports their ratio.

// devServer starts a dev server for the benchmark, stopped when it ends;
// it skips without the temporal CLI.
func devServer(b *testing.B) client.Client {
	b.Helper()
	cli := devserver.CLI()
	if cli == "" {
		b.Skip(devserver.Missing)
	}
	var out bytes.Buffer
	srv, err := devserver.Start(context.Background(), cli, quietLogger(), &out)
	if err != nil {
		b.Fatalf("starting the dev server: %v\n%s", err, out.String())
	}
	b.Cleanup(func() {
		srv.Client().Close()
		_ = srv.Stop()
	})
	return srv.Client()
}

// quietLogger logs the SDK's errors only: its default logs every
// activity.
func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}

// instant is the agent of every benchmark task: it returns at once.
var instant = agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
	return agent.Result{Output: map[string]any{"id": req.TaskID}}, nil
})

// fan is a plan of blocks × (1 + width) tasks of the "instant" worker:
// each block a hub fanning out to width leaves, which fan in to the next
// block's hub. Its phases are returned too, for the plain workflow.
func fan(b *testing.B, blocks, width int) (*plan.Plan, [][]string) {
	type task struct {
		ID        string   `json:"id"`
		Agent     string   `json:"agent"`
		DependsOn []string `json:"depends_on,omitempty"`
	}
	var tasks []task
	var phases [][]string
	var prev []string
	for bl := range blocks {
		hub := fmt.Sprintf("hub%02d", bl)
		tasks = append(tasks, task{ID: hub, Agent: "instant", DependsOn: prev})
		phases = append(phases, []string{hub})
		prev = nil
		for l := range width {
			id := fmt.Sprintf("b%02d_%03d", bl, l)
			tasks = append(tasks, task{ID: id, Agent: "instant", DependsOn: []string{hub}})
			prev = append(prev, id)
		}
		phases = append(phases, prev)
	}
	data, err := json.Marshal(map[string]any{"tasks": tasks})
	if err != nil {
		b.Fatal(err)
	}
	p, err := plan.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	return p, phases
}

func benchRegistry(b *testing.B) *registry.Registry {
	reg := registry.New()
	if err := reg.Register("instant", registry.Worker{Description: "returns at once", Outputs: []string{"id"}, Agent: instant}); err != nil {
		b.Fatal(err)
	}
	return reg
}

// perTask reports the time per task and the tasks per second of b's
// iterations, each a run of n tasks.
func perTask(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkDevServerOverhead runs a plan of 200 tasks in process, on the
// dagent workflow, and on a plain workflow of the same activities.
func BenchmarkDevServerOverhead(b *testing.B) {
	const blocks, width = 2, 99
	p, phases := fan(b, blocks, width)
	n := len(p.Tasks)
	reg := benchRegistry(b)
	b.Run("in-process", func(b *testing.B) {
		rn := runner.New(runner.WithRegistry(reg), runner.WithConcurrency(200))
		for b.Loop() {
			res, err := rn.RunPlan(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			if res.Status != runner.StatusCompleted {
				b.Fatalf("%s: %v", res.Status, res.Err)
			}
		}
		perTask(b, n)
	})
	c := devServer(b)
	b.Run("dagent-workflow", func(b *testing.B) {
		const q = "bench-dagent"
		w := worker.New(c, q, benchWorkerOptions)
		temporal.Register(w, temporal.NewActivities(reg))
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		i := 0
		for b.Loop() {
			i++
			runDagent(b, c, q, fmt.Sprintf("bench-overhead-%d-%d", time.Now().UnixNano(), i), p)
		}
		perTask(b, n)
	})
	deps := map[string][]string{}
	for _, t := range p.Tasks {
		deps[t.ID] = t.DependsOn
	}
	b.Run("plain-workflow", func(b *testing.B) {
		const q = "bench-plain"
		w := worker.New(c, q, benchWorkerOptions)
		w.RegisterWorkflowWithOptions(plainWorkflow, workflow.RegisterOptions{Name: "bench.Plain"})
		temporal.NewActivities(reg).Register(w)
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		i := 0
		for b.Loop() {
			i++
			runPlain(b, c, q, fmt.Sprintf("bench-plain-%d-%d", time.Now().UnixNano(), i), phases, deps)
		}
		perTask(b, n)
	})
	// paired runs both workflows on one worker in each iteration, the
	// one first and then the other in turn, so that a change of the
	// machine's load weighs on both alike: its dagent/plain is the figure
	// to compare with the target.
	b.Run("paired", func(b *testing.B) {
		const q = "bench-paired"
		w := worker.New(c, q, benchWorkerOptions)
		temporal.Register(w, temporal.NewActivities(reg))
		w.RegisterWorkflowWithOptions(plainWorkflow, workflow.RegisterOptions{Name: "bench.Plain"})
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		var dagent, plain time.Duration
		timed := func(run func(), sum *time.Duration) {
			t := time.Now()
			run()
			*sum += time.Since(t)
		}
		i := 0
		for b.Loop() {
			i++
			id := fmt.Sprintf("bench-paired-%d-%d", time.Now().UnixNano(), i)
			d := func() { runDagent(b, c, q, id+"-dagent", p) }
			pl := func() { runPlain(b, c, q, id+"-plain", phases, deps) }
			if i%2 == 1 {
				timed(d, &dagent)
				timed(pl, &plain)
			} else {
				timed(pl, &plain)
				timed(d, &dagent)
			}
		}
		b.ReportMetric(float64(dagent.Nanoseconds())/float64(b.N*n), "dagent-ns/task")
		b.ReportMetric(float64(plain.Nanoseconds())/float64(b.N*n), "plain-ns/task")
		b.ReportMetric(float64(dagent)/float64(plain), "dagent/plain")
	})
}

// BenchmarkDevServerThousand runs the plan of 1,000 tasks on the dagent
// workflow with one and with two workers (in this process, each with a
// client of its own).
func BenchmarkDevServerThousand(b *testing.B) {
	p, _ := fan(b, 10, 99)
	n := len(p.Tasks)
	reg := benchRegistry(b)
	c := devServer(b)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			q := fmt.Sprintf("bench-thousand-%d", workers)
			for range workers {
				wc, err := client.NewClientFromExisting(c, client.Options{Logger: quietLogger()})
				if err != nil {
					b.Fatal(err)
				}
				w := worker.New(wc, q, benchWorkerOptions)
				temporal.Register(w, temporal.NewActivities(reg))
				if err := w.Start(); err != nil {
					b.Fatal(err)
				}
				defer wc.Close()
				defer w.Stop()
			}
			i := 0
			for b.Loop() {
				i++
				runDagent(b, c, q, fmt.Sprintf("bench-thousand-%d-%d-%d", workers, time.Now().UnixNano(), i), p)
			}
			perTask(b, n)
		})
	}
}

// runDagent runs p on the dagent workflow and waits for it to complete.
func runDagent(b *testing.B, c client.Client, q, runID string, p *plan.Plan) {
	b.Helper()
	ctx := context.Background()
	spec := durable.Spec{Plan: p, Runner: durable.RunnerSpec{Concurrency: 200, TaskTimeout: 30 * time.Second}}
	if _, err := temporal.Start(ctx, c, q, runID, spec); err != nil {
		b.Fatal(err)
	}
	out, err := temporal.Result(ctx, c, runID)
	if err != nil {
		b.Fatal(err)
	}
	if out.Run.Status != runner.StatusCompleted {
		b.Fatalf("run %s: %s: %v", runID, out.Run.Status, out.Run.Err)
	}
}

// runPlain runs phases on the plain workflow as run id and waits for it
// to complete.
func runPlain(b *testing.B, c client.Client, q, id string, phases [][]string, deps map[string][]string) {
	b.Helper()
	in := plainInput{RunID: id, Phases: phases, Deps: deps, Agent: "instant", Timeout: 30 * time.Second}
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: q}, "bench.Plain", in)
	if err != nil {
		b.Fatal(err)
	}
	if err := run.Get(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
}

// plainInput is the plain workflow's input: the plan's phases, each
// task's direct dependencies, and what every attempt request carries.
type plainInput struct {
	RunID   string              `json:"run_id"`
	Phases  [][]string          `json:"phases"`
	Deps    map[string][]string `json:"deps"`
	Agent   string              `json:"agent"`
	Timeout time.Duration       `json:"timeout"`
}

// plainWorkflow runs each phase's tasks at once, a phase after the one
// before, each task one [temporal.ActivityAttempt] with the request the
// dagent workflow sends it (its dependencies' outputs) and the activity
// options it uses: the same activities and payloads, with nothing of
// dagent's decisions.
func plainWorkflow(ctx workflow.Context, in plainInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: in.Timeout + 12*time.Second,
		HeartbeatTimeout:    temporal.DefaultHeartbeatTimeout,
		RetryPolicy:         &sdktemporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: temporal.MaxActivityAttempts},
	})
	outputs := map[string]any{}
	for _, phase := range in.Phases {
		futures := make([]workflow.Future, len(phase))
		for i, id := range phase {
			deps := map[string]any{}
			for _, d := range in.Deps[id] {
				deps[d] = outputs[d]
			}
			req := agent.Request{RunID: in.RunID, TaskID: id, Agent: in.Agent, Attempt: 1, Depends: deps, IdempotencyKey: in.RunID + "/" + id + "/1"}
			futures[i] = workflow.ExecuteActivity(ctx, temporal.ActivityAttempt, temporal.AttemptRequest{Request: req, Timeout: in.Timeout})
		}
		for i, f := range futures {
			var out temporal.AttemptReply
			if err := f.Get(ctx, &out); err != nil {
				return err
			}
			if out.Failure != nil {
				return out.Failure.Err()
			}
			var v any
			if err := json.Unmarshal(out.Output, &v); err != nil {
				return err
			}
			outputs[phase[i]] = v
		}
	}
	return nil
}

var benchWorkerOptions = worker.Options{MaxConcurrentActivityTaskPollers: 8, MaxConcurrentWorkflowTaskPollers: 4}
