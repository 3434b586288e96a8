package temporal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	sdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/verify"
)

// DefaultHeartbeatTimeout is the heartbeat timeout of an attempt whose
// [Input] sets none.
const DefaultHeartbeatTimeout = 20 * time.Second

// MaxActivityAttempts bounds how often an activity lost with its worker
// is made again; dagent's own retries, of failures of the agent, are
// counted by the task's policy, never by Temporal.
const MaxActivityAttempts = 10

// activityGrace is what an attempt's activity is given beyond the
// attempt's timeout before Temporal deems it lost: the attempt's own
// deadline, and its wait for an agent that ignores it, end it first on a
// worker that lives.
const activityGrace = abandonGrace + 10*time.Second

// ErrInvalidInput is matched by the error of a workflow whose input
// cannot run: a bad run id or spec, a plan that does not check against
// the workers' catalog, a spec this workflow does not run.
var ErrInvalidInput = errors.New("invalid run input")

// InvalidInputType is the type of the non-retryable application error
// (go.temporal.io/sdk/temporal.ApplicationError) a workflow whose input
// cannot run ends with: how a client, which sees the error only through
// Temporal, tells it from other failures.
const InvalidInputType = "InvalidInput"

// Workflow is the workflow of a dagent run: [Workflow.Run], registered
// under [WorkflowName]. The zero Workflow is ready to use.
type Workflow struct {
	// Observe, when set, is given every event of the run, in order. It
	// is called from workflow code: also when a worker replays the
	// workflow's history, so a consumer must tell the repeats by their
	// run id and Seq; it must not block.
	Observe func(runner.Event)

	// finished, when set, is given the run's result as the workflow
	// holds it, before it is encoded: the conformance kit checks errors
	// with errors.Is, which their JSON text does not keep.
	finished func(*runner.Result)
}

// RegisterWorkflow registers the zero [Workflow] under [WorkflowName].
func RegisterWorkflow(r worker.WorkflowRegistry) { (&Workflow{}).Register(r) }

// Register registers w's Run under [WorkflowName].
func (w *Workflow) Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(w.Run, workflow.RegisterOptions{Name: WorkflowName})
}

// Register registers the workflow and a's activities: all a worker of
// dagent runs needs.
func Register(r worker.Registry, a *Activities) {
	RegisterWorkflow(r)
	a.Register(r)
}

// Run runs the plan of in.Spec as [runner.Runner.Run] runs it in
// process, with the same decisions ([runner.Core]): each attempt and
// judgement is an activity, predicates, schemas and the failure table are
// evaluated here, backoffs are durable timers. A run that ends waiting for
// reviews waits for their [UpdateReview] decisions, then goes on as
// dagent resume does. A cancelled workflow ends its run failed, every
// finished task kept, and returns that result. A result whose JSON form
// would exceed [PayloadLimit] has its largest outputs replaced by a note
// saying so. The error is an input that cannot run (matching
// [ErrInvalidInput]), the loss of the catalog, or a result too large
// even so.
func (w *Workflow) Run(ctx workflow.Context, in Input) (*Outcome, error) {
	r, err := w.start(ctx, in)
	if err != nil {
		return nil, err
	}
	out, err := r.loop(ctx)
	if err == nil {
		out, err = fit(out)
	}
	if w.finished != nil && out != nil {
		w.finished(out.Run)
	}
	return out, err
}

// flow is the state of one run of the workflow, which the query reads.
type flow struct {
	w       *Workflow
	in      Input
	cat     *Catalog
	initial map[string]any
	// decisions are the reviews' decisions, by task id: one each, as
	// checkReview lets in.
	decisions map[string]runner.Decision
	core      *runner.Core
	plan      *plan.Plan
	version   int
	status    string
	pending   []runner.PendingReview
	seq       int
	started   time.Time
	// live are the attempts under way, by task id: the core records a
	// task's attempts when it settles, the query shows them before.
	live map[string]attempt
	// outOfTime says the spec's wall-time budget ended the run.
	outOfTime bool
	// noRetry are the classes that halt a run that replans, which are
	// not retried either.
	noRetry []runner.Class
	// events, when set, collects the events of the current plan
	// version's run, for the executor's rules.
	events *[]runner.Event
	// spent is what the run's LLM calls spent, as the activities
	// replied: the run's meter, for its budget.
	spent Spend
}

