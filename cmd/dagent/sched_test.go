package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capRegistry has a worker, api, that runs one attempt at a time and logs
// when each attempt starts and ends, and a worker without a cap.
const capRegistry = `workers:
  api:
    command: ["sh", "-c", "id=$(sed -n 's/.*\"task_id\":\"\\([^\"]*\\)\".*/\\1/p'); echo \"start $id\" >>log; sleep 0.05; echo \"end $id\" >>log; echo ok"]
    dir: .
    max_concurrency: 1
  free:
    command: ["sh", "-c", "cat >/dev/null; echo ok"]
`

// dagent run keeps a worker's max_concurrency and starts ready tasks by
// priority.
func TestRunMaxConcurrencyAndPriority(t *testing.T) {
	for _, schedule := range []string{"phased", "eager"} {
		t.Run(schedule, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{
				"registry.yaml": capRegistry,
				"plan.json": `{"tasks": [
  {"id": "p1", "agent": "api"},
  {"id": "p2", "agent": "api", "priority": -1},
  {"id": "p3", "agent": "api"},
  {"id": "token", "agent": "api", "priority": 10},
  {"id": "other", "agent": "free"}
]}`,
			})
			code, doc, stderr := runJSON(t, filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"), "--schedule", schedule, "--concurrency", "4")
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, "completed", doc["status"])
			log, err := os.ReadFile(filepath.Join(dir, "log"))
			require.NoError(t, err)
			assert.Equal(t, []string{
				"start token", "end token", "start p1", "end p1", "start p3", "end p3", "start p2", "end p2",
			}, strings.Split(strings.TrimSpace(string(log)), "\n"), "one attempt at a time, by priority, then in plan order")
		})
	}
}

// A bad max_concurrency stops dagent run before anything runs.
func TestRunBadMaxConcurrency(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"registry.yaml": "workers:\n  api:\n    command: [sh]\n    max_concurrency: 0\n",
		"plan.json":     `{"tasks": [{"id": "a", "agent": "api"}]}`,
	})
	code, stdout, stderr := dagent(t, "", "run", filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"))
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `registry.yaml:4: worker "api": max_concurrency must be a whole number of 1 or more, e.g. 1 for one at a time, not 0; leave it out for no bound`)
}
