package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/verify"
)

// abandonGrace is how long an agent may take to return after its context
// ends before the runner leaves it behind.
const abandonGrace = 500 * time.Millisecond

// job is what a task goroutine needs, prepared by the scheduler from
// settled results.
type job struct {
	i       int
	task    *plan.Task
	st      *taskState
	started time.Time
	input   string         // rendered
	refs    map[string]any // the value of each template in the input
	err     error          // rendering or wiring failed
	inputs  map[string]any
	depends map[string]any
	skipped []string
}

// action is what a task's final state means for the run.
type action int

const (
	actNone     action = iota
	actHalt            // no new task starts; the run fails
	actGate            // a gate failed and its policy halts the run
	actGateOnly        // a gate failed: its downstream is skipped, the run fails
	actReplan          // the run ends as replan_required
)

// outcome is a task's final state, reported to the scheduler.
type outcome struct {
	i         int
	status    TaskStatus
	action    action
	attempts  int
	output    any
	err       error
	diagnosis string
	usage     agent.Usage
}

// failure is one failed attempt: which policy handles it and why.
type failure struct {
	policy    plan.Policy
	err       error
	diagnosis string
	output    any // the output that failed verification, if any
	verdict   bool
}

// execute runs a task's attempts until it is done or fails for good.
func (r *run) execute(ctx context.Context, j job) outcome {
	t := j.task
	o := outcome{i: j.i}
	if j.err != nil {
		// Upstream outputs will not change on a retry: fail at once.
		r.emitTask(EventTaskStarted, j, 1, nil, "")
		o.attempts = 1
		return r.fail(o, failure{policy: t.OnFailure, err: j.err, diagnosis: j.err.Error()}, t)
	}
	if t.Type == plan.TypeHumanReview {
		return r.review(ctx, j, o)
	}
	var last failure
	for attempt := 1; ; attempt++ {
		req := agent.Request{
			RunID: r.id, TaskID: t.ID, Agent: t.Agent, Input: j.input, Attempt: attempt,
			Depends: j.depends, Skipped: j.skipped, Inputs: j.inputs, Params: t.Params, OutputSchema: t.OutputSchema,
			IdempotencyKey: r.id + "/" + t.ID + "/" + strconv.Itoa(attempt),
		}
		if j.refs != nil {
			req.Template, req.Refs = t.Input, j.refs
		}
		if attempt == 1 {
			r.emitTask(EventTaskStarted, j, attempt, nil, "")
		} else {
			req.Diagnosis = last.diagnosis
			req.Input = retryInput(j.input, last)
			r.emitTask(EventTaskRetried, j, attempt, last.err, last.diagnosis)
		}
		output, usage, err := r.attempt(ctx, j, req)
		o.attempts, o.usage = attempt, o.usage.Add(usage)
		if err != nil && ctx.Err() != nil {
			o.status, o.err, o.diagnosis = TaskFailed, fmt.Errorf("cancelled: %w", context.Cause(ctx)), ""
			return o
		}
		// An output that arrived is judged even when the run is being
		// cancelled, so that it is kept.
		if err != nil {
			last = failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}
		} else if f, ok := r.judge(context.WithoutCancel(ctx), j, attempt, output); !ok {
			last = f
		} else {
			o.status, o.output = TaskDone, output
			o.diagnosis = last.diagnosis
			return o
		}
		if last.policy != plan.PolicyRetry || attempt > t.MaxRetries || r.stopping() {
			return r.fail(o, last, t)
		}
		switch r.wait(ctx, r.backoff.Delay(attempt)) {
		case waitCancelled:
			o.status, o.err = TaskFailed, fmt.Errorf("cancelled: %w", context.Cause(ctx))
			return o
		case waitHalted:
			// The run halted during the wait: no new attempt starts, and
			// the task ends as if its retries were spent.
			return r.fail(o, last, t)
		}
	}
}

// retryInput appends the previous failure to the input, so that the agent
// can adjust.
func retryInput(input string, f failure) string {
	if f.verdict {
		return input + "\n\nPrevious attempt failed verification: " + f.diagnosis + ". Adjust your approach to satisfy this requirement."
	}
	return input + "\n\nPrevious attempt failed with an error: " + f.diagnosis + ". Adjust your approach to avoid it."
}

// judge checks a successful attempt's output: a gate must say something,
// and the predicate must pass. A predicate that errors is a task failure
// for on_failure; a verdict that fails is for on_verification_failure.
func (r *run) judge(ctx context.Context, j job, attempt int, output any) (failure, bool) {
	t := j.task
	if t.Type == plan.TypeSynthesisGate {
		if msg := gateCheck(output); msg != "" {
			return failure{policy: t.OnVerificationFailure, err: fmt.Errorf("%w: %s", ErrGateOutput, msg), diagnosis: msg, output: output, verdict: true}, false
		}
	}
	if j.st.schema != nil {
		if err := j.st.schema.Validate(output); err != nil {
			diag := "the output does not match the task's output_schema: " + schemaProblems(err)
			return failure{policy: t.OnVerificationFailure, err: fmt.Errorf("%w: %s", ErrOutputSchema, diag), diagnosis: diag, output: output, verdict: true}, false
		}
	}
	if j.st.pred == nil {
		return failure{}, true
	}
	v, err := j.st.pred.Eval(ctx, verify.Bindings{Input: t.Input, Result: output, Depends: j.depends})
	if err != nil {
		err = fmt.Errorf("verification: %w", err)
		r.emitTask(EventTaskVerified, j, attempt, err, err.Error())
		return failure{policy: t.OnFailure, err: err, diagnosis: err.Error(), output: output}, false
	}
	e := r.event(EventTaskVerified, j, attempt, nil, v.Diagnosis)
	e.Passed = v.Passed
	r.bus.emit(e)
	if v.Passed {
		return failure{}, true
	}
	diag := v.Diagnosis
	if diag == "" {
		diag = "the output does not satisfy " + t.Verification
	}
	return failure{policy: t.OnVerificationFailure, err: fmt.Errorf("%w: %s", ErrVerification, diag), diagnosis: diag, output: output, verdict: true}, false
}

