package durable

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/store"
	"github.com/dagent-dev/dagent/verify"
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
// The run is written to s, and this process takes its lease, before its
// first side effect — before the planner is asked, before any task starts
// — and after the checks that refuse a run: a start whose spec or plan is
// invalid, or that needs an LLM and has none, leaves no run behind. Each
// task's final state, each plan the run adopts and each LLM exchange is
// durable before the run goes on. While it runs, the run's lease is kept
// fresh ([WithStaleAfter]); it is given up when the run ends.
//
// Under the id of a journaled run ([WithRunID]) of the same plan that does
// not replan, Start goes on with that run exactly as [Resume] does: its
// done tasks keep their outputs and never run again, the initial results
// it has not done are committed, and a run another process owns is
// refused with a [*store.OwnedError]. Under the id of another plan's run,
// or of a run that replans, it fails with [ErrRunExists].
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
	runID := cmp.Or(c.runID, runner.NewRunID(time.Now()))
	if s == nil {
		reg, err := c.resolve(ctx, &spec, "")
		if err != nil {
			return nil, err
		}
		l := &launch{c: c, spec: spec, reg: reg, runID: runID, current: spec.Plan, initial: c.initial}
		return l.exec(ctx)
	}
	// The plan's canonical JSON, encoded once: what a journaled run of the
	// same plan has, and what the new run is created with.
	var canon []byte
	if spec.Plan != nil {
		var err error
		if canon, err = spec.Plan.Canonical(); err != nil {
			return nil, err
		}
	}
	rec, err := s.Load(ctx, runID)
	switch {
	case err == nil:
		r, err := continuable(rec, spec, canon)
		if err != nil {
			return nil, err
		}
		return r.resume(ctx, s, c, c.initial)
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	reg, err := c.resolve(ctx, &spec, "")
	if err != nil {
		return nil, err
	}
	raw, err := settings(spec)
	if err != nil {
		return nil, err
	}
	l := &launch{c: c, spec: spec, reg: reg, runID: runID, current: spec.Plan, initial: c.initial}
	create := &store.Run{ID: runID, Plan: canon, Spec: raw, Mission: spec.mission()}
	if spec.Plan != nil {
		create.TaskCount = len(spec.Plan.Tasks)
	}
	decided, err := decisionEvents(c, c.initial)
	if err != nil {
		return nil, err
	}
	l.jr = newJournal(s, runID, c, create, nil, c.initial, 0)
	l.jr.created = spec.Plan
	l.jr.decided = decided
	return l.exec(ctx)
}

