//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dagent cancel in one process stops the run another process runs, as
// Ctrl-C there would; show --follow in a third prints the run's events as
// they come, until it ends; prune leaves the running run alone.
func TestCancelFromAnotherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dagent and runs it as processes; skipped with -short")
	}
	bin := binary(t)

	dir := t.TempDir()
	reg, log := workRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(`{"tasks": [
		{"id": "a", "agent": "work", "input": "start"},
		{"id": "b", "agent": "work", "depends_on": ["a"], "input": "slow", "params": {"ms": 900}},
		{"id": "c", "agent": "work", "depends_on": ["b"], "input": "after {{results.b.v}}"}]}`), 0o600))
	db := filepath.Join(dir, "runs.db")

	// Its output is left alone: progress goes to a terminal or a pipe;
	// the journal says when b started.
	run := exec.Command(bin, "run", planPath, "--registry", reg, "--db", db)
	var runOut bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runOut
	require.NoError(t, run.Start())
	id := startedTask(t, db, "b")

	var followed bytes.Buffer
	follow := exec.Command(bin, "show", id, "--db", db, "--follow")
	follow.Stdout = &followed
	require.NoError(t, follow.Start())

	out, err := exec.Command(bin, "runs", "prune", "--db", db, "--before", "0s", "--status", "interrupted").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "deleted 0 runs", "the running run is kept")

	time.Sleep(300 * time.Millisecond) // b runs
	start := time.Now()
	out, err = exec.Command(bin, "cancel", id, "--db", db).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `^asked process \d+ on \S+ to cancel run `+id+`\nrun `+id+` cancelled; dagent resume `+id+` goes on with it\n$`, string(out))
	assert.Less(t, time.Since(start), 5*time.Second, "the owner stops the run promptly")

	err = run.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the cancelled run does not succeed: %s", runOut.String())
	assert.Contains(t, runOut.String(), "cancelled by another process")

	require.NoError(t, follow.Wait())
	assert.Contains(t, followed.String(), "b: started")
	assert.True(t, strings.HasSuffix(followed.String(), "run "+id+" cancelled\n"), followed.String())
	assert.Contains(t, followed.String(), "  run failed: run cancelled: the run was cancelled by another process", "the events appended while it followed")

	rec := checkDB(t, db, id)
	assert.Equal(t, statusCancelled, rec.Status)
	_, committed := rec.Tasks["c"]
	assert.False(t, committed, "c never started")

	out, err = exec.Command(bin, "resume", id, "--db", db).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "completed", checkDB(t, db, id).Status)
	var tasks []string
	for _, e := range sideEffects(t, log) {
		tasks = append(tasks, e[0])
	}
	assert.Equal(t, "c", tasks[len(tasks)-1])
	assert.Equal(t, 1, strings.Count(strings.Join(tasks, " "), "a"), "a ran once: %v", tasks)
}

// startedTask waits for the one run of the journal db to start task, and
// returns the run's id.
func startedTask(t *testing.T, db, task string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if _, err := os.Stat(db); err != nil {
			continue
		}
		s, err := sqlite.Open(db, sqlite.ReadOnly())
		if err != nil {
			continue
		}
		runs, err := s.List(t.Context())
		if err == nil && len(runs) == 1 {
			events, _ := s.EventsAfter(t.Context(), runs[0].ID, 0)
			for _, e := range events {
				if e.TaskID == task && e.Kind == "task_started" {
					s.Close()
					return runs[0].ID
				}
			}
		}
		s.Close()
	}
	t.Fatalf("no run of %s started %s", db, task)
	return ""
}
