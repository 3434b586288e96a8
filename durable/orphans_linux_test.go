package durable_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/internal/testproc"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	// durable-host starts run "r" of chain in DURABLE_TEST_DB, whose
	// worker of task a leaves a child in its process group, writes the
	// child's pid to DURABLE_TEST_CHILD and sleeps: the helper is killed
	// there.
	testproc.Helpers["durable-host"] = func() {
		s, err := sqlite.Open(os.Getenv("DURABLE_TEST_DB"))
		if err != nil {
			panic(err)
		}
		p, err := plan.Parse([]byte(chain))
		if err != nil {
			panic(err)
		}
		script := `sleep 300 & echo $! > "$0"; exec sleep 300`
		w := &agent.Command{Argv: []string{"sh", "-c", script, os.Getenv("DURABLE_TEST_CHILD")}}
		_, err = durable.Start(context.Background(), s, durable.Spec{Plan: p}, durable.WithAgent("wc", w), durable.WithRunID("r"))
		panic(err)
	}
}

// runs reports whether the process pid runs, zombies aside.
func runs(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// A process that dies mid-attempt leaves its worker's children running
// in the worker's process group — the parent-death signal kills the
// worker alone. The resume kills that group before it runs the task
// again, and forgets it.
func TestResumeKillsTheOrphansOfADeadRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, childFile := filepath.Join(dir, "dagent.db"), filepath.Join(dir, "child")
	exe, err := os.Executable()
	require.NoError(t, err)
	host := exec.Command(exe, "-test.run=^$")
	host.Env = append(os.Environ(), testproc.Env+"=durable-host", "GORACE=atexit_sleep_ms=0",
		"DURABLE_TEST_DB="+db, "DURABLE_TEST_CHILD="+childFile)
	require.NoError(t, host.Start())
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })

	var child int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(childFile)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		child, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 20*time.Second, 5*time.Millisecond, "the worker of task a started")
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	s, err := sqlite.Open(db)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	rec, err := s.Load(context.Background(), "r")
	require.NoError(t, err)
	require.Len(t, rec.Processes, 1, "the worker was recorded before it could run")
	p := rec.Processes[0]
	assert.Equal(t, "a", p.TaskID)
	assert.Equal(t, 1, p.Attempt)
	assert.Equal(t, "r/a/1", p.Key)
	pgid, err := syscall.Getpgid(child)
	require.NoError(t, err)
	assert.Equal(t, p.PGID, pgid, "the child runs in the worker's group")

	require.NoError(t, host.Process.Signal(syscall.SIGKILL))
	_ = host.Wait()
	require.Eventually(t, func() bool { return !runs(p.PGID) }, 10*time.Second, 5*time.Millisecond, "the worker dies with its host")
	require.True(t, runs(child), "the worker's child outlives its host")

	w := newWorkers()
	out, err := durable.Resume(context.Background(), s, "r", durable.WithAgent("wc", w.agent()))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	assert.Equal(t, 1, w.count("a"), "the task is delivered again")
	assert.Eventually(t, func() bool { return !runs(child) }, 5*time.Second, 5*time.Millisecond, "the orphan was killed")
	rec, err = s.Load(context.Background(), "r")
	require.NoError(t, err)
	assert.Empty(t, rec.Processes, "the killed group is forgotten")
}

// A run that ends has no program left: it forgets them.
func TestRunForgetsItsProcesses(t *testing.T) {
	s := openStore(t)
	w := &agent.Command{Argv: []string{"sh", "-c", "echo 1"}}
	out, err := durable.Start(context.Background(), s, durable.Spec{Plan: mustPlan(t, chain)}, durable.WithAgent("wc", w), durable.WithRunID("r"))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
	rec, err := s.Load(context.Background(), "r")
	require.NoError(t, err)
	assert.Empty(t, rec.Processes)
}
