package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/verify"
)

// Host is what a task's flow asks of the driver that runs it: everything
// that blocks, touches the world or reads the clock. [Core.RunTask] calls
// it from the calling goroutine or coroutine only, one call at a time.
type Host interface {
	// Attempt runs attempt req.Attempt of task req.TaskID once, bounded by
	// timeout: the worker's preconditions, the agent's call, the output
	// made JSON-shaped as a [Result] holds it (maps of string keys,
	// slices, strings, json.Number, bools, nil) and checked by the
	// worker's output slots. An agent's failure is the Reply's Err, never
	// a panic.
	Attempt(req agent.Request, timeout time.Duration) Reply
	// Judge asks the run's judge about an output, bounded by timeout; it
	// is called only when the core was told a judge exists.
	Judge(req JudgeRequest, timeout time.Duration) (Verdict, error)
	// Wait waits d before a retry, and ends early when the run is
	// cancelled or halts (see [CoreConfig.OnHalt]).
	Wait(d time.Duration) WaitEnd
	// Now is the time of the task's events.
	Now() time.Time
}

// Reply is what one attempt returned to the core.
type Reply struct {
	// Output is the attempt's output, normalised; ignored when Err is
	// set.
	Output any
	Usage  agent.Usage
	// Err is the attempt's failure: the agent's error, its output's
	// rejection, a precondition's. Its chain decides the failure's class
	// ([Classify]) and whether it is retried.
	Err error
	// TimedOut says the attempt's deadline ended it: the core then says
	// so in Err, whatever the agent's own error said.
	TimedOut bool

	// abandoned says the Runner left the attempt behind in its agent: the
	// task carries on on another goroutine, and this one stops.
	abandoned bool
}

// WaitEnd says how a wait before a retry ended.
type WaitEnd int

// How a [Host.Wait] ends.
const (
	WaitDone      WaitEnd = iota // the wait is over: the retry starts
	WaitCancelled                // the run was cancelled: the task fails so
	WaitHalted                   // the run halted: the task ends as if its retries were spent
)

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
	// ended is when the last attempt's agent returned, by the host's
	// clock; zero when none was called or no one observes the run.
	ended time.Time
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

// runTask prepares task i's request from settled results into k and runs
// its attempts through h. It reports false when h abandoned an attempt and
// the task carries on elsewhere.
func (c *core) runTask(h Host, k *carry, i int) (outcome, bool) {
	*k = carry{i: i, o: outcome{i: i}}
	k.depends, k.skipped = c.depends(i)
	t := &c.p.Tasks[i]
	if ch := c.state[i].check; ch != nil && ch.when != nil {
		if o, settled := c.condition(h, k, ch.when); settled {
			return o, true
		}
	}
	var err error
	k.input, k.refs, err = c.render(i)
	if err == nil {
		k.inputs, err = c.wire(i)
	}
	if err == nil {
		err = c.checkRequest(k, t)
	}
	if err != nil {
		// Upstream outputs will not change on a retry: fail at once.
		c.emitTask(h, EventTaskStarted, k, 1, nil, "")
		k.o.attempts = 1
		return c.fail(k.o, failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}, t), true
	}
	if t.Type == plan.TypeHumanReview {
		return c.review(h, k), true
	}
	return c.attempts(h, k, 1, nil)
}

// condition evaluates the when condition of k's task over the results of
// its dependencies, before anything else of the task is prepared. It
// reports true with the task's outcome when the task is not to run:
// skipped, its agent never called, when the condition does not hold;
// failed at once by on_failure when the condition cannot be evaluated, as
// the results it reads will not change on a retry.
func (c *core) condition(h Host, k *carry, when *verify.Predicate) (outcome, bool) {
	i := k.i
	t := &c.p.Tasks[i]
	v, err := when.Eval(context.Background(), verify.Bindings{Input: t.Input, Depends: k.depends})
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrCondition, err)
		c.emitTask(h, EventTaskStarted, k, 1, nil, "")
		k.o.attempts = 1
		return c.fail(k.o, failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}, t), true
	}
	if v.Passed {
		return outcome{}, false
	}
	// A verdict that fails always says why.
	o := k.o
	o.status, o.err, o.diagnosis = TaskSkipped, fmt.Errorf("%w: %s", ErrConditionNotMet, v.Diagnosis), v.Diagnosis
	return o, true
}

