package durable

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
)

// EventPlanned is the event of a run that starts from a mission, when the
// planner has written its plan: Tasks counts the plan's tasks, Attempt the
// requests the planner sent.
const EventPlanned runner.EventKind = "mission_planned"

// Errors of starting and resuming runs.
var (
	// ErrRunExists: [WithRunID] names a journaled run that cannot be
	// continued by this start — it ran another plan, or it replans.
	ErrRunExists = errors.New("the run id is taken")
	// ErrNotResumable: the run cannot go on as asked, such as a review
	// decision for a task that is not a human review of the run.
	ErrNotResumable = errors.New("the run cannot be resumed so")
	// ErrCatalogChanged: the catalog a run resumes or replays on is not
	// the one it started on, as the digests of [CatalogFunc] tell; the
	// error is a *[CatalogChangedError] when both digests are known.
	ErrCatalogChanged = errors.New("the catalog changed since the run started")
)

// CatalogChangedError is the error of [Resume] and [Replay] when the
// digest of the run's catalog is not the one the run recorded when it
// started ([Spec.CatalogDigest]): the catalog was edited since, or the
// journal names another one. A run of a spec that names a digest starts
// with this error too when the catalog has another. It matches
// [ErrCatalogChanged].
type CatalogChangedError struct {
	Name     string // the catalog's name, [Spec.Catalog]
	RunID    string // the run; empty for a run that starts
	Recorded string // the digest the run recorded
	Found    string // the digest of the catalog now
}

func (e *CatalogChangedError) Error() string {
	who := "run " + e.RunID
	if e.RunID == "" {
		who = "the run"
	}
	return fmt.Sprintf("catalog %s changed since %s started: its digest is %s, it was %s", e.Name, who, e.Found, e.Recorded)
}

func (e *CatalogChangedError) Is(target error) bool { return target == ErrCatalogChanged }

// Outcome is how a run ended.
type Outcome struct {
	RunID  string
	Status Status
	// Result is the run's result: for a run that replans, the embedded
	// result of Execution. Nil when no plan ran.
	Result *runner.Result
	// Execution is the execution of a run that replans, repairs included;
	// nil for a run that does not. Its Usage counts every LLM call of the
	// run, the planning of its mission included.
	Execution *executor.Result
	// Planned is the planner's answer of a run that started from a mission:
	// its route, and the plan, the direct answer or the question. When it
	// is no plan, nothing ran.
	Planned *metaplanner.Result
	// Plan is the plan that ran last.
	Plan *plan.Plan
}

