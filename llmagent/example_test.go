package llmagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/registry"
)

// An LLM agent runs a model in a loop with the registry tools it may use.
// Here a ClientFunc stands in for the model: it calls a tool, then answers
// with JSON. Upstream outputs and tool results reach the model as data
// blocks, never as instructions.
func ExampleAgent() {
	reg := registry.New()
	err := reg.RegisterTool("word_count", registry.Tool{
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

	a := &llmagent.Agent{Client: model, Prompt: "You count words.", Tools: []string{"word_count"}, Registry: reg}
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
