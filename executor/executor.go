package executor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
	"github.com/dagent-dev/dagent/verify"
)

// ErrRefused: the critic found issues at the executor's gate in the plan,
// or the plan cannot run; nothing ran.
var ErrRefused = errors.New("plan refused by the critic")

// RefusedError carries the critic's report of a refused plan.
type RefusedError struct {
	Report critic.Report
	// Gate is the gate the plan was refused at ([WithGate]); the zero
	// Gate is [critic.GateCritical].
	Gate critic.Gate
}

func (e *RefusedError) Error() string {
	// A plan that cannot run is refused at any gate, for its critical
	// issues.
	sev := e.Gate.Severity()
	if sev == "" || !e.Report.Has(sev) {
		sev = critic.Critical
	}
	n := 0
	var first *critic.Issue
	for k := range e.Report.Issues {
		if is := &e.Report.Issues[k]; is.Severity.AtLeast(sev) {
			n++
			if first == nil {
				first = is
			}
		}
	}
	var msg string
	if sev == critic.Critical {
		msg = fmt.Sprintf("%s: %d critical issue", ErrRefused, n)
	} else {
		msg = fmt.Sprintf("%s at gate %s: %d issue", ErrRefused, sev, n)
	}
	if n != 1 {
		msg += "s"
	}
	if first != nil {
		msg += "; " + first.String()
	}
	return msg
}

func (e *RefusedError) Unwrap() error { return ErrRefused }

// Result is the outcome of an execution. Its embedded run result is the
// execution's: RunID is the base id the runs are named after
// ([WithRunID]); Status, Err, PendingReviews and Replan are the last
// run's, except that an execution that halted ends [runner.StatusFailed]
// with a *[HaltError]; Tasks holds the latest result of every task of
// every plan that ran; Started and Duration are the execution's; Usage is
// the token usage of the runs and of the replanner.
type Result struct {
	runner.Result
	// Plan is the plan that ran last: the original, or the last repair.
	Plan *plan.Plan
	// Report is the critic's report of the original plan.
	Report critic.Report
	// ReplanCount counts the repairs, ExecutionAttempts the runs.
	ReplanCount       int
	ExecutionAttempts int
	// History lists the repairs, in order.
	History []Trial
	// Halt says why replanning stopped short, empty when it did not.
	Halt string
	// Rounds counts the rounds planned by an execution in rounds
	// ([WithRounds]); Deliverable names the completed tasks whose results
	// form the deliverable its planner answered done with.
	Rounds      int
	Deliverable []string
}

// Execute runs p for mission to the end. A plan that cannot run, or that
// the critic finds issues in at the gate ([WithGate]; by default, critical
// issues), is refused with a *[RefusedError] before anything runs; so is
// a repair plan, which ends the execution halted. Runner
// setup errors (an invalid predicate, an agent that cannot run) are
// returned as they are, as is an invalid [WithRunID] (matching
// [runner.ErrInvalidRunID]). Everything else — failures, halts, budgets (the
// wall time included), a journal that failed — is in the result; an error
// beside it says ctx ended the execution, or an observer panicked.
func Execute(ctx context.Context, p *plan.Plan, mission string, opts ...Option) (*Result, error) {
	return execute(ctx, mission, newConfig(opts), func(e *execution) (*plan.DAG, critic.Report) { return e.check(p) })
}

// ExecuteDAG is [Execute] of a plan checked already: d is the DAG of the
// plan checked with the options the executor checks plans with — its
// registry, its workers and its limits — and is not checked again. The
// critic reviews it as Execute's plan, and refuses a DAG that holds
// problems ([plan.DAG.Err]).
func ExecuteDAG(ctx context.Context, d *plan.DAG, mission string, opts ...Option) (*Result, error) {
	return execute(ctx, mission, newConfig(opts), func(e *execution) (*plan.DAG, critic.Report) { return e.review(d) })
}

