package telemetry

import (
	"container/list"
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/internal/prose"
	"github.com/dagent-dev/dagent/runner"
)

// Attributes of the spans and instruments, besides the OpenTelemetry
// semantic conventions'.
const (
	AttrRunID         = attribute.Key("dagent.run.id")
	AttrRunStatus     = attribute.Key("dagent.run.status")
	AttrPhase         = attribute.Key("dagent.phase")
	AttrTaskID        = attribute.Key("dagent.task.id")
	AttrTaskStatus    = attribute.Key("dagent.task.status")
	AttrAttempt       = attribute.Key("dagent.attempt")
	AttrAttempts      = attribute.Key("dagent.task.attempts")
	AttrFailureClass  = attribute.Key("dagent.failure.class")
	AttrPassed        = attribute.Key("dagent.verify.passed")
	AttrPlanVersion   = attribute.Key("dagent.plan.version")
	AttrPlanTasks     = attribute.Key("dagent.plan.tasks")
	AttrPlanNewTasks  = attribute.Key("dagent.plan.new_tasks")
	AttrRound         = attribute.Key("dagent.round")
	AttrHalt          = attribute.Key("dagent.halt")
	AttrReplanOutcome = attribute.Key("dagent.replan.outcome")
	AttrInputTokens   = attribute.Key("dagent.usage.input_tokens")
	AttrOutputTokens  = attribute.Key("dagent.usage.output_tokens")
)

// retainedRoots bounds the executions whose root span an Observer keeps
// after it ended, for the repairs and rounds that follow it to join its
// trace.
const retainedRoots = 256

// maxStatusText bounds the description of an error status: the first
// line of the error, cut.
const maxStatusText = 512

// traces builds the spans of runs from their events. A run's span is
// kept while it runs, with those of its phases, tasks and attempts under
// way; the root of an execution that replans is kept a while after it
// ended, for its repairs.
type traces struct {
	tracer trace.Tracer

	mu    sync.Mutex
	runs  map[string]*runTrace
	execs roots
}

// runTrace is a run under way.
type runTrace struct {
	ctx  context.Context // holds span
	span trace.Span
	// rec says the run's span records: the spans under it are made only
	// then, so that an unsampled run, or a no-op provider, costs little.
	rec    bool
	exec   *execution // the execution it is a later run of; nil for a root
	phases map[int]trace.Span
	tasks  map[string]*taskTrace
}

// taskTrace is a task under way.
type taskTrace struct {
	ctx      context.Context // holds span
	span     trace.Span
	attempts map[int]trace.Span // the attempts not ended yet
	// checked is when the last check of attempt checkedOf ended: the next
	// check of the same attempt starts then.
	checked   time.Time
	checkedOf int
}

// execution is an execution that replans or plans in rounds: the span its
// later runs and its planning are children of.
type execution struct {
	id   string // the base run id
	root trace.SpanContext
	open trace.Span // the replan or round under way
	next string     // the run id of the plan adopted last, not started yet
}

func newTraces(tracer trace.Tracer) *traces {
	return &traces{tracer: tracer, runs: make(map[string]*runTrace), execs: newRoots(retainedRoots)}
}

// context is [Observer.Context].
func (t *traces) context(ctx context.Context, e runner.Event) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case runner.EventRunStarted:
		return trace.ContextWithSpan(ctx, t.run(ctx, e).span)
	case runner.EventTaskStarted, runner.EventTaskRetried:
		r := t.runs[e.RunID]
		if r == nil || !r.rec {
			return ctx
		}
		return trace.ContextWithSpan(ctx, t.attempt(t.task(r, e), e))
	}
	return ctx
}

