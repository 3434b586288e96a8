package dagent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dagent-dev/dagent"
	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// model is a scripted LLM: the planner's requests get the next of plans,
// an agent's request the answer of agent.
type model struct {
	mu      sync.Mutex
	plans   []string
	agent   func(req llm.Request) string
	planned int
	models  []string
}

func (m *model) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.models = append(m.models, req.Model)
	if req.Schema != nil && req.Schema.Name == metaplanner.SchemaName {
		if m.planned >= len(m.plans) {
			return llm.Response{}, errors.New("no more plans")
		}
		m.planned++
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: m.plans[m.planned-1]}, FinishReason: "stop"}, nil
	}
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: m.agent(req)}, FinishReason: "stop"}, nil
}

// wordCount is a registry with one worker, wc, that counts the words of
// its input and fails its first failures calls.
func wordCount(t testing.TB, failures int) (*registry.Registry, *int) {
	reg := registry.New()
	calls := 0
	var mu sync.Mutex
	require.NoError(t, reg.Register("wc", registry.Worker{
		Description: "Counts the words of its input",
		Outputs:     []string{"words"},
		Agent: agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls <= failures {
				return agent.Result{}, errors.New("disk full")
			}
			return agent.Result{Output: map[string]any{"words": len(strings.Fields(req.Input))}}, nil
		}),
	}))
	return reg, &calls
}

const countPlan = `{"route": "plan", "plan": {"tasks": [
  {"id": "count", "agent": "wc", "input": "one two three", "on_failure": "replan",
   "verification": "(> (get data/result \"words\") 0)"},
  {"id": "report", "agent": "writer", "input": "Report the count", "inputs": {"n": {"from": "count", "slot": "words"}}, "depends_on": ["count"]}
 ], "agents": {"writer": {"prompt": "You write one-line reports."}}}}`

const repairPlan = `{"route": "plan", "plan": {"tasks": [
  {"id": "count2", "agent": "wc", "input": "one two three"},
  {"id": "report", "agent": "writer", "input": "Report the count", "inputs": {"n": {"from": "count2", "slot": "words"}}, "depends_on": ["count2"]}
 ], "agents": {"writer": {"prompt": "You write one-line reports."}}}}`

func TestRunPlansChecksRunsAndRepairs(t *testing.T) {
	reg, calls := wordCount(t, 1)
	m := &model{plans: []string{countPlan, repairPlan}, agent: func(llm.Request) string { return "3 words" }}
	res, err := dagent.New(m, reg, dagent.WithModel("m1"),
		dagent.WithExecutor(executor.WithRunner(runner.WithBackoff(runner.Backoff{})))).
		Run(context.Background(), "Count the words")
	require.NoError(t, err)
	require.NotNil(t, res.Run)
	assert.Equal(t, metaplanner.RoutePlan, res.Planned.Route)
	assert.Equal(t, runner.StatusCompleted, res.Run.Status, "%v", res.Run.Err)
	assert.Equal(t, 1, res.Run.ReplanCount, "the failed count is repaired once")
	assert.Equal(t, 2, *calls)
	assert.Equal(t, "3 words", res.Run.Tasks["report"].Output)
	for _, name := range m.models {
		assert.Equal(t, "m1", name, "the planner and the agents use the engine's model")
	}
}

// TestRunObservesRepairs: an observer given to the executor sees the runs
// and the repair between them, under the execution's id.
func TestRunObservesRepairs(t *testing.T) {
	reg, _ := wordCount(t, 1)
	m := &model{plans: []string{countPlan, repairPlan}, agent: func(llm.Request) string { return "3 words" }}
	var mu sync.Mutex
	var seen []string
	o := runner.ObserverFunc(func(e runner.Event) {
		switch e.Kind {
		case runner.EventRunStarted, executor.EventRepairAdopted:
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s %s v%d", e.Kind, e.RunID, e.Version))
			mu.Unlock()
		}
	})
	res, err := dagent.New(m, reg, dagent.WithExecutor(executor.WithRunID("m"), executor.WithObserver(o),
		executor.WithRunner(runner.WithBackoff(runner.Backoff{})))).Run(context.Background(), "Count the words")
	require.NoError(t, err)
	assert.Equal(t, runner.StatusCompleted, res.Run.Status, "%v", res.Run.Err)
	assert.Equal(t, []string{"run_started m v0", "repair_adopted m v1", "run_started m.1 v0"}, seen)
}