// execute runs the plan first checks to the end.
func execute(ctx context.Context, mission string, c config, first func(*execution) (*plan.DAG, critic.Report)) (*Result, error) {
	if c.runID != "" {
		if err := runner.CheckRunID(c.runID); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	parent := ctx
	if c.budget.MaxDuration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.budget.MaxDuration)
		defer cancel()
	}
	retries := &transient{tasks: make(map[string]bool)}
	e := &execution{c: c, mission: mission, parent: parent, predicates: c.predicates, retries: retries,
		rn:        runner.New(append(slices.Clone(c.runner), runner.WithObserver(retries), runner.WithoutRetryOn(c.haltClasses()...))...),
		res:       &Result{Result: runner.Result{RunID: cmp.Or(c.runID, runner.NewRunID(start)), Started: start, Tasks: make(map[string]*runner.TaskResult)}},
		completed: make(map[string]any), perTask: make(map[string]int), panics: make([]error, len(c.observers))}
	var d *plan.DAG
	if first != nil {
		var rep critic.Report
		if d, rep = first(e); d == nil {
			return nil, &RefusedError{Report: rep, Gate: c.gate}
		}
		e.res.Report = rep
	}
	e.resume()
	var err error
	if c.rounds != nil {
		err = e.roundLoop(ctx, d)
	} else {
		err = e.loop(ctx, d)
	}
	e.res.Duration = time.Since(start)
	return e.res, e.withPanics(err)
}

// withPanics joins err and the first panic of each observer.
func (e *execution) withPanics(err error) error {
	errs := []error{err}
	for _, p := range e.panics {
		if p != nil {
			errs = append(errs, p)
		}
	}
	if len(errs) == 1 {
		return err
	}
	return errors.Join(errs...)
}

// resume starts e from the history and the results it was given.
func (e *execution) resume() {
	maps.Copy(e.completed, e.c.initial)
	for _, t := range e.c.history {
		e.perTask[t.TaskID]++
	}
	e.version = len(e.c.history)
	e.res.History = e.c.history
	e.res.ExecutionAttempts = len(e.c.history)
	if e.c.rounds != nil {
		// Version k is round k+1.
		if e.c.resumed {
			e.res.Rounds = len(e.c.history) + 1
		}
		return
	}
	e.res.ReplanCount = len(e.c.history)
}

// check checks p once and reviews the result; the DAG is nil when the
// plan cannot run or the gate refuses it.
func (e *execution) check(p *plan.Plan) (*plan.DAG, critic.Report) {
	d, _ := p.DAG(e.c.planOptions()...)
	if d == nil {
		return nil, critic.Review(p, e.c.criticOptions()...)
	}
	return e.review(d)
}

// review reviews the checked plan d; the DAG is nil when the plan cannot
// run (its check found problems) or the gate refuses it.
func (e *execution) review(d *plan.DAG) (*plan.DAG, critic.Report) {
	rep := critic.ReviewDAG(d, critic.WithPredicates(e.predicates))
	if d.Err() != nil || e.c.gate.Refuses(&rep) {
		return nil, rep
	}
	return d, rep
}

// execution is the state of one Execute.
type execution struct {
	c config
	// rn runs every plan of the execution, and predicates holds the
	// compiled predicates of all of them, which the critic and the runner
	// share: a repair compiles only its new predicates.
	rn         *runner.Runner
	predicates *verify.Set
	mission    string
	parent     context.Context // the caller's context, without the wall-time budget
	res        *Result
	completed  map[string]any
	perTask    map[string]int
	version    int  // the version of the plan that runs: k after the k-th repair
	streak     int  // failed executions in a row without a new finished task
	progress   bool // the last run finished a task not finished before
	flaky      int  // tasks in a row that passed only after a transient failure
	retries    *transient
	base       int // the tasks of the plan the execution started with
	panics     []error
}

