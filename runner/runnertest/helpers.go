package runnertest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// worker is the agent every plan of the kit names unless it says
// otherwise.
const worker = "w"

// runID is the id of every run of the kit.
const runID = "kit-run"

// patience bounds how long an agent of the kit waits for another task's
// signal before it gives up and fails: a driver that never gives the
// signal fails the scenario rather than hanging it.
const patience = 5 * time.Second

// kit runs scenarios against a driver.
type kit struct {
	d    Driver
	caps Caps
}

// run runs s on the driver with the kit's defaults — the run id, retries
// at once — checks the order of its events, and returns the result and
// the events.
func (k *kit) run(t *testing.T, s Scenario) (*runner.Result, []runner.Event) {
	t.Helper()
	if s.RunID == "" {
		s.RunID = runID
	}
	if !k.caps.LiveEvents {
		s.Observe = nil
	}
	res, evs := k.d.Run(t, s)
	require.NotNil(t, res, "the driver returned no result")
	require.Len(t, res.Tasks, len(s.Plan.Tasks), "the result holds every task of the plan")
	assert.Equal(t, s.RunID, res.RunID)
	checkOrder(t, s, res, evs)
	return res, evs
}

// errBoom is the execution error of the kit's failing agents. Only its
// text is checked: it crosses whatever boundary the driver puts between
// agents and decisions.
var errBoom = errors.New("boom")

// script is what a scripted agent does for one request.
type script func(ctx context.Context, req agent.Request) (any, error)

// recorder is an agent that keeps every request and answers with a
// per-task script, "ok" by default. It counts the attempts that run at
// once, per agent name and in all.
type recorder struct {
	mu      sync.Mutex
	reqs    []agent.Request
	scripts map[string]script
	now     map[string]int
	peak    map[string]int
	all     int
	allPeak int
}

func newRecorder() *recorder {
	return &recorder{scripts: map[string]script{}, now: map[string]int{}, peak: map[string]int{}}
}

// on sets the script of one task.
func (r *recorder) on(taskID string, s script) *recorder {
	r.scripts[taskID] = s
	return r
}

func (r *recorder) Run(ctx context.Context, req agent.Request) (agent.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	s := r.scripts[req.TaskID]
	r.now[req.Agent]++
	r.peak[req.Agent] = max(r.peak[req.Agent], r.now[req.Agent])
	r.all++
	r.allPeak = max(r.allPeak, r.all)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.now[req.Agent]--
		r.all--
		r.mu.Unlock()
	}()
	if s == nil {
		return agent.Result{Output: "ok"}, nil
	}
	out, err := s(ctx, req)
	return agent.Result{Output: out}, err
}

// requests returns the requests of one task in the order they came.
func (r *recorder) requests(taskID string) []agent.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agent.Request
	for _, q := range r.reqs {
		if q.TaskID == taskID {
			out = append(out, q)
		}
	}
	return out
}

// count is the number of calls for one task.
func (r *recorder) count(taskID string) int { return len(r.requests(taskID)) }

// started lists the tasks in the order their first attempts came.
func (r *recorder) started() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, q := range r.reqs {
		if q.Attempt == 1 {
			ids = append(ids, q.TaskID)
		}
	}
	return ids
}

// peaks returns the most attempts that ran at once, per agent and in all.
func (r *recorder) peaks() (map[string]int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.peak))
	for k, v := range r.peak {
		out[k] = v
	}
	return out, r.allPeak
}

// Scripts.

func output(v any) script {
	return func(context.Context, agent.Request) (any, error) { return v, nil }
}

func fails(err error) script {
	return func(context.Context, agent.Request) (any, error) { return nil, err }
}

// byAttempt answers attempt n with steps[n-1] (the last one repeats).
func byAttempt(steps ...script) script {
	return func(ctx context.Context, req agent.Request) (any, error) {
		return steps[min(req.Attempt, len(steps))-1](ctx, req)
	}
}

// hang blocks until ctx ends and returns its error, as a well-behaved
// agent does.
func hang(ctx context.Context, _ agent.Request) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// signal is a channel closed once, by whichever task first gives it.
type signal struct {
	ch   chan struct{}
	once sync.Once
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }

func (s *signal) fire() { s.once.Do(func() { close(s.ch) }) }

// wait waits for the signal, failing the agent (not the test) once ctx
// ends or the kit's patience is spent.
func (s *signal) wait(ctx context.Context) error {
	select {
	case <-s.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(patience):
		return errors.New("timed out waiting for another task")
	}
}

// firing returns a script that fires s and then runs then.
func firing(s *signal, then script) script {
	return func(ctx context.Context, req agent.Request) (any, error) {
		s.fire()
		return then(ctx, req)
	}
}

// after returns a script that waits for s and then runs then.
func after(s *signal, then script) script {
	return func(ctx context.Context, req agent.Request) (any, error) {
		if err := s.wait(ctx); err != nil {
			return nil, err
		}
		return then(ctx, req)
	}
}

// Plans.

type mod func(*plan.Task)

// task is plan.NewTask run by worker, changed by mods.
func task(id, input string, mods ...mod) plan.Task {
	t := plan.NewTask(id, input)
	t.Agent = worker
	for _, m := range mods {
		m(&t)
	}
	return t
}

