package runner_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/internal/golden"
	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/runner"
)

// jsonResult has a task in every final state, a pending review, a replan
// request and token usage.
func jsonResult() *runner.Result {
	return &runner.Result{
		RunID:    "run-1",
		Status:   runner.StatusReplanRequired,
		Err:      nil,
		Duration: 1234567 * time.Microsecond,
		Usage:    agent.Usage{PromptTokens: 120, CompletionTokens: 30},
		Tasks: map[string]*runner.TaskResult{
			"fetch": {ID: "fetch", Status: runner.TaskDone, Attempts: 2,
				Output:   map[string]any{"n": json.Number("12345678901234567890"), "cmp": "a < b && c > d"},
				Duration: 250 * time.Millisecond, Usage: agent.Usage{PromptTokens: 120, CompletionTokens: 30}},
			"check": {ID: "check", Status: runner.TaskFailed, Attempts: 3, Output: "bad",
				Err:       fmt.Errorf("%w: want a number", runner.ErrVerification),
				Class:     runner.ClassVerification,
				Diagnosis: "want a number", Duration: 3 * time.Second},
			"lint": {ID: "lint", Status: runner.TaskSkipped, Attempts: 1, Err: errors.New("exit status 2"),
				Class: runner.ClassAgentError, Diagnosis: "exit status 2", Duration: 900 * time.Microsecond},
			"review": {ID: "review", Status: runner.TaskWaiting},
			"report": {ID: "report", Status: runner.TaskPending},
		},
		PendingReviews: []runner.PendingReview{{TaskID: "review", Prompt: "Approve the fetch?", Upstream: map[string]any{"fetch": "ok"}}},
		Replan:         &runner.ReplanRequest{TaskID: "check", Output: "bad", Diagnosis: "want a number", Completed: []string{"fetch"}},
	}
}

func TestResultJSONGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, jsonv.EncodeIndent(&b, jsonResult(), "  "))
	golden.Check(t, filepath.Join("testdata", "result.golden.json"), b.Bytes())
}

func TestResultJSONRoundTrip(t *testing.T) {
	first, err := json.Marshal(jsonResult())
	require.NoError(t, err)
	var back runner.Result
	require.NoError(t, json.Unmarshal(first, &back))
	second, err := json.Marshal(&back)
	require.NoError(t, err)
	assert.JSONEq(t, string(first), string(second))

	assert.Equal(t, "run-1", back.RunID)
	assert.Equal(t, 1234*time.Millisecond, back.Duration, "durations keep whole milliseconds")
	assert.Equal(t, agent.Usage{PromptTokens: 120, CompletionTokens: 30}, back.Usage, "the sum of the tasks' usage")
	assert.NoError(t, back.Err)
	check := back.Tasks["check"]
	require.NotNil(t, check)
	assert.Equal(t, "check", check.ID, "the id is the task's key")
	assert.EqualError(t, check.Err, "verification failed: want a number")
	assert.NotErrorIs(t, check.Err, runner.ErrVerification, "an error comes back as its text only")
	assert.Equal(t, runner.ClassVerification, check.Class)
	assert.Equal(t, map[string]any{"n": json.Number("12345678901234567890"), "cmp": "a < b && c > d"}, back.Tasks["fetch"].Output, "numbers stay exact")
	assert.Equal(t, jsonResult().Outputs(), back.Outputs())
	assert.Equal(t, jsonResult().PendingReviews, back.PendingReviews)
	assert.Equal(t, jsonResult().Replan, back.Replan)
}