func (e *execution) loop(ctx context.Context, d *plan.DAG) error {
	e.res.Plan = d.Plan()
	e.base = len(d.Plan().Tasks)
	if !e.c.resumed {
		if err := e.commit(ctx, d.Plan(), nil); err != nil {
			return nil
		}
	}
	for {
		p := d.Plan()
		e.res.Plan = p
		rr, err := e.run(ctx, d)
		if rr == nil {
			return err
		}
		if err != nil && ctx.Err() != nil && e.parent.Err() == nil {
			return e.cancelled(ctx) // the wall-time budget is spent
		}
		if err != nil || !e.repairable(rr) {
			return err
		}
		f := e.failure(rr, p)
		if hf, ok := e.haltingFailure(rr, p); ok && !e.c.halts(runner.Class(f.Class)) {
			// Another task failed in a way that halts: the planner must
			// not see the run, whatever failure ended it.
			f = hf
		}
		if halt := e.halt(f); halt != "" {
			e.stop(halt, f, rr.Err)
			return nil
		}
		e.emit(failureEvent(EventReplanRequested, e.version, f))
		if e.c.cooldown > 0 {
			t := time.NewTimer(e.c.cooldown)
			select {
			case <-ctx.Done():
				t.Stop()
				return e.cancelled(ctx)
			case <-t.C:
			}
		}
		next, err := e.c.planner.Repair(ctx, e.mission, maps.Clone(e.completed), f, slices.Clone(e.res.History))
		if next != nil {
			e.res.Usage = e.res.Usage.Add(next.Usage)
		}
		if err == nil && next != nil && next.GaveUp {
			e.stop(HaltGaveUp, f, &GaveUpError{Reason: next.Reason})
			return nil
		}
		if err != nil || next == nil || next.Plan == nil {
			if ctx.Err() != nil {
				return e.cancelled(ctx)
			}
			e.refused(f, cmpErr(err))
			return nil
		}
		nd, rep := e.check(next.Plan)
		if nd == nil {
			e.refused(f, &RefusedError{Report: rep, Gate: e.c.gate})
			return nil
		}
		e.perTask[f.TaskID]++
		e.res.ReplanCount++
		trial := Trial{
			Attempt: e.res.ReplanCount, TaskID: f.TaskID, Class: f.Class, Diagnosis: f.Diagnosis,
			Output: excerpt(f.Output), NewTaskCount: NewTasks(p, next.Plan), Reason: next.Reason,
		}
		e.res.History = append(e.res.History, trial)
		if e.overBudget() {
			// Planning the repair spent what was left: do not run it.
			e.stop(HaltBudget, f, nil)
			return nil
		}
		if grown := len(next.Plan.Tasks) - e.base; e.c.maxPlanGrowth > 0 && grown > e.c.maxPlanGrowth {
			e.stop(HaltPlanGrowth, f, fmt.Errorf("the repair plan has %d tasks, %d more than the first plan; at most %d more are allowed",
				len(next.Plan.Tasks), grown, e.c.maxPlanGrowth))
			return nil
		}
		e.version++
		if err := e.commit(ctx, next.Plan, &trial); err != nil {
			return nil
		}
		ev := failureEvent(EventRepairAdopted, e.version, f)
		ev.Tasks, ev.NewTasks = len(next.Plan.Tasks), trial.NewTaskCount
		e.emit(ev)
		d = nd
	}
}

// commit hands the plan of the current version to the journal, if any;
// when that fails, the execution ends failed with the journal's error.
func (e *execution) commit(ctx context.Context, p *plan.Plan, trial *Trial) error {
	if e.c.journal == nil {
		return nil
	}
	c := PlanCommit{RunID: e.res.RunID, Version: e.version, Plan: p, Trial: trial}
	if err := e.c.journal.CommitPlan(context.WithoutCancel(ctx), c); err != nil {
		e.res.Status = runner.StatusFailed
		e.res.Err = fmt.Errorf("plan version %d: %w: %w", e.version, runner.ErrJournal, err)
		return err
	}
	return nil
}

// stop ends the execution halted after failure f, cause the error that
// made it halt, if any.
func (e *execution) stop(halt string, f Failure, cause error) {
	err := &HaltError{Halt: halt, Failure: f, Err: cause}
	e.res.Halt, e.res.Status, e.res.Err = halt, runner.StatusFailed, err
	ev := failureEvent(EventHalted, e.version, f)
	ev.Halt, ev.Err = halt, err
	e.emit(ev)
}

