package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/llm"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func userRequest(content string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "Be brief."}, {Role: llm.RoleUser, Content: content}}}
}

func TestCompletePlainAnswer(t *testing.T) {
	srv := newFakeServer(t, answer("Paris."))
	temp := 0.2
	req := userRequest("Capital of France?")
	req.Temperature = &temp
	req.MaxTokens = 50

	resp, err := srv.client().Complete(context.Background(), req)
	require.NoError(t, err)

	assert.Equal(t, llm.Response{
		Message:      llm.Message{Role: llm.RoleAssistant, Content: "Paris."},
		Usage:        llm.Usage{PromptTokens: 12, CompletionTokens: 3},
		Model:        "served-model",
		FinishReason: "stop",
	}, resp)

	got := srv.request(0)
	assert.Equal(t, "/v1/chat/completions", got.Path)
	assert.Equal(t, "Bearer test-key", got.Header.Get("Authorization"))
	assert.Equal(t, "test-model", got.Body["model"])
	assert.InDelta(t, 0.2, got.Body["temperature"], 1e-6)
	assert.EqualValues(t, 50, got.Body["max_tokens"])
	assert.Equal(t, []any{
		map[string]any{"role": "system", "content": "Be brief."},
		map[string]any{"role": "user", "content": "Capital of France?"},
	}, got.Body["messages"])
	assert.NotContains(t, got.Body, "response_format")
	assert.NotContains(t, got.Body, "tools")
}

func TestCompleteRequestMapping(t *testing.T) {
	zero := 0.0
	tests := []struct {
		name  string
		edit  func(*llm.Request)
		check func(t *testing.T, body map[string]any)
	}{
		{
			name: "request model overrides the default",
			edit: func(r *llm.Request) { r.Model = "other-model" },
			check: func(t *testing.T, body map[string]any) {
				assert.Equal(t, "other-model", body["model"])
			},
		},
		{
			name: "zero temperature is sent",
			edit: func(r *llm.Request) { r.Temperature = &zero },
			check: func(t *testing.T, body map[string]any) {
				require.Contains(t, body, "temperature")
				assert.InDelta(t, 0, body["temperature"], 1e-30)
			},
		},
		{
			name: "no temperature, no max tokens",
			edit: func(*llm.Request) {},
			check: func(t *testing.T, body map[string]any) {
				assert.NotContains(t, body, "temperature")
				assert.NotContains(t, body, "max_tokens")
				assert.NotContains(t, body, "max_completion_tokens")
			},
		},
		{
			name: "reasoning models get max_completion_tokens",
			edit: func(r *llm.Request) { r.Model = "o3-mini"; r.MaxTokens = 100 },
			check: func(t *testing.T, body map[string]any) {
				assert.NotContains(t, body, "max_tokens")
				assert.EqualValues(t, 100, body["max_completion_tokens"])
			},
		},
		{
			name: "a tool without parameters gets an empty object schema",
			edit: func(r *llm.Request) { r.Tools = []llm.Tool{{Name: "now"}} },
			check: func(t *testing.T, body map[string]any) {
				assert.Equal(t, []any{map[string]any{"type": "function", "function": map[string]any{
					"name": "now", "parameters": map[string]any{"type": "object", "properties": map[string]any{}},
				}}}, body["tools"])
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, answer("ok"))
			req := userRequest("hi")
			tt.edit(&req)
			_, err := srv.client().Complete(context.Background(), req)
			require.NoError(t, err)
			tt.check(t, srv.request(0).Body)
		})
	}
}

func TestCompleteRequestErrors(t *testing.T) {
	tests := []struct {
		name    string
		model   string
		req     llm.Request
		wantIs  error
		wantMsg string
	}{
		{name: "no model anywhere", req: userRequest("hi"), wantIs: ErrNoModel, wantMsg: "DAGENT_MODEL"},
		{name: "no messages", model: "m", req: llm.Request{}, wantMsg: "no messages"},
		{name: "invalid tool parameters", model: "m", req: llm.Request{Messages: userRequest("x").Messages, Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`{`)}}}, wantMsg: `tool "t": parameters are not valid JSON`},
		{name: "schema without schema", model: "m", req: llm.Request{Messages: userRequest("x").Messages, Schema: &llm.Schema{Name: "s"}}, wantMsg: `schema "s"`},
		{name: "negative max tokens", model: "m", req: llm.Request{Messages: userRequest("x").Messages, MaxTokens: -1}, wantMsg: "negative MaxTokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, answer("ok"))
			_, err := srv.client(func(c *Config) { c.Model = tt.model }).Complete(context.Background(), tt.req)
			require.Error(t, err)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.Zero(t, srv.hits(), "a bad request must not reach the server")
		})
	}
}

