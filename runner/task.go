package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/verify"
)

// job is a worker's task in hand: what it carries from one attempt to the
// next, and the attempt in flight, which it shares with the watchdog.
type job struct {
	carry
	mu        sync.Mutex // guards the fields below, shared with the watchdog
	inflight  bool       // an attempt is in flight
	n         int        // its number
	ctx       *attemptCtx
	deadline  time.Time
	ended     time.Time // when its context ended; zero while it runs
	timedOut  bool      // the watchdog ended it at its deadline
	abandoned bool      // the watchdog left it behind
	slot      int       // the job's place in run.jobs
	gen       int       // the group its worker belongs to: run.gen when it started
}

// carry is what a task's attempts carry from one to the next. It belongs
// to the goroutine running the task.
type carry struct {
	i       int
	input   string         // rendered
	refs    map[string]any // the value of each template in the input
	inputs  map[string]any
	depends map[string]any
	skipped []string
	last    failure // the previous attempt's failure
	o       outcome // what the attempts so far add up to
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

// outcome is a task's final state, as it is settled.
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
	final     bool // no retry: the judge reached no verdict
	cancelled bool // the run's cancellation ended the check
}

// reply is what one attempt of an agent returned.
type reply struct {
	output any
	usage  agent.Usage
	err    error
}

// runTask prepares task i's request from settled results and runs its
// attempts. It reports false when its goroutine was left in an abandoned
// agent and must stop.
func (r *run) runTask(j *job, i int) (outcome, bool) {
	j.carry = carry{i: i, o: outcome{i: i}}
	j.depends, j.skipped = r.depends(i)
	t := &r.p.Tasks[i]
	if c := r.state[i].check; c != nil && c.when != nil {
		if o, settled := r.condition(j, c.when); settled {
			return o, true
		}
	}
	var err error
	j.input, j.refs, err = r.render(i)
	if err == nil {
		j.inputs, err = r.wire(i)
	}
	if err == nil {
		err = r.checkRequest(j, t)
	}
	if err != nil {
		// Upstream outputs will not change on a retry: fail at once.
		r.emitTask(EventTaskStarted, i, 1, nil, "")
		j.o.attempts = 1
		return r.fail(j.o, failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}, t), true
	}
	if t.Type == plan.TypeHumanReview {
		return r.review(j), true
	}
	return r.attempts(j, 1, nil)
}

// condition evaluates the when condition of j's task over the results of
// its dependencies, before anything else of the task is prepared. It
// reports true with the task's outcome when the task is not to run:
// skipped, its agent never called, when the condition does not hold;
// failed at once by on_failure when the condition cannot be evaluated, as
// the results it reads will not change on a retry.
func (r *run) condition(j *job, when *verify.Predicate) (outcome, bool) {
	i := j.i
	t := &r.p.Tasks[i]
	v, err := when.Eval(context.WithoutCancel(r.ctx), verify.Bindings{Input: t.Input, Depends: j.depends})
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrCondition, err)
		r.emitTask(EventTaskStarted, i, 1, nil, "")
		j.o.attempts = 1
		return r.fail(j.o, failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}, t), true
	}
	if v.Passed {
		return outcome{}, false
	}
	// A verdict that fails always says why.
	o := j.o
	o.status, o.err, o.diagnosis = TaskSkipped, fmt.Errorf("%w: %s", ErrConditionNotMet, v.Diagnosis), v.Diagnosis
	return o, true
}