// refused ends the execution after the replanner gave no repair plan for
// f, or the critic refused it: err says which.
func (e *execution) refused(f Failure, err error) {
	ev := failureEvent(EventReplanFailed, e.version, f)
	ev.Err = err
	e.emit(ev)
	e.stop(HaltReplanFailed, f, err)
}

// run executes the plan of the current version once, with every result
// finished so far.
func (e *execution) run(ctx context.Context, d *plan.DAG) (*runner.Result, error) {
	p := d.Plan()
	initial := make(map[string]any)
	for i := range p.Tasks {
		if out, ok := e.completed[p.Tasks[i].ID]; ok {
			initial[p.Tasks[i].ID] = out
		}
	}
	id := e.res.RunID
	if e.version > 0 {
		id += "." + strconv.Itoa(e.version)
	}
	opts := append(append([]runner.RunOption{}, e.c.runs...),
		runner.WithInitialResults(initial), runner.WithPredicates(e.predicates), runner.WithRunID(id))
	rr, err := e.rn.Run(ctx, d, opts...)
	if rr == nil {
		return nil, err
	}
	e.res.ExecutionAttempts++
	before := len(e.completed)
	for id, t := range rr.Tasks {
		if _, had := e.completed[id]; had && t.Attempts == 0 && e.res.Tasks[id] != nil {
			continue // carried over: keep the result of the run that did it
		}
		e.res.Tasks[id] = t
		if t.Status == runner.TaskDone {
			e.completed[id] = t.Output
		}
	}
	e.progress = len(e.completed) > before
	e.countFlaky(rr)
	e.res.Status, e.res.Err = rr.Status, rr.Err
	e.res.PendingReviews, e.res.Replan = rr.PendingReviews, rr.Replan
	e.res.Usage = e.res.Usage.Add(rr.Usage)
	return rr, err
}

// repairable reports whether the run ended in a way a replan may repair.
func (e *execution) repairable(rr *runner.Result) bool {
	if e.c.planner == nil {
		return false
	}
	var te *runner.TaskError
	switch rr.Status {
	case runner.StatusReplanRequired:
		return true
	case runner.StatusFailed:
		return errors.As(rr.Err, &te)
	}
	return false
}

// haltingFailure is the first task of p, in plan order, that failed in
// rr with a class that halts.
func (e *execution) haltingFailure(rr *runner.Result, p *plan.Plan) (Failure, bool) {
	for i := range p.Tasks {
		if tr := rr.Tasks[p.Tasks[i].ID]; failedTask(tr) && e.c.halts(tr.Class) {
			f := taskFailure(tr)
			f.Plan = p
			return f, true
		}
	}
	return Failure{}, false
}

// failure describes the failure that ended the run, for the planner.
func (e *execution) failure(rr *runner.Result, p *plan.Plan) Failure {
	f := Failure{Plan: p}
	var te *runner.TaskError
	switch {
	case rr.Replan != nil:
		f.TaskID, f.Output, f.Diagnosis = rr.Replan.TaskID, rr.Replan.Output, rr.Replan.Diagnosis
	case errors.As(rr.Err, &te):
		f.TaskID = te.TaskID
		if t := rr.Tasks[te.TaskID]; t != nil {
			f.Output, f.Diagnosis = t.Output, t.Diagnosis
		}
	}
	if t := rr.Tasks[f.TaskID]; t != nil {
		f.Class = string(t.Class)
		if f.Diagnosis == "" && t.Err != nil {
			f.Diagnosis = t.Err.Error()
		}
		var report *agent.FailureReport
		if errors.As(t.Err, &report) {
			f.Suggestion = report.Suggestion
		}
	}
	return f
}

