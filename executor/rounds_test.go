package executor_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// rounds is a scripted executor.RoundPlanner: it answers in order and
// records the states it saw.
type rounds struct {
	mu      sync.Mutex
	answers []*executor.RoundAnswer
	states  []executor.RoundState
}

func (r *rounds) Round(_ context.Context, _ string, s executor.RoundState) (*executor.RoundAnswer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, s)
	if len(r.answers) == 0 {
		return nil, errExhausted
	}
	a := r.answers[0]
	r.answers = r.answers[1:]
	return a, nil
}

// task is a task of the default agent.
func task(id string, deps ...string) plan.Task {
	t := plan.NewTask(id, "do "+id)
	t.DependsOn = deps
	return t
}

func cont(tasks ...plan.Task) *executor.RoundAnswer {
	return &executor.RoundAnswer{Action: executor.RoundContinue, Tasks: tasks}
}

// commits records the plan versions an execution commits.
type commits struct {
	mu sync.Mutex
	cs []executor.PlanCommit
}

func (c *commits) CommitPlan(_ context.Context, pc executor.PlanCommit) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cs = append(c.cs, pc)
	return nil
}

func TestRounds(t *testing.T) {
	wired := task("b")
	wired.Inputs = map[string]plan.InputRef{"prev": {From: "a"}}
	for _, tc := range []struct {
		name      string
		answers   []*executor.RoundAnswer
		fail      string
		maxRounds int
		status    runner.Status
		halt      string
		rounds    int
		calls     map[string]int
	}{
		{
			name: "continue continue done",
			answers: []*executor.RoundAnswer{cont(task("a")), cont(wired), cont(task("c", "b")),
				{Action: executor.RoundDone, Deliverable: []string{"c"}}},
			status: runner.StatusCompleted, rounds: 3, calls: map[string]int{"a": 1, "b": 1, "c": 1},
		},
		{
			name:    "failed",
			answers: []*executor.RoundAnswer{cont(task("a")), {Action: executor.RoundFailed, Reason: "no source has it"}},
			status:  runner.StatusFailed, halt: executor.HaltGaveUp, rounds: 1, calls: map[string]int{"a": 1},
		},
		{
			name:      "round budget",
			answers:   []*executor.RoundAnswer{cont(task("a")), cont(task("b")), cont(task("c"))},
			maxRounds: 2,
			status:    runner.StatusFailed, halt: executor.HaltMaxRounds, rounds: 2, calls: map[string]int{"a": 1, "b": 1},
		},
		{
			name:    "deliverable not completed",
			answers: []*executor.RoundAnswer{cont(task("a")), {Action: executor.RoundDone, Deliverable: []string{"zzz"}}},
			status:  runner.StatusFailed, halt: executor.HaltReplanFailed, rounds: 1, calls: map[string]int{"a": 1},
		},
		{
			name:    "unknown wire refused",
			answers: []*executor.RoundAnswer{cont(task("a")), cont(func() plan.Task { x := task("b"); x.Inputs = map[string]plan.InputRef{"p": {From: "nope"}}; return x }())},
			status:  runner.StatusFailed, halt: executor.HaltReplanFailed, rounds: 1, calls: map[string]int{"a": 1},
		},
		{
			name:    "a failed task is reported, and replaced",
			answers: []*executor.RoundAnswer{cont(task("a"), task("x")), cont(task("y", "a")), {Action: executor.RoundDone, Deliverable: []string{"y"}}},
			fail:    "x",
			status:  runner.StatusCompleted, rounds: 2, calls: map[string]int{"a": 1, "x": 1, "y": 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkers()
			if tc.fail != "" {
				w.set(tc.fail, fail(errBoom))
			}
			rp := &rounds{answers: tc.answers}
			j := &commits{}
			res, err := executor.ExecuteRounds(context.Background(), "the mission",
				w.options(executor.WithRounds(tc.maxRounds, rp), executor.WithJournal(j))...)
			require.NoError(t, err)
			assert.Equal(t, tc.status, res.Status, "%v", res.Err)
			assert.Equal(t, tc.halt, res.Halt)
			assert.Equal(t, tc.rounds, res.Rounds)
			assert.Equal(t, tc.calls, w.counts(), "completed tasks never run again")
			require.Len(t, j.cs, tc.rounds, "one plan version a round")
			for k, c := range j.cs {
				assert.Equal(t, k, c.Version)
				if k > 0 {
					assert.Equal(t, k+1, c.Trial.Round)
				}
			}
			if tc.halt != "" {
				var he *executor.HaltError
				require.ErrorAs(t, res.Err, &he)
				assert.ErrorIs(t, res.Err, executor.ErrHalted)
			}
		})
	}
}

