package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/judge"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// DefaultHeartbeat is how often an attempt reports that its worker is
// alive, unless [WithHeartbeat] says otherwise, or a third of the
// attempt's heartbeat timeout ([Input].HeartbeatTimeout) is shorter.
const DefaultHeartbeat = 5 * time.Second

// abandonGrace is how long an attempt waits, once its timeout is over,
// for an agent that ignores its context, before the attempt reports the
// timeout without it: the agent's goroutine is left behind, as the
// in-process runner leaves one.
const abandonGrace = 2 * time.Second

// ErrNoLLM is the failure of an attempt of a plan's LLM agent, or of a
// judgement or a repair, on a worker given no LLM client ([WithLLM]).
var ErrNoLLM = errors.New("no LLM client on this worker")

// Activities are the activities of a run, done on a Temporal worker with
// the host's trusted catalog and LLM. Build them with [NewActivities] and
// register them with [Activities.Register]; they are safe for concurrent
// use.
type Activities struct {
	reg       *registry.Registry
	agents    map[string]agent.Agent
	llm       llm.Client
	judge     runner.Judge
	custom    bool // the judge is the host's (WithJudge), not one on llm
	heartbeat time.Duration
}

// Option configures [Activities].
type Option func(*Activities)

// WithLLM gives the worker the LLM of plans' LLM agents, of the rubric
// judge (unless [WithJudge]) and of the planner's repairs.
func WithLLM(c llm.Client) Option { return func(a *Activities) { a.llm = c } }

// WithAgent runs the tasks whose agent is name with a, before the
// registry's worker of that name and the plan's LLM agent, as
// [runner.WithAgent] does in process.
func WithAgent(name string, a agent.Agent) Option {
	return func(x *Activities) {
		if x.agents == nil {
			x.agents = map[string]agent.Agent{}
		}
		x.agents[name] = a
	}
}

// WithJudge sets the judge of rubrics; by default, a
// [github.com/dagent-dev/dagent/judge.Judge] on the worker's LLM.
func WithJudge(j runner.Judge) Option {
	return func(a *Activities) { a.judge, a.custom = j, j != nil }
}

// WithHeartbeat sets how often a running attempt or repair heartbeats
// (at most a third of its heartbeat timeout); 0 or less keeps
// [DefaultHeartbeat].
func WithHeartbeat(d time.Duration) Option {
	return func(a *Activities) {
		if d > 0 {
			a.heartbeat = d
		}
	}
}

// NewActivities returns the activities of runs on the workers and tools
// of reg (nil: none).
func NewActivities(reg *registry.Registry, opts ...Option) *Activities {
	a := &Activities{reg: reg, heartbeat: DefaultHeartbeat}
	for _, o := range opts {
		o(a)
	}
	if a.judge == nil && a.llm != nil {
		a.judge = judge.New(a.llm)
	}
	return a
}

// Register registers the activities under their names ([ActivityCatalog],
// [ActivityAttempt], [ActivityJudge], [ActivityRepair], [ActivityPlan],
// [ActivityRound]).
func (a *Activities) Register(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(a.Catalog, activity.RegisterOptions{Name: ActivityCatalog})
	r.RegisterActivityWithOptions(a.Attempt, activity.RegisterOptions{Name: ActivityAttempt})
	r.RegisterActivityWithOptions(a.Judge, activity.RegisterOptions{Name: ActivityJudge})
	r.RegisterActivityWithOptions(a.Repair, activity.RegisterOptions{Name: ActivityRepair})
	r.RegisterActivityWithOptions(a.Plan, activity.RegisterOptions{Name: ActivityPlan})
	r.RegisterActivityWithOptions(a.Round, activity.RegisterOptions{Name: ActivityRound})
}

