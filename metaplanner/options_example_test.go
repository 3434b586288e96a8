package metaplanner_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/registry"
)

// WithRegistry offers the model the host's workers and holds its plans to
// them: a plan naming a worker the registry does not have goes back to the
// model with the finding.
func ExampleWithRegistry() {
	reg := registry.New()
	_ = reg.Register("wc", registry.Worker{
		Description: "Counts the words of its input",
		Outputs:     []string{"words"},
		Agent: agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
			return agent.Result{}, nil
		}),
	})
	answers := []string{
		`{"route": "plan", "plan": {"tasks": [{"id": "count", "agent": "wordcount", "input": "one two three"}]}}`,
		`{"route": "plan", "plan": {"tasks": [{"id": "count", "agent": "wc", "input": "one two three"}]}}`,
	}
	calls := 0
	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if calls == 0 {
			fmt.Println("the prompt offers wc:", strings.Contains(req.Messages[len(req.Messages)-1].Content, "- wc: Counts the words of its input"))
		} else {
			fmt.Println(strings.Split(req.Messages[len(req.Messages)-1].Content, "\n")[2])
		}
		calls++
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: answers[calls-1]}}, nil
	})
	res, err := metaplanner.New(model, metaplanner.WithRegistry(reg)).Plan(context.Background(), "Count the words of 'one two three'")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Route, res.Plan.Tasks[0].Agent, "after", res.Attempts, "attempts")
	// Output:
	// the prompt offers wc: true
	// 1. task "count", field agent: agent "wordcount" is not defined in the plan's agents and is not a registry worker [unknown_worker]
	// plan wc after 2 attempts
}