// Start starts the run of spec, journaled in s (nil: not journaled), and runs it to its end: a
// completed run, a failure, a wait for review, a halt of its repairs or
// ctx ending it (the run is then cancelled, and can be resumed).
//
// The run is written to s when it first has something to keep, so that a
// start that runs nothing — the plan is invalid, the critic refused it, no
// LLM is configured — leaves no run behind. Each task's final state, each
// plan the run adopts and each LLM exchange is durable before the run goes
// on.
//
// The error says why the run could not start or go on: an invalid spec,
// an invalid [WithRunID] (matching [runner.ErrInvalidRunID]), a plan that
// does not check (it matches [plan.ErrInvalid] and lists the problems), a
// plan the critic refused ([executor.RefusedError]), the planner's error
// (with its answer in the outcome's Planned), or ctx ending the run.
// Failures of tasks are in the outcome.
func Start(ctx context.Context, s store.Store, spec Spec, opts ...Option) (*Outcome, error) {
	c := newConfig(opts)
	if err := spec.Check(); err != nil {
		return nil, err
	}
	if c.runID != "" {
		if err := runner.CheckRunID(c.runID); err != nil {
			return nil, err
		}
	}
	reg, err := c.resolve(ctx, &spec, "")
	if err != nil {
		return nil, err
	}
	runID := cmp.Or(c.runID, runner.NewRunID(time.Now()))
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	l := &launch{c: c, spec: spec, reg: reg, runID: runID, current: spec.Plan, initial: c.initial}
	if s == nil {
		return l.exec(ctx)
	}
	create := &store.Run{ID: runID, Spec: raw, Mission: spec.mission()}
	seed := c.initial
	rec, err := s.Load(ctx, runID)
	switch {
	case err == nil:
		if seed, err = continued(rec, spec, seed); err != nil {
			return nil, err
		}
		create = nil
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	l.jr = newJournal(s, runID, create, seed, 0)
	return l.exec(ctx)
}

// continued returns what a start of a run journaled already as rec must
// commit of its initial results: those rec does not hold as done. Only a
// run of the same plan that does not replan is continued.
func continued(rec *store.Record, spec Spec, initial map[string]any) (map[string]any, error) {
	first := rec.Plan
	if len(rec.Plans) > 0 {
		first = rec.Plans[0].Plan
	}
	var want []byte
	if spec.Plan != nil {
		var err error
		if want, err = spec.Plan.Canonical(); err != nil {
			return nil, err
		}
	}
	if spec.Plan == nil || spec.Replan != nil || !bytes.Equal(first, want) {
		return nil, fmt.Errorf("%w: run %s is in the journal already, with another plan or replanning: start this run under another id, or resume that one", ErrRunExists, rec.ID)
	}
	seed := make(map[string]any, len(initial))
	for id, out := range initial {
		if t, ok := rec.Tasks[id]; !ok || t.Status != string(runner.TaskDone) {
			seed[id] = out
		}
	}
	return seed, nil
}

// Resume continues the journaled run id (or the one run whose id begins
// with id) from where it stopped, with the spec it started with and on
// the catalog WithCatalog resolves: every task the journal holds as done
// keeps its output and never runs again; every other task runs, the task
// in flight when the process died included, under the same idempotency
// key. A run that replans continues from the plan version it adopted last,
// with its repair history and what is left of its limits. A completed run
// is returned as the journal has it; nothing runs.
//
// A run waiting for review takes the decisions given with [WithReviews].
// A catalog whose digest is not the one the run recorded when it started
// is refused with [ErrCatalogChanged] before anything runs ([CatalogFunc]).
func Resume(ctx context.Context, s store.Store, id string, opts ...Option) (*Outcome, error) {
	r, err := Load(ctx, s, id)
	if err != nil {
		return nil, err
	}
	return r.Resume(ctx, s, opts...)
}

// Resume is [Resume] of r, read from s by [Load]: for a host that looks at
// the run before it resumes it, without reading it twice.
func (r *Run) Resume(ctx context.Context, s store.Store, opts ...Option) (*Outcome, error) {
	c := newConfig(opts)
	current := r.Plan()
	for tid := range c.reviews {
		if current == nil || !slices.ContainsFunc(current.Tasks, func(t plan.Task) bool { return t.ID == tid && t.Type == plan.TypeHumanReview }) {
			return nil, fmt.Errorf("%w: a review decision for %q, which is not a human_review task of run %s", ErrNotResumable, tid, r.ID)
		}
	}
	if r.Status == StatusCompleted {
		return r.outcome()
	}
	reg, err := c.resolve(ctx, &r.Spec, r.ID)
	if err != nil {
		return nil, err
	}
	done, _, err := store.Resume(r.Record)
	if err != nil {
		return nil, err
	}
	version := max(len(r.Plans)-1, 0)
	l := &launch{c: c, spec: r.Spec, reg: reg, runID: r.ID, current: current, initial: done, history: r.History, resumed: len(r.Plans) > 0}
	l.jr = newJournal(s, r.ID, nil, nil, version)
	return l.exec(ctx)
}

// resolve returns the registry the run's plans are checked against and
// run on: the catalog spec names (none for an empty name), with the Go
// workers of [WithAgent] ahead of its workers. A run that starts (runID
// empty) records the catalog's digest in spec; the run runID, journaled,
// must find the digest it recorded.
func (c *config) resolve(ctx context.Context, spec *Spec, runID string) (*registry.Registry, error) {
	var catalog *registry.Registry
	if name := spec.Catalog; name != "" {
		if c.catalog == nil {
			return nil, fmt.Errorf("the run's catalog is %q, and no catalog resolver was given to resolve it", name)
		}
		var (
			digest string
			err    error
		)
		if catalog, digest, err = c.catalog(ctx, name); err != nil {
			return nil, err
		}
		switch {
		case digest == "":
		case runID == "" && spec.CatalogDigest == "":
			spec.CatalogDigest = digest
		case spec.CatalogDigest == "":
			return nil, fmt.Errorf("%w: run %s recorded no digest of its catalog %s, so that the catalog cannot be told to be the one it started on", ErrCatalogChanged, runID, name)
		case digest != spec.CatalogDigest:
			return nil, &CatalogChangedError{Name: name, RunID: runID, Recorded: spec.CatalogDigest, Found: digest}
		}
	}
	if len(c.agents) == 0 {
		return catalog, nil
	}
	reg := rebuild(catalog, func(name string, w registry.Worker) agent.Agent {
		if a, ok := c.agents[name]; ok {
			return a
		}
		return w.Agent
	}, nil)
	for _, name := range slices.Sorted(maps.Keys(c.agents)) {
		if _, ok := reg.Lookup(name); !ok {
			if err := reg.Register(name, registry.Worker{Agent: c.agents[name]}); err != nil {
				return nil, fmt.Errorf("worker %s: %w", name, err)
			}
		}
	}
	return reg, nil
}

// rebuild returns a copy of reg whose workers run on worker's agents and
// whose tools run tool's functions (nil: as they are); the workers keep
// their outputs, preconditions and timeouts.
func rebuild(reg *registry.Registry, worker func(string, registry.Worker) agent.Agent, tool func(string, registry.Tool) registry.ToolFunc) *registry.Registry {
	out := registry.New()
	for _, name := range reg.Names() {
		w, _ := reg.Lookup(name)
		w.Agent = worker(name, w)
		_ = out.Register(name, w) // reg's names: no duplicates
	}
	for _, name := range reg.ToolNames() {
		t, _ := reg.LookupTool(name)
		if tool != nil {
			t.Run = tool(name, t)
		}
		_ = out.RegisterTool(name, t)
	}
	return out
}

// launch is one run of a spec: a start, a resume or a replay.
type launch struct {
	c       config
	spec    Spec
	reg     *registry.Registry // the catalog the plans are checked against
	runID   string
	current *plan.Plan // the plan to run; nil: plan the mission first
	initial map[string]any
	history []executor.Trial
	resumed bool     // the run adopted a plan before: go on with it
	jr      *journal // nil: not journaled (a replay)
	plans   *planLog // a replay's log of the plans it adopts
	// workers stands in for the workers and tools of reg, the catalog
	// and the Go workers (a replay); nil: they run.
	workers   func(reg *registry.Registry) *registry.Registry
	llm       *lazyLLM
	observers []runner.Observer
}

// exec runs l to its end and journals how it ended.
func (l *launch) exec(ctx context.Context) (out *Outcome, err error) {
	l.llm = &lazyLLM{f: l.c.llm, budget: llm.Budget{MaxTokens: l.spec.Budget.MaxTokens, MaxCalls: l.spec.Budget.MaxCalls}, model: l.spec.LLM.Model}
	l.observers = l.c.observers
	if l.jr != nil {
		l.llm.wrap = l.jr.j.RecordLLM
		l.observers = append([]runner.Observer{l.jr.j}, l.observers...)
		defer func() {
			status, text := StatusFailed, errText(err)
			if out != nil && out.Result != nil {
				status, text = statusOf(out.Result), errText(out.Result.Err)
			}
			if jerr := l.jr.finish(ctx, l.runID, status, text); jerr != nil && err == nil {
				err = fmt.Errorf("journal: %w", jerr)
			}
		}()
	}
	out = &Outcome{RunID: l.runID}
	if l.current == nil {
		if err := l.planMission(ctx, out); err != nil || out.Plan == nil {
			return out, err
		}
	}
	if l.spec.Replan != nil {
		return out, l.execute(ctx, out)
	}
	return out, l.run(ctx, out)
}

// planMission asks the planner for the plan of the spec's mission.
func (l *launch) planMission(ctx context.Context, out *Outcome) error {
	planner, err := l.planner()
	if err != nil {
		return err
	}
	if d := l.spec.Budget.MaxDuration; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
		// The wall time planning took comes off the run's.
		defer func(start time.Time) { l.spec.Budget.MaxDuration = max(d-time.Since(start), time.Nanosecond) }(time.Now())
	}
	res, err := planner.Plan(ctx, l.spec.mission())
	out.Planned = res
	if err != nil {
		return err
	}
	if res.Route != metaplanner.RoutePlan || res.Plan == nil {
		return nil
	}
	l.current, out.Plan = res.Plan, res.Plan
	l.emit(runner.Event{Kind: EventPlanned, Time: time.Now(), RunID: l.runID, Tasks: len(res.Plan.Tasks), Attempt: res.Attempts})
	return nil
}

