package executor

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// Replanning is the replanning of one execution: the rules [Execute]
// follows between two runs of a plan, and the state they need. Execute
// drives one; a driver of its own — one that runs each plan version as a
// durable workflow, say — drives another and takes the same decisions:
//
//  1. [Replanning.Next] names the run to start: its id (base, then base.k
//     for the k-th repair), its DAG, the results it starts with, and the
//     plan version to commit to the [Journal] first.
//  2. After the run, [Replanning.Ran] records it and decides: done, halt,
//     or ask the replanner about a failure.
//  3. After the replanner answered, [Replanning.Repaired] decides: halt
//     (gave up, no plan, refused by the critic, over budget, plan growth)
//     or run the repair (the next version).
//
// In rounds ([WithRounds]) the driver starts with [Replanning.Start],
// which may ask for the first round; Ran decides to ask the round planner
// ([StepRound]) instead of the replanner, and [Replanning.Rounded] takes
// its answer.
//
// A Replanning does no I/O and reads no clock: it starts no goroutine,
// calls neither the [Replanner] nor the critic nor the journal, waits for
// no cooldown and emits no event. The driver does all of that, and hands
// the Replanning what came of it; given the same answers in the same
// order, a Replanning takes the same decisions. The events of a decision
// ([Decision].Events, [NextRun].Events) are the driver's to stamp with a
// time and hand to its observers.
//
// Budgets: [Budget].MaxDuration is the driver's to enforce — Execute runs
// under a context with that deadline, a workflow under a timer — and when
// it ends the driver calls [Replanning.OutOfTime]. MaxTokens and MaxCalls
// are the Replanning's: it reads the [Meter] of [WithBudget] in Ran and
// Repaired, or, without one, counts the tokens of the runs' results and of
// what the driver reports with [Replanning.Spend], and no calls. Execute
// gives the live meter of its LLM client; a workflow, which must not read
// a live meter, gives a Meter that sums the usage its activities replied
// with, or none.
//
// A Replanning is not safe for concurrent use; a driver calls it from one
// goroutine, between runs.
type Replanning struct {
	c         config
	res       *Result
	completed map[string]any
	perTask   map[string]int
	version   int  // the version of the plan that runs: k after the k-th repair
	streak    int  // failed executions in a row without a new finished task
	progress  bool // the last run finished a task not finished before
	flaky     int  // tasks in a row that passed only after a transient failure
	base      int  // the tasks of the plan the execution started with
	d         *plan.DAG
	committed bool        // the plan of the current version is in the journal
	failure   *Failure    // the failure the replanner is asked about
	round     *RoundState // what the round planner is asked
	undo      *adoption   // what a failed commit of the current version restores
	events    []runner.Event
}

// adoption is the part of the result a plan's adoption changes before
// its commit.
type adoption struct {
	plan   *plan.Plan
	rounds int
}

// Step says what a driver of a [Replanning] does next.
type Step int

// Steps of a [Decision].
const (
	// StepDone: the execution ended — completed, waiting for a review, or
	// failed in a way no replan repairs (or with no [Replanner]);
	// [Replanning.Result] is final.
	StepDone Step = iota
	// StepHalt: replanning stopped; the result is failed, its Err a
	// *[HaltError].
	StepHalt
	// StepRepair: wait the cooldown ([Replanning.Cooldown]), ask the
	// replanner about [Decision].Failure, then call
	// [Replanning.Repaired].
	StepRepair
	// StepRun: start [Replanning.Next]: the plan given, a repair or the
	// plan of a round.
	StepRun
	// StepRound: ask the round planner ([WithRounds]) with
	// [Decision].Round, then call [Replanning.Rounded].
	StepRound
)

var stepNames = [...]string{"done", "halt", "repair", "run", "round"}

func (s Step) String() string {
	if s < 0 || int(s) >= len(stepNames) {
		return "step(" + strconv.Itoa(int(s)) + ")"
	}
	return stepNames[s]
}

// Decision is what a [Replanning] decided after a run or a repair.
type Decision struct {
	Step Step
	// Failure is the failure decided about: the one to ask the replanner
	// about for [StepRepair], the one replanning stopped at for
	// [StepHalt], the one the adopted repair repairs for [StepRun]; zero
	// for [StepDone]. In rounds, the first failure of the round that ran
	// last, if any.
	Failure Failure
	// Round is what to ask the round planner, for [StepRound].
	Round *RoundState
	// Events are the executor's events of the decision, in order
	// (EventReplanRequested, EventReplanFailed, EventHalted), to hand to
	// the observers now. Their RunID is the execution's; their Time is
	// zero, for the driver to stamp.
	Events []runner.Event
}

