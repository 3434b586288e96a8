//go:build unix

package agent

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// killGroupOnCancel starts the command in a process group of its own and
// makes cancelling it kill the whole group, so that the children a worker
// started die with it instead of holding its output open or running on.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		if err != nil {
			// The group cannot be signalled; kill at least the program.
			return cmd.Process.Kill()
		}
		return nil
	}
}

// exitSignal names the signal that ended a process, or "" if it exited.
func exitSignal(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