func invalid(format string, args ...any) error {
	err := fmt.Errorf("%w: "+format, append([]any{ErrInvalidInput}, args...)...)
	return sdk.NewNonRetryableApplicationError(err.Error(), InvalidInputType, err)
}

// start checks in, reads the workers' catalog and installs the query and
// the signal.
func (w *Workflow) start(ctx workflow.Context, in Input) (*flow, error) {
	if err := runner.CheckRunID(in.RunID); err != nil {
		return nil, invalid("%v", err)
	}
	if err := in.Spec.Check(); err != nil {
		return nil, invalid("%v", err)
	}
	f := &flow{w: w, in: in, plan: in.Spec.Plan, status: "running", decisions: map[string]runner.Decision{}, started: workflow.Now(ctx)}
	if len(in.Initial) > 0 {
		v, err := jsonv.DecodeBytes(in.Initial)
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			return nil, invalid("initial: want a JSON object of outputs by task id")
		}
		f.initial = m
	}
	for _, rv := range in.Reviews {
		d, err := f.checkReview(rv)
		if err != nil {
			return nil, invalid("%v", err)
		}
		f.decisions[rv.TaskID] = d
	}
	if err := workflow.SetQueryHandler(ctx, QueryTasks, f.snapshot); err != nil {
		return nil, err
	}
	// A decision comes as an update, whose validator refuses a bad one
	// to its sender before it reaches the history; the signal is kept
	// for senders of older versions, and drops a bad decision with a
	// warning: a decision the plan cannot take must never end the run.
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateReview, func(_ workflow.Context, rv Review) error {
		d, err := f.checkReview(rv)
		if err != nil {
			return err
		}
		f.decisions[rv.TaskID] = d
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, rv Review) error {
		_, err := f.checkReview(rv)
		return err
	}})
	if err != nil {
		return nil, err
	}
	reviews := workflow.GetSignalChannel(ctx, SignalReview)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var rv Review
			if !reviews.Receive(ctx, &rv) {
				return
			}
			d, err := f.checkReview(rv)
			if err != nil {
				workflow.GetLogger(ctx).Warn("review signal dropped", "task", rv.TaskID, "error", err)
				continue
			}
			f.decisions[rv.TaskID] = d
		}
	})
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	if err := workflow.ExecuteActivity(actx, ActivityCatalog).Get(ctx, &f.cat); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return f, nil
}

// checkReview is the decision of rv when the current plan version can
// take it: rv names a human_review task of the plan, reached or not yet,
// that has no decision yet. Otherwise it is an error naming the task.
func (f *flow) checkReview(rv Review) (runner.Decision, error) {
	i := slices.IndexFunc(f.plan.Tasks, func(t plan.Task) bool { return t.ID == rv.TaskID })
	switch {
	case i < 0:
		return runner.Decision{}, fmt.Errorf("review of %q: the run's plan has no such task", rv.TaskID)
	case f.plan.Tasks[i].Type != plan.TypeHumanReview:
		return runner.Decision{}, fmt.Errorf("review of %q: the task is not a human_review (its type is %s)", rv.TaskID, f.plan.Tasks[i].Type)
	}
	if _, ok := f.decisions[rv.TaskID]; ok {
		return runner.Decision{}, fmt.Errorf("review of %q: the task is decided already; the first decision stands", rv.TaskID)
	}
	return rv.Decision()
}

// reviews are the decisions the run of d takes: those on its
// human_review tasks. A decision on a task a repair plan left out, or
// made another type, stays for a later version that has it again.
func (f *flow) reviews(d *plan.DAG) map[string]runner.Decision {
	out := map[string]runner.Decision{}
	for id, dec := range f.decisions {
		if i, ok := d.Index(id); ok && d.Task(i).Type == plan.TypeHumanReview {
			out[id] = dec
		}
	}
	return out
}