// NextRun is the run a [Replanning] starts next: the plan of the current
// version.
type NextRun struct {
	// ID is the run id: the execution's base id for version 0, base.k for
	// version k, so that a task of a repair never shares an idempotency
	// key with the task of an earlier plan it replaces.
	ID      string
	Version int
	DAG     *plan.DAG
	// Initial holds the results finished so far of the tasks of the plan,
	// by task id: they do not run again ([runner.WithInitialResults]).
	Initial map[string]any
	// Commit is the plan version to make durable before the run, with the
	// [Journal]'s contract; nil when it is already. When the commit fails,
	// call [Replanning.CommitFailed] and do not run.
	Commit *PlanCommit
	// Events are to hand to the observers once Commit is made, before the
	// run starts (EventRepairAdopted for a repair); Time zero.
	Events []runner.Event
}

// NewReplanning starts the replanning of an execution whose runs are
// named after runID ([WithRunID] is not read) and whose first plan is d,
// checked and reviewed already as [ExecuteDAG]'s. opts are those of
// [Execute]; a Replanning reads the limits, the halts, the gate, the
// budget and its [Meter], [WithReplanner] and [WithRounds] (the
// Replanning calls neither planner, so a driver may give any non-nil
// one: it says which replanning the execution does; without either,
// nothing is replanned), [WithHistory] and [WithInitialResults]. In
// rounds, d may be nil: the round planner plans the first round
// ([Replanning.Start]). An invalid runID matches
// [runner.ErrInvalidRunID].
func NewReplanning(runID string, d *plan.DAG, opts ...Option) (*Replanning, error) {
	if err := runner.CheckRunID(runID); err != nil {
		return nil, err
	}
	c := newConfig(opts)
	if d == nil && c.rounds == nil {
		return nil, errors.New("executor: NewReplanning needs a plan, or rounds")
	}
	r := newReplanning(runID, c)
	if d != nil {
		r.start(d)
	}
	return r, nil
}

// newReplanning makes the replanning of an execution with c, resumed from
// the history and the results c was given.
func newReplanning(runID string, c config) *Replanning {
	r := &Replanning{c: c, res: &Result{Result: runner.Result{RunID: runID, Tasks: make(map[string]*runner.TaskResult)}},
		completed: make(map[string]any), perTask: make(map[string]int)}
	maps.Copy(r.completed, c.initial)
	for _, t := range c.history {
		r.perTask[t.TaskID]++
	}
	r.version = len(c.history)
	r.res.History = c.history
	r.res.ExecutionAttempts = len(c.history)
	if c.rounds != nil {
		// Version k is round k+1.
		if c.resumed {
			r.res.Rounds = len(c.history) + 1
		}
		return r
	}
	r.res.ReplanCount = len(c.history)
	return r
}

// start makes d the plan of the current version, the one the execution
// starts with; in rounds, it is the first round unless the execution
// resumes.
func (r *Replanning) start(d *plan.DAG) {
	r.base = len(d.Plan().Tasks)
	if r.c.rounds != nil && !r.c.resumed {
		r.adopt(d, 1)
		return
	}
	r.d, r.res.Plan, r.committed = d, d.Plan(), r.c.resumed
}

// adopt makes d the plan of the next version, to commit, and the
// execution's rounds so far rounds.
func (r *Replanning) adopt(d *plan.DAG, rounds int) {
	r.undo = &adoption{plan: r.res.Plan, rounds: r.res.Rounds}
	r.d, r.committed = d, false
	r.res.Plan, r.res.Rounds = d.Plan(), rounds
}

// Result is the result of the execution so far, merged over its runs as
// [Result] says; Started, Duration and Report are the driver's to set.
// The Replanning keeps updating it.
func (r *Replanning) Result() *Result { return r.res }

// Completed returns the results finished so far, by task id, for the
// replanner: a copy.
func (r *Replanning) Completed() map[string]any { return maps.Clone(r.completed) }

// Cooldown is the wait before each request to the replanner
// ([WithCooldown]).
func (r *Replanning) Cooldown() time.Duration { return r.c.cooldown }

