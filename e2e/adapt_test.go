package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// TestLeashedPlanRuns: with the answer schema held to the registry (and,
// for a small model, to the numbered brief plan, whose tasks depend only
// on earlier ones), the model cannot name a worker, a tool or a task that
// does not exist, so its plan is accepted and runs — the toy model's too.
// A host running unattended forbids the direct answer and the question.
func TestLeashedPlanRuns(t *testing.T) {
	e := newEnv(t)
	reg, wc, err := newRegistry(registryOptions{only: []string{"read_file", "count_words"}})
	require.NoError(t, err)
	planner := e.planner(reg, metaplanner.WithForbiddenRoutes(metaplanner.RouteSynthesis, metaplanner.RouteClarify))
	const mission = "How many words are in the file poem.txt? Read it with read_file and count them with count_words."

	// A small model may still run out of tokens before its plan ends: it
	// gets a few tries, each checked.
	const tries = 3
	for try := 1; try <= tries; try++ {
		before := len(e.tap.exchanges(plannerCall))
		res, err := planner.Plan(e.ctx, mission)
		xs := e.tap.exchanges(plannerCall)[before:]
		for _, x := range xs {
			assert.JSONEq(t, string(planner.AnswerSchema(false)), string(x.req.Schema.Schema), "the leashed schema is sent")
		}
		if !checkPlanning(t, reg, fmt.Sprintf("plan %d", try), xs, res, err, maxCorrections()+1) {
			require.NotEqual(t, metaplanner.RouteSynthesis, res.Route, "a forbidden route is never accepted")
			require.NotEqual(t, metaplanner.RouteClarify, res.Route, "a forbidden route is never accepted")
			continue
		}
		known := append(reg.Names(), plan.DefaultAgent)
		for name := range res.Plan.Agents {
			known = append(known, name)
		}
		for _, task := range res.Plan.Tasks {
			assert.Contains(t, known, task.Agent, "task %s names an agent that exists", task.ID)
		}
		obs := &events{}
		xr, xerr := executor.Execute(e.ctx, res.Plan, mission, e.executorOptions(reg, obs, nil)...)
		checkExecution(t, xr, xerr, obs, wc)
		started := 0
		for _, ev := range obs.list() {
			if ev.Kind == runner.EventTaskStarted {
				started++
			}
		}
		assert.Positive(t, started, "the accepted plan ran")
		if suite.Strict {
			require.Equal(t, runner.StatusCompleted, xr.Status, "%v", xr.Err)
			assert.True(t, findNumber(xr.Outputs(), poemWords), "an output holds the word count %d: %v", poemWords, xr.Outputs())
		}
		return
	}
	t.Fatalf("none of %d plans was accepted", tries)
}

// roundJournal records the plan versions of an execution in rounds.
type roundJournal struct {
	mu sync.Mutex
	cs []executor.PlanCommit
}

func (j *roundJournal) CommitPlan(_ context.Context, c executor.PlanCommit) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.cs = append(j.cs, c)
	return nil
}

// TestRoundsMission plans a mission in rounds: the planner writes the
// tasks it can justify, sees their results, and goes on, delivers or gives
// up. Whatever the model answers, completed tasks never run again and
// every round is a plan version of the journal. A run of at least two
// rounds must happen: a capable model reads the index before the file it
// names; the toy model, whose answers are random within the schema, gets
// up to a dozen missions to go on after its first round.
func TestRoundsMission(t *testing.T) {
	e := newEnv(t)
	reg, wc, err := newRegistry(registryOptions{only: []string{"read_file", "count_words"}})
	require.NoError(t, err)
	planner := e.planner(reg)
	const mission = "The file notes/index.txt names another file. Read notes/index.txt, then read the file it names and count that file's words."

	tries := 12
	if suite.Strict {
		tries = 1
	}
	for try := 1; try <= tries; try++ {
		obs := &events{}
		j := &roundJournal{}
		opts := append(e.executorOptions(reg, obs, nil), executor.WithRounds(3, planner), executor.WithJournal(j))
		xr, xerr := executor.ExecuteRounds(e.ctx, mission, opts...)
		require.NoError(t, xerr)
		require.NotNil(t, xr)
		t.Logf("mission %d: status %s, %d round(s), halt %q, deliverable %v, err %v", try, xr.Status, xr.Rounds, xr.Halt, xr.Deliverable, xr.Err)
		assert.Contains(t, []string{"", executor.HaltMaxRounds, executor.HaltGaveUp, executor.HaltReplanFailed, executor.HaltBudget,
			executor.HaltConsecutiveFailures, executor.HaltFlakyStreak}, xr.Halt)
		require.Len(t, j.cs, xr.Rounds, "one plan version a round")
		for k, c := range j.cs {
			assert.Equal(t, k, c.Version)
			if k > 0 {
				require.NotNil(t, c.Trial)
				assert.Equal(t, k+1, c.Trial.Round)
			}
		}
		if xr.Rounds > 0 {
			checkExecution(t, xr, xerr, obs, wc)
		}
		for _, id := range xr.Deliverable {
			require.Contains(t, xr.Tasks, id)
			assert.Equal(t, runner.TaskDone, xr.Tasks[id].Status, "the deliverable names completed task %s", id)
		}
		if suite.Strict {
			require.Equal(t, runner.StatusCompleted, xr.Status, "%v", xr.Err)
			assert.GreaterOrEqual(t, xr.Rounds, 2, "the index is read before the file it names")
			assert.True(t, findNumber(xr.Outputs(), betaWords), "an output holds beta's count %d: %v", betaWords, xr.Outputs())
		}
		if xr.Rounds >= 2 {
			for _, c := range j.cs[1:] {
				assert.Positive(t, c.Trial.NewTaskCount, "round %d added tasks", c.Trial.Round)
			}
			return
		}
	}
	t.Fatalf("no mission of %d ran two rounds", tries)
}
