package metaplanner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/registry"
)

// answers is a fake model that answers with its replies in order and
// shows the last user message of each request through show.
func answers(show func(llm.Request), replies ...string) llm.Client {
	n := 0
	return llm.ClientFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
		if show != nil {
			show(req)
		}
		n++
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: replies[n-1]}}, nil
	})
}

// AnswerSchema is held to the registry: a task of a plan without agents
// of its own may name only "default" and the registry's workers.
func ExamplePlanner_AnswerSchema() {
	reg := registry.New()
	_ = reg.Register("wc", registry.Worker{Agent: agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, nil
	})})
	var s struct {
		Properties struct {
			Route struct{ Enum []string } `json:"route"`
		} `json:"properties"`
		Defs struct {
			CatalogTask struct {
				Properties struct {
					Agent struct{ Enum []string } `json:"agent"`
				} `json:"properties"`
			} `json:"CatalogTask"`
		} `json:"$defs"`
	}
	p := metaplanner.New(nil, metaplanner.WithRegistry(reg), metaplanner.WithForbiddenRoutes(metaplanner.RouteClarify))
	_ = json.Unmarshal(p.AnswerSchema(false), &s)
	fmt.Println("routes:", s.Properties.Route.Enum)
	fmt.Println("agents:", s.Defs.CatalogTask.Properties.Agent.Enum)
	_ = json.Unmarshal(p.AnswerSchema(true), &s)
	fmt.Println("repair routes:", s.Properties.Route.Enum)
	// Output:
	// routes: [plan synthesis]
	// agents: [default wc]
	// repair routes: [plan give_up]
}

// An unattended host forbids the direct answer and the question: a model
// that answers directly is corrected, and its plan has a reason.
func ExampleWithForbiddenRoutes() {
	model := answers(nil,
		`{"route": "synthesis", "answer": "Paris is sunny."}`,
		`{"route": "plan", "reason": "The weather must be looked up.", "plan": {"tasks": [{"id": "weather", "input": "Find the weather in Paris"}]}}`)
	res, err := metaplanner.New(model, metaplanner.WithForbiddenRoutes(metaplanner.RouteSynthesis, metaplanner.RouteClarify)).
		Plan(context.Background(), "What is the weather in Paris?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Route, "after", res.Attempts, "attempts:", res.Reason)
	// Output:
	// plan after 2 attempts: The weather must be looked up.
}

// The model asks the host for context before it plans; the host's source
// answers, and planning goes on.
func ExampleWithContextSource() {
	src := metaplanner.ContextFunc(func(_ context.Context, request []string) ([]metaplanner.Context, error) {
		fmt.Println("asked for:", strings.Join(request, "; "))
		return []metaplanner.Context{{Provenance: "memory/preferences.json", Kind: "memory", Text: "The user reads French."}}, nil
	})
	model := answers(nil,
		`{"route": "refresh_context", "context_request": ["the user's language"]}`,
		`{"route": "plan", "plan": {"tasks": [{"id": "digest", "input": "Write the digest in French"}]}}`)
	res, err := metaplanner.New(model, metaplanner.WithContextSource(src)).Plan(context.Background(), "Write me a digest of the news")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Plan.Tasks[0].Input, "after", res.Refreshes, "refresh")
	// Output:
	// asked for: the user's language
	// Write the digest in French after 1 refresh
}

// Context the host holds goes to the model as data blocks tagged with
// their provenance.
func ExampleWithContext() {
	show := func(req llm.Request) {
		user := req.Messages[1].Content
		start := strings.Index(user, `<data source="context"`)
		fmt.Print(user[start : strings.Index(user[start:], "</data>")+start+len("</data>\n")])
	}
	model := answers(show, `{"route": "plan", "plan": {"tasks": [{"id": "update", "input": "Update last week's digest"}]}}`)
	_, err := metaplanner.New(model, metaplanner.WithContext(metaplanner.Context{
		Provenance: "runs/2026-11-17/digest", Kind: "result", Text: "Last week: three releases.",
	})).Plan(context.Background(), "Update the digest")
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// <data source="context" provenance="runs/2026-11-17/digest" kind="result">
	// Last week: three releases.
	// </data>
}

// A registry tool supplies the context the model asks for.
func ExampleToolContext() {
	reg := registry.New()
	_ = reg.RegisterTool("recall", registry.Tool{
		Description: "Recalls what the host remembers",
		Run: func(_ context.Context, args json.RawMessage) (string, error) {
			return "remembered: " + string(args), nil
		},
	})
	items, err := metaplanner.ToolContext(reg, "recall").Context(context.Background(), []string{"the user's city"})
	fmt.Println(items, err)
	_, err = metaplanner.ToolContext(reg, "nope").Context(context.Background(), nil)
	fmt.Println(errors.Is(err, metaplanner.ErrNoContextTool))
	// Output:
	// [{tool:recall tool_result remembered: {"request":["the user's city"]}}] <nil>
	// true
}
