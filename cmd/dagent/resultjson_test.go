package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/runner"
)

func TestEncodeResultIsEncodeJSON(t *testing.T) {
	t.Parallel()
	done := func(out any) *runner.TaskResult {
		return &runner.TaskResult{Status: runner.TaskDone, Attempts: 1, Output: out, Duration: 1500 * time.Millisecond}
	}
	tests := []struct {
		name string
		r    runner.Result
	}{
		{"no tasks", runner.Result{RunID: "r", Status: runner.StatusCompleted}},
		{"one task", runner.Result{RunID: "r", Status: runner.StatusCompleted, Tasks: map[string]*runner.TaskResult{"a": done("ok")}}},
		{"outputs of every shape", runner.Result{RunID: "r", Status: runner.StatusFailed, Err: errors.New("b failed: <x> & \"y\""), Duration: time.Second,
			Tasks: map[string]*runner.TaskResult{
				"b":             {Status: runner.TaskFailed, Attempts: 3, Err: errors.New("exit 1\nline two"), Class: runner.ClassTimeout, Diagnosis: "too short"},
				"a":             done(map[string]any{"items": []any{"x", json.Number("1.50"), nil, map[string]any{}}, "empty": []any{}}),
				"c\"d<&>\u2028": done(strings.Repeat("long ", 1000)),
				"e":             {Status: runner.TaskDone, Output: "with usage", Usage: agent.Usage{PromptTokens: 3, CompletionTokens: 4}},
				"f":             nil,
			},
			PendingReviews: []runner.PendingReview{{TaskID: "g", Prompt: "check \"tasks\": {}", Upstream: map[string]any{"a": "\n  \"tasks\": {}"}}},
			Replan:         &runner.ReplanRequest{TaskID: "b", Output: []any{"o"}, Diagnosis: "d", Completed: []string{"a"}},
		}},
		{"a run id like the tasks key", runner.Result{RunID: "\n  \"tasks\": {}", Status: runner.StatusCompleted, Tasks: map[string]*runner.TaskResult{"a": done(1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want, got bytes.Buffer
			require.NoError(t, encodeJSON(&want, &tt.r))
			require.NoError(t, encodeResult(&got, &tt.r))
			assert.Equal(t, want.String(), got.String())
		})
	}
}