// snapshot answers [QueryTasks].
func (f *flow) snapshot() (*Snapshot, error) {
	s := &Snapshot{RunID: f.in.RunID, Version: f.version, Status: f.status, PendingReviews: f.pending, Tasks: []TaskState{}}
	if s.PendingReviews == nil {
		s.PendingReviews = []runner.PendingReview{}
	}
	if f.core == nil {
		return s, nil
	}
	for _, t := range f.core.Tasks() {
		ts := TaskState{ID: t.ID, Status: t.Status, Attempts: t.Attempts, Class: t.Class, Diagnosis: t.Diagnosis, Output: t.Output}
		if req, ok := f.live[t.ID]; ok && t.Status == runner.TaskRunning {
			ts.Attempts, ts.Diagnosis = req.n, req.diagnosis
		}
		if t.Err != nil {
			ts.Error = t.Err.Error()
		}
		s.Tasks = append(s.Tasks, ts)
	}
	return s, nil
}

// loop runs the plan — the spec's, else the plan the planner gives for
// its mission: once, or through the executor's replanning when the spec
// replans; or the mission in rounds, when the spec plans in rounds.
func (f *flow) loop(ctx workflow.Context) (*Outcome, error) {
	if f.in.Spec.Rounds > 0 {
		return f.rounds(ctx)
	}
	if f.plan == nil {
		if out, err := f.planMission(ctx); out != nil || err != nil {
			return out, err
		}
	}
	d, err := f.plan.DAG(f.planOptions()...)
	if err != nil {
		return nil, invalid("%v", err)
	}
	if f.in.Spec.Replan != nil {
		return f.execute(ctx, d)
	}
	scope, cancel := f.budget(ctx)
	defer cancel()
	res, err := f.reviewed(scope, d, f.in.RunID, f.initial)
	if err != nil {
		return nil, err
	}
	f.status = string(res.Status)
	return &Outcome{Run: res}, nil
}

// reviewed runs d as run id from initial, and when the run ends waiting
// for reviews, waits for their decisions and goes on with them, as dagent
// resume does: a new run of the same id, with the outputs so far and the
// decisions. Unless the input says to end waiting, only a cancellation
// ends the wait, and the run with it, waiting.
func (f *flow) reviewed(ctx workflow.Context, d *plan.DAG, id string, initial map[string]any) (*runner.Result, error) {
	var last *runner.Result
	for {
		res, err := f.runOnce(ctx, d, id, f.carried(initial, last))
		if err != nil {
			return nil, err
		}
		last = merge(last, res)
		if res.Status != runner.StatusWaiting || f.in.EndWaiting || ctx.Err() != nil {
			return last, nil
		}
		f.status, f.pending = "waiting", res.PendingReviews
		decided := func() bool {
			for _, p := range f.pending {
				if _, ok := f.decisions[p.TaskID]; !ok {
					return false
				}
			}
			return true
		}
		err = workflow.Await(ctx, decided)
		f.pending = nil
		if err != nil {
			return last, nil
		}
		f.status = "running"
	}
}

// carried are the outputs a run starts with: the input's, and those of
// the run before it.
func (f *flow) carried(initial map[string]any, last *runner.Result) map[string]any {
	out := maps.Clone(initial)
	if last == nil {
		return out
	}
	if out == nil {
		out = map[string]any{}
	}
	maps.Copy(out, last.Outputs())
	return out
}

// merge is the result of a run that went on after reviews: next's, each
// task carried over keeping the result of the run that did it.
func merge(last, next *runner.Result) *runner.Result {
	if last == nil {
		return next
	}
	for id, t := range next.Tasks {
		if prev, ok := last.Tasks[id]; ok && t.Attempts == 0 && prev.Status == runner.TaskDone && t.Status == runner.TaskDone {
			next.Tasks[id] = prev
		}
	}
	var u agent.Usage
	for _, id := range slices.Sorted(maps.Keys(next.Tasks)) {
		u = u.Add(next.Tasks[id].Usage)
	}
	next.Usage = u
	return next
}

// planOptions check a plan against the workers' catalog.
func (f *flow) planOptions() []plan.Option {
	return []plan.Option{plan.WithCatalog(f.cat), plan.WithWorkers(f.cat.Agents...)}
}