func (l *launch) emit(e runner.Event) {
	for _, o := range l.observers {
		o.Observe(e)
	}
}

// planner is the meta-planner of the run, on the run's LLM.
func (l *launch) planner() (*metaplanner.Planner, error) {
	c, err := l.llm.client(true)
	if err != nil {
		return nil, err
	}
	opts := []metaplanner.Option{metaplanner.WithRegistry(l.reg), metaplanner.WithMaxCorrections(l.spec.LLM.MaxCorrections)}
	if l.spec.LLM.Brief {
		opts = append(opts, metaplanner.WithBrief())
	}
	return metaplanner.New(c, opts...), nil
}

// runnerOptions are the options of every run of the launch's plans.
func (l *launch) runnerOptions() []runner.Option {
	reg := l.reg
	if l.workers != nil {
		reg = l.workers(reg)
	}
	opts := []runner.Option{
		runner.WithRegistry(reg),
		runner.WithPlanAgents(l.planAgents(reg)),
		runner.WithSchedule(l.spec.Runner.Schedule),
	}
	if n := l.spec.Runner.Concurrency; n > 0 {
		opts = append(opts, runner.WithConcurrency(n))
	}
	if d := l.spec.Runner.TaskTimeout; d > 0 {
		opts = append(opts, runner.WithTaskTimeout(d))
	}
	if l.jr != nil {
		opts = append(opts, runner.WithJournal(l.jr.j))
	}
	return opts
}