// HaltClasses are the failure classes that halt the execution, sorted
// ([WithHaltOn]): the runs must not retry a failure of them
// ([runner.WithoutRetryOn]), as the retry would repeat what the halt is
// there to stop.
func (r *Replanning) HaltClasses() []runner.Class { return r.c.haltClasses() }

// Next returns the run to start now. It changes nothing: until the run is
// reported to [Replanning.Ran], it returns the same run.
func (r *Replanning) Next() NextRun {
	p := r.d.Plan()
	run := NextRun{ID: r.runID(), Version: r.version, DAG: r.d, Initial: r.initial(p)}
	if !r.committed {
		c := PlanCommit{RunID: r.res.RunID, Version: r.version, Plan: p}
		if r.version > 0 {
			trial := r.res.History[len(r.res.History)-1]
			c.Trial = &trial
		}
		run.Commit = &c
		run.Events = r.events
	}
	return run
}

// runID is the id of the run of the current version.
func (r *Replanning) runID() string {
	if r.version == 0 {
		return r.res.RunID
	}
	return r.res.RunID + "." + strconv.Itoa(r.version)
}

// initial is what the run of p starts with: the results of its tasks
// finished so far.
func (r *Replanning) initial(p *plan.Plan) map[string]any {
	initial := make(map[string]any)
	for i := range p.Tasks {
		if out, ok := r.completed[p.Tasks[i].ID]; ok {
			initial[p.Tasks[i].ID] = out
		}
	}
	return initial
}

// CommitFailed ends the execution failed because the journal could not
// commit the plan of [NextRun].Commit: its Err matches
// [runner.ErrJournal] and wraps err.
func (r *Replanning) CommitFailed(err error) {
	if r.undo != nil {
		// The plan never became the execution's.
		r.res.Plan, r.res.Rounds = r.undo.plan, r.undo.rounds
		r.undo = nil
	}
	r.events = nil
	r.res.Status = runner.StatusFailed
	r.res.Err = fmt.Errorf("plan version %d: %w: %w", r.version, runner.ErrJournal, err)
}

// Ran records the run of [Replanning.Next]: rr is its result, retried
// the tasks of the run with an attempt that failed transiently
// ([RetriedTransiently] of the run's events), and err the error the run
// returned with rr. It merges the run into the result and decides. A run
// that returned an error ends the execution ([StepDone]): the driver
// returns err, or, when the error is the end of the wall-time budget,
// calls [Replanning.OutOfTime]. In rounds, a run that waits for a review
// ends it too, and any other asks the round planner ([StepRound]) unless
// a halt stops it.
func (r *Replanning) Ran(rr *runner.Result, retried map[string]bool, err error) Decision {
	p := r.d.Plan()
	r.res.Plan = p
	r.committed, r.events, r.undo = true, nil, nil
	r.record(rr, retried)
	if r.c.rounds != nil {
		if err != nil || rr.Status == runner.StatusWaiting {
			return Decision{Step: StepDone}
		}
		if r.progress {
			r.streak = 0
		} else {
			r.streak++
		}
		return r.askRound(rr)
	}
	if err != nil || !r.repairable(rr) {
		return Decision{Step: StepDone}
	}
	f := r.failureOf(rr, p)
	if hf, ok := r.haltingFailure(rr, p); ok && !r.c.halts(runner.Class(f.Class)) {
		// Another task failed in a way that halts: the planner must
		// not see the run, whatever failure ended it.
		f = hf
	}
	if halt := r.halt(f); halt != "" {
		r.stop(halt, f, rr.Err)
		return r.decide(StepHalt, f)
	}
	r.emit(failureEvent(EventReplanRequested, r.version, f))
	r.failure = &f
	return r.decide(StepRepair, f)
}

// Spend counts what asking the replanner spent ([Repair].Usage) in the
// result's usage, and in the budget when there is no [Meter]. Call it as
// soon as the replanner answers, whatever comes next: [Replanning.Repaired]
// does not count it.
func (r *Replanning) Spend(u llm.Usage) { r.res.Usage = r.res.Usage.Add(u) }

