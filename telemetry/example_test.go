package telemetry_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/telemetry"
)

// The program's providers — here the SDK's, with spans kept in memory —
// make the traces and metrics of every run the Observer sees.
func ExampleNew() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}()
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp), telemetry.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}

	p, _ := plan.Parse([]byte(`{"tasks": [{"id": "fetch", "agent": "w", "input": "x"}, {"id": "sum", "agent": "w", "input": "y", "depends_on": ["fetch"]}]}`))
	w := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{Output: "ok"}, nil })
	if _, err := runner.New(runner.WithAgent("w", w), runner.WithObserver(obs)).RunPlan(context.Background(), p); err != nil {
		fmt.Println(err)
		return
	}

	// Each span under its parent.
	names := make(map[[8]byte]string)
	for _, s := range spans.GetSpans() {
		names[s.SpanContext.SpanID()] = s.Name
	}
	var lines []string
	for _, s := range spans.GetSpans() {
		parent, ok := names[s.Parent.SpanID()]
		if !ok {
			parent = "(root)"
		}
		lines = append(lines, s.Name+" < "+parent)
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// attempt 1 < task fetch
	// attempt 1 < task sum
	// dagent run < (root)
	// phase 0 < dagent run
	// phase 1 < dagent run
	// task fetch < dagent run
	// task sum < dagent run
}

// A model call is a span of the GenAI conventions, a child of the span in
// its context: the attempt's, for an agent of an observed run.
func ExampleObserver_Client() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp))
	if err != nil {
		fmt.Println(err)
		return
	}
	model := llm.ClientFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "hello"}, Model: "small-2025",
			FinishReason: "stop", Usage: llm.Usage{PromptTokens: 12, CompletionTokens: 2}}, nil
	})
	c := obs.Client(model, "openai")
	if _, err := c.Complete(context.Background(), llm.Request{Model: "small", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
		fmt.Println(err)
		return
	}

	s := spans.GetSpans()[0]
	fmt.Println(s.Name, s.SpanKind)
	for _, kv := range s.Attributes {
		fmt.Printf("%s=%s\n", kv.Key, kv.Value.Emit())
	}
	// Output:
	// chat small client
	// gen_ai.operation.name=chat
	// gen_ai.provider.name=openai
	// gen_ai.request.model=small
	// gen_ai.response.model=small-2025
	// gen_ai.response.finish_reasons=["stop"]
	// gen_ai.usage.input_tokens=12
	// gen_ai.usage.output_tokens=2
}

// Events read back from a journal give the metrics the live run gave:
// the durations are the events'. Spans made from such events would be
// made again, so a program that only counts gives a no-op tracer
// provider (go.opentelemetry.io/otel/trace/noop).
func ExampleObserver_Observe() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	obs, err := telemetry.New(telemetry.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range []runner.Event{
		{Kind: runner.EventRunStarted, RunID: "r1"},
		{Kind: runner.EventTaskFinished, RunID: "r1", TaskID: "a", Attempt: 1, Duration: 1500e6},
		{Kind: runner.EventRunFinished, RunID: "r1", Status: runner.StatusCompleted, Duration: 2e9},
	} {
		obs.Observe(e)
	}
	fmt.Println(summary(reader))
	// Output:
	// dagent.run.duration: 1 recorded, sum 2
	// dagent.runs: 1
	// dagent.task.duration: 1 recorded, sum 1.5
	// dagent.tasks: 1
}

// A driver of its own — a [runner.Core] under a workflow engine, say —
// asks the Observer for the contexts of the run and of each attempt, and
// gives the attempt's to the agent: the agent's spans are the attempt's
// children.
func ExampleObserver_Context() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	obs, err := telemetry.New(telemetry.WithTracerProvider(tp))
	if err != nil {
		fmt.Println(err)
		return
	}
	start := time.Now()
	started := runner.Event{Kind: runner.EventRunStarted, Time: start, RunID: "r1"}
	ctx := obs.Context(context.Background(), started)
	obs.Observe(started)

	attempt := runner.Event{Kind: runner.EventTaskStarted, Time: start, RunID: "r1", TaskID: "fetch", Attempt: 1}
	actx := obs.Context(ctx, attempt)
	_, own := tp.Tracer("agent").Start(actx, "download")
	own.End()
	obs.Observe(attempt)
	obs.Observe(runner.Event{Kind: runner.EventTaskFinished, Time: start.Add(time.Second), RunID: "r1", TaskID: "fetch", Attempt: 1})
	obs.Observe(runner.Event{Kind: runner.EventRunFinished, Time: start.Add(time.Second), RunID: "r1", Status: runner.StatusCompleted})

	names := make(map[[8]byte]string)
	for _, s := range spans.GetSpans() {
		names[s.SpanContext.SpanID()] = s.Name
	}
	for _, s := range spans.GetSpans() {
		if s.Name == "download" {
			fmt.Println(s.Name, "is a child of", names[s.Parent.SpanID()])
		}
	}
	// Output:
	// download is a child of attempt 1
}
