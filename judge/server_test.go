package judge_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
)

// server is an OpenAI-compatible chat completions server on loopback that
// answers from a script, in turn; requests past its end get the last
// answer. Each answer costs 100 prompt and 20 completion tokens.
type server struct {
	srv     *httptest.Server
	answers []string

	mu     sync.Mutex
	bodies []map[string]any
}

func startServer(t *testing.T, answers ...string) *server {
	t.Helper()
	s := &server{answers: answers}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error": {"message": "no route"}}`, http.StatusNotFound)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "judge-model",
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": s.answers[min(n, len(s.answers)-1)]},
		}},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// client is an OpenAI client of s.
func (s *server) client(t *testing.T) llm.Client {
	t.Helper()
	c, err := openai.New(openai.Config{BaseURL: s.srv.URL + "/v1", Model: "judge-model", MaxRetries: -1})
	require.NoError(t, err)
	return c
}

// requests returns the bodies of the requests so far.
func (s *server) requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.bodies...)
}

// messages returns the contents of a request's messages, by role.
func messages(body map[string]any) (roles, contents []string) {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		content, _ := mm["content"].(string)
		roles, contents = append(roles, role), append(contents, content)
	}
	return roles, contents
}
