package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/runner"
)

// Names of the instruments an [Observer] makes. A Prometheus exporter
// writes them with dots as underscores, the unit as a suffix and counters
// ending in _total: dagent_tasks_total, dagent_task_duration_seconds,
// gen_ai_client_token_usage and so on.
const (
	MetricTasks        = "dagent.tasks"
	MetricTaskDuration = "dagent.task.duration"
	MetricTaskRetries  = "dagent.task.retries"
	MetricTaskTokens   = "dagent.task.tokens"
	MetricRuns         = "dagent.runs"
	MetricRunDuration  = "dagent.run.duration"
	MetricReplans      = "dagent.replans"
	MetricLLMCalls     = "dagent.llm.calls"
	// The GenAI semantic conventions' client metrics.
	MetricTokenUsage        = "gen_ai.client.token.usage"
	MetricOperationDuration = "gen_ai.client.operation.duration"
)

// durationBuckets are the bucket bounds of the task and run durations, in
// seconds: from a few milliseconds, a Go worker's, to an hour, a long
// model's.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// The bucket bounds the GenAI semantic conventions advise.
var (
	tokenBuckets       = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	llmDurationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	inputTokens        = attribute.NewSet(semconv.GenAITokenTypeInput)
	outputTokens       = attribute.NewSet(semconv.GenAITokenTypeOutput)
	replansAdopted     = attribute.NewSet(AttrReplanOutcome.String("adopted"))
	replansFailed      = attribute.NewSet(AttrReplanOutcome.String("failed"))
)

// instruments are an Observer's metrics.
type instruments struct {
	tasks        metric.Int64Counter
	taskDuration metric.Float64Histogram
	retries      metric.Int64Counter
	taskTokens   metric.Int64Counter
	runs         metric.Int64Counter
	runDuration  metric.Float64Histogram
	replans      metric.Int64Counter
	calls        metric.Int64Counter
	tokenUsage   genaiconv.ClientTokenUsage
	llmDuration  genaiconv.ClientOperationDuration

	// The attribute sets of the statuses without a failure class, made
	// once: the common case records without allocating.
	taskStatus map[runner.TaskStatus]attribute.Set
	runStatus  map[runner.Status]attribute.Set
}

func newInstruments(m metric.Meter) (*instruments, error) {
	in := &instruments{taskStatus: make(map[runner.TaskStatus]attribute.Set), runStatus: make(map[runner.Status]attribute.Set)}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	in.tasks, err = m.Int64Counter(MetricTasks, metric.WithUnit("{task}"),
		metric.WithDescription("Tasks that reached a final state (done, failed or skipped: not waiting for review), by status and failure class."))
	add(err)
	in.taskDuration, err = m.Float64Histogram(MetricTaskDuration, metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBuckets...),
		metric.WithDescription("Time from a task's start to its final state, its attempts, checks and waits before retries included."))
	add(err)
	in.retries, err = m.Int64Counter(MetricTaskRetries, metric.WithUnit("{retry}"),
		metric.WithDescription("Attempts of tasks after their first."))
	add(err)
	in.taskTokens, err = m.Int64Counter(MetricTaskTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Tokens the attempts of tasks used, by type (input or output), counted when each task settles."))
	add(err)
	in.runs, err = m.Int64Counter(MetricRuns, metric.WithUnit("{run}"),
		metric.WithDescription("Runs that ended, by status: a run that stops to wait for review ends when a resume goes on with it."))
	add(err)
	in.runDuration, err = m.Float64Histogram(MetricRunDuration, metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBuckets...),
		metric.WithDescription("Time from a run's start to its end."))
	add(err)
	in.replans, err = m.Int64Counter(MetricReplans, metric.WithUnit("{replan}"),
		metric.WithDescription("Repair plans asked of the replanner, by outcome (adopted or failed)."))
	add(err)
	in.calls, err = m.Int64Counter(MetricLLMCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Chat completions asked of the model, by provider, model and error type."))
	add(err)
	in.tokenUsage, err = genaiconv.NewClientTokenUsage(m, metric.WithExplicitBucketBoundaries(tokenBuckets...))
	add(err)
	in.llmDuration, err = genaiconv.NewClientOperationDuration(m, metric.WithExplicitBucketBoundaries(llmDurationBuckets...))
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, s := range []runner.TaskStatus{runner.TaskDone, runner.TaskFailed, runner.TaskSkipped} {
		in.taskStatus[s] = attribute.NewSet(AttrTaskStatus.String(string(s)))
	}
	for _, s := range []runner.Status{runner.StatusCompleted, runner.StatusFailed, runner.StatusReplanRequired} {
		in.runStatus[s] = attribute.NewSet(AttrRunStatus.String(string(s)))
	}
	return in, nil
}

// observe records e in the metrics; ctx holds the span e is about, for
// exemplars.
func (in *instruments) observe(ctx context.Context, e runner.Event) {
	switch e.Kind {
	case runner.EventTaskFinished, runner.EventTaskFailed, runner.EventTaskSkipped:
		// A task waiting for review is not at its end: it is counted once
		// decided, by the run that goes on with the decision.
		status := taskStatus(e.Kind)
		set := in.taskStatus[status]
		if cl := classOf(e); cl != "" {
			set = attribute.NewSet(AttrTaskStatus.String(string(status)), AttrFailureClass.String(string(cl)))
		}
		if in.tasks.Enabled(ctx) {
			in.tasks.Add(ctx, 1, metric.WithAttributeSet(set))
		}
		if in.taskDuration.Enabled(ctx) {
			in.taskDuration.Record(ctx, e.Duration.Seconds(), metric.WithAttributeSet(in.taskStatus[status]))
		}
		if in.taskTokens.Enabled(ctx) {
			if n := e.Usage.PromptTokens; n > 0 {
				in.taskTokens.Add(ctx, int64(n), metric.WithAttributeSet(inputTokens))
			}
			if n := e.Usage.CompletionTokens; n > 0 {
				in.taskTokens.Add(ctx, int64(n), metric.WithAttributeSet(outputTokens))
			}
		}
	case runner.EventTaskRetried:
		in.retries.Add(ctx, 1)
	case runner.EventRunFinished:
		if e.Status == runner.StatusWaiting {
			// A pause: the run ends when a resume goes on with it.
			return
		}
		set, ok := in.runStatus[e.Status]
		if !ok {
			set = attribute.NewSet(AttrRunStatus.String(string(e.Status)))
		}
		if in.runs.Enabled(ctx) {
			in.runs.Add(ctx, 1, metric.WithAttributeSet(set))
		}
		if in.runDuration.Enabled(ctx) {
			in.runDuration.Record(ctx, e.Duration.Seconds(), metric.WithAttributeSet(set))
		}
	case executor.EventRepairAdopted:
		in.replans.Add(ctx, 1, metric.WithAttributeSet(replansAdopted))
	case executor.EventReplanFailed:
		in.replans.Add(ctx, 1, metric.WithAttributeSet(replansFailed))
	}
}
