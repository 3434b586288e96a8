package main

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dagent-dev/dagent/internal/llmtest"
	"github.com/dagent-dev/dagent/judge"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llm/openai"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Kinds of requests the fake LLM tells apart.
const (
	kindPlan   = "plan"   // the meta-planner asks for a plan
	kindRepair = "repair" // the meta-planner asks for a repair plan
	kindAgent  = "agent"  // an LLM agent does a task
	kindJudge  = "judge"  // the judge checks a rubric
	kindReview = "review" // the LLM reviewer reads a plan
	kindRound  = "round"  // the meta-planner plans a round
)

// script is what the fake LLM answers, by kind of request: the n-th
// request of a kind gets the n-th answer, and requests past the end get
// the last one.
type script map[string][]string

// fakeLLM is an OpenAI-compatible server on loopback that answers
// POST /v1/chat/completions from a script.
type fakeLLM struct {
	t      *testing.T
	srv    *llmtest.Server
	script script

	mu       sync.Mutex
	requests map[string][]map[string]any // bodies by kind
}

// startLLM starts a fake LLM and points the environment at it: a base URL,
// no key, model "test-model".
func startLLM(t *testing.T, s script) *fakeLLM {
	t.Helper()
	f := &fakeLLM{t: t, script: s, requests: map[string][]map[string]any{}}
	f.srv = llmtest.Start(t, "test-model", f.answer)
	t.Setenv(openai.EnvBaseURL, f.srv.BaseURL())
	t.Setenv(openai.EnvAPIKey, "")
	t.Setenv(openai.EnvModel, "test-model")
	// A journal of the test's own: the plans a test's script wrote are
	// not cached for the next test's missions.
	t.Setenv(envDB, filepath.Join(t.TempDir(), "dagent.db"))
	return f
}

// noLLM configures no LLM at all.
func noLLM(t *testing.T) {
	t.Setenv(openai.EnvBaseURL, "")
	t.Setenv(openai.EnvAPIKey, "")
	t.Setenv(openai.EnvModel, "")
}

// answer is the script's answer to a request: the n-th of its kind gets
// the n-th answer.
func (f *fakeLLM) answer(body map[string]any) (string, error) {
	kind := kindOf(body)
	f.mu.Lock()
	n := len(f.requests[kind])
	f.requests[kind] = append(f.requests[kind], body)
	answers := f.script[kind]
	f.mu.Unlock()
	if len(answers) == 0 {
		return "", errors.New("nothing scripted for " + kind)
	}
	return answers[min(n, len(answers)-1)], nil
}

// kindOf tells a planner request (structured output of the planner's
// schema) from an agent's, and a repair from a plan by its system prompt.
func kindOf(body map[string]any) string {
	format, _ := body["response_format"].(map[string]any)
	schema, _ := format["json_schema"].(map[string]any)
	switch schema["name"] {
	case judge.VerdictSchemaName:
		return kindJudge
	case judge.ReviewSchemaName:
		return kindReview
	case metaplanner.RoundSchemaName:
		return kindRound
	case metaplanner.SchemaName:
	default:
		return kindAgent
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) > 0 {
		if m, _ := msgs[0].(map[string]any); strings.Contains(m["content"].(string), "# Repairing a plan") {
			return kindRepair
		}
	}
	return kindPlan
}

// got returns the bodies of the requests of a kind.
func (f *fakeLLM) got(kind string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[kind]
}

// lastUser is the content of the last user message of a request body.
func lastUser(t *testing.T, body map[string]any) string {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m, _ := msgs[i].(map[string]any); m["role"] == "user" {
			return m["content"].(string)
		}
	}
	t.Fatalf("no user message in %v", body)
	return ""
}

func TestFakeLLMKinds(t *testing.T) {
	f := startLLM(t, script{kindAgent: {"hi"}})
	c, err := openai.New(openai.ConfigFromEnv())
	require.NoError(t, err)
	resp, err := c.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}})
	require.NoError(t, err)
	assert.Equal(t, "hi", resp.Message.Content)
	assert.Len(t, f.got(kindAgent), 1)
}