func TestRunRefusesPlansOutsideTheCatalog(t *testing.T) {
	reg, calls := wordCount(t, 0)
	unknown := `{"route": "plan", "plan": {"tasks": [{"id": "a", "agent": "grep", "input": "x"}]}}`
	tools := `{"route": "plan", "plan": {"agents": {"s": {"prompt": "p", "tools": ["shell"]}}, "tasks": [{"id": "a", "agent": "s", "input": "x"}]}}`
	for name, answer := range map[string]string{"unknown worker": unknown, "unknown tool": tools} {
		t.Run(name, func(t *testing.T) {
			m := &model{plans: []string{answer}, agent: func(llm.Request) string { return "x" }}
			res, err := dagent.New(m, reg, dagent.WithPlanner(metaplanner.WithMaxCorrections(0))).Run(context.Background(), "Do it")
			require.ErrorIs(t, err, metaplanner.ErrNoValidPlan, "the planner's critic checks against the same catalog")
			assert.Nil(t, res.Run)
			assert.Zero(t, *calls)
		})
	}
}

func TestRunAnswersDirectly(t *testing.T) {
	m := &model{plans: []string{`{"route": "synthesis", "answer": "42"}`}}
	res, err := dagent.New(m, nil).Run(context.Background(), "What is six times seven?")
	require.NoError(t, err)
	assert.Equal(t, metaplanner.RouteSynthesis, res.Planned.Route)
	assert.Equal(t, "42", res.Planned.Answer)
	assert.Nil(t, res.Run)
}

func ExampleEngine_Run() {
	// The host's catalog: one trusted worker.
	reg := registry.New()
	_ = reg.Register("wc", registry.Worker{
		Description: "Counts the words of its input",
		Outputs:     []string{"words"},
		Agent: agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
			return agent.Result{Output: map[string]any{"words": len(strings.Fields(req.Input))}}, nil
		}),
	})
	// A scripted model stands in for an OpenAI-compatible one
	// (openai.New(openai.ConfigFromEnv())).
	client := &model{plans: []string{countPlan}, agent: func(llm.Request) string { return "The text has 3 words." }}

	res, err := dagent.New(client, reg).Run(context.Background(), "Count the words of 'one two three'")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Planned.Route, res.Run.Status)
	fmt.Println(res.Run.Tasks["count"].Output, res.Run.Tasks["report"].Output)
	// Output:
	// plan completed
	// map[words:3] The text has 3 words.
}

// New takes the model and the catalog once; options name the model and
// tune the planner and the loop that runs and repairs plans.
func ExampleNew() {
	reg := registry.New()
	_ = reg.Register("wc", registry.Worker{
		Description: "Counts the words of its input",
		Outputs:     []string{"words"},
		Agent: agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
			fmt.Println("wc runs in", req.RunID)
			return agent.Result{Output: map[string]any{"words": len(strings.Fields(req.Input))}}, nil
		}),
	})
	client := &model{plans: []string{countPlan}, agent: func(llm.Request) string { return "The text has 3 words." }}

	engine := dagent.New(client, reg,
		dagent.WithModel("small-model"),
		dagent.WithPlanner(metaplanner.WithMaxCorrections(1)),
		dagent.WithExecutor(executor.WithRunID("mission-1"), executor.WithRunner(runner.WithConcurrency(4))),
	)
	res, err := engine.Run(context.Background(), "Count the words of 'one two three'")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Run.Status, client.models)
	// Output:
	// wc runs in mission-1
	// completed [small-model small-model]
}
