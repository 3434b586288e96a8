package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dagent-dev/dagent/internal/testproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	// host runs a worker that ignores SIGTERM, as a host of dagent would,
	// then has threads end under it, writes AGENT_TEST_READYFILE and
	// sleeps until killed.
	testproc.Helpers["host"] = func() {
		exe, err := os.Executable()
		if err != nil {
			panic(err)
		}
		c := &Command{Argv: []string{exe, "-test.run=^$"}, Env: []string{
			testproc.Env + "=ignoreterm", "GORACE=atexit_sleep_ms=0",
			"AGENT_TEST_PIDFILE=" + os.Getenv("AGENT_TEST_PIDFILE"),
		}}
		go func() { _, _ = c.Run(context.Background(), Request{}) }()
		// A goroutine that ends locked to its thread ends the thread:
		// the worker must not die of it.
		for range 64 {
			done := make(chan struct{})
			go func() {
				runtime.LockOSThread()
				close(done)
			}()
			<-done
		}
		if err := os.WriteFile(os.Getenv("AGENT_TEST_READYFILE"), nil, 0o600); err != nil {
			panic(err)
		}
		time.Sleep(time.Minute)
	}
}

// groupRuns reports whether a process of the group pgid runs, zombies
// aside.
func groupRuns(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		stat, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// After the command name in parentheses: state, ppid, pgrp.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

func TestCommandDiesWithItsHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidfile, ready := filepath.Join(dir, "pid"), filepath.Join(dir, "ready")
	exe, err := os.Executable()
	require.NoError(t, err)
	host := exec.Command(exe, "-test.run=^$")
	host.Env = append(os.Environ(), testproc.Env+"=host", "GORACE=atexit_sleep_ms=0",
		"AGENT_TEST_PIDFILE="+pidfile, "AGENT_TEST_READYFILE="+ready)
	require.NoError(t, host.Start())
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })
	pid := waitPid(t, pidfile)
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 10*time.Second, 5*time.Millisecond)
	require.True(t, groupRuns(pid), "the worker %d died while its host lived", pid)

	require.NoError(t, host.Process.Signal(syscall.SIGKILL))
	_ = host.Wait()
	assert.Eventually(t, func() bool { return !groupRuns(pid) }, 5*time.Second, 10*time.Millisecond, "the worker's group %d outlived its host", pid)
}