// runOnce runs d once as run id, with the outputs of initial and the
// decisions known so far, and returns its result.
func (f *flow) runOnce(ctx workflow.Context, d *plan.DAG, id string, initial map[string]any) (*runner.Result, error) {
	spec := f.in.Spec
	workers := make(map[string]runner.WorkerSettings, len(f.cat.Workers))
	for name, wi := range f.cat.Workers {
		workers[name] = runner.WorkerSettings{Timeout: wi.Timeout, MaxConcurrency: wi.MaxConcurrency}
	}
	backoff := runner.DefaultBackoff()
	if f.in.Backoff != nil {
		backoff = *f.in.Backoff
	}
	concurrency := spec.Runner.Concurrency
	if concurrency <= 0 {
		concurrency = runner.DefaultConcurrency
	}
	timeout := spec.Runner.TaskTimeout
	if timeout <= 0 {
		timeout = runner.DefaultTaskTimeout
	}
	var halted bool
	cfg := runner.CoreConfig{
		RunID: id, Started: f.started,
		Schedule: spec.Runner.Schedule, Concurrency: concurrency, TaskTimeout: timeout,
		Workers: workers, MaxRequestBytes: requestBound(f.in.MaxRequestBytes),
		Backoff: backoff, NoRetry: append(slices.Clone(f.in.NoRetry), f.noRetry...), Judge: spec.Judge != nil,
		Initial: initial, Reviews: f.reviews(d),
		Predicates: verify.NewSet(verify.WithTimeout(0), verify.WithMaxSteps(runner.DefaultPredicateSteps)),
		Observe:    f.observe,
		Cancelled: func() error {
			switch {
			case ctx.Err() == nil:
				return nil
			case f.outOfTime:
				return context.DeadlineExceeded
			}
			return context.Canceled
		},
		OnHalt: func() { halted = true },
	}
	c, err := runner.NewCore(d, cfg)
	switch {
	case err != nil && f.core == nil:
		return nil, invalid("%v", err)
	case err != nil:
		// A later pass, after reviews or a repair, that cannot start is
		// no bad input: the run had started.
		err = fmt.Errorf("the run could not go on: %w", err)
		return nil, sdk.NewNonRetryableApplicationError(err.Error(), "RunError", err)
	}
	f.core, f.live = c, map[string]attempt{}
	f.observe(runner.Event{Kind: runner.EventRunStarted, Time: workflow.Now(ctx), RunID: id})
	var done []runner.Outcome
	// The loop drives the run to its end even once ctx is cancelled: the
	// running tasks see the cancellation, and are settled.
	wait, _ := workflow.NewDisconnectedContext(ctx)
	for {
		now := workflow.Now(ctx)
		for _, o := range done {
			c.Settle(o, now)
		}
		done = done[:0]
		for i := c.Take(now); i >= 0; i = c.Take(now) {
			h := &host{f: f, d: d, halted: &halted}
			workflow.Go(ctx, func(ctx workflow.Context) {
				h.ctx = ctx
				done = append(done, c.RunTask(h, i))
			})
		}
		if c.Running() == 0 {
			if c.Advance(now) {
				continue
			}
			break
		}
		if err := workflow.Await(wait, func() bool { return len(done) > 0 }); err != nil {
			return nil, err
		}
	}
	now := workflow.Now(ctx)
	res := c.Result(now)
	f.observe(runner.Event{Kind: runner.EventRunFinished, Time: now, RunID: id, Duration: res.Duration, Err: res.Err, Status: res.Status, Usage: res.Usage})
	return res, nil
}

// observe numbers e in the workflow's sequence and hands it on.
func (f *flow) observe(e runner.Event) {
	if f.events != nil {
		*f.events = append(*f.events, e)
	}
	if f.w.Observe == nil {
		return
	}
	f.seq++
	e.Seq = f.seq
	f.w.Observe(e)
}

// attempt is an attempt under way: its number, and the diagnosis of the
// one before.
type attempt struct {
	n         int
	diagnosis string
}