// Repaired decides about the replanner's answer to the failure of the
// [StepRepair] decision: next and err are what it returned; nd and rep
// are the check and the critic's review of next.Plan, made with the
// options the executor checks plans with (nd nil when the plan cannot
// run), and are read only when next has a plan to adopt. A repair that
// gives up, no plan, or a plan the gate refuses halts; so does a repair
// adopted past the budget or the plan growth, which counts as a repair.
// Otherwise the repair is adopted: it is the next version, and the
// decision [StepRun].
//
// When the context the replanner was asked under ended (the wall time,
// the caller) and the answer neither gives up nor has a plan, call
// [Replanning.OutOfTime] or [Replanning.Cancelled] instead. Called with
// no [StepRepair] pending, Repaired decides [StepDone] and changes
// nothing.
func (r *Replanning) Repaired(next *Repair, err error, nd *plan.DAG, rep critic.Report) Decision {
	if r.failure == nil || r.round != nil {
		return Decision{Step: StepDone}
	}
	f := *r.failure
	r.failure = nil
	if err == nil && next != nil && next.GaveUp {
		r.stop(HaltGaveUp, f, &GaveUpError{Reason: next.Reason})
		return r.decide(StepHalt, f)
	}
	if err != nil || next == nil || next.Plan == nil {
		r.refused(f, cmpErr(err))
		return r.decide(StepHalt, f)
	}
	if !r.c.admits(nd, &rep) {
		r.refused(f, &RefusedError{Report: rep, Gate: r.c.gate})
		return r.decide(StepHalt, f)
	}
	p := r.d.Plan()
	r.perTask[f.TaskID]++
	r.res.ReplanCount++
	trial := Trial{
		Attempt: r.res.ReplanCount, TaskID: f.TaskID, Class: f.Class, Diagnosis: f.Diagnosis,
		Output: excerpt(f.Output), NewTaskCount: NewTasks(p, next.Plan), Reason: next.Reason,
	}
	r.res.History = append(r.res.History, trial)
	if r.overBudget() {
		// Planning the repair spent what was left: do not run it.
		r.stop(HaltBudget, f, nil)
		return r.decide(StepHalt, f)
	}
	if grown := len(next.Plan.Tasks) - r.base; r.c.maxPlanGrowth > 0 && grown > r.c.maxPlanGrowth {
		r.stop(HaltPlanGrowth, f, fmt.Errorf("the repair plan has %d tasks, %d more than the first plan; at most %d more are allowed",
			len(next.Plan.Tasks), grown, r.c.maxPlanGrowth))
		return r.decide(StepHalt, f)
	}
	r.version++
	r.adopt(nd, r.res.Rounds)
	ev := failureEvent(EventRepairAdopted, r.version, f)
	ev.Tasks, ev.NewTasks = len(next.Plan.Tasks), trial.NewTaskCount
	r.emit(ev)
	return Decision{Step: StepRun, Failure: f}
}

// OutOfTime ends the execution halted with [HaltBudget] because the wall
// time of its budget ([Budget].MaxDuration) ran out; cause is why the
// driver stopped, such as the context's cause.
func (r *Replanning) OutOfTime(cause error) Decision {
	f := Failure{Plan: r.res.Plan}
	r.failure, r.round = nil, nil
	r.stop(HaltBudget, f, fmt.Errorf("wall time budget of %s spent: %w", r.c.budget.MaxDuration, cause))
	return r.decide(StepHalt, f)
}

// Cancelled ends the execution failed because its caller cancelled it,
// cause saying why, and returns the result's error, which the driver
// returns.
func (r *Replanning) Cancelled(cause error) error {
	r.failure, r.round, r.events = nil, nil, nil
	r.res.Status = runner.StatusFailed
	r.res.Err = fmt.Errorf("execution cancelled: %w", cause)
	return r.res.Err
}

// decide is a decision of step about f, with the events decided so far.
func (r *Replanning) decide(step Step, f Failure) Decision {
	d := Decision{Step: step, Failure: f, Events: r.events}
	r.events = nil
	return d
}

// emit keeps ev for the driver to hand to the observers.
func (r *Replanning) emit(ev runner.Event) {
	ev.RunID = r.res.RunID
	r.events = append(r.events, ev)
}

// record merges the run rr into the result, retried the tasks of rr that
// retried a transient failure.
func (r *Replanning) record(rr *runner.Result, retried map[string]bool) {
	r.res.ExecutionAttempts++
	before := len(r.completed)
	for id, t := range rr.Tasks {
		if _, had := r.completed[id]; had && t.Attempts == 0 && r.res.Tasks[id] != nil {
			continue // carried over: keep the result of the run that did it
		}
		r.res.Tasks[id] = t
		if t.Status == runner.TaskDone {
			r.completed[id] = t.Output
		}
	}
	r.progress = len(r.completed) > before
	r.countFlaky(rr, retried)
	r.res.Status, r.res.Err = rr.Status, rr.Err
	r.res.PendingReviews, r.res.Replan = rr.PendingReviews, rr.Replan
	r.res.Usage = r.res.Usage.Add(rr.Usage)
}