// attempts runs the attempts of j's task from attempt n until it is done
// or fails for good. When got is set, attempt n has run and got is what it
// returned. It reports false when its goroutine was left in an abandoned
// agent.
func (r *run) attempts(j *job, n int, got *reply) (outcome, bool) {
	i := j.i
	st := &r.state[i]
	t := &r.p.Tasks[i]
	ctx := r.ctx
	for attempt := n; ; attempt++ {
		var x reply
		if got != nil {
			x, got = *got, nil
		} else {
			req := agent.Request{
				RunID: r.id, TaskID: t.ID, Agent: t.Agent, Input: j.input, Attempt: attempt,
				Depends: j.depends, Skipped: j.skipped, Inputs: j.inputs, Params: t.Params, OutputSchema: t.OutputSchema,
				IdempotencyKey: r.idempotencyKey(i, attempt),
			}
			if j.refs != nil {
				req.Template, req.Refs = t.Input, j.refs
			}
			if attempt == 1 {
				r.emitTask(EventTaskStarted, i, attempt, nil, "")
			} else {
				req.Diagnosis, req.Failure = j.last.diagnosis, agent.FailureError
				if j.last.verdict {
					req.Failure = agent.FailureVerification
				}
				r.emitTask(EventTaskRetried, i, attempt, j.last.err, j.last.diagnosis)
			}
			var ok bool
			if x, ok = r.attempt(j, attempt, &req); !ok {
				return outcome{}, false
			}
		}
		o := &j.o
		o.attempts, o.usage = attempt, o.usage.Add(x.usage)
		if x.err != nil && ctx.Err() != nil {
			o.status, o.err, o.diagnosis = TaskFailed, fmt.Errorf("cancelled: %w", context.Cause(ctx)), ""
			return *o, true
		}
		if x.err != nil && j.timedOut {
			if errors.Is(x.err, context.DeadlineExceeded) {
				x.err = fmt.Errorf("timed out after %s: %w", st.bind.timeout, x.err)
			} else {
				// The agent's own error says nothing of the deadline, but
				// the deadline is why the attempt failed.
				x.err = fmt.Errorf("timed out after %s: %w: %w", st.bind.timeout, context.DeadlineExceeded, x.err)
			}
		}
		if x.err != nil {
			j.last = failure{policy: t.OnFailure, err: x.err, diagnosis: x.err.Error()}
		} else if f, ok := r.judge(j, attempt, x.output); !ok {
			j.last = f
		} else if f, ok := r.judgeRubric(j, attempt, x.output); !ok {
			if f.cancelled {
				o.status, o.err, o.diagnosis = TaskFailed, f.err, ""
				return *o, true
			}
			j.last = f
		} else {
			// A task that passes has nothing left to diagnose.
			o.status, o.output, o.diagnosis = TaskDone, x.output, ""
			return *o, true
		}
		// A program that cannot be started stays so: a retry would only
		// fail again after its backoff.
		if j.last.policy != plan.PolicyRetry || attempt > t.MaxRetries || r.stopping() || j.last.final || errors.Is(j.last.err, agent.ErrCannotStart) ||
			len(r.noRetry) > 0 && r.noRetry[Classify(j.last.err)] {
			return r.fail(*o, j.last, t), true
		}
		switch r.wait(ctx, r.backoff.Delay(attempt)) {
		case waitCancelled:
			o.status, o.err = TaskFailed, fmt.Errorf("cancelled: %w", context.Cause(ctx))
			return *o, true
		case waitHalted:
			// The run halted during the wait: no new attempt starts, and
			// the task ends as if its retries were spent.
			return r.fail(*o, j.last, t), true
		}
	}
}

// attempt runs the agent once, on this goroutine, under the task's
// timeout, which the watchdog enforces. A panic is the attempt's failure.
// It reports false when the watchdog abandoned the attempt.
func (r *run) attempt(j *job, n int, req *agent.Request) (reply, bool) {
	st := &r.state[j.i]
	b := st.bind
	if b.worker != nil && len(b.worker.Preconditions) > 0 {
		if err := b.worker.Check(r.ctx, *req); err != nil {
			return reply{err: err}, true
		}
	}
	start := st.res.Started
	if n > 1 {
		start = time.Now()
	}
	ctx := r.watch(j, n, start.Add(b.timeout))
	res, err := call(ctx, b.agent, req)
	if !j.unwatch() {
		return reply{}, false
	}
	if err != nil {
		return reply{usage: res.Usage, err: err}, true
	}
	out, err := jsonv.Normalize(res.Output)
	if err != nil {
		// Not a failure of the agent's process, but of what it answered.
		err = fmt.Errorf("%w: %w", agent.ErrInvalidOutput, err)
	} else if b.worker != nil {
		err = b.worker.CheckOutput(out)
	}
	return reply{output: out, usage: res.Usage, err: err}, true
}

