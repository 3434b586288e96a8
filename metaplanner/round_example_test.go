package metaplanner_test

import (
	"context"
	"fmt"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

// ExamplePlanner_Round plans a mission in rounds: the model (scripted
// here) first asks only for the country, then, having seen it, for its
// capital, wired to the first result, and then names the deliverable.
func ExamplePlanner_Round() {
	answers := []string{
		`{"action": "continue", "tasks": [{"id": "country", "input": "Which country is the largest by area?"}]}`,
		`{"action": "continue", "tasks": [{"id": "capital", "input": "Name the capital of the country given",
		  "inputs": {"country": {"from": "country", "slot": "name"}}}]}`,
		`{"action": "done", "deliverable": ["capital"], "reason": "the capital is known"}`,
	}
	calls := 0
	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		content := answers[calls]
		calls++
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: content}}, nil
	})
	work := agent.Func(func(_ context.Context, req agent.Request) (agent.Result, error) {
		if req.TaskID == "country" {
			return agent.Result{Output: map[string]any{"name": "Russia"}}, nil
		}
		return agent.Result{Output: map[string]any{"capital": "Moscow", "of": req.Inputs["country"]}}, nil
	})

	res, err := executor.ExecuteRounds(context.Background(), "What is the capital of the largest country?",
		executor.WithRounds(5, metaplanner.New(model)),
		executor.WithRunner(runner.WithAgent(plan.DefaultAgent, work)))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, "after", res.Rounds, "rounds")
	for _, id := range res.Deliverable {
		fmt.Println(id, res.Tasks[id].Output)
	}
	// Output:
	// completed after 2 rounds
	// capital map[capital:Moscow of:Russia]
}