// Catalog is what the workflow knows of a worker's registry: enough to
// check a plan against it and to schedule its tasks, deterministically.
// It implements [plan.Catalog].
type Catalog struct {
	Workers map[string]WorkerInfo `json:"workers"`
	Tools   []string              `json:"tools"`
	// Agents names the agents given by [WithAgent], sorted; they count
	// as workers that declare no outputs.
	Agents []string `json:"agents,omitempty"`
}

// WorkerInfo is one worker of a [Catalog].
type WorkerInfo struct {
	// Outputs are the slots it declares; nil when it declares none.
	Outputs        []string      `json:"outputs"`
	Timeout        time.Duration `json:"timeout"`
	MaxConcurrency int           `json:"max_concurrency"`
}

// WorkerOutputs implements [plan.Catalog].
func (c *Catalog) WorkerOutputs(name string) ([]string, bool) {
	if slices.Contains(c.Agents, name) {
		return nil, true
	}
	w, ok := c.Workers[name]
	return w.Outputs, ok
}

// HasTool implements [plan.Catalog].
func (c *Catalog) HasTool(name string) bool { return slices.Contains(c.Tools, name) }

var _ plan.Catalog = (*Catalog)(nil)

// Catalog answers the snapshot of the worker's registry.
func (a *Activities) Catalog(context.Context) (*Catalog, error) {
	c := &Catalog{Workers: map[string]WorkerInfo{}, Tools: []string{}}
	for name := range a.agents {
		c.Agents = append(c.Agents, name)
	}
	slices.Sort(c.Agents)
	if a.reg == nil {
		return c, nil
	}
	for _, name := range a.reg.Names() {
		w, _ := a.reg.Lookup(name)
		slots, _ := a.reg.WorkerOutputs(name)
		c.Workers[name] = WorkerInfo{Outputs: slots, Timeout: w.Timeout, MaxConcurrency: w.MaxConcurrency}
	}
	c.Tools = append(c.Tools, a.reg.ToolNames()...)
	return c, nil
}

