//go:build unix

package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	// grandchild starts a sleeping child that shares standard output,
	// records its pid in AGENT_TEST_PIDFILE and sleeps.
	testproc.Helpers["grandchild"] = func() { spawnGrandchild(false); time.Sleep(time.Minute) }
	// escape does the same, but the child leaves the process group.
	testproc.Helpers["escape"] = func() { spawnGrandchild(true); time.Sleep(time.Minute) }
	// leak starts a child that escapes the group, then succeeds at once.
	testproc.Helpers["leak"] = func() { spawnGrandchild(true); fmt.Println(`{"ok": true}`) }
	// killself dies of SIGKILL.
	testproc.Helpers["killself"] = func() {
		fmt.Fprintln(os.Stderr, "about to die")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
	}
}

func spawnGrandchild(newGroup bool) {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), testproc.Env+"=sleep")
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: newGroup}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	path := os.Getenv("AGENT_TEST_PIDFILE")
	if err := os.WriteFile(path+".tmp", []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
		panic(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		panic(err)
	}
}

// waitPid waits for the pid file the helper writes.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(string(data))
		return err == nil
	}, 10*time.Second, 5*time.Millisecond, "the helper did not start its child")
	return pid
}

// gone reports whether the process pid no longer runs: it does not exist,
// or it is a zombie that nobody has reaped yet.
func gone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	rest := stat[strings.LastIndexByte(string(stat), ')')+1:]
	return len(rest) > 1 && rest[1] == 'Z'
}

func TestCommandKillsProcessGroup(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pid")
	c := helper(t, "grandchild", "AGENT_TEST_PIDFILE="+pidfile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	go func() {
		_, err := c.Run(ctx, Request{})
		done <- outcome{err, time.Now()}
	}()
	pid := waitPid(t, pidfile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })

	time.Sleep(100 * time.Millisecond)
	cancelled := time.Now()
	cancel()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	assert.Less(t, o.at.Sub(cancelled), 2*time.Second)
	require.ErrorIs(t, o.err, context.Canceled)
	assert.Eventually(t, func() bool { return gone(pid) }, 2*time.Second, 10*time.Millisecond, "the grandchild %d survived", pid)
}

func TestCommandDeadlineKillsProcessGroup(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pid")
	c := helper(t, "grandchild", "AGENT_TEST_PIDFILE="+pidfile)
	// The deadline must come after the helper has started its child, which
	// a slow machine may take a while to do: it is counted from then.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx, Request{})
		done <- err
	}()
	pid := waitPid(t, pidfile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	deadline := time.Now().Add(100 * time.Millisecond)
	time.AfterFunc(100*time.Millisecond, func() { cancel(context.DeadlineExceeded) })
	select {
	case err := <-done:
		assert.Less(t, time.Since(deadline), 2*time.Second)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its deadline")
	}
	assert.Eventually(t, func() bool { return gone(pid) }, 2*time.Second, 10*time.Millisecond, "the grandchild %d survived", pid)
}

func TestCommandEscapedChildDoesNotHang(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pid")
	c := helper(t, "escape", "AGENT_TEST_PIDFILE="+pidfile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx, Request{})
		done <- err
	}()
	pid := waitPid(t, pidfile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	cancelled := time.Now()
	cancel()
	select {
	case err := <-done:
		assert.Less(t, time.Since(cancelled), waitDelay+2*time.Second)
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Run hung on the output pipe held by a child outside the group")
	}
}

func TestCommandSucceedsButLeaksChild(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pid")
	c := helper(t, "leak", "AGENT_TEST_PIDFILE="+pidfile)
	start := time.Now()
	_, err := c.Run(context.Background(), Request{})
	pid := waitPid(t, pidfile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	assert.Less(t, time.Since(start), waitDelay+5*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited, but a process it started still held its output open 1s later")
}

func TestCommandKilledBySignal(t *testing.T) {
	t.Parallel()
	c := helper(t, "killself")
	_, err := c.Run(context.Background(), Request{})
	var exit *ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, -1, exit.Code)
	assert.Equal(t, "killed", exit.Signal)
	assert.Equal(t, fmt.Sprintf(`command %q was killed by signal "killed": about to die`, c.Argv[0]), err.Error())
}
