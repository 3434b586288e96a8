package metaplanner_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/registry"
	"github.com/stretchr/testify/require"
)

// reply is one scripted answer of the fake model.
type reply struct {
	content string
	usage   llm.Usage
	finish  string
	err     error
}

// script is a fake llm.Client: it answers with its replies in order and
// records the requests.
type script struct {
	mu      sync.Mutex
	replies []reply
	reqs    []llm.Request
}

var errExhausted = errors.New("script exhausted")

func newScript(replies ...reply) *script { return &script{replies: replies} }

func (s *script) client() llm.Client {
	return llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.reqs = append(s.reqs, req)
		if err := ctx.Err(); err != nil {
			return llm.Response{}, err
		}
		if len(s.replies) == 0 {
			return llm.Response{}, errExhausted
		}
		r := s.replies[0]
		s.replies = s.replies[1:]
		if r.err != nil {
			return llm.Response{Usage: r.usage}, r.err
		}
		return llm.Response{
			Message:      llm.Message{Role: llm.RoleAssistant, Content: r.content},
			Usage:        r.usage,
			FinishReason: r.finish,
		}, nil
	})
}

func (s *script) requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.reqs...)
}

// text answers with content.
func text(content string) reply {
	return reply{content: content, usage: llm.Usage{PromptTokens: 100, CompletionTokens: 10}}
}

// planAnswer wraps a plan in the envelope.
func planAnswer(planJSON string) reply {
	return text(`{"route": "plan", "plan": ` + planJSON + `}`)
}

const (
	goodPlan = `{"mission": "Digest", "agents": {"writer": {"prompt": "You write digests. Answer with JSON only: {\"summary\": string}."}},
 "tasks": [
  {"id": "draft", "agent": "writer", "input": "Write a digest of the notes given in the mission",
   "verification": "(if (string? (get data/result \"summary\")) true \"expected a summary string\")"},
  {"id": "polish", "agent": "writer", "input": "Polish this digest: {{results.draft.summary}}", "depends_on": ["draft"]}
 ]}`
	cyclicPlan = `{"tasks": [
  {"id": "a", "input": "Write part A using {{results.b}}", "depends_on": ["b"]},
  {"id": "b", "input": "Write part B using {{results.a}}", "depends_on": ["a"]}
 ]}`
	// warnPlan has warnings only: a flaky operation that halts the run.
	warnPlan = `{"tasks": [
  {"id": "fetch", "input": "Search the web for this week's papers"},
  {"id": "digest", "input": "Write a digest of {{results.fetch}}", "depends_on": ["fetch"]}
 ]}`
)

// registry is a host registry with a worker and a tool.
func hostRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg := registry.New()
	noop := agent.Func(func(context.Context, agent.Request) (agent.Result, error) { return agent.Result{}, nil })
	require.NoError(t, reg.Register("scraper", registry.Worker{
		Description:   "Scrapes a web page and returns its items.",
		Outputs:       []string{"items", "count"},
		Preconditions: []string{`(string? data/input)`},
		Agent:         noop,
	}))
	require.NoError(t, reg.RegisterTool("web_search", registry.Tool{
		Description: "Searches the web; returns titles and URLs.",
		Parameters:  json.RawMessage(`{"type": "object", "properties": {"q": {"type": "string"}}}`),
		Run:         func(context.Context, json.RawMessage) (string, error) { return "", nil },
	}))
	return reg
}