func TestRoundsState(t *testing.T) {
	w := newWorkers().set("x", fail(errBoom))
	rp := &rounds{answers: []*executor.RoundAnswer{cont(task("a"), task("x"), task("after", "x")), {Action: executor.RoundDone, Deliverable: []string{"a"}}}}
	res, err := executor.ExecuteRounds(context.Background(), "m", w.options(executor.WithRounds(0, rp))...)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, []string{"a"}, res.Deliverable)
	require.Len(t, rp.states, 2)
	assert.Equal(t, 1, rp.states[0].Round)
	assert.Equal(t, executor.DefaultMaxRounds, rp.states[0].MaxRounds)
	s := rp.states[1]
	assert.Equal(t, 2, s.Round)
	assert.Equal(t, map[string]any{"a": "a-out"}, s.Completed)
	require.Len(t, s.Failed, 1)
	assert.Equal(t, "x", s.Failed[0].TaskID)
	assert.Equal(t, []string{"after"}, s.Pending)
}

// A resumed execution in rounds runs the plan of its last version, with
// the results it finished, and goes on asking for rounds.
func TestRoundsResume(t *testing.T) {
	w := newWorkers()
	p := executor.NextRound(nil, nil, []plan.Task{task("a"), task("b", "a")}, nil)
	rp := &rounds{answers: []*executor.RoundAnswer{{Action: executor.RoundDone, Deliverable: []string{"b"}}}}
	res, err := executor.Execute(context.Background(), p, "m", w.options(executor.WithRounds(3, rp),
		executor.WithHistory([]executor.Trial{{Attempt: 1, Round: 2}}), executor.WithInitialResults(map[string]any{"a": "done before"}))...)
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Status)
	assert.Equal(t, map[string]int{"b": 1}, w.counts())
	assert.Equal(t, 3, rp.states[0].Round)
	assert.Equal(t, 2, res.Rounds, "rounds 1 and 2 were planned before the resume")
}

func TestRoundPlannerError(t *testing.T) {
	w := newWorkers()
	res, err := executor.ExecuteRounds(context.Background(), "m", w.options(executor.WithRounds(2, &rounds{}))...)
	require.NoError(t, err)
	assert.Equal(t, executor.HaltReplanFailed, res.Halt)
	assert.True(t, errors.Is(res.Err, errExhausted))
	assert.Nil(t, res.Plan)
}

// A failure of a class that halts ends a run in rounds as it ends one that
// replans: the round planner, which would read the injected text, is not
// asked again.
func TestRoundsHaltOnClass(t *testing.T) {
	refused := fail(fmt.Errorf("llm agent: %w: rm", agent.ErrToolRefused))
	for _, tc := range []struct {
		name   string
		opts   []executor.Option
		halt   string
		status runner.Status
		asked  int
	}{
		{name: "tool refused halts by default", halt: executor.HaltToolRefused, status: runner.StatusFailed, asked: 1},
		{name: "unless the host says otherwise", opts: []executor.Option{executor.WithoutHaltOn(runner.ClassToolRefused)},
			status: runner.StatusCompleted, asked: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkers().set("x", refused)
			rp := &rounds{answers: []*executor.RoundAnswer{cont(task("a"), task("x")), cont(task("y", "a")),
				{Action: executor.RoundDone, Deliverable: []string{"y"}}}}
			res, err := executor.ExecuteRounds(context.Background(), "the mission",
				w.options(append([]executor.Option{executor.WithRounds(0, rp)}, tc.opts...)...)...)
			require.NoError(t, err)
			assert.Equal(t, tc.status, res.Status, "%v", res.Err)
			assert.Equal(t, tc.halt, res.Halt)
			assert.Len(t, rp.states, tc.asked, "the round planner's calls")
		})
	}
}

// The round planner sees a worker's structured failure: its class and its
// suggestion.
func TestRoundsSeeSuggestion(t *testing.T) {
	w := newWorkers().set("x", fail(&agent.FailureReport{Class: "rate_limited", Message: "429", Suggestion: "wait a minute"}))
	rp := &rounds{answers: []*executor.RoundAnswer{cont(task("x")), {Action: executor.RoundFailed, Reason: "rate limited"}}}
	_, err := executor.ExecuteRounds(context.Background(), "the mission", w.options(executor.WithRounds(0, rp))...)
	require.NoError(t, err)
	require.Len(t, rp.states, 2)
	require.Len(t, rp.states[1].Failed, 1)
	f := rp.states[1].Failed[0]
	assert.Equal(t, "rate_limited", f.Class)
	assert.Equal(t, "wait a minute", f.Suggestion)
}

// A plan given to an execution in rounds is its first round: it counts
// against the budget, and the planner is asked about round 2 after it.
func TestRoundsFromAPlan(t *testing.T) {
	w := newWorkers()
	p := executor.NextRound(nil, nil, []plan.Task{task("a")}, nil)
	rp := &rounds{answers: []*executor.RoundAnswer{cont(task("b", "a")), {Action: executor.RoundDone, Deliverable: []string{"b"}}}}
	j := &commits{}
	res, err := executor.Execute(context.Background(), p, "m", w.options(executor.WithRounds(1, rp), executor.WithJournal(j))...)
	require.NoError(t, err)
	assert.Equal(t, executor.HaltMaxRounds, res.Halt, "one round in all: the plan given")
	assert.Equal(t, map[string]int{"a": 1}, w.counts(), "b, a second round, never runs")
	require.NotEmpty(t, rp.states)
	assert.Equal(t, 2, rp.states[0].Round)
	assert.Equal(t, 1, res.Rounds)
	require.Len(t, j.cs, 1)
}
