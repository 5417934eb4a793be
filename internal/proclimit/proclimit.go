// Package proclimit runs a child process under prlimit's caps, for the programs cosci hands
// untrusted input to: pdftotext and pdfinfo reading a PDF (internal/fulltext), DuckDB
// running a model's SQL (internal/sandbox). A decompression bomb, a parser loop or a
// runaway query then costs one bounded process.
package proclimit

import (
	"context"
	"io"
	"os/exec"
	"strconv"
)

// Limits are a child's caps; zero leaves one unset.
type Limits struct {
	AddressSpace int64 // bytes of virtual memory (prlimit --as)
	CPUSeconds   int   // seconds of CPU time, all threads together (prlimit --cpu): SIGXCPU, then SIGKILL
}

// Command is bin with args under prlimit (util-linux), with the limits and no core file,
// killed when ctx ends. Where prlimit is not installed it is bin alone, uncapped but for
// ctx. The caller sets the environment, the directory and the pipes.
func Command(ctx context.Context, lim Limits, bin string, args ...string) *exec.Cmd {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return exec.CommandContext(ctx, bin, args...)
	}
	caps := []string{"--core=0"}
	if lim.AddressSpace > 0 {
		caps = append(caps, "--as="+strconv.FormatInt(lim.AddressSpace, 10))
	}
	if lim.CPUSeconds > 0 {
		caps = append(caps, "--cpu="+strconv.Itoa(lim.CPUSeconds))
	}
	return exec.CommandContext(ctx, prlimit, append(append(caps, "--", bin), args...)...)
}

// Head keeps the first N bytes written to it in W and drops the rest, always reporting
// success: a child writing to it is never blocked on a full pipe, nor stopped by an error.
type Head struct {
	W io.Writer
	N int
}

func (h *Head) Write(p []byte) (int, error) {
	if h.N > 0 {
		k := min(len(p), h.N)
		h.W.Write(p[:k])
		h.N -= k
	}
	return len(p), nil
}