// observe records e in its run's trace, and returns the context of the
// span it is about, for the metrics' exemplars.
func (t *traces) observe(e runner.Event) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case runner.EventRunStarted:
		t.run(context.Background(), e)
		return context.Background()
	case runner.EventRunFinished:
		return t.runFinished(e)
	case executor.EventReplanRequested:
		t.plan(e, "replan", AttrTaskID.String(e.TaskID), AttrFailureClass.String(string(e.Class)), AttrPlanVersion.Int(e.Version))
		return context.Background()
	case executor.EventRoundRequested:
		t.plan(e, "round "+strconv.Itoa(e.Attempt), AttrRound.Int(e.Attempt))
		return context.Background()
	case executor.EventRepairAdopted, executor.EventRoundAdopted:
		t.adopted(e)
		return context.Background()
	case executor.EventReplanFailed:
		t.planEnded(e, e.Err)
		return context.Background()
	case executor.EventHalted, executor.EventRoundsDone:
		t.executionEnded(e)
		return context.Background()
	}
	r := t.runs[e.RunID]
	if r == nil || !r.rec {
		return context.Background()
	}
	switch e.Kind {
	case runner.EventPhaseStarted:
		_, span := t.tracer.Start(r.ctx, "phase "+strconv.Itoa(e.Phase), trace.WithTimestamp(e.Time),
			trace.WithAttributes(AttrRunID.String(e.RunID), AttrPhase.Int(e.Phase)))
		r.phases[e.Phase] = span
	case runner.EventPhaseFinished:
		if span := r.phases[e.Phase]; span != nil {
			span.End(trace.WithTimestamp(e.Time))
			delete(r.phases, e.Phase)
		}
	case runner.EventTaskStarted:
		tt := t.task(r, e)
		t.attempt(tt, e)
		return tt.ctx
	case runner.EventTaskRetried:
		tt := t.task(r, e)
		endAttempt(tt, e.Attempt-1, e, e.Err)
		t.attempt(tt, e)
		return tt.ctx
	case runner.EventTaskVerified:
		tt := t.task(r, e)
		t.verified(tt, e)
		return tt.ctx
	case runner.EventTaskFinished, runner.EventTaskFailed, runner.EventTaskSkipped, runner.EventTaskWaiting:
		return t.taskEnded(r, e)
	}
	return context.Background()
}

// run returns the trace of e's run, starting it, as a child of the
// execution it is a later run of, else of the span in parent, if it is
// not under way.
func (t *traces) run(parent context.Context, e runner.Event) *runTrace {
	if r := t.runs[e.RunID]; r != nil {
		return r
	}
	ex := t.executionOf(e.RunID)
	if ex != nil {
		ex.next = ""
		parent = trace.ContextWithSpanContext(context.Background(), ex.root)
	}
	ctx, span := t.tracer.Start(parent, "dagent run", trace.WithTimestamp(e.Time), trace.WithAttributes(AttrRunID.String(e.RunID)))
	r := &runTrace{ctx: ctx, span: span, rec: span.IsRecording(), exec: ex}
	if r.rec {
		r.phases = make(map[int]trace.Span)
		r.tasks = make(map[string]*taskTrace)
	}
	t.runs[e.RunID] = r
	return r
}

// executionOf returns the execution whose plan adopted last runs as run
// id, if any.
func (t *traces) executionOf(id string) *execution {
	base := id
	if i := strings.LastIndexByte(id, '.'); i > 0 {
		base = id[:i]
	}
	for _, b := range []string{id, base} {
		if ex := t.execs.get(b); ex != nil && ex.next == id {
			return ex
		}
	}
	return nil
}

// runFinished ends the run's spans at e, and keeps the root of its
// execution for the repairs that may follow.
func (t *traces) runFinished(e runner.Event) context.Context {
	r := t.runs[e.RunID]
	if r == nil {
		return context.Background()
	}
	delete(t.runs, e.RunID)
	if r.exec == nil {
		t.execs.put(&execution{id: e.RunID, root: r.span.SpanContext()})
	} else {
		t.execs.touch(r.exec.id)
	}
	if !r.rec {
		r.span.End()
		return r.ctx
	}
	end := trace.WithTimestamp(e.Time)
	for _, tt := range r.tasks {
		for _, a := range tt.attempts {
			a.End(end)
		}
		tt.span.End(end)
	}
	for _, p := range r.phases {
		p.End(end)
	}
	r.span.SetAttributes(AttrRunStatus.String(string(e.Status)))
	setUsage(r.span, e)
	if e.Status == runner.StatusFailed {
		setError(r.span, e.Err)
	}
	r.span.End(end)
	return r.ctx
}

// task returns the trace of e's task, starting it when e is its first
// event: it started e.Duration before e.
func (t *traces) task(r *runTrace, e runner.Event) *taskTrace {
	if tt := r.tasks[e.TaskID]; tt != nil {
		return tt
	}
	ctx, span := t.tracer.Start(r.ctx, "task "+e.TaskID, trace.WithTimestamp(e.Time.Add(-e.Duration)),
		trace.WithAttributes(AttrRunID.String(e.RunID), AttrTaskID.String(e.TaskID), AttrPhase.Int(e.Phase)))
	tt := &taskTrace{ctx: ctx, span: span, attempts: make(map[int]trace.Span, 1)}
	r.tasks[e.TaskID] = tt
	return tt
}

