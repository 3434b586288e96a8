package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Errors of OpenAI.Complete.
var (
	// ErrEmptyResponse reports an answer with no choices, or whose message
	// has neither content nor tool calls. The Response returned with it
	// still carries the usage and finish reason.
	ErrEmptyResponse = errors.New("llm: empty response")
	// ErrNoModel reports a request that names no model to a client that has
	// no default model.
	ErrNoModel = errors.New("llm: no model: set DAGENT_MODEL (or --model, Config.Model, Request.Model)")
)

// APIError is an error status answered by the server: a 4xx other than 429,
// or a 429 or 5xx that persisted through every retry. The error go-openai
// made of it (*openai.APIError or *openai.RequestError) is in Err.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Message is the server's explanation.
	Message string
	// Type and Code are the error's type and code when the server gave them.
	Type string
	Code string
	// Err is the underlying go-openai error, if any.
	Err error
}

// Error describes e.
func (e *APIError) Error() string {
	s := fmt.Sprintf("llm: server answered %d %s", e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	switch e.Status {
	case http.StatusNotFound:
		s += " (check the base URL: OpenAI-compatible servers usually serve under /v1, e.g. http://localhost:8080/v1; and check the model name)"
	case http.StatusUnauthorized:
		s += " (check OPENAI_API_KEY)"
	}
	return s
}

// Unwrap returns the go-openai error.
func (e *APIError) Unwrap() error { return e.Err }

// Retryable reports whether the status is a transient fault (429, 500, 502,
// 503, 504), one that persisted through the client's retries.
func (e *APIError) Retryable() bool { return retryableStatus(e.Status) }

// OpenAI is a Client for any OpenAI-compatible chat completions server:
// OpenAI, Azure OpenAI, vLLM, Ollama, the llama.cpp server and others. It
// retries transient faults (see Config) and is safe for concurrent use.
type OpenAI struct {
	cfg    Config
	client *openai.Client
}

var _ Client = (*OpenAI)(nil)

// NewOpenAI returns a client configured by c. It reports ErrNotConfigured
// when c has neither an API key nor a base URL.
func NewOpenAI(c Config) (*OpenAI, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	key := c.APIKey
	if key == "" {
		key = placeholderKey
	}
	var oc openai.ClientConfig
	if c.AzureAPIVersion != "" {
		oc = openai.DefaultAzureConfig(key, c.BaseURL)
		oc.APIVersion = c.AzureAPIVersion
		oc.AzureModelMapperFunc = func(model string) string { return model }
	} else {
		oc = openai.DefaultConfig(key)
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
			base:       transport,
			timeout:    c.Timeout,
			maxRetries: c.MaxRetries,
			backoff:    c.Backoff,
		},
		CheckRedirect: base.CheckRedirect,
		Jar:           base.Jar,
		Timeout:       base.Timeout,
	}
	return &OpenAI{cfg: c, client: openai.NewClientWithConfig(oc)}, nil
}

// Model is the default model, used when a Request names none.
func (c *OpenAI) Model() string { return c.cfg.Model }

// Complete sends req to the server's /chat/completions and returns the
// first choice.
func (c *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	creq, err := c.chatRequest(req)
	if err != nil {
		return Response{}, err
	}
	cresp, err := c.client.CreateChatCompletion(ctx, creq)
	if err != nil {
		return Response{}, c.apiError(ctx, creq.Model, err)
	}
	return response(cresp)
}

// chatRequest maps req to go-openai's request.
func (c *OpenAI) chatRequest(req Request) (openai.ChatCompletionRequest, error) {
	var creq openai.ChatCompletionRequest
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
		cm := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, openai.ToolCall{
				ID:       tc.ID,
				Type:     openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
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
		creq.Tools = append(creq.Tools, openai.Tool{
			Type:     openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params},
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
		creq.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
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
		if errors.Is(openai.NewReasoningValidator().Validate(creq), openai.ErrReasoningModelMaxTokensDeprecated) {
			//lint:ignore SA1019 see above
			creq.MaxTokens, creq.MaxCompletionTokens = 0, req.MaxTokens
		}
	} else if req.MaxTokens < 0 {
		return creq, fmt.Errorf("llm: negative MaxTokens %d", req.MaxTokens)
	}
	return creq, nil
}

// response maps go-openai's answer back.
func response(cresp openai.ChatCompletionResponse) (Response, error) {
	resp := Response{
		Model: cresp.Model,
		Usage: Usage{PromptTokens: cresp.Usage.PromptTokens, CompletionTokens: cresp.Usage.CompletionTokens},
	}
	if len(cresp.Choices) == 0 {
		return resp, fmt.Errorf("%w: the answer has no choices", ErrEmptyResponse)
	}
	choice := cresp.Choices[0]
	resp.FinishReason = string(choice.FinishReason)
	m := choice.Message
	resp.Message = Message{Role: m.Role, Content: m.Content}
	if resp.Message.Role == "" {
		resp.Message.Role = RoleAssistant
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
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{ID: id, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if m.FunctionCall != nil && len(resp.Message.ToolCalls) == 0 {
		// The legacy function_call form some servers still answer with.
		resp.Message.ToolCalls = []ToolCall{{ID: "call_0", Name: m.FunctionCall.Name, Arguments: m.FunctionCall.Arguments}}
	}
	if resp.Message.Content == "" && len(resp.Message.ToolCalls) == 0 {
		switch {
		case m.Refusal != "":
			return resp, fmt.Errorf("%w: the model refused: %s", ErrEmptyResponse, m.Refusal)
		case resp.FinishReason != "":
			return resp, fmt.Errorf("%w: no content and no tool calls (finish reason %q)", ErrEmptyResponse, resp.FinishReason)
		default:
			return resp, fmt.Errorf("%w: no content and no tool calls", ErrEmptyResponse)
		}
	}
	return resp, nil
}

// apiError turns go-openai's error into an *APIError when it is an error
// status, and otherwise wraps it.
func (c *OpenAI) apiError(ctx context.Context, model string, err error) error {
	var oe *openai.APIError
	if errors.As(err, &oe) && oe.HTTPStatusCode > 0 {
		e := &APIError{Status: oe.HTTPStatusCode, Message: oe.Message, Type: oe.Type, Err: err}
		if oe.Code != nil {
			e.Code = fmt.Sprint(oe.Code)
		}
		return e
	}
	var re *openai.RequestError
	if errors.As(err, &re) && re.HTTPStatusCode > 0 {
		e := &APIError{Status: re.HTTPStatusCode, Err: err}
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
