package integration_test

import (
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/internal/llmtest"
)

// TestMissionFromTheCLI: start --mission without a plan has the worker's
// planner (a scripted OpenAI-compatible server) plan the mission, and its
// plan runs; a mission the planner answers itself exits 5 with the
// answer, as dagent run does.
func TestMissionFromTheCLI(t *testing.T) {
	setup(t)
	var answer atomic.Pointer[string]
	planned := `{"route": "plan", "plan": {"mission": "Publish the report", "tasks": [
		{"id": "fetch", "agent": "step", "input": "fetch"},
		{"id": "report", "agent": "step", "depends_on": ["fetch"], "input": "write the report"}]}}`
	answer.Store(&planned)
	srv := llmtest.Start(t, "test-model", func(map[string]any) (string, error) { return *answer.Load(), nil })
	q := queue(t)
	startWorker(t, q, "DAGENT_IT_LOG="+filepath.Join(t.TempDir(), "executions.log"), "OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=", "DAGENT_MODEL=test-model")
	code, stdout, stderr := dagentTemporal(t, "start", "--mission", "Publish the report", "--task-queue", q,
		"--run-id", "it-mission-"+time.Now().Format("150405.000"), "--wait", "--format", "json")
	require.Equal(t, 0, code, "%s%s", stdout, stderr)
	res := decode(t, stdout)
	assert.Equal(t, "completed", res.Status)
	assert.Equal(t, "done", res.Tasks["report"].Status)

	answered := `{"route": "synthesis", "reason": "it is short", "answer": "The report is already published."}`
	answer.Store(&answered)
	code, stdout, stderr = dagentTemporal(t, "start", "--mission", "Publish the report", "--task-queue", q,
		"--run-id", "it-answered-"+time.Now().Format("150405.000"), "--wait")
	assert.Equal(t, 5, code, "%s%s", stdout, stderr)
	assert.Contains(t, stdout, "The report is already published.\n")
}

// TestRoundsFromTheCLI: start --mission --rounds plans the mission in
// rounds on the worker's planner, and delivers.
func TestRoundsFromTheCLI(t *testing.T) {
	setup(t)
	answers := []string{
		`{"action": "continue", "tasks": [{"id": "fetch", "agent": "step", "input": "fetch"}]}`,
		`{"action": "continue", "tasks": [{"id": "report", "agent": "step", "depends_on": ["fetch"], "input": "write the report"}]}`,
		`{"action": "done", "deliverable": ["report"]}`,
	}
	var n atomic.Int32
	srv := llmtest.Start(t, "test-model", func(map[string]any) (string, error) {
		return answers[min(int(n.Add(1)), len(answers))-1], nil
	})
	q := queue(t)
	startWorker(t, q, "DAGENT_IT_LOG="+filepath.Join(t.TempDir(), "executions.log"), "OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=", "DAGENT_MODEL=test-model")
	code, stdout, stderr := dagentTemporal(t, "start", "--mission", "Publish the report", "--rounds", "3", "--task-queue", q,
		"--run-id", "it-rounds-"+time.Now().Format("150405.000"), "--wait", "--format", "json")
	require.Equal(t, 0, code, "%s%s", stdout, stderr)
	res := decode(t, stdout)
	assert.Equal(t, "completed", res.Status)
	assert.Equal(t, "done", res.Tasks["fetch"].Status)
	assert.Equal(t, "done", res.Tasks["report"].Status)
	assert.Len(t, srv.Bodies(), 3)
}