// attempt returns the span of the attempt e starts, starting it at e.
func (t *traces) attempt(tt *taskTrace, e runner.Event) trace.Span {
	if a := tt.attempts[e.Attempt]; a != nil {
		return a
	}
	_, a := t.tracer.Start(tt.ctx, "attempt "+strconv.Itoa(e.Attempt), trace.WithTimestamp(e.Time),
		trace.WithAttributes(AttrRunID.String(e.RunID), AttrTaskID.String(e.TaskID), AttrAttempt.Int(e.Attempt)))
	tt.attempts[e.Attempt] = a
	return a
}

// endAttempt ends attempt n of tt, if it has not ended, when its agent
// returned as e says; err, when set, is its failure.
func endAttempt(tt *taskTrace, n int, e runner.Event, err error) {
	a := tt.attempts[n]
	if a == nil {
		return
	}
	delete(tt.attempts, n)
	if err != nil {
		a.SetAttributes(AttrFailureClass.String(string(classOf(e))))
		setError(a, err)
	}
	at := e.Time
	if !e.AttemptEnded.IsZero() && e.AttemptEnded.Before(at) {
		at = e.AttemptEnded
	}
	a.End(trace.WithTimestamp(at))
}

// verified records the check e reports: a span from the end of the
// attempt, or of the check before of the same attempt, to e. The attempt
// ends where its check begins, a success: the check says how its output
// fared.
func (t *traces) verified(tt *taskTrace, e runner.Event) {
	endAttempt(tt, e.Attempt, e, nil)
	start := e.AttemptEnded
	if tt.checkedOf == e.Attempt && tt.checked.After(start) {
		start = tt.checked
	}
	if start.IsZero() || start.After(e.Time) {
		start = e.Time
	}
	_, span := t.tracer.Start(tt.ctx, "verify", trace.WithTimestamp(start), trace.WithAttributes(
		AttrRunID.String(e.RunID), AttrTaskID.String(e.TaskID), AttrAttempt.Int(e.Attempt), AttrPassed.Bool(e.Passed && e.Err == nil)))
	switch {
	case e.Err != nil:
		setError(span, e.Err)
	case !e.Passed:
		span.SetStatus(codes.Error, prose.Excerpt(e.Diagnosis, maxStatusText))
	}
	span.End(trace.WithTimestamp(e.Time))
	tt.checked, tt.checkedOf = e.Time, e.Attempt
}

// taskEnded ends the task of e, its final event, and its last attempt.
func (t *traces) taskEnded(r *runTrace, e runner.Event) context.Context {
	tt := t.task(r, e)
	delete(r.tasks, e.TaskID)
	var failure error
	if e.Kind != runner.EventTaskFinished {
		failure = e.Err
	}
	for n := range tt.attempts {
		endAttempt(tt, n, e, failure)
	}
	status := taskStatus(e.Kind)
	tt.span.SetAttributes(AttrTaskStatus.String(string(status)), AttrAttempts.Int(e.Attempt))
	setUsage(tt.span, e)
	if cl := classOf(e); cl != "" {
		tt.span.SetAttributes(AttrFailureClass.String(string(cl)))
	}
	if status == runner.TaskFailed {
		setError(tt.span, e.Err)
	}
	tt.span.End(trace.WithTimestamp(e.Time))
	return tt.ctx
}

// plan starts the span of the planning e requests, a replan or a round,
// as a child of its execution's root; it is the root of an execution that
// plans its first round.
func (t *traces) plan(e runner.Event, name string, attrs ...attribute.KeyValue) {
	ex := t.execs.get(e.RunID)
	parent := context.Background()
	if ex != nil {
		parent = trace.ContextWithSpanContext(parent, ex.root)
		if ex.open != nil {
			ex.open.End(trace.WithTimestamp(e.Time))
		}
	}
	_, span := t.tracer.Start(parent, name, trace.WithTimestamp(e.Time),
		trace.WithAttributes(append(attrs, AttrRunID.String(e.RunID))...))
	if ex == nil {
		ex = &execution{id: e.RunID, root: span.SpanContext()}
		t.execs.put(ex)
	}
	ex.open = span
}