// stop ends the execution halted after failure f, cause the error that
// made it halt, if any.
func (r *Replanning) stop(halt string, f Failure, cause error) {
	err := &HaltError{Halt: halt, Failure: f, Err: cause}
	r.res.Halt, r.res.Status, r.res.Err = halt, runner.StatusFailed, err
	ev := failureEvent(EventHalted, r.version, f)
	ev.Halt, ev.Err = halt, err
	r.emit(ev)
}

// refused ends the execution after the replanner gave no repair plan for
// f, or the critic refused it: err says which.
func (r *Replanning) refused(f Failure, err error) {
	ev := failureEvent(EventReplanFailed, r.version, f)
	ev.Err = err
	r.emit(ev)
	r.stop(HaltReplanFailed, f, err)
}

// repairable reports whether the run ended in a way a replan may repair.
func (r *Replanning) repairable(rr *runner.Result) bool {
	if r.c.planner == nil {
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
func (r *Replanning) haltingFailure(rr *runner.Result, p *plan.Plan) (Failure, bool) {
	for i := range p.Tasks {
		if tr := rr.Tasks[p.Tasks[i].ID]; failedTask(tr) && r.c.halts(tr.Class) {
			f := taskFailure(tr)
			f.Plan = p
			return f, true
		}
	}
	return Failure{}, false
}

// failureOf describes the failure that ended the run, for the planner.
func (r *Replanning) failureOf(rr *runner.Result, p *plan.Plan) Failure {
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
func (r *Replanning) halt(f Failure) string {
	if r.progress {
		r.streak = 0
	} else {
		r.streak++
	}
	if f.Class != "" && r.c.halts(runner.Class(f.Class)) {
		return f.Class
	}
	for _, t := range r.res.History {
		if t.TaskID == f.TaskID && t.Class == f.Class && t.Diagnosis == f.Diagnosis {
			return HaltSameFailure
		}
	}
	switch {
	case f.Class == string(runner.ClassBudget) || r.overBudget():
		return HaltBudget
	case r.res.ReplanCount >= r.c.maxReplans:
		return HaltMaxReplans
	case r.perTask[f.TaskID] >= r.c.maxReplansPerTask:
		return HaltMaxReplansPerTask
	case r.streak >= r.c.maxConsecutiveFailures:
		return HaltConsecutiveFailures
	case r.c.maxFlakyStreak > 0 && r.flaky >= r.c.maxFlakyStreak:
		return HaltFlakyStreak
	}
	return ""
}

// RetriedTransiently returns the tasks, by id, that the events of a run
// show retrying after an attempt that failed the way an unreliable worker
// or service fails: an error of the agent or a timeout
// ([runner.ClassAgentError], [runner.ClassTimeout]), rather than an
// output that failed its checks, which the retry's diagnosis corrects.
// It is what [Replanning.Ran] takes, for [WithMaxFlakyStreak].
func RetriedTransiently(events []runner.Event) map[string]bool {
	tasks := make(map[string]bool)
	for _, ev := range events {
		if retriedTransiently(ev) {
			tasks[ev.TaskID] = true
		}
	}
	return tasks
}

// retriedTransiently reports whether ev is a retry after a transient
// failure.
func retriedTransiently(ev runner.Event) bool {
	if ev.Kind != runner.EventTaskRetried {
		return false
	}
	c := runner.Classify(ev.Err)
	return c == runner.ClassAgentError || c == runner.ClassTimeout
}

// countFlaky goes on with the streak of tasks that passed only after a
// transient failure through the tasks rr ran, in the order they finished:
// such a task adds to it, any other task done ends it.
func (r *Replanning) countFlaky(rr *runner.Result, retried map[string]bool) {
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
			r.flaky++
		} else {
			r.flaky = 0
		}
	}
}

// overBudget reports whether tokens or calls are spent.
func (r *Replanning) overBudget() bool {
	b := r.c.budget
	usage := r.res.Usage
	calls := -1
	if r.c.meter != nil {
		usage, calls = r.c.meter.Usage(), r.c.meter.Calls()
	}
	return b.MaxTokens > 0 && usage.Total() >= b.MaxTokens || b.MaxCalls > 0 && calls >= b.MaxCalls
}
