package llmagent_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/registry"
)

// Agents builds the agents a plan defines, for runner.WithPlanAgents: each
// on the host's client and model unless the plan names its own, with only
// tools the registry has.
func ExampleAgents() {
	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "answered by " + req.Model}}, nil
	})
	agents := llmagent.Agents(model, registry.New(), "small-model")

	for _, def := range []plan.Agent{
		{Prompt: "You write one-line reports."},
		{Prompt: "You write long reports.", Model: "large-model"},
	} {
		a, err := agents("writer", def)
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := a.Run(context.Background(), agent.Request{TaskID: "report", Agent: "writer", Input: "Report", Attempt: 1})
		fmt.Println(res.Output, err)
	}

	_, err := agents("researcher", plan.Agent{Tools: []string{"search"}})
	fmt.Println(errors.Is(err, registry.ErrUnknownTool), err)
	// Output:
	// answered by small-model <nil>
	// answered by large-model <nil>
	// true unknown tool "search"; the registry has no tools
}
