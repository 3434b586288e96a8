package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
)

// A Go function becomes an agent with Func.
func ExampleFunc() {
	upper := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: strings.ToUpper(req.Input)}, nil
	})
	res, err := upper.Run(context.Background(), agent.Request{TaskID: "shout", Input: "hello", Attempt: 1})
	fmt.Println(res.Output, err)
	// Output: HELLO <nil>
}

// A registry holds the workers a plan may name. Preconditions are checked
// before each attempt, with data/input bound to the task's rendered input.
func ExampleNewRegistry() {
	r := agent.NewRegistry()
	err := r.Register("word-count", agent.Worker{
		Description:   "Counts the words of the input",
		Outputs:       []string{"words"},
		Preconditions: []string{`(if (> (count data/input) 0) true "the input is empty")`},
		Agent: agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
			return agent.Result{Output: map[string]any{"words": len(strings.Fields(req.Input))}}, nil
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Names(), r.Outputs("word-count"))

	w, _ := r.Lookup("word-count")
	for _, input := range []string{"one two three", ""} {
		req := agent.Request{TaskID: "count", Agent: "word-count", Input: input, Attempt: 1}
		if err := w.Check(context.Background(), req); err != nil {
			fmt.Println(errors.Is(err, agent.ErrPrecondition), err)
			continue
		}
		res, _ := w.Agent.Run(context.Background(), req)
		fmt.Println(res.Output)
	}
	// Output:
	// [word-count] [words]
	// map[words:3]
	// true precondition 1 of worker "word-count" not met: (if (> (count data/input) 0) true "the input is empty"): the input is empty
}

// Register refuses a second worker of the same name.
func ExampleRegistry_Register() {
	r := agent.NewRegistry()
	echo := agent.Func(func(ctx context.Context, req agent.Request) (agent.Result, error) {
		return agent.Result{Output: req.Input}, nil
	})
	fmt.Println(r.Register("echo", agent.Worker{Agent: echo}))
	err := r.Register("echo", agent.Worker{Agent: echo})
	fmt.Println(errors.Is(err, agent.ErrDuplicateWorker), err)
	err = r.Register("strict", agent.Worker{Agent: echo, Preconditions: []string{"(strng? data/input)"}})
	fmt.Println(err)
	// Output:
	// <nil>
	// true register worker "echo": a worker of that name is already registered
	// register worker "strict": precondition 1: 1:2: unknown function strng? (did you mean string?)
	//   (strng? data/input)
	//    ^
}

// The CLI reads its registry from a YAML or JSON file; each worker runs as
// a Command.
func ExampleParseRegistry() {
	r, err := agent.ParseRegistry([]byte(`
workers:
  go-vet:
    description: Runs go vet on the packages in params.packages
    command: ["go", "vet", "./..."]
    outputs: [findings]
    timeout: 2m
    env: {GOFLAGS: "-mod=mod"}
`), "")
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := r.Lookup("go-vet")
	cmd := w.Agent.(*agent.Command)
	fmt.Println(w.Description)
	fmt.Println(w.Outputs, w.Timeout, cmd.Argv, cmd.Env)

	_, err = agent.ParseRegistry([]byte("workers:\n  go-vet:\n    comand: [go, vet]\n"), "")
	fmt.Println(errors.Is(err, agent.ErrInvalidRegistry), err)
	// Output:
	// Runs go vet on the packages in params.packages
	// [findings] 2m0s [go vet ./...] [GOFLAGS=-mod=mod]
	// true line 3: worker "go-vet": unknown key "comand"; did you mean "command"?
}

// An LLM agent runs a model in a loop with the registry tools it may use.
// Here a ClientFunc stands in for the model: it calls a tool, then answers
// with JSON. Upstream outputs and tool results reach the model as data
// blocks, never as instructions.
func ExampleLLM() {
	reg := agent.NewRegistry()
	err := reg.RegisterTool("word_count", agent.Tool{
		Description: "Counts the words of a text",
		Parameters:  json.RawMessage(`{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}`),
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(args, &a); err != nil {
				return "", err
			}
			return strconv.Itoa(len(strings.Fields(a.Text))), nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == llm.RoleUser {
			fmt.Printf("tools: %s\n%s\n\n", req.Tools[0].Name, last.Content)
			call := llm.ToolCall{ID: "call-1", Name: "word_count", Arguments: `{"text": "one two three"}`}
			return llm.Response{
				Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
				Usage:   llm.Usage{PromptTokens: 120, CompletionTokens: 15},
			}, nil
		}
		fmt.Printf("%s\n\n", last.Content)
		return llm.Response{
			Message: llm.Message{Role: llm.RoleAssistant, Content: "```json\n{\"words\": 3}\n```"},
			Usage:   llm.Usage{PromptTokens: 150, CompletionTokens: 15},
		}, nil
	})

	a := &agent.LLM{Client: model, Prompt: "You count words.", Tools: []string{"word_count"}, Registry: reg}
	res, err := a.Run(context.Background(), agent.Request{
		TaskID:  "count",
		Input:   "Count the words of the draft.",
		Attempt: 1,
		Depends: map[string]any{"draft": "one two three"},
	})
	fmt.Println(res.Output, res.Usage.Total(), err)
	// Output:
	// tools: word_count
	// ## Task
	// Count the words of the draft.
	//
	// ## Data
	// <data source="results.draft">
	// one two three
	// </data>
	//
	// <data source="tool.word_count">
	// 3
	// </data>
	//
	// map[words:3] 300 <nil>
}
