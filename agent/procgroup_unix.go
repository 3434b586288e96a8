//go:build unix

package agent

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// ownGroup makes the command start in a process group of its own, so that
// the children a worker starts can be signalled with it, and, where the
// system can, die with the process that started it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
}

// terminateGroup asks the process group of p to end, with SIGTERM.
func terminateGroup(p *os.Process) error {
	return signalGroup(p, syscall.SIGTERM)
}

// killGroup kills the process group of p, or p alone if the group cannot
// be signalled. A group that is gone already is no error.
func killGroup(p *os.Process) error {
	err := signalGroup(p, syscall.SIGKILL)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return p.Kill()
	}
	return nil
}

func signalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}

// exitSignal names the signal that ended a process, or "" if it exited.
func exitSignal(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