// halt says which limit, if any, stops replanning after failure f.
func (e *execution) halt(f Failure) string {
	if e.progress {
		e.streak = 0
	} else {
		e.streak++
	}
	if f.Class != "" && e.c.halts(runner.Class(f.Class)) {
		return f.Class
	}
	for _, t := range e.res.History {
		if t.TaskID == f.TaskID && t.Class == f.Class && t.Diagnosis == f.Diagnosis {
			return HaltSameFailure
		}
	}
	switch {
	case f.Class == string(runner.ClassBudget) || e.overBudget():
		return HaltBudget
	case e.res.ReplanCount >= e.c.maxReplans:
		return HaltMaxReplans
	case e.perTask[f.TaskID] >= e.c.maxReplansPerTask:
		return HaltMaxReplansPerTask
	case e.streak >= e.c.maxConsecutiveFailures:
		return HaltConsecutiveFailures
	case e.c.maxFlakyStreak > 0 && e.flaky >= e.c.maxFlakyStreak:
		return HaltFlakyStreak
	}
	return ""
}

// transient observes the runs for the tasks with an attempt that failed
// the way an unreliable worker or service fails: an error of the agent or
// a timeout, rather than an output that failed its checks, which the
// retry's diagnosis corrects.
type transient struct {
	mu    sync.Mutex
	tasks map[string]bool
}

func (o *transient) Observe(ev runner.Event) {
	if ev.Kind != runner.EventTaskRetried {
		return
	}
	if c := runner.Classify(ev.Err); c == runner.ClassAgentError || c == runner.ClassTimeout {
		o.mu.Lock()
		o.tasks[ev.TaskID] = true
		o.mu.Unlock()
	}
}

// take returns the tasks of the last run that retried a transient
// failure, and forgets them; a run has delivered its every event when it
// returns.
func (o *transient) take() map[string]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	tasks := o.tasks
	o.tasks = make(map[string]bool)
	return tasks
}

// countFlaky goes on with the streak of tasks that passed only after a
// transient failure through the tasks rr ran, in the order they finished:
// such a task adds to it, any other task done ends it.
func (e *execution) countFlaky(rr *runner.Result) {
	retried := e.retries.take()
	var done []*runner.TaskResult
	for _, t := range rr.Tasks {
		if t.Status == runner.TaskDone && t.Attempts > 0 {
			done = append(done, t)
		}
	}
	slices.SortFunc(done, func(a, b *runner.TaskResult) int {
		return cmp.Or(a.Started.Add(a.Duration).Compare(b.Started.Add(b.Duration)), strings.Compare(a.ID, b.ID))
	})
	for _, t := range done {
		if retried[t.ID] {
			e.flaky++
		} else {
			e.flaky = 0
		}
	}
}

// overBudget reports whether tokens or calls are spent.
func (e *execution) overBudget() bool {
	b := e.c.budget
	usage := e.res.Usage
	calls := -1
	if e.c.meter != nil {
		usage, calls = e.c.meter.Usage(), e.c.meter.Calls()
	}
	return b.MaxTokens > 0 && usage.Total() >= b.MaxTokens || b.MaxCalls > 0 && calls >= b.MaxCalls
}

// cancelled ends an execution whose context is done: the end of the
// wall-time budget is a halt, the caller's context ending an error.
func (e *execution) cancelled(ctx context.Context) error {
	if e.parent.Err() == nil {
		e.stop(HaltBudget, Failure{Plan: e.res.Plan}, fmt.Errorf("wall time budget of %s spent: %w", e.c.budget.MaxDuration, context.Cause(ctx)))
		return nil
	}
	e.res.Status = runner.StatusFailed
	e.res.Err = fmt.Errorf("execution cancelled: %w", context.Cause(e.parent))
	return e.res.Err
}

func cmpErr(err error) error {
	if err == nil {
		return errors.New("the planner returned no plan")
	}
	return err
}

// excerptBytes bounds the failing output kept in the history.
const excerptBytes = 500

// excerpt is the start of an output, as text.
func excerpt(v any) string {
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	if len(s) > excerptBytes {
		cut := excerptBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