// attempts runs the attempts of k's task through h from attempt n until it
// is done or fails for good. When got is set, attempt n has run and got is
// what it returned. It reports false when h abandoned an attempt.
func (c *core) attempts(h Host, k *carry, n int, got *Reply) (outcome, bool) {
	i := k.i
	st := &c.state[i]
	t := &c.p.Tasks[i]
	timeout := st.bind.timeout
	for attempt := n; ; attempt++ {
		var x Reply
		if got != nil {
			x, got = *got, nil
		} else {
			req := agent.Request{
				RunID: c.id, TaskID: t.ID, Agent: t.Agent, Input: k.input, Attempt: attempt,
				Depends: k.depends, Skipped: k.skipped, Inputs: k.inputs, Params: t.Params, OutputSchema: t.OutputSchema,
				IdempotencyKey: c.idempotencyKey(i, attempt),
			}
			if k.refs != nil {
				req.Template, req.Refs = t.Input, k.refs
			}
			if attempt == 1 {
				c.emitTask(h, EventTaskStarted, k, attempt, nil, "")
			} else {
				req.Diagnosis, req.Failure = k.last.diagnosis, agent.FailureError
				if k.last.verdict {
					req.Failure = agent.FailureVerification
				}
				c.emitTask(h, EventTaskRetried, k, attempt, k.last.err, k.last.diagnosis)
			}
			// By value: a pointer handed to an interface would cost an
			// allocation per attempt.
			if x = h.Attempt(req, timeout); x.abandoned {
				return outcome{}, false
			}
		}
		o := &k.o
		o.attempts, o.usage = attempt, o.usage.Add(x.Usage)
		if c.conf.emit != nil {
			// The events after the attempt say when it ended, for the
			// observers that time the attempt apart from its checks.
			o.ended = h.Now()
		}
		if x.Err != nil {
			if cause := c.cause(); cause != nil {
				o.status, o.err, o.diagnosis = TaskFailed, fmt.Errorf("cancelled: %w", cause), ""
				return *o, true
			}
		}
		if x.Err != nil && x.TimedOut {
			if errors.Is(x.Err, context.DeadlineExceeded) {
				x.Err = fmt.Errorf("timed out after %s: %w", timeout, x.Err)
			} else {
				// The agent's own error says nothing of the deadline, but
				// the deadline is why the attempt failed.
				x.Err = fmt.Errorf("timed out after %s: %w: %w", timeout, context.DeadlineExceeded, x.Err)
			}
		}
		if x.Err != nil {
			k.last = failure{policy: t.OnFailure, err: x.Err, diagnosis: x.Err.Error()}
		} else if f, ok := c.judge(h, k, attempt, x.Output); !ok {
			k.last = f
		} else if f, ok := c.judgeRubric(h, k, attempt, x.Output); !ok {
			if f.cancelled {
				o.status, o.err, o.diagnosis = TaskFailed, f.err, ""
				return *o, true
			}
			k.last = f
		} else {
			// A task that passes has nothing left to diagnose.
			o.status, o.output, o.diagnosis = TaskDone, x.Output, ""
			return *o, true
		}
		// A program that cannot be started stays so: a retry would only
		// fail again after its backoff.
		if k.last.policy != plan.PolicyRetry || attempt > t.MaxRetries || c.halted.Load() || k.last.final || errors.Is(k.last.err, agent.ErrCannotStart) ||
			len(c.conf.noRetry) > 0 && c.conf.noRetry[Classify(k.last.err)] {
			return c.fail(*o, k.last, t), true
		}
		switch h.Wait(c.conf.backoff.DelayAt(attempt, c.conf.jitter(t.ID, attempt))) {
		case WaitCancelled:
			cause := c.cause()
			if cause == nil {
				cause = context.Canceled // a host that saw a cancellation its core was not told of
			}
			o.status, o.err = TaskFailed, fmt.Errorf("cancelled: %w", cause)
			return *o, true
		case WaitHalted:
			// The run halted during the wait: no new attempt starts, and
			// the task ends as if its retries were spent.
			return c.fail(*o, k.last, t), true
		}
	}
}

// judge checks a successful attempt's output: a gate must say something,
// the output must match the output schema, and the predicate must pass —
// each check a verified event of its own, from the first to fail. A
// predicate that errors is a task failure for on_failure; a verdict that
// fails is for on_verification_failure. An output that arrived is judged
// even when the run is being cancelled, so that it is kept.
func (c *core) judge(h Host, k *carry, attempt int, output any) (failure, bool) {
	i := k.i
	t := &c.p.Tasks[i]
	if t.Type == plan.TypeSynthesisGate {
		msg := gateCheck(output)
		if f, ok := c.verdict(h, k, attempt, output, msg == "", msg, ErrGateOutput, "", ""); !ok {
			return f, false
		}
	}
	ch := c.state[i].check
	if ch == nil {
		return failure{}, true
	}
	if ch.schema != nil {
		var diag string
		err := ch.schema.Validate(output)
		if err != nil {
			diag = "the output does not match the task's output_schema: " + err.Error()
		}
		if f, ok := c.verdict(h, k, attempt, output, err == nil, diag, ErrOutputSchema, "", ""); !ok {
			return f, false
		}
	}
	if ch.pred == nil {
		return failure{}, true
	}
	v, err := ch.pred.Eval(context.Background(), verify.Bindings{Input: t.Input, Result: output, Depends: k.depends})
	if err != nil {
		err = fmt.Errorf("verification: %w", err)
		c.emitTask(h, EventTaskVerified, k, attempt, err, err.Error())
		return failure{policy: t.OnFailure, err: err, diagnosis: err.Error(), output: output}, false
	}
	return c.verdict(h, k, attempt, output, v.Passed, v.Diagnosis, ErrVerification, "the output does not satisfy ", t.Verification)
}

