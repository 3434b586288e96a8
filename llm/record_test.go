package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoClient answers with the last user message, numbered by call.
func echoClient() Client {
	var mu sync.Mutex
	n := 0
	return ClientFunc(func(_ context.Context, req Request) (Response, error) {
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		return Response{
			Message:      Message{Role: RoleAssistant, Content: fmt.Sprintf("%d: %s", i, lastUserMessage(req))},
			Usage:        Usage{PromptTokens: 10, CompletionTokens: i},
			Model:        "echo",
			FinishReason: "stop",
		}, nil
	})
}

func recordPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "exchanges.jsonl")
}

func TestRecordReplayRoundTrip(t *testing.T) {
	path := recordPath(t)
	temp := 0.0
	toolReq := Request{
		Model: "m",
		Messages: []Message{
			{Role: RoleUser, Content: "weather?"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Oslo"}`}}},
			{Role: RoleTool, ToolCallID: "c1", Content: "snow"},
		},
		Tools:       []Tool{{Name: "weather", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Temperature: &temp,
	}
	schemaReq := Request{
		Messages: []Message{{Role: RoleUser, Content: "json <please> & thanks"}},
		Schema:   &Schema{Name: "s", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
	}
	reqs := []Request{userRequest("one"), toolReq, schemaReq}

	rec, err := Record(echoClient(), path)
	require.NoError(t, err)
	var want []Response
	for _, req := range reqs {
		resp, err := rec.Complete(context.Background(), req)
		require.NoError(t, err)
		want = append(want, resp)
	}
	require.NoError(t, rec.Close())

	rep, err := Replay(path)
	require.NoError(t, err)
	for i, req := range reqs {
		got, err := rep.Complete(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, want[i], got)
	}

	// The file is one exchange a line, keyed by RequestKey.
	lines := readLines(t, path)
	require.Len(t, lines, 3)
	for i, line := range lines {
		var ex struct {
			Key string `json:"key"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &ex))
		key, err := RequestKey(reqs[i])
		require.NoError(t, err)
		assert.Equal(t, key, ex.Key)
	}
	assert.Contains(t, lines[2], "json <please> & thanks", "recordings are not HTML-escaped")
}

func TestRecordAppends(t *testing.T) {
	path := recordPath(t)
	for range 2 {
		rec, err := Record(echoClient(), path)
		require.NoError(t, err)
		_, err = rec.Complete(context.Background(), userRequest("again"))
		require.NoError(t, err)
		require.NoError(t, rec.Close())
	}
	assert.Len(t, readLines(t, path), 2)
}

func TestRecordConcurrent(t *testing.T) {
	path := recordPath(t)
	rec, err := Record(echoClient(), path)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			_, err := rec.Complete(context.Background(), userRequest(fmt.Sprintf("q%d", i)))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	require.NoError(t, rec.Close())

	assert.Len(t, readLines(t, path), 40)
	rep, err := Replay(path)
	require.NoError(t, err)
	for i := range 40 {
		resp, err := rep.Complete(context.Background(), userRequest(fmt.Sprintf("q%d", i)))
		require.NoError(t, err)
		assert.True(t, strings.HasSuffix(resp.Message.Content, fmt.Sprintf(": q%d", i)), resp.Message.Content)
	}
}

func TestRecordClosed(t *testing.T) {
	rec, err := Record(echoClient(), recordPath(t))
	require.NoError(t, err)
	require.NoError(t, rec.Close())
	require.NoError(t, rec.Close(), "Close twice is fine")
	_, err = rec.Complete(context.Background(), userRequest("late"))
	assert.ErrorIs(t, err, os.ErrClosed)
}

func TestRecordErrors(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		resp     Response
		recorded bool
		check    func(t *testing.T, resp Response, err error)
	}{
		{
			name:     "a 400 is recorded and replayed as *APIError",
			err:      &APIError{Status: 400, Message: "too long", Type: "invalid_request_error", Code: "context_length_exceeded"},
			recorded: true,
			check: func(t *testing.T, _ Response, err error) {
				var apiErr *APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, APIError{Status: 400, Message: "too long", Type: "invalid_request_error", Code: "context_length_exceeded"}, *apiErr)
			},
		},
		{
			name:     "an empty answer is recorded with its usage",
			err:      fmt.Errorf("%w: no content and no tool calls (finish reason %q)", ErrEmptyResponse, "length"),
			resp:     Response{Usage: Usage{PromptTokens: 3, CompletionTokens: 50}, FinishReason: "length"},
			recorded: true,
			check: func(t *testing.T, resp Response, err error) {
				require.ErrorIs(t, err, ErrEmptyResponse)
				assert.Equal(t, `llm: empty response: no content and no tool calls (finish reason "length")`, err.Error())
				assert.Equal(t, Usage{PromptTokens: 3, CompletionTokens: 50}, resp.Usage)
			},
		},
		{name: "a 503 is not recorded", err: &APIError{Status: 503, Message: "down"}},
		// A client's timeout, such as the openai package's, matches
		// context.DeadlineExceeded.
		{name: "a timeout is not recorded", err: fmt.Errorf("%w: no complete answer within 1s: %w", errors.New("llm: timeout"), context.DeadlineExceeded)},
		{name: "a cancellation is not recorded", err: context.Canceled},
		{name: "a budget refusal is not recorded", err: fmt.Errorf("%w: 1 of 1", ErrBudgetExceeded)},
		{name: "other errors are not recorded", err: errors.New("boom")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := recordPath(t)
			rec, err := Record(ClientFunc(func(context.Context, Request) (Response, error) { return tt.resp, tt.err }), path)
			require.NoError(t, err)
			_, err = rec.Complete(context.Background(), userRequest("hi"))
			require.ErrorIs(t, err, tt.err, "the error is passed through")
			require.NoError(t, rec.Close())

			rep, err := Replay(path)
			require.NoError(t, err)
			resp, err := rep.Complete(context.Background(), userRequest("hi"))
			if !tt.recorded {
				assert.ErrorIs(t, err, ErrNotRecorded)
				return
			}
			tt.check(t, resp, err)
		})
	}
}

func TestReplayRepeatedRequests(t *testing.T) {
	path := recordPath(t)
	rec, err := Record(echoClient(), path)
	require.NoError(t, err)
	for range 3 {
		_, err := rec.Complete(context.Background(), userRequest("same"))
		require.NoError(t, err)
	}
	require.NoError(t, rec.Close())

	rep, err := Replay(path)
	require.NoError(t, err)
	var got []string
	for range 5 {
		resp, err := rep.Complete(context.Background(), userRequest("same"))
		require.NoError(t, err)
		got = append(got, resp.Message.Content)
	}
	assert.Equal(t, []string{"1: same", "2: same", "3: same", "3: same", "3: same"}, got)
}

func TestReplayNotRecorded(t *testing.T) {
	path := recordPath(t)
	rec, err := Record(echoClient(), path)
	require.NoError(t, err)
	_, err = rec.Complete(context.Background(), userRequest("known"))
	require.NoError(t, err)
	require.NoError(t, rec.Close())
	rep, err := Replay(path)
	require.NoError(t, err)

	long := strings.Repeat("é", 250)
	tests := []struct {
		name     string
		req      Request
		contains []string
	}{
		{
			name:     "another message",
			req:      Request{Model: "gpt-4o", Messages: []Message{{Role: RoleUser, Content: "first"}, {Role: RoleAssistant, Content: "a"}, {Role: RoleUser, Content: "unknown question"}}},
			contains: []string{`model gpt-4o`, `last user message "unknown question"`},
		},
		{
			name:     "long message is cut at 200 characters",
			req:      userRequest(long),
			contains: []string{`model (client default)`, `"` + strings.Repeat("é", 200) + `…"`},
		},
		{
			name:     "same message, other temperature",
			req:      func() Request { r := userRequest("known"); v := 0.5; r.Temperature = &v; return r }(),
			contains: []string{`last user message "known"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rep.Complete(context.Background(), tt.req)
			require.ErrorIs(t, err, ErrNotRecorded)
			key, kerr := RequestKey(tt.req)
			require.NoError(t, kerr)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "llm: request not recorded in "+path+": key "+key), msg)
			for _, c := range tt.contains {
				assert.Contains(t, msg, c)
			}
			assert.NotContains(t, msg, strings.Repeat("é", 201))
		})
	}
}

func TestReplayCorruptFile(t *testing.T) {
	good := `{"key":"x","request":{"messages":[{"role":"user","content":"hi"}]},"response":{"message":{"role":"assistant","content":"hello"},"usage":{"prompt_tokens":1,"completion_tokens":1}}}`
	tests := []struct {
		name    string
		content string
		wantMsg string
	}{
		{name: "not JSON", content: good + "\n{not json\n", wantMsg: ":2: not a recorded exchange"},
		{name: "truncated last line", content: good + "\n" + good[:40], wantMsg: ":2: not a recorded exchange"},
		{name: "unknown field", content: "\n" + `{"key":"x","request":{"messages":[]},"reponse":{}}`, wantMsg: `:2: not a recorded exchange: json: unknown field "reponse"`},
		{name: "no request", content: `{"key":"x","response":{"message":{"role":"assistant","content":"a"}}}`, wantMsg: ":1: the exchange has no request"},
		{name: "no answer", content: `{"key":"x","request":{"messages":[]}}`, wantMsg: ":1: the exchange has neither a response nor an error"},
		{name: "unknown error kind", content: `{"key":"x","request":{"messages":[]},"error":{"kind":"weird","message":"m"}}`, wantMsg: `:1: unknown error kind "weird"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := recordPath(t)
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o644))
			rep, err := Replay(path)
			require.Error(t, err)
			assert.Nil(t, rep)
			assert.Contains(t, err.Error(), "llm: replay "+path+tt.wantMsg)
		})
	}
}

func TestReplayFile(t *testing.T) {
	t.Run("missing file", func(t *testing.T) {
		_, err := Replay(filepath.Join(t.TempDir(), "none.jsonl"))
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("blank lines and a hand-edited key", func(t *testing.T) {
		path := recordPath(t)
		content := "\n" + `{"key":"stale","request":{"messages":[{"role":"user","content":"hi"}]},"response":{"message":{"role":"assistant","content":"hello"},"usage":{"prompt_tokens":1,"completion_tokens":2}}}` + "\n\n"
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		rep, err := Replay(path)
		require.NoError(t, err)
		resp, err := rep.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
		require.NoError(t, err)
		assert.Equal(t, "hello", resp.Message.Content)
		assert.Equal(t, Usage{PromptTokens: 1, CompletionTokens: 2}, resp.Usage)
	})
	t.Run("cancelled context", func(t *testing.T) {
		path := recordPath(t)
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		rep, err := Replay(path)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = rep.Complete(ctx, userRequest("x"))
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestRequestKey(t *testing.T) {
	base := func(params string) Request {
		return Request{
			Messages: []Message{{Role: RoleUser, Content: "hi"}},
			Tools:    []Tool{{Name: "t", Parameters: json.RawMessage(params)}},
		}
	}
	k1, err := RequestKey(base(`{"type":"object","properties":{"a":{"type":"string"}}}`))
	require.NoError(t, err)
	k2, err := RequestKey(base("{\n  \"properties\": {\"a\": {\"type\": \"string\"}},\n  \"type\": \"object\"\n}"))
	require.NoError(t, err)
	assert.Equal(t, k1, k2, "key order and whitespace inside schemas do not matter")
	assert.Len(t, k1, 64)

	canon, err := canonicalJSON(base(`{"type":"object","properties":{"a":{"type":"string"}}}`))
	require.NoError(t, err)
	assert.Equal(t, `{"messages":[{"content":"hi","role":"user"}],"tools":[{"name":"t","parameters":{"properties":{"a":{"type":"string"}},"type":"object"}}]}`, string(canon))

	k3, err := RequestKey(base(`{"type":"object"}`))
	require.NoError(t, err)
	assert.NotEqual(t, k1, k3)

	_, err = RequestKey(base(`{`))
	assert.Error(t, err)
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	return lines
}

func userRequest(content string) Request {
	return Request{Messages: []Message{{Role: RoleSystem, Content: "Be brief."}, {Role: RoleUser, Content: content}}}
}

func TestRecordedUsage(t *testing.T) {
	var lines [][]byte
	c := RecordFunc(echoClient(), func(_ context.Context, _ string, line []byte) error {
		lines = append(lines, line)
		return nil
	})
	for _, q := range []string{"one", "two", "three"} {
		_, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: q}}})
		require.NoError(t, err)
	}
	failing := RecordFunc(ClientFunc(func(context.Context, Request) (Response, error) {
		return Response{}, &APIError{Status: 400, Message: "bad request"}
	}), func(_ context.Context, _ string, line []byte) error {
		lines = append(lines, line)
		return nil
	})
	_, err := failing.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "four"}}})
	require.Error(t, err)

	u, calls, err := RecordedUsage("mem", append(lines, []byte("  ")))
	require.NoError(t, err)
	assert.Equal(t, 4, calls, "failed calls count")
	assert.Equal(t, Usage{PromptTokens: 30, CompletionTokens: 1 + 2 + 3}, u)

	_, _, err = RecordedUsage("mem", [][]byte{lines[0], []byte(`{"key": "k"}`)})
	assert.ErrorContains(t, err, "llm: recording mem:2: the exchange has no request")
}