// AttemptRequest is one attempt of a task.
type AttemptRequest struct {
	Request agent.Request `json:"request"`
	// Agent is the plan's definition of the task's agent, when the agent
	// is not a worker of the registry: an LLM agent on the worker's LLM.
	Agent *plan.Agent `json:"agent,omitempty"`
	// Timeout bounds the attempt.
	Timeout time.Duration `json:"timeout"`
	// Model, MaxTurns and Temperature are the settings of an LLM agent
	// ([github.com/dagent-dev/dagent/durable.LLMSpec]); the plan agent's
	// own model wins over Model, and an empty Model is the LLM's default.
	Model       string   `json:"model,omitempty"`
	MaxTurns    int      `json:"max_turns,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	// Budget, when set, bounds the LLM calls of the plan's LLM agent by
	// what is left of the run's budget.
	Budget *Allowance `json:"budget,omitempty"`
}

// AttemptReply is what an attempt did. A failure of the agent is a reply
// with a Failure, never an error of the activity: an activity error means
// the attempt was lost with its worker, and is retried elsewhere.
type AttemptReply struct {
	// Output is the normalised output, as JSON.
	Output json.RawMessage `json:"output,omitempty"`
	// Usage is left out of the JSON when zero, as for an agent without
	// an LLM.
	Usage   agent.Usage `json:"usage,omitzero"`
	Failure *Failure    `json:"failure,omitempty"`
	// Spent is what the attempt's calls of the worker's LLM spent, when
	// the request had a Budget.
	Spent *Spend `json:"spent,omitempty"`
}

// Attempt makes one attempt of a task: it resolves the agent (a worker of
// the registry, else the plan's LLM agent), checks the worker's
// preconditions, calls the agent under the attempt's timeout while
// heartbeating, normalises its output and checks it against the worker's
// declared outputs. An LLM agent's calls are metered by the request's
// Budget. An output above [MaxOutputBytes] is invalid output: it would
// not fit in the activity's result. An attempt cut short by its worker's
// stop or the run's cancellation is an error of the activity, not a
// failure of the agent, so that Temporal makes it again elsewhere (or
// reports it cancelled).
func (a *Activities) Attempt(ctx context.Context, in AttemptRequest) (AttemptReply, error) {
	var c llm.Client = a.llm
	m := in.Budget.meter(a.llm)
	if m != nil {
		c = m
	}
	out, err := a.attempt(ctx, in, c)
	if err != nil {
		return AttemptReply{}, err
	}
	out.Spent = in.Budget.spent(m, nil)
	return out, nil
}

// attempt is [Activities.Attempt], a plan's LLM agent running on c.
func (a *Activities) attempt(ctx context.Context, in AttemptRequest, c llm.Client) (AttemptReply, error) {
	ag, w, err := a.resolve(in, c)
	if err != nil {
		return failed(agent.Usage{}, err, false), nil
	}
	if w != nil && len(w.Preconditions) > 0 {
		if err := w.Check(ctx, in.Request); err != nil {
			return failed(agent.Usage{}, err, false), nil
		}
	}
	res, err, timedOut := a.call(ctx, ag, in)
	if err != nil && ctx.Err() != nil {
		return AttemptReply{}, cut(ctx)
	}
	if err != nil {
		return failed(res.Usage, err, timedOut), nil
	}
	out, err := jsonv.Normalize(res.Output)
	if err != nil {
		return failed(res.Usage, fmt.Errorf("%w: %w", agent.ErrInvalidOutput, err), false), nil
	}
	if w != nil {
		if err := w.CheckOutput(out); err != nil {
			return failed(res.Usage, err, false), nil
		}
	}
	raw, err := jsonv.Marshal(out)
	if err == nil {
		err = outputBound(raw)
	}
	if err != nil {
		return failed(res.Usage, fmt.Errorf("%w: %w", agent.ErrInvalidOutput, err), false), nil
	}
	return AttemptReply{Output: raw, Usage: res.Usage}, nil
}

// cut is the error of an activity whose own context ended before its
// agent did, which is no failure of the agent: a worker that stops
// (Temporal makes the attempt again on another worker, with the same
// request), a run that cancelled it (the cause is Temporal's
// cancellation, and the activity is reported cancelled), or the
// activity's own timeout, which the server has seen already.
func cut(ctx context.Context) error {
	return fmt.Errorf("the attempt was cut short on this worker: %w", context.Cause(ctx))
}

// resolve finds the agent of the attempt; a plan's LLM agent runs on c.
func (a *Activities) resolve(in AttemptRequest, c llm.Client) (agent.Agent, *registry.Worker, error) {
	if ag, ok := a.agents[in.Request.Agent]; ok {
		return ag, nil, nil
	}
	if a.reg != nil {
		if w, ok := a.reg.Lookup(in.Request.Agent); ok {
			return w.Agent, &w, nil
		}
	}
	if in.Agent == nil {
		return nil, nil, fmt.Errorf("%w: %s is no worker of this worker's registry", runner.ErrNoAgent, in.Request.Agent)
	}
	if a.llm == nil {
		return nil, nil, fmt.Errorf("agent %s: %w", in.Request.Agent, ErrNoLLM)
	}
	ag, err := llmagent.Agents(c, a.reg, in.Model)(in.Request.Agent, *in.Agent)
	if err != nil {
		return nil, nil, err
	}
	if la, ok := ag.(*llmagent.Agent); ok {
		la.MaxTurns, la.Temperature = in.MaxTurns, in.Temperature
	}
	return ag, nil, nil
}

// call runs the agent under the attempt's timeout, heartbeating until it
// returns; an agent that outlives its timeout by abandonGrace is left
// behind. timedOut says the timeout ended the attempt.
func (a *Activities) call(ctx context.Context, ag agent.Agent, in AttemptRequest) (res agent.Result, err error, timedOut bool) {
	actx, cancel := context.WithCancel(ctx)
	if in.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, in.Timeout)
	}
	defer cancel()
	type end struct {
		res agent.Result
		err error
	}
	done := make(chan end, 1)
	go func() {
		var e end
		defer func() {
			if v := recover(); v != nil {
				e = end{err: &runner.PanicError{Value: v, Stack: debug.Stack()}}
			}
			done <- e
		}()
		e.res, e.err = ag.Run(actx, in.Request)
	}()
	tick := time.NewTicker(a.interval(ctx))
	defer tick.Stop()
	var grace <-chan time.Time
	for {
		select {
		case e := <-done:
			timedOut = e.err != nil && errors.Is(actx.Err(), context.DeadlineExceeded)
			return e.res, e.err, timedOut
		case <-tick.C:
			activity.RecordHeartbeat(ctx)
		case <-grace:
			return agent.Result{}, fmt.Errorf("%w: %w", runner.ErrAbandoned, actx.Err()), errors.Is(actx.Err(), context.DeadlineExceeded)
		case <-actx.Done():
			if grace == nil {
				t := time.NewTimer(abandonGrace)
				defer t.Stop()
				grace = t.C
			}
		}
	}
}

// interval is how often the activity of ctx heartbeats: the worker's
// heartbeat, or a third of the activity's heartbeat timeout when that is
// shorter, so that a heartbeat or two may be late, or dropped by the
// SDK's throttling, without the activity being deemed lost.
func (a *Activities) interval(ctx context.Context) time.Duration {
	d := a.heartbeat
	if hb := activity.GetInfo(ctx).HeartbeatTimeout; hb > 0 {
		d = min(d, hb/3)
	}
	return d
}

// beat heartbeats the activity of ctx every interval until stop is
// called.
func (a *Activities) beat(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(a.interval(ctx))
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				activity.RecordHeartbeat(ctx)
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// JudgeRequest is a judgement of a rubric, bounded by Timeout.
type JudgeRequest struct {
	Request runner.JudgeRequest `json:"request"`
	Timeout time.Duration       `json:"timeout"`
	// Model names the model of the judge on the worker's LLM; empty: the
	// LLM's default. A judge given by [WithJudge] chooses its own.
	Model string `json:"model,omitempty"`
	// Budget, when set, bounds the judge's calls of the worker's LLM by
	// what is left of the run's budget, and of the judge's own.
	Budget *Allowance `json:"budget,omitempty"`
}

// JudgeReply is a judgement: a verdict, or Failure when none was reached.
type JudgeReply struct {
	Verdict runner.Verdict `json:"verdict"`
	Failure *Failure       `json:"failure,omitempty"`
	// Spent is what the judge's calls of the worker's LLM spent, when
	// the request had a Budget.
	Spent *Spend `json:"spent,omitempty"`
}

// Judge has the worker's judge judge a rubric. No verdict reached is a
// reply with a Failure, not an error of the activity.
func (a *Activities) Judge(ctx context.Context, in JudgeRequest) (JudgeReply, error) {
	j := a.judge
	if j == nil {
		return JudgeReply{Failure: failureOf(fmt.Errorf("judge: %w", ErrNoLLM), false)}, nil
	}
	var run, own *llm.Meter
	if !a.custom && a.llm != nil {
		if run = in.Budget.meter(a.llm); run != nil {
			own = in.Budget.judgeMeter(run)
			j = judge.New(own, judge.WithModel(in.Model))
		} else if in.Model != "" {
			j = judge.New(a.llm, judge.WithModel(in.Model))
		}
	}
	if in.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.Timeout)
		defer cancel()
	}
	v, err := j.Judge(ctx, in.Request)
	out := JudgeReply{Verdict: v, Spent: in.Budget.spent(run, own)}
	if err != nil {
		out.Failure = failureOf(err, errors.Is(err, context.DeadlineExceeded))
	}
	return out, nil
}

// failed is the reply of a failed attempt.
func failed(u agent.Usage, err error, timedOut bool) AttemptReply {
	return AttemptReply{Usage: u, Failure: failureOf(err, timedOut)}
}
