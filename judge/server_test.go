package judge_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/internal/llmtest"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
)

// server is a [llmtest.Server] that answers from a script, in turn;
// requests past its end get the last answer.
type server struct {
	*llmtest.Server
}

func startServer(t *testing.T, answers ...string) *server {
	t.Helper()
	var mu sync.Mutex
	n := 0
	return &server{llmtest.Start(t, "judge-model", func(map[string]any) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return answers[min(n, len(answers))-1], nil
	})}
}

// client is an OpenAI client of s.
func (s *server) client(t *testing.T) llm.Client {
	t.Helper()
	c, err := openai.New(openai.Config{BaseURL: s.BaseURL(), Model: "judge-model", MaxRetries: -1})
	require.NoError(t, err)
	return c
}

// requests returns the bodies of the requests so far.
func (s *server) requests() []map[string]any { return s.Bodies() }

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
