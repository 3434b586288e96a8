package durable_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/llm"
)

// A mission planned once runs again from the journal's plan cache: the
// second start sends the model no request.
func ExampleWithPlanCache() {
	s, done := journal()
	defer done()
	requests := 0
	model := llm.ClientFunc(func(context.Context, llm.Request) (llm.Response, error) {
		requests++
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant,
			Content: `{"route": "plan", "plan": {"tasks": [{"id": "shout", "agent": "upper", "input": "hello"}]}}`}}, nil
	})
	for _, mission := range []string{"Shout hello", " Shout   hello"} {
		out, err := durable.Start(context.Background(), s, durable.Spec{Mission: mission},
			durable.WithAgent("upper", upper), durable.WithLLM(func(string, bool) (llm.Client, error) { return model, nil }),
			durable.WithPlanCache(durable.CacheReuse))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(out.Status, out.Result.Tasks["shout"].Output, "after", requests, "planning request(s)")
	}
	fmt.Println(durable.NormalizeMission("  Shout\tHELLO "))
	// Output:
	// completed HELLO after 1 planning request(s)
	// completed HELLO after 1 planning request(s)
	// Shout HELLO
}

// With memory, the planner of a mission is shown how the agents and tools
// of the journal's newest runs fared.
func ExampleWithMemory() {
	s, done := journal()
	defer done()
	var prompt string
	model := llm.ClientFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
		prompt = req.Messages[len(req.Messages)-1].Content
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant,
			Content: `{"route": "plan", "plan": {"tasks": [{"id": "shout", "agent": "upper", "input": "hello"}]}}`}}, nil
	})
	for range 2 {
		_, err := durable.Start(context.Background(), s, durable.Spec{Mission: "Shout hello"},
			durable.WithAgent("upper", upper), durable.WithLLM(func(string, bool) (llm.Client, error) { return model, nil }),
			durable.WithMemory(20))
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	block := prompt[strings.Index(prompt, `<data source="memory">`):]
	fmt.Println(block[:strings.Index(block, "</data>")+len("</data>")])
	// Output:
	// <data source="memory">
	// Over the last 1 runs:
	// - agent upper: 1 of 1 tasks done (100%)
	// </data>
}