// verdict emits the verified event of a check of task k's output that
// reached a verdict, and says what it means: the output passed, or it
// failed the verification with reason (else why and what, when the check
// gave none) under sentinel.
func (c *core) verdict(h Host, k *carry, attempt int, output any, passed bool, reason string, sentinel error, why, what string) (failure, bool) {
	if c.conf.emit != nil {
		e := c.event(h, EventTaskVerified, k, attempt, nil, reason)
		e.Passed = passed
		c.conf.emit(e)
	}
	if passed {
		return failure{}, true
	}
	if reason == "" {
		reason = why + what
	}
	return failure{policy: c.p.Tasks[k.i].OnVerificationFailure, err: fmt.Errorf("%w: %s", sentinel, reason), diagnosis: reason, output: output, verdict: true}, false
}

// judgeRubric has the run's judge check the output of a task with a
// rubric, adding its cost to the task's usage; without a judge or a
// rubric, the output passes. The judgement is bounded by the task's
// timeout, as its attempt is, and ends with the run: a judge is a network
// call that may stall.
func (c *core) judgeRubric(h Host, k *carry, attempt int, output any) (failure, bool) {
	i := k.i
	t := &c.p.Tasks[i]
	if !c.conf.judge || t.Rubric == "" {
		return failure{}, true
	}
	var timeout time.Duration
	if b := c.state[i].bind; b != nil {
		timeout = b.timeout
	}
	v, err := h.Judge(JudgeRequest{
		RunID: c.id, TaskID: t.ID, Attempt: attempt, Input: k.input, Rubric: t.Rubric, Output: output,
	}, timeout)
	k.o.usage = k.o.usage.Add(v.Usage)
	if err != nil {
		if cause := c.cause(); cause != nil {
			// The run's cancellation ended the judgement: the task ends as
			// the attempt of a cancelled run does, with no verdict.
			return failure{err: fmt.Errorf("cancelled: %w", cause), cancelled: true}, false
		}
		err = fmt.Errorf("%w: %w", ErrJudge, err)
		c.emitTask(h, EventTaskVerified, k, attempt, err, err.Error())
		return failure{policy: t.OnFailure, err: err, diagnosis: err.Error(), output: output, final: true}, false
	}
	return c.verdict(h, k, attempt, output, v.Pass, v.Reason, ErrRubric, "the output does not meet the rubric: ", t.Rubric)
}

// fail settles a task that failed for good, by its policy and criticality.
func (c *core) fail(o outcome, f failure, t *plan.Task) outcome {
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

// review settles k's human_review task: waiting without a decision, else
// the decision's output checked like any task's.
func (c *core) review(h Host, k *carry) outcome {
	i := k.i
	o := k.o
	// A review that waits has started too: its events are task_started,
	// then task_waiting, like any task's.
	c.emitTask(h, EventTaskStarted, k, 1, nil, "")
	d, ok := c.decisions[i]
	if !ok {
		o.status = TaskWaiting
		return o
	}
	t := &c.p.Tasks[i]
	o.attempts = 1
	if !d.Approved {
		err := ErrRejected
		if d.Comment != "" {
			err = fmt.Errorf("%w: %s", ErrRejected, d.Comment)
		}
		return c.fail(o, failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}, t)
	}
	output, err := jsonv.Normalize(d.Output)
	if err != nil {
		return c.fail(o, failure{policy: t.OnFailure, err: err, diagnosis: err.Error()}, t)
	}
	if f, ok := c.judge(h, k, 1, output); !ok {
		// A person's decision is final: there is no one to retry.
		return c.fail(o, f, t)
	}
	o.status, o.output = TaskDone, output
	return o
}

// event is a task event of k's task, at the host's time.
func (c *core) event(h Host, kind EventKind, k *carry, attempt int, err error, diagnosis string) Event {
	now := h.Now()
	st := &c.state[k.i]
	return Event{Kind: kind, Time: now, RunID: c.id, TaskID: st.res.ID, Phase: c.d.Level(k.i), Attempt: attempt, Duration: now.Sub(st.res.Started),
		Err: err, Diagnosis: diagnosis, AttemptEnded: k.o.ended}
}

// emitTask emits a task event; without observers it costs nothing.
func (c *core) emitTask(h Host, kind EventKind, k *carry, attempt int, err error, diagnosis string) {
	if c.conf.emit != nil {
		c.conf.emit(c.event(h, kind, k, attempt, err, diagnosis))
	}
}
