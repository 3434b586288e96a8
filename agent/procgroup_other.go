//go:build !unix

package agent

import (
	"os"
	"os/exec"
)

// killGroupOnCancel leaves the default cancellation, which kills the
// program alone: outside unix there is no process group to kill. Run still
// returns promptly, because it stops waiting for the output pipes.
func killGroupOnCancel(*exec.Cmd) {}

// exitSignal reports no signal: outside unix a killed process has an exit
// status like any other.
func exitSignal(*os.ProcessState) string { return "" }