func TestCompleteToolCallRoundTrip(t *testing.T) {
	toolCall := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function",
		"function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`
	srv := newFakeServer(t,
		onPath("/v1/chat/completions", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, completionJSON(toolCall, "tool_calls", 40, 9))
		}),
		answer("It is sunny in Paris."),
	)
	cl := srv.client()
	params := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	req := llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Weather in Paris?"}},
		Tools:    []llm.Tool{{Name: "get_weather", Description: "Current weather of a city", Parameters: params}},
	}

	first, err := cl.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "tool_calls", first.FinishReason)
	assert.Equal(t, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_abc", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}, first.Message)

	req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.RoleTool, ToolCallID: "call_abc", Content: `{"sky":"clear"}`})
	second, err := cl.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "It is sunny in Paris.", second.Message.Content)

	body := srv.request(0).Body
	assert.Equal(t, []any{map[string]any{"type": "function", "function": map[string]any{
		"name": "get_weather", "description": "Current weather of a city",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}},
	}}}, body["tools"])

	msgs := srv.request(1).Body["messages"].([]any)
	require.Len(t, msgs, 3)
	assert.Equal(t, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
		"id": "call_abc", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`},
	}}}, msgs[1])
	assert.Equal(t, map[string]any{"role": "tool", "tool_call_id": "call_abc", "content": `{"sky":"clear"}`}, msgs[2])
}

func TestCompleteToolCallWithoutID(t *testing.T) {
	srv := newFakeServer(t, onPath("/v1/chat/completions", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, completionJSON(`{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"a","arguments":"{}"}},{"type":"function","function":{"name":"b","arguments":"{}"}}]}`, "tool_calls", 1, 1))
	}))
	resp, err := srv.client().Complete(context.Background(), userRequest("go"))
	require.NoError(t, err)
	assert.Equal(t, []llm.ToolCall{{ID: "call_0", Name: "a", Arguments: "{}"}, {ID: "call_1", Name: "b", Arguments: "{}"}}, resp.Message.ToolCalls)
}

func TestCompleteStructuredOutput(t *testing.T) {
	srv := newFakeServer(t, answer(`{"city":"Paris"}`))
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`
	req := userRequest("Capital of France as JSON")
	req.Schema = &llm.Schema{Name: "answer", Schema: json.RawMessage(schema), Strict: true}

	resp, err := srv.client().Complete(context.Background(), req)
	require.NoError(t, err)
	assert.JSONEq(t, `{"city":"Paris"}`, resp.Message.Content)

	var wantSchema any
	require.NoError(t, json.Unmarshal([]byte(schema), &wantSchema))
	assert.Equal(t, map[string]any{
		"type": "json_schema",
		"json_schema": map[string]any{
			"name":   "answer",
			"schema": wantSchema,
			"strict": true,
		},
	}, srv.request(0).Body["response_format"])
}

func TestCompleteEmptyResponse(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantMsg   string
		wantUsage llm.Usage
	}{
		{
			name:      "no choices",
			body:      `{"id":"x","object":"chat.completion","model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":0}}`,
			wantMsg:   "no choices",
			wantUsage: llm.Usage{PromptTokens: 5},
		},
		{
			name:      "empty content",
			body:      completionJSON(`{"role":"assistant","content":""}`, "length", 7, 100),
			wantMsg:   `finish reason "length"`,
			wantUsage: llm.Usage{PromptTokens: 7, CompletionTokens: 100},
		},
		{
			name:      "refusal",
			body:      completionJSON(`{"role":"assistant","content":null,"refusal":"I cannot help with that."}`, "stop", 7, 6),
			wantMsg:   "refused: I cannot help with that.",
			wantUsage: llm.Usage{PromptTokens: 7, CompletionTokens: 6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, reply(http.StatusOK, tt.body))
			resp, err := srv.client().Complete(context.Background(), userRequest("hi"))
			require.ErrorIs(t, err, llm.ErrEmptyResponse)
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.Equal(t, tt.wantUsage, resp.Usage, "the usage of an empty answer is still reported")
			assert.Equal(t, 1, srv.hits(), "an empty answer is not retried")
		})
	}
}