// continuable returns the journaled run rec, which a start of spec, whose
// plan's canonical JSON is want, goes on with: only a run of the same
// plan, when neither replans.
func continuable(rec *store.Record, spec Spec, want []byte) (*Run, error) {
	refused := fmt.Errorf("%w: run %s is in the journal already, with another plan or replanning: start this run under another id, or resume that one", ErrRunExists, rec.ID)
	if spec.Plan == nil || spec.Replan != nil {
		return nil, refused
	}
	first := rec.Plan
	if len(rec.Plans) > 0 {
		first = rec.Plans[0].Plan
	}
	if !bytes.Equal(first, want) {
		return nil, refused
	}
	r, err := view(rec)
	if err != nil {
		return nil, err
	}
	if r.Spec.Replan != nil || len(r.Plans) > 1 {
		return nil, refused
	}
	return r, nil
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
// The process takes the run's lease first, and reads the run again once
// it holds it. A run whose owner is alive ([Alive]) is refused with a
// [*store.OwnedError] that names it (it matches [store.ErrOwned]), unless
// [WithTakeover]; an owner that died — its process is gone, or its
// heartbeat is older than [WithStaleAfter] — is taken over.
//
// A journaled run records each program its command workers start
// ([store.Store.RecordProcess]) in a process group of its own. Before any
// task runs again, Resume kills with SIGKILL the recorded groups of the
// tasks not done — the children a worker left when its process died — and
// forgets them all. On Linux only, and only a group of this host, started
// since its last boot, whose leader still has the recorded start time or
// is gone: a group whose id was taken since is left alone, and outside
// Linux nothing is recorded.
//
// A run waiting for review takes the decisions given with [WithReviews].
// The run is marked running again, and the decisions are journaled, once
// the checks that may refuse it have passed — its plan is valid on the
// catalog, the LLM it needs is there — just before its first side effect:
// a resume refused leaves the run as it was.
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
// the run before it resumes it.
func (r *Run) Resume(ctx context.Context, s store.Store, opts ...Option) (*Outcome, error) {
	return r.resume(ctx, s, newConfig(opts), nil)
}

// resume resumes r, committing the initial outputs it has not done.
func (r *Run) resume(ctx context.Context, s store.Store, c config, initial map[string]any) (*Outcome, error) {
	if err := r.checkReviews(c.reviews); err != nil {
		return nil, err
	}
	if r.Status == StatusCompleted {
		return r.outcome()
	}
	reg, err := c.resolve(ctx, &r.Spec, r.ID)
	if err != nil {
		return nil, err
	}
	ls, err := takeLease(ctx, s, r.ID, c)
	if err != nil {
		return nil, err
	}
	// Read again now that the run is this process's: another process may
	// have gone on with it since r was read, and even ended it.
	now, err := s.Load(ctx, r.ID)
	if err == nil {
		r, err = view(now)
	}
	if err != nil || r.Status == StatusCompleted {
		rerr := ls.release(ctx)
		if err != nil {
			return nil, err
		}
		out, err := r.outcome()
		return out, errors.Join(err, rerr)
	}
	done, _, err := store.Resume(r.Record)
	if err != nil {
		return nil, errors.Join(err, ls.release(ctx))
	}
	// The process that ran the run died: what is left of the programs it
	// started goes before their tasks run again.
	if err := killOrphans(ctx, s, r.Record, done); err != nil {
		return nil, errors.Join(err, ls.release(ctx))
	}
	decided, err := decisionEvents(c, done)
	if err != nil {
		return nil, errors.Join(err, ls.release(ctx))
	}
	fresh := make(map[string]any, len(initial))
	for id, out := range initial {
		if _, ok := done[id]; !ok {
			fresh[id], done[id] = out, out
		}
	}
	// The budget goes on from what the run's earlier processes spent.
	lines := make([][]byte, len(r.Record.Exchanges))
	for i, x := range r.Record.Exchanges {
		lines[i] = x.Exchange
	}
	spent, calls, err := llm.RecordedUsage("run "+r.ID, lines)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("durable: the LLM exchanges of run %s: %w", r.ID, err), ls.release(ctx))
	}
	version := max(len(r.Plans)-1, 0)
	l := &launch{c: c, spec: r.Spec, reg: reg, runID: r.ID, current: r.Plan(), initial: done, history: r.History, resumed: len(r.Plans) > 0,
		spent: spent, spentCalls: calls}
	l.jr = newJournal(s, r.ID, c, nil, ls, fresh, version)
	l.jr.decided = decided
	return l.exec(ctx)
}

// checkReviews refuses a decision for a task that is not a human review
// of the run's current plan.
func (r *Run) checkReviews(reviews map[string]runner.Decision) error {
	current := r.Plan()
	for tid := range reviews {
		if current == nil || !slices.ContainsFunc(current.Tasks, func(t plan.Task) bool { return t.ID == tid && t.Type == plan.TypeHumanReview }) {
			return fmt.Errorf("%w: a review decision for %q, which is not a human_review task of run %s", ErrNotResumable, tid, r.ID)
		}
	}
	return nil
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
	// spent and spentCalls are what the run's LLM spent in the processes
	// that ran it before this one: a resume's budget starts from them.
	spent      llm.Usage
	spentCalls int
}

// exec runs l to its end and journals how it ended.
func (l *launch) exec(ctx context.Context) (out *Outcome, err error) {
	l.llm = &lazyLLM{f: l.c.llm, budget: llm.Budget{MaxTokens: l.spec.Budget.MaxTokens, MaxCalls: l.spec.Budget.MaxCalls}, model: l.spec.LLM.Model,
		spent: l.spent, spentCalls: l.spentCalls}
	l.observers = l.c.observers
	if l.jr != nil {
		var lost context.CancelCauseFunc
		ctx, lost = context.WithCancelCause(ctx)
		defer lost(nil)
		l.jr.watch(lost)
		l.llm.wrap = l.jr.j.RecordLLM
		l.observers = append([]runner.Observer{l.jr.j}, l.observers...)
		defer func() {
			status, text := StatusFailed, errText(err)
			if out != nil && out.Result != nil {
				status, text = statusOf(out.Result), errText(out.Result.Err)
			}
			jerr := l.jr.finish(ctx, status, text)
			switch cause := context.Cause(ctx); {
			case errors.Is(cause, ErrLeaseLost):
				err = cause
			case jerr != nil && err == nil:
				err = fmt.Errorf("journal: %w", jerr)
			}
		}()
	}
	out = &Outcome{RunID: l.runID}
	var planned *plan.Plan // the planner's plan, to cache
	if l.spec.Rounds > 0 {
		return out, l.rounds(ctx, out)
	}
	if l.current == nil {
		if err := l.planMission(ctx, out); err != nil || out.Plan == nil {
			return out, err
		}
		if out.Planned.Attempts > 0 {
			planned = out.Plan
		}
	}
	if l.spec.Replan != nil {
		err = l.execute(ctx, out)
	} else {
		err = l.run(ctx, out)
	}
	if err == nil {
		if cerr := l.keepPlan(ctx, planned, out); cerr != nil {
			err = fmt.Errorf("plan cache: %w", cerr)
		}
	}
	return out, err
}

