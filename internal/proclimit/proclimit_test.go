package proclimit

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A child over its CPU cap is killed by the kernel (SIGXCPU, SIGKILL), and one whose
// address space is capped cannot map more.
func TestCommandCaps(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Fatal("prlimit (util-linux) is not installed: the caps this package promises cannot be tested")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spin := Command(ctx, Limits{CPUSeconds: 1}, "/bin/sh", "-c", "while :; do :; done")
	err := spin.Run()
	if ctx.Err() != nil {
		t.Fatal("a busy loop under a 1 s CPU cap ran for 30 s of wall-clock time: the cap did not hold")
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("a busy loop under a 1 s CPU cap ended with %v, want killed", err)
	}
	if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGXCPU && ws.Signal() != syscall.SIGKILL {
		t.Errorf("a busy loop under a 1 s CPU cap ended with %v, want SIGXCPU or SIGKILL", ws)
	}
	var out bytes.Buffer
	limits := Command(context.Background(), Limits{AddressSpace: 64 << 20, CPUSeconds: 5}, "/bin/sh", "-c", "ulimit -v; ulimit -t; ulimit -c")
	limits.Stdout = &out
	if err := limits.Run(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(out.String()), []string{"65536", "5", "0"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the child's limits (KiB of address space, CPU seconds, core size): %v, want %v", got, want)
	}
}

func TestHead(t *testing.T) {
	var b bytes.Buffer
	h := &Head{W: &b, N: 5}
	for _, s := range []string{"abc", "def", "ghi"} {
		if n, err := h.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v: want all of it taken, no error", s, n, err)
		}
	}
	if b.String() != "abcde" {
		t.Errorf("kept %q, want the first 5 bytes", b.String())
	}
}