func TestCompleteErrorStatuses(t *testing.T) {
	tests := []struct {
		name       string
		script     []http.HandlerFunc
		maxRetries int
		wantHits   int
		wantStatus int // 0: success
		wantMsg    string
	}{
		{
			name:     "503 then success",
			script:   []http.HandlerFunc{reply(503, `{"error":{"message":"overloaded"}}`), answer("ok")},
			wantHits: 2,
		},
		{
			name: "500, 502, 504 then success",
			script: []http.HandlerFunc{
				reply(500, `{"error":{"message":"a"}}`), reply(502, `bad gateway`), reply(504, `gateway timeout`), answer("ok"),
			},
			wantHits: 4,
		},
		{
			name:       "400 is not retried",
			script:     []http.HandlerFunc{reply(400, `{"error":{"message":"messages: too long","type":"invalid_request_error","code":"context_length_exceeded"}}`), answer("ok")},
			wantHits:   1,
			wantStatus: 400,
			wantMsg:    "messages: too long",
		},
		{
			name:       "401 is not retried",
			script:     []http.HandlerFunc{reply(401, `{"error":{"message":"Incorrect API key"}}`)},
			wantHits:   1,
			wantStatus: 401,
			wantMsg:    "Incorrect API key",
		},
		{
			name:       "vLLM error body",
			script:     []http.HandlerFunc{reply(400, `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}`)},
			wantHits:   1,
			wantStatus: 400,
			wantMsg:    "max_tokens is too large",
		},
		{
			name:       "error as a string",
			script:     []http.HandlerFunc{reply(400, `{"error":"model 'x' not found"}`)},
			wantHits:   1,
			wantStatus: 400,
			wantMsg:    "model 'x' not found",
		},
		{
			name:       "FastAPI detail",
			script:     []http.HandlerFunc{reply(422, `{"detail":"field required"}`)},
			wantHits:   1,
			wantStatus: 422,
			wantMsg:    "field required",
		},
		{
			name:       "plain text error body",
			script:     []http.HandlerFunc{reply(422, `unprocessable`)},
			wantHits:   1,
			wantStatus: 422,
			wantMsg:    "unprocessable",
		},
		{
			name:       "429 persists through the retries",
			script:     []http.HandlerFunc{reply(429, `{"error":{"message":"rate limited"}}`)},
			maxRetries: 2,
			wantHits:   3,
			wantStatus: 429,
			wantMsg:    "rate limited",
		},
		{
			name:       "no retries",
			script:     []http.HandlerFunc{reply(503, `{"error":{"message":"down"}}`), answer("ok")},
			maxRetries: -1,
			wantHits:   1,
			wantStatus: 503,
			wantMsg:    "down",
		},
		{
			name:     "connection reset then success",
			script:   []http.HandlerFunc{reset, answer("ok")},
			wantHits: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.script...)
			cl := srv.client(func(c *Config) { c.MaxRetries = tt.maxRetries })
			resp, err := cl.Complete(context.Background(), userRequest("hi"))
			assert.Equal(t, tt.wantHits, srv.hits())
			if tt.wantStatus == 0 {
				require.NoError(t, err)
				assert.Equal(t, "ok", resp.Message.Content)
				return
			}
			var apiErr *llm.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.wantStatus, apiErr.Status)
			assert.Equal(t, tt.wantMsg, apiErr.Message)
			assert.Equal(t, retryableStatus(tt.wantStatus), apiErr.Retryable())
			assert.Contains(t, err.Error(), tt.wantMsg)
			// go-openai's own error types are still reachable.
			var oe *goopenai.APIError
			var re *goopenai.RequestError
			assert.True(t, errors.As(err, &oe) || errors.As(err, &re), "go-openai's error is wrapped: %#v", apiErr.Err)
		})
	}
}

func TestCompleteAPIErrorFields(t *testing.T) {
	srv := newFakeServer(t, reply(400, `{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`))
	_, err := srv.client().Complete(context.Background(), userRequest("hi"))
	var apiErr *llm.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "invalid_request_error", apiErr.Type)
	assert.Equal(t, "context_length_exceeded", apiErr.Code)
	assert.Equal(t, "llm: server answered 400 Bad Request: too long", err.Error())
}

func TestCompleteNotFoundHint(t *testing.T) {
	srv := newFakeServer(t, answer("ok"))
	cl := srv.client(func(c *Config) { c.BaseURL = srv.srv.URL }) // missing /v1
	_, err := cl.Complete(context.Background(), userRequest("hi"))
	var apiErr *llm.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 404, apiErr.Status)
	assert.Contains(t, err.Error(), "/v1")
}

