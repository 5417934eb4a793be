//go:build !linux

package temporalpg

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