// planAgents runs the LLM agents a plan defines on the run's LLM, with
// the tools of reg. The runner asks for them before any task starts, and
// only for tasks that name no worker.
func (l *launch) planAgents(reg *registry.Registry) runner.PlanAgents {
	return func(name string, def plan.Agent) (agent.Agent, error) {
		c, err := l.llm.client(def.Model == "")
		if err != nil {
			return nil, err
		}
		return llmagent.Agents(c, reg, "")(name, def)
	}
}

// check checks the launch's plan against its catalog, once.
func (l *launch) check() (*plan.DAG, error) {
	if l.reg == nil {
		return l.current.DAG()
	}
	return l.current.DAG(plan.WithCatalog(l.reg))
}

// run runs the launch's plan once, as a run that does not replan.
func (l *launch) run(ctx context.Context, out *Outcome) error {
	if d := l.spec.Budget.MaxDuration; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	d, err := l.check()
	if err != nil {
		return err
	}
	if j := l.planJournal(); j != nil && !l.resumed {
		if err := j.CommitPlan(ctx, executor.PlanCommit{Plan: l.current}); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	opts := l.runnerOptions()
	for _, o := range l.observers {
		opts = append(opts, runner.WithObserver(o))
	}
	res, err := runner.New(opts...).Run(ctx, d, runner.WithRunID(l.runID),
		runner.WithInitialResults(l.initial), runner.WithReviews(l.c.reviews))
	out.Plan, out.Result = l.current, res
	if res != nil {
		out.Status = statusOf(res)
	}
	return err
}

// execute runs the launch's plan through the executor, which repairs it
// when a run asks for a new plan.
func (l *launch) execute(ctx context.Context, out *Outcome) error {
	// Checked here, an invalid plan is reported as its problems, as that
	// of a run that does not replan, rather than as a plan the critic
	// refused.
	d, err := l.check()
	if err != nil {
		return err
	}
	planner, err := l.planner()
	if err != nil {
		return err
	}
	r := l.spec.Replan
	ropts := l.runnerOptions()
	opts := []executor.Option{
		// The catalog checks the plans; the runner options come after it,
		// so that a replay's stand-ins run them.
		executor.WithRegistry(l.reg),
		executor.WithRunner(ropts...),
		executor.WithRunID(l.runID),
		executor.WithReviews(l.c.reviews),
		executor.WithReplanner(planner),
		executor.WithMaxReplans(r.MaxReplans),
		executor.WithMaxReplansPerTask(r.MaxReplansPerTask),
		executor.WithCooldown(r.Cooldown),
		executor.WithBudget(l.spec.Budget, l.llm),
		executor.WithInitialResults(l.initial),
	}
	if l.resumed {
		// The run goes on from the plan version it adopted last, which is
		// journaled already.
		opts = append(opts, executor.WithHistory(l.history))
	}
	for _, o := range l.observers {
		opts = append(opts, executor.WithObserver(o))
	}
	if j := l.planJournal(); j != nil {
		opts = append(opts, executor.WithJournal(j))
	}
	res, err := executor.ExecuteDAG(ctx, d, l.spec.mission(), opts...)
	if res != nil && res.ExecutionAttempts > 0 {
		// The run's usage is that of every LLM call it made, the
		// planning of its mission included.
		res.Usage = l.llm.Usage()
		out.Execution, out.Result, out.Plan = res, &res.Result, res.Plan
		out.Status = statusOf(&res.Result)
	}
	return err
}

// planJournal is where the plans the launch adopts are kept: the
// journal, or a replay's log.
func (l *launch) planJournal() executor.Journal {
	switch {
	case l.jr != nil:
		return l.jr
	case l.plans != nil:
		return l.plans
	}
	return nil
}

// lazyLLM is the LLM of one run: asked for the first time something needs
// it, metered by the spec's budget, and journaled.
type lazyLLM struct {
	f      ClientFunc
	model  string
	budget llm.Budget
	// wrap, when set, wraps the client under the meter: the journal's
	// recording of every exchange.
	wrap func(llm.Client) llm.Client

	mu    sync.Mutex
	meter *llm.Meter
}

func (l *lazyLLM) client(modelNeeded bool) (*llm.Meter, error) {
	if l.f == nil {
		return nil, ErrNoLLM
	}
	c, err := l.f(l.model, modelNeeded)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.meter == nil {
		if l.wrap != nil {
			c = l.wrap(c)
		}
		l.meter = llm.NewMeter(c, l.budget)
	}
	return l.meter, nil
}

// Usage and Calls make the run's LLM the executor's meter: nothing spent
// until it is first asked for.
func (l *lazyLLM) Usage() llm.Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.meter == nil {
		return llm.Usage{}
	}
	return l.meter.Usage()
}

func (l *lazyLLM) Calls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.meter == nil {
		return 0
	}
	return l.meter.Calls()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}