func TestCompleteRetryAfter(t *testing.T) {
	srv := newFakeServer(t,
		reply(429, `{"error":{"message":"slow down"}}`, "Retry-After", "1"),
		answer("ok"),
	)
	// The backoff alone would retry within milliseconds.
	start := time.Now()
	resp, err := srv.client().Complete(context.Background(), userRequest("hi"))
	elapsed := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, "ok", resp.Message.Content)
	assert.Equal(t, 2, srv.hits())
	assert.GreaterOrEqual(t, elapsed, time.Second, "Retry-After: 1 was not honoured")
	assert.Less(t, elapsed, 5*time.Second)
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{name: "none", header: nil},
		{name: "seconds", header: map[string]string{"Retry-After": "7"}, want: 7 * time.Second, ok: true},
		{name: "fractional seconds", header: map[string]string{"Retry-After": "0.5"}, want: 500 * time.Millisecond, ok: true},
		{name: "http date", header: map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, want: 30 * time.Second, ok: true},
		{name: "http date in the past", header: map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, want: 0, ok: true},
		{name: "milliseconds win", header: map[string]string{"Retry-After": "7", "Retry-After-Ms": "250"}, want: 250 * time.Millisecond, ok: true},
		{name: "garbage", header: map[string]string{"Retry-After": "soon"}},
		{name: "negative", header: map[string]string{"Retry-After": "-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestBackoffWait(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second, MaxRetryAfter: 2 * time.Second}
	tr := &retryTransport{delay: b.policy(), maxRetryAfter: b.MaxRetryAfter}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 40: time.Second} {
		for range 20 {
			got := tr.wait(n, nil)
			assert.GreaterOrEqual(t, got, want/2, "retry %d", n)
			assert.LessOrEqual(t, got, want, "retry %d", n)
		}
	}
	capped := &http.Response{Header: http.Header{"Retry-After": {"3600"}}}
	assert.Equal(t, 2*time.Second, tr.wait(1, capped), "Retry-After is capped at MaxRetryAfter")
}

func TestCompleteAttemptTimeout(t *testing.T) {
	t.Run("a hanging attempt is retried", func(t *testing.T) {
		srv := newFakeServer(t, hang, answer("ok"))
		cl := srv.client(func(c *Config) { c.Timeout = 200 * time.Millisecond })
		start := time.Now()
		resp, err := cl.Complete(context.Background(), userRequest("hi"))
		require.NoError(t, err)
		assert.Equal(t, "ok", resp.Message.Content)
		assert.Equal(t, 2, srv.hits())
		assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	})
	t.Run("every attempt hangs", func(t *testing.T) {
		srv := newFakeServer(t, hang)
		cl := srv.client(func(c *Config) { c.Timeout = 100 * time.Millisecond; c.MaxRetries = 1 })
		_, err := cl.Complete(context.Background(), userRequest("hi"))
		require.ErrorIs(t, err, ErrTimeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "giving up after 2 attempts")
		assert.Equal(t, 2, srv.hits())
	})
}

func TestCompleteContextStopsRetries(t *testing.T) {
	t.Run("cancel while waiting to retry", func(t *testing.T) {
		srv := newFakeServer(t, reply(503, `{"error":{"message":"down"}}`, "Retry-After", "30"))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := srv.client().Complete(ctx, userRequest("hi"))
		require.ErrorIs(t, err, context.Canceled)
		assert.Less(t, time.Since(start), 2*time.Second)
		assert.Equal(t, 1, srv.hits())
	})
	t.Run("cancel during an attempt", func(t *testing.T) {
		srv := newFakeServer(t, hang)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := srv.client().Complete(ctx, userRequest("hi"))
		require.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, ErrTimeout)
		assert.Less(t, time.Since(start), 2*time.Second)
		assert.Equal(t, 1, srv.hits())
	})
	t.Run("a deadline before the retry returns the last answer now", func(t *testing.T) {
		srv := newFakeServer(t, reply(503, `{"error":{"message":"down"}}`, "Retry-After", "30"))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		_, err := srv.client().Complete(ctx, userRequest("hi"))
		var apiErr *llm.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 503, apiErr.Status)
		assert.Less(t, time.Since(start), time.Second)
	})
	t.Run("already cancelled", func(t *testing.T) {
		srv := newFakeServer(t, answer("ok"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := srv.client().Complete(ctx, userRequest("hi"))
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, srv.hits())
	})
}

