package temporalpg

import "syscall"

// sysProcAttr kills the server when the test process that started it dies, so that a
// crashed or interrupted test leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
