package agent

import "syscall"

// setParentDeathSignal has the kernel kill the program when the thread
// that started it ends, which Command.run holds until the program is
// reaped: so, when the host process dies, even by SIGKILL.
func setParentDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