func TestResultJSONValue(t *testing.T) {
	byPointer, err := json.Marshal(jsonResult())
	require.NoError(t, err)
	byValue, err := json.Marshal(*jsonResult())
	require.NoError(t, err)
	assert.Equal(t, string(byPointer), string(byValue))

	empty, err := json.Marshal(runner.Result{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"version": 1, "run_id": "", "status": "", "error": null, "duration_ms": 0,
		"tasks": {}, "pending_reviews": [], "replan": null}`, string(empty))
}

func TestResultUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		err  string
		is   error
		want *runner.Result
	}{
		{
			name: "without a version",
			doc:  `{"run_id": "r", "status": "failed", "error": "boom", "tasks": {"a": {"status": "done", "output": 1}}}`,
			want: &runner.Result{RunID: "r", Status: runner.StatusFailed,
				Tasks: map[string]*runner.TaskResult{"a": {ID: "a", Status: runner.TaskDone, Output: json.Number("1")}}},
		},
		{
			name: "newer version",
			doc:  `{"version": 2, "status": "completed", "tasks": {}}`,
			err:  "unsupported result version 2: this reads versions up to 1",
			is:   runner.ErrResultVersion,
		},
		{
			name: "version zero",
			doc:  `{"version": 0, "status": "completed", "tasks": {}}`,
			err:  "unsupported result version 0: this reads versions up to 1",
			is:   runner.ErrResultVersion,
		},
		{
			name: "null task",
			doc:  `{"version": 1, "status": "completed", "tasks": {"a": null}}`,
			err:  "task a is null",
		},
		{
			name: "task of the wrong type",
			doc:  `{"version": 1, "status": "completed", "tasks": {"a": 3}}`,
			err:  "cannot unmarshal",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got runner.Result
			err := json.Unmarshal([]byte(tc.doc), &got)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				if tc.is != nil {
					assert.ErrorIs(t, err, tc.is)
				}
				return
			}
			require.NoError(t, err)
			assert.EqualError(t, got.Err, "boom")
			got.Err = nil
			assert.Equal(t, tc.want, &got)
		})
	}
}

// An output nested 9,999 levels deep, which a worker's JSON may be, once
// made the run's JSON form fail to encode though the run completed: the
// whole result was lost. Outputs deeper than jsonv.MaxDepth now fail their
// task as invalid, and the result encodes.
func TestResultJSONDeepOutput(t *testing.T) {
	nested := func(depth int) any {
		v, err := jsonv.DecodeBytes([]byte(strings.Repeat("[", depth) + strings.Repeat("]", depth)))
		require.NoError(t, err)
		return v
	}
	rec := newRecorder().
		on("deep", output(nested(9_999))).
		on("limit", output(nested(jsonv.MaxDepth))).
		on("plain", output("ok"))
	res := run(t, planOf(task("deep", "d", nonCritical()), task("limit", "l"), task("plain", "p")), rec)

	deep := res.Tasks["deep"]
	assert.Equal(t, runner.TaskSkipped, deep.Status, "a non-critical task that failed")
	assert.Equal(t, runner.ClassInvalidOutput, deep.Class)
	assert.ErrorIs(t, deep.Err, agent.ErrInvalidOutput)
	assert.ErrorIs(t, deep.Err, jsonv.ErrTooDeep)
	assert.Nil(t, deep.Output)
	assert.Equal(t, runner.TaskDone, res.Tasks["limit"].Status)
	assert.Equal(t, "ok", res.Tasks["plain"].Output)

	// As dagent run --format json prints it: inside a document of its own.
	var b bytes.Buffer
	require.NoError(t, jsonv.EncodeIndent(&b, map[string]any{"replan_history": []any{map[string]any{"result": res}}}, "  "))
	var back struct {
		ReplanHistory []struct{ Result runner.Result } `json:"replan_history"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	require.Len(t, back.ReplanHistory, 1)
	assert.Equal(t, "ok", back.ReplanHistory[0].Result.Tasks["plain"].Output)
}

func TestParseInitialResults(t *testing.T) {
	earlier, err := json.Marshal(jsonResult())
	require.NoError(t, err)
	tests := []struct {
		name    string
		doc     string
		outputs map[string]any
		runID   string
		err     string
		is      error
	}{
		{
			name:    "outputs by task id",
			doc:     `{"fetch": {"n": 12345678901234567890}, "summary": "ok"}`,
			outputs: map[string]any{"fetch": map[string]any{"n": json.Number("12345678901234567890")}, "summary": "ok"},
		},
		{name: "no outputs", doc: `{}`, outputs: map[string]any{}},
		{
			name:    "an earlier result gives its done tasks and its run id",
			doc:     string(earlier),
			outputs: map[string]any{"fetch": map[string]any{"n": json.Number("12345678901234567890"), "cmp": "a < b && c > d"}},
			runID:   "run-1",
		},
		{
			name:    "a result without a version",
			doc:     `{"run_id": "r", "status": "waiting", "tasks": {"a": {"status": "done", "output": 1}, "b": {"status": "waiting"}}}`,
			outputs: map[string]any{"a": json.Number("1")},
			runID:   "r",
		},
		{
			name:    "tasks without a status are outputs",
			doc:     `{"tasks": {"a": 1}, "run_id": "r"}`,
			outputs: map[string]any{"tasks": map[string]any{"a": json.Number("1")}, "run_id": "r"},
		},
		{
			name:    "a status that is no string is an output",
			doc:     `{"status": 1, "tasks": {}}`,
			outputs: map[string]any{"status": json.Number("1"), "tasks": map[string]any{}},
		},
		{name: "not an object", doc: `[1]`, err: "want an object of task id to output, or a dagent run result"},
		{name: "malformed", doc: `{"a": `, err: "unexpected EOF"},
		{name: "a newer result", doc: `{"version": 2, "status": "completed", "tasks": {}}`, err: "unsupported result version 2", is: runner.ErrResultVersion},
		{name: "a null task", doc: `{"status": "completed", "tasks": {"a": null}}`, err: "task a is null"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			outputs, runID, err := runner.ParseInitialResults([]byte(tc.doc))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				if tc.is != nil {
					assert.ErrorIs(t, err, tc.is)
				}
				assert.Nil(t, outputs)
				assert.Empty(t, runID)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.outputs, outputs)
			assert.Equal(t, tc.runID, runID)
		})
	}
}

// FuzzParseInitialResults checks that ParseInitialResults never panics,
// and that a result it reads gives only the outputs of done tasks. The
// seed corpus is testdata/fuzz/FuzzParseInitialResults.
func FuzzParseInitialResults(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		outputs, runID, err := runner.ParseInitialResults(data)
		if err != nil {
			require.Nil(t, outputs)
			require.Empty(t, runID)
			return
		}
		require.NotNil(t, outputs)
		var res runner.Result
		if runID == "" || json.Unmarshal(data, &res) != nil {
			return
		}
		require.Equal(t, res.RunID, runID)
		for id := range outputs {
			require.Equal(t, runner.TaskDone, res.Tasks[id].Status, "task %s", id)
		}
	})
}
