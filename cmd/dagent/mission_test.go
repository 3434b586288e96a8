package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/dagent-dev/dagent/llm/openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A plan the model wrote without a mission is written with the user's, so
// that run --replan takes it as it is.
func TestPlanWritesTheMission(t *testing.T) {
	startLLM(t, script{
		kindPlan:  {route(`{"tasks": [{"id": "greet", "input": "Say hello to the user"}]}`)},
		kindAgent: {"hello"},
	})
	path := filepath.Join(t.TempDir(), "plan.json")
	code, _, stderr := dagent(t, "", "plan", "-o", path, "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	written, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(written), `"mission": "Greet the user"`)

	code, _, stderr = dagent(t, "", "run", path, "--replan", "--no-journal")
	assert.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stderr, "needs a mission")
}

// A server that refuses the planner's prompt as too large for the model's
// context gets the hint of --brief, unless it was given.
func TestPlanContextOverflowSuggestsBrief(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error": {"code": 400, "type": "exceed_context_size_error", "message": "the request exceeds the available context size, try increasing it"}}`)
	}))
	t.Cleanup(srv.Close)
	t.Setenv(openai.EnvBaseURL, srv.URL+"/v1")
	t.Setenv(openai.EnvAPIKey, "")
	t.Setenv(openai.EnvModel, "small-model")
	const hint = "(try --brief: it gives the planner short prompts, for models with a small context)"

	code, _, stderr := dagent(t, "", "plan", "Greet the user")
	assert.Equal(t, exitUsage, code, "an LLM error is an error of the command's input, as before")
	assert.Contains(t, stderr, "exceeds the available context size, try increasing it "+hint)

	code, _, stderr = dagent(t, "", "run", "--mission", "Greet the user", "--no-journal")
	assert.Equal(t, exitUsage, code, "an LLM error is an error of the command's input, as before")
	assert.Contains(t, stderr, hint)

	code, _, stderr = dagent(t, "", "plan", "--brief", "Greet the user")
	assert.Equal(t, exitUsage, code, "an LLM error is an error of the command's input, as before")
	assert.Contains(t, stderr, "exceeds the available context size")
	assert.NotContains(t, stderr, "--brief")
}
