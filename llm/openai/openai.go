// Package openai is the [llm.Client] for any OpenAI-compatible chat
// completions server: OpenAI, Azure OpenAI, vLLM, Ollama, the llama.cpp
// server and others, with retries of transient faults. It is the one
// package of dagent that links an HTTP client and an OpenAI SDK.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/dagent-dev/dagent/llm"
	goopenai "github.com/sashabaranov/go-openai"
)

// ErrNoModel reports a request that names no model to a client that has no
// default model.
var ErrNoModel = errors.New("llm: no model: set DAGENT_MODEL (or --model, Config.Model, Request.Model)")

// Client is an [llm.Client] for any OpenAI-compatible chat completions
// server. It retries transient faults (see [Config]) and is safe for
// concurrent use. Create it with [New].
type Client struct {
	cfg    Config
	client *goopenai.Client
}

var _ llm.Client = (*Client)(nil)

// New returns a client configured by c. It reports [ErrNotConfigured]
// when c has neither an API key nor a base URL.
func New(c Config) (*Client, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	key := c.APIKey
	if key == "" {
		key = placeholderKey
	}
	var oc goopenai.ClientConfig
	if c.AzureAPIVersion != "" {
		oc = goopenai.DefaultAzureConfig(key, c.BaseURL)
		oc.APIVersion = c.AzureAPIVersion
		oc.AzureModelMapperFunc = func(model string) string { return model }
	} else {
		oc = goopenai.DefaultConfig(key)
		if c.BaseURL != "" {
			oc.BaseURL = strings.TrimRight(c.BaseURL, "/")
		}
	}
	base := c.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	transport := base.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	oc.HTTPClient = &http.Client{
		Transport: &retryTransport{
			base:          transport,
			timeout:       c.Timeout,
			maxRetries:    c.MaxRetries,
			delay:         c.Backoff.policy(),
			maxRetryAfter: c.Backoff.MaxRetryAfter,
		},
		CheckRedirect: base.CheckRedirect,
		Jar:           base.Jar,
		Timeout:       base.Timeout,
	}
	return &Client{cfg: c, client: goopenai.NewClientWithConfig(oc)}, nil
}

// Model is the default model, used when a request names none.
func (c *Client) Model() string { return c.cfg.Model }

// Complete sends req to the server's /chat/completions and returns the
// first choice.
func (c *Client) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	creq, err := c.chatRequest(req)
	if err != nil {
		return llm.Response{}, err
	}
	cresp, err := c.client.CreateChatCompletion(ctx, creq)
	if err != nil {
		return llm.Response{}, c.apiError(ctx, creq.Model, err)
	}
	return response(cresp)
}

