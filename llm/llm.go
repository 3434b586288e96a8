// Package llm is how dagent talks to language models: a small [Client]
// interface the rest of dagent uses, token usage accounting and budgets,
// and the recording and replaying of exchanges that make runs testable and
// reproducible without a model. It links no HTTP stack; the client for
// OpenAI-compatible servers is in package [github.com/dagent-dev/dagent/llm/openai].
package llm

import (
	"context"
	"encoding/json"
)

// Roles of messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the tools an assistant message asks to call.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON object of arguments, as the model wrote it.
	Arguments string `json:"arguments"`
}

// Tool is a tool the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// Schema asks for structured output: an answer that is JSON valid for the
// schema.
type Schema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

// Request is one chat completion request.
type Request struct {
	// Model names the model; empty means the client's default.
	Model    string    `json:"model,omitempty"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	// Schema, when set, asks for structured output.
	Schema *Schema `json:"schema,omitempty"`
	// Temperature, when set, overrides the server's default.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens bounds the answer; zero means the server's default.
	MaxTokens int `json:"max_tokens,omitempty"`
}

// Response is the model's answer.
type Response struct {
	Message      Message `json:"message"`
	Usage        Usage   `json:"usage"`
	Model        string  `json:"model,omitempty"`
	FinishReason string  `json:"finish_reason,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{PromptTokens: u.PromptTokens + v.PromptTokens, CompletionTokens: u.CompletionTokens + v.CompletionTokens}
}

// Total is the number of prompt and completion tokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Client completes chat requests. Implementations must be safe for
// concurrent use: tasks of a plan call one client in parallel.
type Client interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// ClientFunc adapts a function to [Client].
type ClientFunc func(ctx context.Context, req Request) (Response, error)

// Complete calls f.
func (f ClientFunc) Complete(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }
