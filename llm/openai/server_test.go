package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeServer is an OpenAI-compatible server on loopback that answers
// POST /v1/chat/completions from a script: the n-th request gets the n-th
// handler, and requests past the end get the last one.
type fakeServer struct {
	t      *testing.T
	srv    *httptest.Server
	script []http.HandlerFunc

	mu       sync.Mutex
	requests []seenRequest
}

// seenRequest is what the server received.
type seenRequest struct {
	Path   string
	Query  string
	Header http.Header
	Body   map[string]any
}

func newFakeServer(t *testing.T, script ...http.HandlerFunc) *fakeServer {
	t.Helper()
	require.NotEmpty(t, script)
	s := &fakeServer{t: t, script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, seenRequest{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		http.Error(w, "want POST", http.StatusMethodNotAllowed)
		return
	}
	s.script[min(n, len(s.script)-1)](w, r)
}

// hits is the number of requests received.
func (s *fakeServer) hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// request is the n-th request received.
func (s *fakeServer) request(n int) seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Greater(s.t, len(s.requests), n, "the server got %d requests", len(s.requests))
	return s.requests[n]
}

// config is a Config for the server with fast backoff.
func (s *fakeServer) config() Config {
	return Config{
		APIKey:  "test-key",
		BaseURL: s.srv.URL + "/v1",
		Model:   "test-model",
		Timeout: 5 * time.Second,
		Backoff: Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond},
	}
}

// client is an OpenAI client of the server, configured by config and then
// edit.
func (s *fakeServer) client(edit ...func(*Config)) *Client {
	s.t.Helper()
	c := s.config()
	for _, e := range edit {
		e(&c)
	}
	cl, err := New(c)
	require.NoError(s.t, err)
	return cl
}

// onPath makes a handler answer 404 unless the path is the chat
// completions endpoint.
func onPath(path string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			writeJSON(w, http.StatusNotFound, `{"error":{"message":"no route `+r.URL.Path+`","type":"not_found"}}`)
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// completionJSON is a chat completion whose first choice has message.
func completionJSON(message, finish string, prompt, completion int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"served-model",
		"choices":[{"index":0,"message":%s,"finish_reason":%q}],
		"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		message, finish, prompt, completion, prompt+completion)
}

// answer replies to /v1/chat/completions with an assistant message with
// content.
func answer(content string) http.HandlerFunc {
	return onPath("/v1/chat/completions", answerAnyPath(content))
}

// answerAnyPath replies with an assistant message with content.
func answerAnyPath(content string) http.HandlerFunc {
	msg, _ := json.Marshal(map[string]string{"role": "assistant", "content": content})
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, completionJSON(string(msg), "stop", 12, 3))
	}
}

// reply replies with status and body.
func reply(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		writeJSON(w, status, body)
	}
}

// hang waits until the client gives up on the request.
func hang(w http.ResponseWriter, r *http.Request) {
	<-r.Context().Done()
}

// reset closes the connection abruptly, so the client sees a reset.
func reset(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}