// judge checks a successful attempt's output: a gate must say something,
// and the predicate must pass. A predicate that errors is a task failure
// for on_failure; a verdict that fails is for on_verification_failure. An
// output that arrived is judged even when the run is being cancelled, so
// that it is kept.
func (r *run) judge(j *job, attempt int, output any) (failure, bool) {
	i := j.i
	t := &r.p.Tasks[i]
	if t.Type == plan.TypeSynthesisGate {
		if msg := gateCheck(output); msg != "" {
			return failure{policy: t.OnVerificationFailure, err: fmt.Errorf("%w: %s", ErrGateOutput, msg), diagnosis: msg, output: output, verdict: true}, false
		}
	}
	c := r.state[i].check
	if c == nil {
		return failure{}, true
	}
	if c.schema != nil {
		if err := c.schema.Validate(output); err != nil {
			diag := "the output does not match the task's output_schema: " + err.Error()
			return failure{policy: t.OnVerificationFailure, err: fmt.Errorf("%w: %s", ErrOutputSchema, diag), diagnosis: diag, output: output, verdict: true}, false
		}
	}
	if c.pred == nil {
		return failure{}, true
	}
	v, err := c.pred.Eval(context.WithoutCancel(r.ctx), verify.Bindings{Input: t.Input, Result: output, Depends: j.depends})
	if err != nil {
		err = fmt.Errorf("verification: %w", err)
		r.emitTask(EventTaskVerified, i, attempt, err, err.Error())
		return failure{policy: t.OnFailure, err: err, diagnosis: err.Error(), output: output}, false
	}
	return r.verdict(j, attempt, output, v.Passed, v.Diagnosis, ErrVerification, "the output does not satisfy ", t.Verification)
}

// verdict emits the verified event of a check of task j's output that
// reached a verdict, and says what it means: the output passed, or it
// failed the verification with reason (else why and what, when the check
// gave none) under sentinel.
func (r *run) verdict(j *job, attempt int, output any, passed bool, reason string, sentinel error, why, what string) (failure, bool) {
	if r.bus != nil {
		e := r.event(EventTaskVerified, j.i, attempt, nil, reason)
		e.Passed = passed
		r.bus.emit(e)
	}
	if passed {
		return failure{}, true
	}
	if reason == "" {
		reason = why + what
	}
	return failure{policy: r.p.Tasks[j.i].OnVerificationFailure, err: fmt.Errorf("%w: %s", sentinel, reason), diagnosis: reason, output: output, verdict: true}, false
}

// judgeRubric has the runner's judge check the output of a task with a
// rubric; without a judge or a rubric, the output passes.
func (r *run) judgeRubric(j *job, attempt int, output any) (failure, bool) {
	if r.rubricJudge == nil || r.p.Tasks[j.i].Rubric == "" {
		return failure{}, true
	}
	return r.rubric(j, attempt, output)
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

// review settles j's human_review task: waiting without a decision, else
// the decision's output checked like any task's.
func (r *run) review(j *job) outcome {
	i := j.i
	o := j.o
	// A review that waits has started too: its events are task_started,
	// then task_waiting, like any task's.
	r.emitTask(EventTaskStarted, i, 1, nil, "")
	d, ok := r.decisions[i]
	if !ok {
		o.status = TaskWaiting
		return o
	}
	t := &r.p.Tasks[i]
	o.attempts = 1
	if !d.Approved {
		err := ErrRejected
		if d.Comment != "" {
			err = fmt.Errorf("%w: %s", ErrRejected, d.Comment)
		}
		return r.fail(o, failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}, t)
	}
	output, err := jsonv.Normalize(d.Output)
	if err != nil {
		return r.fail(o, failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}, t)
	}
	if f, ok := r.judge(j, 1, output); !ok {
		// A person's decision is final: there is no one to retry.
		return r.fail(o, f, t)
	}
	o.status, o.output = TaskDone, output
	return o
}

func (r *run) event(kind EventKind, i, attempt int, err error, diagnosis string) Event {
	now := time.Now()
	st := &r.state[i]
	return Event{Kind: kind, Time: now, RunID: r.id, TaskID: st.res.ID, Phase: r.d.Level(i), Attempt: attempt, Duration: now.Sub(st.res.Started), Err: err, Diagnosis: diagnosis}
}

// emitTask emits a task event; without observers it costs nothing.
func (r *run) emitTask(kind EventKind, i, attempt int, err error, diagnosis string) {
	if r.bus != nil {
		r.bus.emit(r.event(kind, i, attempt, err, diagnosis))
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
