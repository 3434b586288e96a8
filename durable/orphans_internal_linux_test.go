package durable

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/dagent-dev/dagent/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStartTime(t *testing.T) {
	rest := " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21"
	tests := []struct {
		name, stat string
		want       int64
		err        bool
	}{
		{"plain", "123 (sleep)" + rest, 4242, false},
		{"spaces and parentheses in the name", "123 (a) (b c) ) x)" + rest, 4242, false},
		{"no name", "123 sleep" + rest, 0, true},
		{"short", "123 (sleep) S 1 2", 0, true},
		{"not a number", "123 (sleep)" + strings.Replace(rest, "4242", "x", 1), 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStartTime([]byte(tc.stat))
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// A recorded group is killed only when it is the one recorded: the same
// host and boot, and a leader of the same start time; a leader of another
// start time has reused the id.
func TestKillOrphanChecksTheGroup(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	p, ok := processOf(cmd.Process.Pid)
	require.True(t, ok)
	assert.Equal(t, cmd.Process.Pid, p.PGID)

	for name, edit := range map[string]func(*store.Process){
		"another start time": func(p *store.Process) { p.Start++ },
		"another host":       func(p *store.Process) { p.Host += ".elsewhere" },
		"another boot":       func(p *store.Process) { p.BootID += "x" },
		"no boot":            func(p *store.Process) { p.BootID = "" },
	} {
		other := p
		edit(&other)
		assert.False(t, killOrphan(other), "%s: killed", name)
	}
	select {
	case err := <-exited:
		t.Fatalf("a group that is not the one recorded was killed: %v", err)
	default:
	}

	require.True(t, killOrphan(p))
	err := <-exited
	require.Error(t, err)
	assert.Equal(t, "signal: killed", err.Error())
	assert.False(t, killOrphan(p), "a group that is gone is not killed")
}