// fail settles a task that failed for good, by its policy and criticality.
func (r *run) fail(o outcome, f failure, t *plan.Task) outcome {
	o.err, o.diagnosis, o.output = f.err, f.diagnosis, f.output
	halts := t.Critical && (f.policy == plan.PolicyStop || f.policy == plan.PolicyRetry)
	switch {
	case f.policy == plan.PolicyReplan:
		o.status, o.action = TaskFailed, actReplan
	case t.Type == plan.TypeSynthesisGate && halts:
		o.status, o.action = TaskFailed, actGate
	case t.Type == plan.TypeSynthesisGate:
		o.status, o.action = TaskFailed, actGateOnly
	case halts:
		o.status, o.action = TaskFailed, actHalt
	default:
		o.status = TaskSkipped
	}
	return o
}

// review settles a human_review task: waiting without a decision, else the
// decision's output checked like any task's.
func (r *run) review(ctx context.Context, j job, o outcome) outcome {
	// A review that waits has started too: its events are task_started,
	// then task_waiting, like any task's.
	r.emitTask(EventTaskStarted, j, 1, nil, "")
	d := j.st.decision
	if d == nil {
		o.status = TaskWaiting
		return o
	}
	t := j.task
	o.attempts = 1
	if !d.Approved {
		err := ErrRejected
		if d.Comment != "" {
			err = fmt.Errorf("%w: %s", ErrRejected, d.Comment)
		}
		return r.fail(o, failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}, t)
	}
	output, err := normalize(d.Output)
	if err != nil {
		return r.fail(o, failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}, t)
	}
	if f, ok := r.judge(ctx, j, 1, output); !ok {
		// A person's decision is final: there is no one to retry.
		return r.fail(o, f, t)
	}
	o.status, o.output = TaskDone, output
	return o
}

// attempt runs the agent once under the task's timeout. A panic is the
// attempt's failure; an agent that ignores the end of its context is left
// behind after abandonGrace.
func (r *run) attempt(ctx context.Context, j job, req agent.Request) (any, agent.Usage, error) {
	st := j.st
	if st.worker != nil && len(st.worker.Preconditions) > 0 {
		// Preconditions judge the task's input, not the retry feedback.
		pre := req
		pre.Input = j.input
		if err := st.worker.Check(ctx, pre); err != nil {
			return nil, agent.Usage{}, err
		}
	}
	actx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	type ret struct {
		res agent.Result
		err error
	}
	ch := make(chan ret, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				ch <- ret{err: &PanicError{Value: v, Stack: debug.Stack()}}
			}
		}()
		res, err := st.agent.Run(actx, req)
		ch <- ret{res, err}
	}()
	var x ret
	select {
	case x = <-ch:
	case <-actx.Done():
		grace := time.NewTimer(abandonGrace)
		select {
		case x = <-ch:
			grace.Stop()
		case <-grace.C:
			x.err = fmt.Errorf("%w within %s: %w", ErrAbandoned, abandonGrace, context.Cause(actx))
		}
	}
	if x.err != nil {
		if errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			if errors.Is(x.err, context.DeadlineExceeded) {
				x.err = fmt.Errorf("timed out after %s: %w", st.timeout, x.err)
			} else {
				// The agent's own error says nothing of the deadline, but
				// the deadline is why the attempt failed.
				x.err = fmt.Errorf("timed out after %s: %w: %w", st.timeout, context.DeadlineExceeded, x.err)
			}
		}
		return nil, x.res.Usage, x.err
	}
	out, err := normalize(x.res.Output)
	return out, x.res.Usage, err
}

func (r *run) event(kind EventKind, j job, attempt int, err error, diagnosis string) Event {
	now := time.Now()
	return Event{Kind: kind, Time: now, RunID: r.id, TaskID: j.task.ID, Phase: j.st.phase, Attempt: attempt, Duration: now.Sub(j.started), Err: err, Diagnosis: diagnosis}
}

func (r *run) emitTask(kind EventKind, j job, attempt int, err error, diagnosis string) {
	if r.bus != nil {
		r.bus.emit(r.event(kind, j, attempt, err, diagnosis))
	}
}

// waitEnd says how a wait before a retry ended.
type waitEnd int

const (
	waitDone waitEnd = iota
	waitCancelled
	waitHalted
)

// wait waits d unless ctx ends or the run halts first.
func (r *run) wait(ctx context.Context, d time.Duration) waitEnd {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return waitCancelled
	case <-r.halting:
		return waitHalted
	default:
	}
	if timeout == nil {
		return waitDone
	}
	select {
	case <-timeout:
		return waitDone
	case <-ctx.Done():
		return waitCancelled
	case <-r.halting:
		return waitHalted
	}
}

// stopping reports whether the run has halted.
func (r *run) stopping() bool {
	select {
	case <-r.halting:
		return true
	default:
		return false
	}
}
