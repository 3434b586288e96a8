//go:build unix && !linux

package agent

import "syscall"

// setParentDeathSignal does nothing: only Linux sends a signal when a
// program's parent dies.
func setParentDeathSignal(*syscall.SysProcAttr) {}