// host is a task's [runner.Host] in the workflow: attempts and
// judgements are activities, waits durable timers.
type host struct {
	f      *flow
	d      *plan.DAG
	ctx    workflow.Context
	halted *bool
}

func (h *host) Now() time.Time { return workflow.Now(h.ctx) }

// options are the activity options of an attempt or a judgement bounded
// by timeout, heartbeating every heartbeat (0: none). Temporal's retries
// are for an activity lost with its worker only: the activities report
// every failure of an agent as their result.
func (h *host) options(timeout, heartbeat time.Duration) workflow.Context {
	return workflow.WithActivityOptions(h.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout + activityGrace,
		HeartbeatTimeout:    heartbeat,
		RetryPolicy:         &sdk.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: MaxActivityAttempts},
	})
}

func (h *host) Attempt(req agent.Request, timeout time.Duration) runner.Reply {
	h.f.live[req.TaskID] = attempt{n: req.Attempt, diagnosis: req.Diagnosis}
	llm := h.f.in.Spec.LLM
	in := AttemptRequest{Request: req, Timeout: timeout, Model: llm.Model, MaxTurns: llm.MaxTurns, Temperature: llm.Temperature}
	if _, ok := h.f.cat.WorkerOutputs(req.Agent); !ok {
		def := h.d.Plan().Agents[req.Agent]
		in.Agent = &def
		in.Budget = h.f.allowance()
		if in.Budget.exhausted() {
			// The LLM agent's first call would be refused: the attempt
			// fails so without an activity.
			return runner.Reply{Err: in.Budget.refused()}
		}
	}
	hb := h.f.in.HeartbeatTimeout
	if hb <= 0 {
		hb = DefaultHeartbeatTimeout
	}
	var out AttemptReply
	if err := workflow.ExecuteActivity(h.options(timeout, hb), ActivityAttempt, in).Get(h.ctx, &out); err != nil {
		return lost(h.ctx, err)
	}
	h.f.charge(out.Spent)
	if out.Failure != nil {
		return runner.Reply{Usage: out.Usage, Err: out.Failure.Err(), TimedOut: out.Failure.TimedOut}
	}
	v, err := jsonv.DecodeBytes(out.Output)
	if err != nil {
		return runner.Reply{Usage: out.Usage, Err: fmt.Errorf("%w: %w", agent.ErrInvalidOutput, err)}
	}
	return runner.Reply{Output: v, Usage: out.Usage}
}

// lost is the reply of an attempt whose activity failed: cancelled with
// the run, or lost with its workers MaxActivityAttempts times.
func lost(ctx workflow.Context, err error) runner.Reply {
	var te *sdk.TimeoutError
	switch {
	case ctx.Err() != nil || sdk.IsCanceledError(err):
		return runner.Reply{Err: context.Canceled}
	case errors.As(err, &te):
		return runner.Reply{Err: fmt.Errorf("%w: the attempt's worker was lost: %v", context.DeadlineExceeded, err), TimedOut: true}
	}
	return runner.Reply{Err: fmt.Errorf("the attempt's activity failed: %w", err)}
}

func (h *host) Judge(req runner.JudgeRequest, timeout time.Duration) (runner.Verdict, error) {
	in := JudgeRequest{Request: req, Timeout: timeout, Model: h.f.in.Spec.LLM.Model, Budget: h.f.allowance()}
	if j := h.f.in.Spec.Judge; j != nil && j.Model != "" {
		in.Model = j.Model
	}
	var out JudgeReply
	if err := workflow.ExecuteActivity(h.options(timeout, 0), ActivityJudge, in).Get(h.ctx, &out); err != nil {
		return runner.Verdict{}, lost(h.ctx, err).Err
	}
	h.f.charge(out.Spent)
	return out.Verdict, out.Failure.Err()
}

func (h *host) Wait(d time.Duration) runner.WaitEnd {
	halted, err := workflow.AwaitWithTimeout(h.ctx, d, func() bool { return *h.halted })
	switch {
	case err != nil:
		return runner.WaitCancelled
	case halted:
		return runner.WaitHalted
	}
	return runner.WaitDone
}