func TestCompleteConnectionRefused(t *testing.T) {
	srv := newFakeServer(t, answer("ok"))
	url := srv.srv.URL
	srv.srv.Close()
	cl, err := New(Config{BaseURL: url + "/v1", Model: "m", MaxRetries: 2, Backoff: Backoff{Initial: time.Millisecond, Max: time.Millisecond}})
	require.NoError(t, err)
	_, err = cl.Complete(context.Background(), userRequest("hi"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "giving up after 3 attempts")
	assert.Contains(t, err.Error(), "connection refused")
}

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{err: fmt.Errorf("x: %w", ErrTimeout), want: true},
		{err: &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, want: true},
		{err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, want: true},
		{err: fmt.Errorf("write: %w", syscall.EPIPE), want: true},
		{err: io.EOF, want: true},
		{err: fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), want: true},
		{err: &net.DNSError{Err: "timeout", IsTimeout: true}, want: true},
		{err: &net.DNSError{Err: "no such host", IsNotFound: true}, want: false},
		{err: &net.OpError{Op: "dial", Err: timeoutError{}}, want: true},
		{err: errors.New("http: server closed idle connection"), want: true},
		{err: errors.New("tls: failed to verify certificate"), want: false},
		{err: context.Canceled, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			assert.Equal(t, tt.want, transient(tt.err))
		})
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestNewConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantIs  error
		wantMsg string
	}{
		{name: "nothing", cfg: Config{}, wantIs: ErrNotConfigured, wantMsg: "set OPENAI_API_KEY"},
		{name: "model only", cfg: Config{Model: "gpt-4o"}, wantIs: ErrNotConfigured, wantMsg: "OPENAI_BASE_URL"},
		{name: "bad base URL", cfg: Config{BaseURL: "localhost:8080"}, wantMsg: `base URL "localhost:8080"`},
		{name: "negative timeout", cfg: Config{APIKey: "k", Timeout: -time.Second}, wantMsg: "negative timeout"},
		{name: "azure without base URL", cfg: Config{APIKey: "k", AzureAPIVersion: "2024-10-21"}, wantMsg: "Azure"},
		{name: "key only", cfg: Config{APIKey: "k"}},
		{name: "base URL only", cfg: Config{BaseURL: "http://localhost:8080/v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl, err := New(tt.cfg)
			if tt.wantMsg == "" {
				require.NoError(t, err)
				assert.NotNil(t, cl)
				return
			}
			require.Error(t, err)
			assert.Nil(t, cl)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

func TestBaseURLAloneSendsPlaceholderKey(t *testing.T) {
	srv := newFakeServer(t, answer("ok"))
	cl := srv.client(func(c *Config) { c.APIKey = "" })
	_, err := cl.Complete(context.Background(), userRequest("hi"))
	require.NoError(t, err)
	assert.Equal(t, "Bearer "+placeholderKey, srv.request(0).Header.Get("Authorization"))
	assert.Equal(t, "test-model", cl.Model())
}

func TestAzure(t *testing.T) {
	srv := newFakeServer(t, onPath("/openai/deployments/my-gpt/chat/completions", answerAnyPath("ok")))
	cl := srv.client(func(c *Config) {
		c.BaseURL = srv.srv.URL
		c.Model = "my-gpt"
		c.AzureAPIVersion = "2024-10-21"
	})
	_, err := cl.Complete(context.Background(), userRequest("hi"))
	require.NoError(t, err)
	got := srv.request(0)
	assert.Equal(t, "api-version=2024-10-21", got.Query)
	assert.Equal(t, "test-key", got.Header.Get("api-key"))
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv(EnvAPIKey, " sk-test ")
	t.Setenv(EnvBaseURL, "http://localhost:11434/v1")
	t.Setenv(EnvModel, "llama3.2")
	t.Setenv(EnvAPIVersion, "")
	assert.Equal(t, Config{APIKey: "sk-test", BaseURL: "http://localhost:11434/v1", Model: "llama3.2"}, ConfigFromEnv())

	t.Setenv(EnvAPIKey, "")
	t.Setenv(EnvBaseURL, "")
	_, err := New(ConfigFromEnv())
	assert.ErrorIs(t, err, ErrNotConfigured)
}

func TestConfigStringHidesKey(t *testing.T) {
	c := Config{APIKey: "sk-secret", Model: "m"}
	for _, s := range []string{c.String(), c.GoString()} {
		assert.NotContains(t, s, "sk-secret")
		assert.Contains(t, s, "APIKey: set")
	}
}

func TestCompleteConcurrent(t *testing.T) {
	srv := newFakeServer(t, answer("ok"))
	cl := srv.client()
	errs := make(chan error, 20)
	for range 20 {
		go func() {
			_, err := cl.Complete(context.Background(), userRequest("hi"))
			errs <- err
		}()
	}
	for range 20 {
		require.NoError(t, <-errs)
	}
	assert.Equal(t, 20, srv.hits())
}