// chatRequest maps req to go-openai's request.
func (c *Client) chatRequest(req llm.Request) (goopenai.ChatCompletionRequest, error) {
	var creq goopenai.ChatCompletionRequest
	creq.Model = req.Model
	if creq.Model == "" {
		creq.Model = c.cfg.Model
	}
	if creq.Model == "" {
		return creq, ErrNoModel
	}
	if len(req.Messages) == 0 {
		return creq, errors.New("llm: request has no messages")
	}
	for _, m := range req.Messages {
		cm := goopenai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, goopenai.ToolCall{
				ID:       tc.ID,
				Type:     goopenai.ToolTypeFunction,
				Function: goopenai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		creq.Messages = append(creq.Messages, cm)
	}
	for _, t := range req.Tools {
		if t.Name == "" {
			return creq, errors.New("llm: a tool has no name")
		}
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if !json.Valid(params) {
			return creq, fmt.Errorf("llm: tool %q: parameters are not valid JSON", t.Name)
		}
		creq.Tools = append(creq.Tools, goopenai.Tool{
			Type:     goopenai.ToolTypeFunction,
			Function: &goopenai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	if s := req.Schema; s != nil {
		if len(s.Schema) == 0 || !json.Valid(s.Schema) {
			return creq, fmt.Errorf("llm: schema %q: the schema is missing or not valid JSON", s.Name)
		}
		name := s.Name
		if name == "" {
			name = "response"
		}
		creq.ResponseFormat = &goopenai.ChatCompletionResponseFormat{
			Type: goopenai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &goopenai.ChatCompletionResponseFormatJSONSchema{
				Name:   name,
				Schema: s.Schema,
				Strict: s.Strict,
			},
		}
	}
	if req.Temperature != nil {
		// go-openai omits a zero temperature; the smallest float32 above
		// zero is how it sends "0".
		creq.Temperature = float32(*req.Temperature)
		if creq.Temperature == 0 {
			creq.Temperature = math.SmallestNonzeroFloat32
		}
	}
	if req.MaxTokens > 0 {
		// max_tokens, deprecated by OpenAI, is what many compatible servers
		// (Ollama, llama.cpp, older vLLM) understand. Reasoning models take
		// max_completion_tokens instead, and go-openai refuses max_tokens
		// for them.
		//lint:ignore SA1019 see above
		creq.MaxTokens = req.MaxTokens
		if errors.Is(goopenai.NewReasoningValidator().Validate(creq), goopenai.ErrReasoningModelMaxTokensDeprecated) {
			//lint:ignore SA1019 see above
			creq.MaxTokens, creq.MaxCompletionTokens = 0, req.MaxTokens
		}
	} else if req.MaxTokens < 0 {
		return creq, fmt.Errorf("llm: negative MaxTokens %d", req.MaxTokens)
	}
	return creq, nil
}

// response maps go-openai's answer back.
func response(cresp goopenai.ChatCompletionResponse) (llm.Response, error) {
	resp := llm.Response{
		Model: cresp.Model,
		Usage: llm.Usage{PromptTokens: cresp.Usage.PromptTokens, CompletionTokens: cresp.Usage.CompletionTokens},
	}
	if len(cresp.Choices) == 0 {
		return resp, fmt.Errorf("%w: the answer has no choices", llm.ErrEmptyResponse)
	}
	choice := cresp.Choices[0]
	resp.FinishReason = string(choice.FinishReason)
	m := choice.Message
	resp.Message = llm.Message{Role: m.Role, Content: m.Content}
	if resp.Message.Role == "" {
		resp.Message.Role = llm.RoleAssistant
	}
	if m.Content == "" && len(m.MultiContent) > 0 {
		var b strings.Builder
		for _, p := range m.MultiContent {
			b.WriteString(p.Text)
		}
		resp.Message.Content = b.String()
	}
	for i, tc := range m.ToolCalls {
		id := tc.ID
		if id == "" {
			// Some local servers omit the id; the tool loop needs one to
			// answer the call.
			id = fmt.Sprintf("call_%d", i)
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, llm.ToolCall{ID: id, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if m.FunctionCall != nil && len(resp.Message.ToolCalls) == 0 {
		// The legacy function_call form some servers still answer with.
		resp.Message.ToolCalls = []llm.ToolCall{{ID: "call_0", Name: m.FunctionCall.Name, Arguments: m.FunctionCall.Arguments}}
	}
	if resp.Message.Content == "" && len(resp.Message.ToolCalls) == 0 {
		switch {
		case m.Refusal != "":
			return resp, fmt.Errorf("%w: the model refused: %s", llm.ErrEmptyResponse, m.Refusal)
		case resp.FinishReason != "":
			return resp, fmt.Errorf("%w: no content and no tool calls (finish reason %q)", llm.ErrEmptyResponse, resp.FinishReason)
		default:
			return resp, fmt.Errorf("%w: no content and no tool calls", llm.ErrEmptyResponse)
		}
	}
	return resp, nil
}

// apiError turns go-openai's error into an *[llm.APIError] when it is an error
// status, and otherwise wraps it.
func (c *Client) apiError(ctx context.Context, model string, err error) error {
	var oe *goopenai.APIError
	if errors.As(err, &oe) && oe.HTTPStatusCode > 0 {
		e := &llm.APIError{Status: oe.HTTPStatusCode, Message: oe.Message, Type: oe.Type, Err: err}
		if oe.Code != nil {
			e.Code = fmt.Sprint(oe.Code)
		}
		return e
	}
	var re *goopenai.RequestError
	if errors.As(err, &re) && re.HTTPStatusCode > 0 {
		e := &llm.APIError{Status: re.HTTPStatusCode, Err: err}
		e.Message, e.Type, e.Code = errorBody(re.Body)
		return e
	}
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("llm: %s: %w (%v)", model, ctx.Err(), err)
	}
	return fmt.Errorf("llm: %s: %w", model, err)
}

// errorBody finds the explanation in an error body go-openai could not
// read: {"error": "text"}, {"message": ...} (vLLM), {"detail": ...}, or the
// text itself.
func errorBody(body []byte) (message, typ, code string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    string          `json:"type"`
		Code    any             `json:"code"`
	}
	if json.Unmarshal(body, &v) == nil {
		if v.Code != nil {
			code = fmt.Sprint(v.Code)
		}
		var s string
		switch {
		case len(v.Error) > 0 && json.Unmarshal(v.Error, &s) == nil && s != "":
			return s, v.Type, code
		case v.Message != "":
			return v.Message, v.Type, code
		case len(v.Detail) > 0:
			if json.Unmarshal(v.Detail, &s) == nil {
				return s, v.Type, code
			}
			return string(v.Detail), v.Type, code
		}
	}
	text := strings.TrimSpace(string(body))
	if r := []rune(text); len(r) > 500 {
		text = string(r[:500]) + "…"
	}
	return text, "", ""
}