func deps(ids ...string) mod      { return func(t *plan.Task) { t.DependsOn = ids } }
func nonCritical() mod            { return func(t *plan.Task) { t.Critical = false } }
func onFailure(p plan.Policy) mod { return func(t *plan.Task) { t.OnFailure = p } }
func onVerify(p plan.Policy) mod  { return func(t *plan.Task) { t.OnVerificationFailure = p } }
func retries(n int) mod           { return func(t *plan.Task) { t.MaxRetries = n } }
func verifies(src string) mod     { return func(t *plan.Task) { t.Verification = src } }
func when(src string) mod         { return func(t *plan.Task) { t.When = src } }
func gate() mod                   { return func(t *plan.Task) { t.Type = plan.TypeSynthesisGate } }
func review() mod                 { return func(t *plan.Task) { t.Type = plan.TypeHumanReview } }
func agentName(n string) mod      { return func(t *plan.Task) { t.Agent = n } }
func timeout(d time.Duration) mod { return func(t *plan.Task) { t.Timeout = d } }
func prio(n int) mod              { return func(t *plan.Task) { t.Priority = n } }
func rubric(s string) mod         { return func(t *plan.Task) { t.Rubric = s } }
func inputs(in map[string]plan.InputRef) mod {
	return func(t *plan.Task) { t.Inputs = in }
}

func planOf(tasks ...plan.Task) *plan.Plan { return &plan.Plan{Tasks: tasks} }

// scenarioOf is a scenario of p run by rec as the kit's worker.
func scenarioOf(p *plan.Plan, rec *recorder) Scenario {
	return Scenario{Plan: p, Agents: map[string]agent.Agent{worker: rec}}
}

// Projections.

// want is what the kit checks of one task; Diagnosis is checked exactly
// unless diagPrefix is set.
type want struct {
	status     runner.TaskStatus
	attempts   int
	class      runner.Class
	diagnosis  string
	diagPrefix bool
	output     any
	err        error // errors.Is the task's Err, when set
}

func done(attempts int, output any) want {
	return want{status: runner.TaskDone, attempts: attempts, output: output}
}

// checkTask checks task id of res against w.
func checkTask(t *testing.T, res *runner.Result, id string, w want) {
	t.Helper()
	got := res.Tasks[id]
	require.NotNil(t, got, "task %s is in the result", id)
	assert.Equal(t, id, got.ID)
	assert.Equal(t, w.status, got.Status, "status of %s", id)
	assert.Equal(t, w.attempts, got.Attempts, "attempts of %s", id)
	assert.Equal(t, w.class, got.Class, "class of %s", id)
	if w.diagPrefix {
		assert.Truef(t, len(got.Diagnosis) >= len(w.diagnosis) && got.Diagnosis[:len(w.diagnosis)] == w.diagnosis,
			"diagnosis of %s: want a prefix %q, got %q", id, w.diagnosis, got.Diagnosis)
	} else {
		assert.Equal(t, w.diagnosis, got.Diagnosis, "diagnosis of %s", id)
	}
	assert.Equal(t, w.output, got.Output, "output of %s", id)
	if w.err != nil {
		assert.ErrorIs(t, got.Err, w.err, "error of %s", id)
	}
	switch got.Status {
	case runner.TaskDone, runner.TaskPending, runner.TaskWaiting:
		assert.NoError(t, got.Err, "error of %s", id)
	default:
		assert.Error(t, got.Err, "error of %s", id)
	}
}

// statuses maps every task to its status.
func statuses(res *runner.Result) map[string]runner.TaskStatus {
	out := make(map[string]runner.TaskStatus, len(res.Tasks))
	for id, t := range res.Tasks {
		out[id] = t.Status
	}
	return out
}

// failedBy checks that the run failed because of task id, with an error
// matching target when it is set.
func failedBy(t *testing.T, res *runner.Result, id string, target error) {
	t.Helper()
	assert.Equal(t, runner.StatusFailed, res.Status)
	var te *runner.TaskError
	if assert.ErrorAs(t, res.Err, &te) {
		assert.Equal(t, id, te.TaskID, "the task that failed the run")
	}
	if target != nil {
		assert.ErrorIs(t, res.Err, target)
	}
	assert.Nil(t, res.Replan)
	assert.Empty(t, res.PendingReviews)
}

// completed checks that the run completed.
func completed(t *testing.T, res *runner.Result) {
	t.Helper()
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.NoError(t, res.Err)
	assert.Nil(t, res.Replan)
	assert.Empty(t, res.PendingReviews)
}

// step is an event projected on what does not depend on timing: its
// kind, and its task and attempt, or the phase of a phase event.
type step struct {
	Kind    runner.EventKind
	TaskID  string
	Attempt int
	Phase   int
}

func (s step) String() string {
	switch {
	case s.Kind == runner.EventPhaseStarted || s.Kind == runner.EventPhaseFinished:
		return string(s.Kind) + " " + strconv.Itoa(s.Phase)
	case s.TaskID == "":
		return string(s.Kind)
	}
	return string(s.Kind) + " " + s.TaskID + "#" + strconv.Itoa(s.Attempt)
}

// steps projects events.
func steps(evs []runner.Event) []step {
	out := make([]step, len(evs))
	for i, e := range evs {
		out[i] = step{Kind: e.Kind, TaskID: e.TaskID, Attempt: e.Attempt}
		if e.Kind == runner.EventPhaseStarted || e.Kind == runner.EventPhaseFinished {
			out[i].Phase = e.Phase
		}
	}
	return out
}

// of returns the events of one task.
func of(evs []runner.Event, taskID string) []runner.Event {
	var out []runner.Event
	for _, e := range evs {
		if e.TaskID == taskID {
			out = append(out, e)
		}
	}
	return out
}

func kinds(evs []runner.Event) []runner.EventKind {
	out := make([]runner.EventKind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

// seqOf returns the position of the first event of kind of task id, or -1.
func seqOf(evs []runner.Event, kind runner.EventKind, id string) int {
	return slices.IndexFunc(evs, func(e runner.Event) bool { return e.Kind == kind && e.TaskID == id })
}
