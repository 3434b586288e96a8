//go:build !unix

package agent

import (
	"os"
	"os/exec"
)

// ownGroup does nothing: outside unix there is no process group, and Run
// stops the program alone.
func ownGroup(*exec.Cmd) {}

// terminateGroup kills p: outside unix there is no signal to ask a program
// to end.
func terminateGroup(p *os.Process) error { return p.Kill() }

// killGroup kills p.
func killGroup(p *os.Process) error { return p.Kill() }

// exitSignal reports no signal: outside unix a killed process has an exit
// status like any other.
func exitSignal(*os.ProcessState) string { return "" }