// planMission asks the planner for the plan of the spec's mission, or
// takes the plan cached for it.
func (l *launch) planMission(ctx context.Context, out *Outcome) error {
	cached, err := l.cachedPlan(ctx)
	if err != nil {
		return fmt.Errorf("plan cache: %w", err)
	}
	var planner *metaplanner.Planner
	if cached == nil {
		mem, err := l.memory(ctx)
		if err != nil {
			return fmt.Errorf("memory: %w", err)
		}
		if planner, err = l.planner(mem); err != nil {
			return err
		}
	}
	if l.jr != nil {
		// Planning is the run's first side effect: the run begins here.
		if err := l.jr.begin(ctx, nil); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	if d := l.spec.Budget.MaxDuration; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
		// The wall time planning took comes off the run's.
		defer func(start time.Time) { l.spec.Budget.MaxDuration = max(d-time.Since(start), time.Nanosecond) }(time.Now())
	}
	if cached != nil {
		l.current, out.Plan = cached, cached
		out.Planned = &metaplanner.Result{Route: metaplanner.RoutePlan, Plan: cached}
		l.emit(runner.Event{Kind: EventPlanCached, Time: time.Now(), RunID: l.runID, Tasks: len(cached.Tasks)})
		return nil
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

// planner is the meta-planner of the run, on the run's LLM, shown mem
// when it plans the mission.
func (l *launch) planner(mem *metaplanner.Memory) (*metaplanner.Planner, error) {
	c, err := l.llm.client(true)
	if err != nil {
		return nil, err
	}
	opts := append(l.spec.LLM.PlannerOptions(), metaplanner.WithRegistry(l.reg), metaplanner.WithMemory(mem))
	return metaplanner.New(c, opts...), nil
}

// runnerOptions are the options of every run of the launch's plans.
func (l *launch) runnerOptions() []runner.Option {
	reg := l.reg
	if l.workers != nil {
		reg = l.workers(reg)
	}
	if l.jr != nil && reg != nil {
		reg = l.jr.recorded(reg)
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
	if l.spec.Judge != nil {
		opts = append(opts, runner.WithJudge(&lazyJudge{l: l, spec: *l.spec.Judge}))
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
		a, err := llmagent.Agents(c, reg, "")(name, def)
		if err != nil {
			return nil, err
		}
		if la, ok := a.(*llmagent.Agent); ok {
			la.MaxTurns, la.Temperature = l.spec.LLM.MaxTurns, l.spec.LLM.Temperature
		}
		if l.jr == nil {
			return a, nil
		}
		return l.jr.recording(a), nil
	}
}

// check checks the launch's plan against its catalog, once.
func (l *launch) check() (*plan.DAG, error) {
	if l.reg == nil {
		return l.current.DAG()
	}
	return l.current.DAG(plan.WithCatalog(l.reg))
}

// gate refuses, before a run that does not replan, a plan the spec's gate
// refuses when the gate is stricter than critical: at the critical gate,
// the check and the precheck refuse what the critic finds critical, with
// the errors the runner would give.
func (l *launch) gate(d *plan.DAG) error {
	g := l.spec.Gate
	if g != critic.GateWarning && g != critic.GateInfo {
		return nil
	}
	if rep := critic.ReviewDAG(d); g.Refuses(&rep) {
		return &executor.RefusedError{Report: rep, Gate: g}
	}
	return nil
}

// precheck does before the run begins what would make the runner refuse
// it: it compiles the verification predicates of the tasks to run (the
// set it returns, for the runner) and asks for the LLM of the plan's LLM
// agents, if any are to run. A run refused so is never journaled.
func (l *launch) precheck() (*verify.Set, error) {
	preds := verify.NewSet()
	var bad []error
	needLLM := map[bool]bool{}
	for _, t := range l.current.Tasks {
		if _, done := l.initial[t.ID]; done {
			continue
		}
		if t.When != "" {
			if _, err := preds.Compile(t.When); err != nil {
				bad = append(bad, &runner.PredicateError{TaskID: t.ID, Field: "when", Err: err})
			}
		}
		if t.Verification != "" {
			if _, err := preds.Compile(t.Verification); err != nil {
				bad = append(bad, &runner.PredicateError{TaskID: t.ID, Err: err})
			}
		}
		if t.Type == plan.TypeHumanReview {
			continue
		}
		if l.reg != nil {
			if _, ok := l.reg.Lookup(t.Agent); ok {
				continue
			}
		}
		needLLM[l.current.Agents[t.Agent].Model == ""] = true
	}
	if len(bad) > 0 {
		return nil, errors.Join(bad...)
	}
	for modelNeeded := range needLLM {
		if _, err := l.llm.client(modelNeeded); err != nil {
			return nil, err
		}
	}
	return preds, nil
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
	if err := l.gate(d); err != nil {
		return err
	}
	var runOpts []runner.RunOption
	if l.jr != nil {
		preds, err := l.precheck()
		if err != nil {
			return err
		}
		runOpts = append(runOpts, runner.WithPredicates(preds))
	}
	if j := l.planJournal(); j != nil && !l.resumed {
		if err := j.CommitPlan(ctx, executor.PlanCommit{Plan: l.current}); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	} else if err := l.goOn(ctx); err != nil {
		return err
	}
	opts := l.runnerOptions()
	for _, o := range l.observers {
		opts = append(opts, runner.WithObserver(o))
	}
	res, err := runner.New(opts...).Run(ctx, d, append(runOpts, runner.WithRunID(l.runID),
		runner.WithInitialResults(l.initial), runner.WithReviews(l.c.reviews))...)
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
	planner, err := l.planner(nil)
	if err != nil {
		return err
	}
	ropts := l.runnerOptions()
	opts := []executor.Option{
		// The catalog checks the plans; the runner options come after it,
		// so that a replay's stand-ins run them.
		executor.WithRegistry(l.reg),
		executor.WithRunner(ropts...),
		executor.WithRunID(l.runID),
		executor.WithReviews(l.c.reviews),
		executor.WithReplanner(planner),
		executor.WithBudget(l.spec.Budget, l.llm),
		executor.WithInitialResults(l.initial),
		executor.WithGate(l.spec.Gate),
	}
	opts = append(opts, l.spec.Replan.options()...)
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
	if err := l.goOn(ctx); err != nil {
		return err
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

// rounds runs the launch's mission in rounds: from the plan of the round
// it reached, or from the first round, which the planner writes.
func (l *launch) rounds(ctx context.Context, out *Outcome) error {
	mem, err := l.memory(ctx)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	planner, err := l.planner(mem)
	if err != nil {
		return err
	}
	opts := []executor.Option{
		executor.WithRegistry(l.reg),
		executor.WithRunner(l.runnerOptions()...),
		executor.WithRunID(l.runID),
		executor.WithReviews(l.c.reviews),
		executor.WithRounds(l.spec.Rounds, planner),
		executor.WithBudget(l.spec.Budget, l.llm),
		executor.WithInitialResults(l.initial),
		executor.WithGate(l.spec.Gate),
	}
	if r := l.spec.Replan; r != nil {
		opts = append(opts, r.haltOptions()...)
	}
	for _, o := range l.observers {
		opts = append(opts, executor.WithObserver(o))
	}
	if j := l.planJournal(); j != nil {
		opts = append(opts, executor.WithJournal(j))
	}
	var res *executor.Result
	if l.current == nil {
		if l.jr != nil {
			// Planning the first round is the run's first side effect.
			if err := l.jr.begin(ctx, nil); err != nil {
				return fmt.Errorf("journal: %w", err)
			}
		}
		res, err = executor.ExecuteRounds(ctx, l.spec.mission(), opts...)
	} else {
		d, cerr := l.check()
		if cerr != nil {
			return cerr
		}
		if l.resumed {
			// The run goes on from the round it reached, journaled
			// already.
			opts = append(opts, executor.WithHistory(l.history))
		}
		if err := l.goOn(ctx); err != nil {
			return err
		}
		res, err = executor.ExecuteDAG(ctx, d, l.spec.mission(), opts...)
	}
	if res != nil {
		res.Usage = l.llm.Usage()
		out.Execution, out.Result, out.Plan = res, &res.Result, res.Plan
		out.Status = statusOf(&res.Result)
	}
	return err
}

// goOn begins a resumed run that goes on with a plan it adopted before,
// once the checks that may refuse it have passed: a resume refused leaves
// the run as it was. A run that adopts its first plan begins when the plan
// is committed, and one that plans begins when the planning starts.
func (l *launch) goOn(ctx context.Context) error {
	if l.jr == nil || !l.resumed {
		return nil
	}
	if err := l.jr.begin(ctx, nil); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
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
	// spent and spentCalls are charged to the meter when it is made.
	spent      llm.Usage
	spentCalls int

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
		l.meter.Charge(l.spent, l.spentCalls)
	}
	return l.meter, nil
}

// Usage and Calls make the run's LLM the executor's meter: what earlier
// processes of the run spent, until it is first asked for.
func (l *lazyLLM) Usage() llm.Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.meter == nil {
		return l.spent
	}
	return l.meter.Usage()
}

func (l *lazyLLM) Calls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.meter == nil {
		return l.spentCalls
	}
	return l.meter.Calls()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}