// adopted ends the planning of the plan e adopts, which runs next.
func (t *traces) adopted(e runner.Event) {
	ex := t.execs.get(e.RunID)
	if ex == nil || ex.open == nil {
		return
	}
	ex.open.SetAttributes(AttrPlanVersion.Int(e.Version), AttrPlanTasks.Int(e.Tasks), AttrPlanNewTasks.Int(e.NewTasks),
		AttrReplanOutcome.String("adopted"))
	t.planEnded(e, nil)
	ex.next = e.RunID
	if e.Version > 0 {
		ex.next += "." + strconv.Itoa(e.Version)
	}
}

// planEnded ends the planning under way at e, failed with err when set.
func (t *traces) planEnded(e runner.Event, err error) {
	ex := t.execs.get(e.RunID)
	if ex == nil || ex.open == nil {
		return
	}
	if err != nil {
		ex.open.SetAttributes(AttrReplanOutcome.String("failed"))
		setError(ex.open, err)
	}
	ex.open.End(trace.WithTimestamp(e.Time))
	ex.open = nil
}

// executionEnded records the last event of an execution, e: its halt, a
// span of no length, or its planner's saying it is done; the execution's
// root is let go.
func (t *traces) executionEnded(e runner.Event) {
	t.planEnded(e, nil)
	if e.Kind == executor.EventHalted {
		parent := context.Background()
		if ex := t.execs.get(e.RunID); ex != nil {
			parent = trace.ContextWithSpanContext(parent, ex.root)
		}
		_, span := t.tracer.Start(parent, "halt", trace.WithTimestamp(e.Time), trace.WithAttributes(
			AttrRunID.String(e.RunID), AttrHalt.String(e.Halt), AttrTaskID.String(e.TaskID), AttrFailureClass.String(string(e.Class))))
		setError(span, e.Err)
		span.End(trace.WithTimestamp(e.Time))
	}
	t.execs.remove(e.RunID)
}

// taskStatus is the status a task's final event of kind k says.
func taskStatus(k runner.EventKind) runner.TaskStatus {
	switch k {
	case runner.EventTaskFinished:
		return runner.TaskDone
	case runner.EventTaskSkipped:
		return runner.TaskSkipped
	case runner.EventTaskWaiting:
		return runner.TaskWaiting
	}
	return runner.TaskFailed
}

// classOf is the failure class of a task event: its Class, as an event
// read back from a journal may carry, else that of its error.
func classOf(e runner.Event) runner.Class {
	switch {
	case e.Class != "":
		return e.Class
	case e.Err == nil:
		// Classify would say so too, after allocating.
		return ""
	}
	return runner.Classify(e.Err)
}

// setError marks span failed with err's first line as the description.
func setError(span trace.Span, err error) {
	msg := "failed"
	if err != nil {
		msg = prose.Excerpt(err.Error(), maxStatusText)
	}
	span.SetStatus(codes.Error, msg)
}

// setUsage records the token usage of e on span, when there is any.
func setUsage(span trace.Span, e runner.Event) {
	if e.Usage.PromptTokens == 0 && e.Usage.CompletionTokens == 0 {
		return
	}
	span.SetAttributes(AttrInputTokens.Int(e.Usage.PromptTokens), AttrOutputTokens.Int(e.Usage.CompletionTokens))
}

// roots is a bounded set of executions, by base run id: the one used
// longest ago goes when a new one would exceed the bound.
type roots struct {
	max   int
	order *list.List // of *execution, the most recently used first
	by    map[string]*list.Element
}

func newRoots(max int) roots {
	return roots{max: max, order: list.New(), by: make(map[string]*list.Element)}
}

func (r *roots) get(id string) *execution {
	if el := r.by[id]; el != nil {
		return el.Value.(*execution)
	}
	return nil
}

func (r *roots) put(ex *execution) {
	r.remove(ex.id)
	r.by[ex.id] = r.order.PushFront(ex)
	if r.order.Len() > r.max {
		last := r.order.Back()
		r.order.Remove(last)
		delete(r.by, last.Value.(*execution).id)
	}
}

func (r *roots) touch(id string) {
	if el := r.by[id]; el != nil {
		r.order.MoveToFront(el)
	}
}

func (r *roots) remove(id string) {
	if el := r.by[id]; el != nil {
		r.order.Remove(el)
		delete(r.by, id)
	}
}
