package executor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

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
	e := &execution{Replanning: newReplanning(cmp.Or(c.runID, runner.NewRunID(start)), c), mission: mission, parent: parent,
		predicates: c.predicates, retries: retries, panics: make([]error, len(c.observers)),
		rn: runner.New(append(slices.Clone(c.runner), runner.WithObserver(retries), runner.WithoutRetryOn(c.haltClasses()...))...)}
	e.res.Started = start
	var d *plan.DAG
	if first != nil {
		var rep critic.Report
		if d, rep = first(e); d == nil {
			return nil, &RefusedError{Report: rep, Gate: c.gate}
		}
		e.res.Report = rep
	}
	if d != nil {
		e.start(d)
	}
	var err error
	if c.rounds != nil {
		err = e.roundLoop(ctx)
	} else {
		err = e.loop(ctx)
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
	if !e.c.admits(d, &rep) {
		return nil, rep
	}
	return d, rep
}

// execution is one Execute: the driver of its [Replanning], which holds
// the decisions and the state they need, and the mechanism around them —
// the runner, the planner's calls, the wall time, the cooldown, the
// journal and the observers.
type execution struct {
	*Replanning
	// rn runs every plan of the execution, and predicates holds the
	// compiled predicates of all of them, which the critic and the runner
	// share: a repair compiles only its new predicates.
	rn         *runner.Runner
	predicates *verify.Set
	mission    string
	parent     context.Context // the caller's context, without the wall-time budget
	retries    *transient
	panics     []error
}

// loop drives the replanning of the execution: it runs each plan version
// and asks the replanner for repairs as the Replanning decides.
func (e *execution) loop(ctx context.Context) error {
	for {
		run := e.Next()
		if run.Commit != nil && e.commit(ctx, *run.Commit) != nil {
			return nil
		}
		e.deliver(run.Events)
		rr, err := e.rn.Run(ctx, run.DAG, e.runOptions(run.ID, run.Initial)...)
		if rr == nil {
			return err
		}
		dec := e.Ran(rr, e.retries.take(), err)
		if err != nil {
			if ctx.Err() != nil && e.parent.Err() == nil {
				return e.cancelled(ctx) // the wall-time budget is spent
			}
			return err
		}
		e.deliver(dec.Events)
		if dec.Step != StepRepair {
			return nil
		}
		if e.c.cooldown > 0 {
			t := time.NewTimer(e.c.cooldown)
			select {
			case <-ctx.Done():
				t.Stop()
				return e.cancelled(ctx)
			case <-t.C:
			}
		}
		next, err := e.c.planner.Repair(ctx, e.mission, e.Completed(), dec.Failure, slices.Clone(e.res.History))
		if next != nil {
			e.Spend(next.Usage)
		}
		gaveUp := err == nil && next != nil && next.GaveUp
		if !gaveUp && (err != nil || next == nil || next.Plan == nil) && ctx.Err() != nil {
			return e.cancelled(ctx)
		}
		var nd *plan.DAG
		var rep critic.Report
		if !gaveUp && err == nil && next != nil && next.Plan != nil {
			nd, rep = e.check(next.Plan)
		}
		dec = e.Repaired(next, err, nd, rep)
		e.deliver(dec.Events)
		if dec.Step != StepRun {
			return nil
		}
	}
}

// runOptions are the options of the run id of the execution, starting
// with initial.
func (e *execution) runOptions(id string, initial map[string]any) []runner.RunOption {
	return append(append([]runner.RunOption{}, e.c.runs...),
		runner.WithInitialResults(initial), runner.WithPredicates(e.predicates), runner.WithRunID(id))
}

// commit hands c to the journal, if any; when that fails, the execution
// ends failed with the journal's error.
func (e *execution) commit(ctx context.Context, c PlanCommit) error {
	if e.c.journal == nil {
		return nil
	}
	if err := e.c.journal.CommitPlan(context.WithoutCancel(ctx), c); err != nil {
		e.CommitFailed(err)
		return err
	}
	return nil
}

// transient observes the runs for the tasks with an attempt that failed
// transiently ([RetriedTransiently]), on the runner's observer goroutine.
type transient struct {
	mu    sync.Mutex
	tasks map[string]bool
}

func (o *transient) Observe(ev runner.Event) {
	if retriedTransiently(ev) {
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

// cancelled ends an execution whose context is done: the end of the
// wall-time budget is a halt, the caller's context ending an error.
func (e *execution) cancelled(ctx context.Context) error {
	if e.parent.Err() == nil {
		e.deliver(e.OutOfTime(context.Cause(ctx)).Events)
		return nil
	}
	return e.Cancelled(context.Cause(e.parent))
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
