package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const rubricPlan = `{"mission": "greet", "tasks": [{"id": "greet", "input": "Say hello", "max_retries": 1, "rubric": "The greeting says hello."}]}`

func writePlan(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o600))
	return path
}

func TestRunJudge(t *testing.T) {
	const (
		pass = `{"pass": true, "reason": "says hello"}`
		fail = `{"pass": false, "reason": "does not say hello"}`
	)
	tests := []struct {
		name    string
		args    []string
		verdict []string
		code    int
		judged  int
		status  string
		class   string
	}{
		{"off: rubrics unchecked", nil, []string{fail}, exitOK, 0, "done", ""},
		{"pass", []string{"--judge"}, []string{pass}, exitOK, 1, "done", ""},
		{"fail, retry, pass", []string{"--judge-model", "judge-model"}, []string{fail, pass}, exitOK, 2, "done", ""},
		{"fails for good", []string{"--judge"}, []string{fail}, exitInvalid, 2, "failed", "verification_failed"},
		{"judge budget spent", []string{"--judge", "--judge-max-calls", "1"}, []string{fail}, exitInvalid, 1, "failed", "budget_exceeded"},
		{"not a verdict", []string{"--judge"}, []string{"looks fine to me"}, exitInvalid, 2, "failed", "agent_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startLLM(t, script{kindAgent: {"hello"}, kindJudge: tt.verdict})
			args := append([]string{"run", writePlan(t, rubricPlan), "--no-journal", "--format", "json"}, tt.args...)
			code, stdout, stderr := dagent(t, "", args...)
			require.Equal(t, tt.code, code, stderr)
			assert.Len(t, f.got(kindJudge), tt.judged)
			var doc struct {
				Tasks map[string]struct {
					Status, Class, Diagnosis string
				}
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
			assert.Equal(t, tt.status, doc.Tasks["greet"].Status)
			assert.Equal(t, tt.class, doc.Tasks["greet"].Class)
			if tt.name == "fails for good" {
				assert.Equal(t, "does not say hello", doc.Tasks["greet"].Diagnosis)
			}
			if len(tt.args) > 0 && tt.args[0] == "--judge-model" {
				for _, body := range f.got(kindJudge) {
					assert.Equal(t, "judge-model", body["model"])
				}
			}
		})
	}
}

func TestRunJudgeFlags(t *testing.T) {
	noLLM(t)
	code, _, stderr := dagent(t, "", "run", writePlan(t, rubricPlan), "--no-journal", "--judge-max-calls", "-1")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--judge-max-calls must not be negative")
}

func TestLintLLMReview(t *testing.T) {
	f := startLLM(t, script{kindReview: {`{"issues": [{"severity": "warning", "task_id": "greet", "field": "input",
		"message": "the greeting names no one", "recommendation": "say whom to greet"}]}`}})
	path := writePlan(t, rubricPlan)
	code, stdout, stderr := dagent(t, "", "lint", "--llm-review", "--format", "json", "--fail-on", "warning", path)
	assert.Equal(t, exitInvalid, code, stderr)
	require.Len(t, f.got(kindReview), 1)
	assert.Contains(t, stderr, "llm review: 1 calls, 120 tokens")
	var doc struct {
		Files []struct {
			Issues []struct{ Check, Severity, TaskID, Message string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	require.Len(t, doc.Files, 1)
	found := false
	for _, is := range doc.Files[0].Issues {
		if is.Check == "llm_review" {
			found = true
			assert.Equal(t, "warning", is.Severity)
			assert.Equal(t, "the greeting names no one", is.Message)
		}
	}
	assert.True(t, found, "the LLM's finding is in the report: %s", stdout)

	code, _, _ = dagent(t, "", "lint", "--format", "json", path)
	assert.Equal(t, exitOK, code)
	assert.Len(t, f.got(kindReview), 1, "off unless asked for")
}

func TestLintLLMReviewErrors(t *testing.T) {
	t.Run("no LLM", func(t *testing.T) {
		noLLM(t)
		code, stdout, stderr := dagent(t, "", "lint", "--llm-review", writePlan(t, rubricPlan))
		assert.Equal(t, exitUsage, code)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "this command needs an LLM")
	})
	t.Run("budget", func(t *testing.T) {
		startLLM(t, script{kindReview: {`{"issues": []}`}})
		a, b := writePlan(t, rubricPlan), writePlan(t, rubricPlan)
		code, stdout, stderr := dagent(t, "", "lint", "--llm-review", "--max-llm-calls", "1", a, b)
		assert.Equal(t, exitUsage, code)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "llm review: llm: budget exceeded")
	})
	t.Run("model without review", func(t *testing.T) {
		code, _, stderr := dagent(t, "", "lint", "--model", "m", writePlan(t, rubricPlan))
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "need --llm-review")
	})
}
