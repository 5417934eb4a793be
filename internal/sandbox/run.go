package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cosci-dev/cosci/internal/proclimit"
)

// ErrNoChild is returned when the child binary cannot be found: no query can run until
// it is built (make build puts it at bin/cosci-sandbox, beside the worker).
var ErrNoChild = errors.New("the sandbox's child binary cosci-sandbox was not found: run make build, or set COSCI_SANDBOX to its path")

// ChildBinary is the environment variable naming the child binary's path.
const ChildBinary = "COSCI_SANDBOX"

// MinAddressSpace is the least address space the child is given: a Go binary linking
// DuckDB dies at start below about 2 GiB (design.md: 1 GiB SIGSEGV, 512 MiB "failed to
// reserve page summary memory"), so memory is capped by DuckDB's memory_limit, and the
// address-space cap only stops what that misses.
const MinAddressSpace = 2 << 30

// Runner runs requests in the child binary at Binary ("" finds it: $COSCI_SANDBOX, then
// cosci-sandbox beside the running executable, then on PATH).
type Runner struct {
	Binary string
	// Grace is how long past Caps.Timeout the child may run before it is killed: its own
	// deadline interrupts DuckDB first, but DuckDB ignores interruption in some
	// functions (repeat('x', 2e9) for some 10 s). Zero means 3 s.
	Grace time.Duration
	// env is added to the child's environment (tests only).
	env []string
}

// Run runs one request with the default Runner.
func Run(ctx context.Context, req Request) (Result, error) { return Runner{}.Run(ctx, req) }

// Run checks a query with Guard, writes the inputs into a fresh directory, runs the child
// there under the caps and reads its answer. A refused or stopped query is a *Refusal.
func (r Runner) Run(ctx context.Context, req Request) (Result, error) {
	if req.Mode == "" {
		req.Mode = ModeQuery
	}
	if req.Mode == ModeQuery {
		if err := Guard(req.Query); err != nil {
			return Result{}, err
		}
	}
	bin, err := r.binary()
	if err != nil {
		return Result{}, err
	}
	dir, err := os.MkdirTemp("", "cosci-sandbox-")
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: a directory for the run: %w", err)
	}
	defer os.RemoveAll(dir)
	creq, err := writeInputs(dir, req)
	if err != nil {
		return Result{}, err
	}
	return r.runChild(ctx, bin, creq)
}

func (r Runner) binary() (string, error) {
	if r.Binary != "" {
		return r.Binary, nil
	}
	if p := os.Getenv(ChildBinary); p != "" {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "cosci-sandbox")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("cosci-sandbox"); err == nil {
		return p, nil
	}
	return "", ErrNoChild
}

// writeInputs puts each input's bytes in dir and makes the child's request.
func writeInputs(dir string, req Request) (ChildRequest, error) {
	creq := ChildRequest{Mode: req.Mode, Dir: dir, Query: req.Query, Caps: req.Caps.withDefaults(), Feed: req.Feed}
	if err := os.Mkdir(filepath.Join(dir, TempDir), 0o700); err != nil {
		return creq, err
	}
	for i, in := range req.Inputs {
		if in.Table == "" {
			return creq, fmt.Errorf("sandbox: input %d has no table name", i+1)
		}
		path := filepath.Join(dir, fmt.Sprintf("input-%d.%s", i+1, in.Format))
		if err := writeInput(path, in); err != nil {
			return creq, fmt.Errorf("sandbox: input %q: %w", in.Table, err)
		}
		creq.Inputs = append(creq.Inputs, ChildInput{Table: in.Table, Format: in.Format, Path: path, Columns: in.Columns})
	}
	return creq, nil
}

func writeInput(path string, in Input) error {
	if in.From == "" {
		return os.WriteFile(path, in.Data, 0o600)
	}
	src, err := os.Open(in.From)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// runChild starts the child under the caps, gives it the request and reads its answer.
func (r Runner) runChild(ctx context.Context, bin string, creq ChildRequest) (Result, error) {
	grace := r.Grace
	if grace <= 0 {
		grace = 3 * time.Second
	}
	wall := creq.Caps.Timeout + grace
	wctx, cancel := context.WithTimeout(ctx, wall)
	defer cancel()
	in, err := json.Marshal(creq)
	if err != nil {
		return Result{}, err
	}
	cmd := capCommand(wctx, bin, creq.Caps, wall)
	cmd.Dir = creq.Dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + creq.Dir, "TMPDIR=" + filepath.Join(creq.Dir, TempDir)}, r.env...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &proclimit.Head{W: &stderr, N: 4096}
	// The answer is bounded by the caps the child keeps; a child that writes more than
	// twice that has gone wrong, and what it wrote is not read.
	limit := int64(creq.Caps.Bytes)*2 + int64(creq.Caps.Rows)*64 + 1<<20
	var stdout bytes.Buffer
	cmd.Stdout = &proclimit.Head{W: &stdout, N: int(limit)}
	start := time.Now()
	runErr := cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	if runErr != nil {
		return Result{}, childFailure(runErr, wctx, creq.Caps, wall)
	}
	var resp ChildResponse
	if int64(stdout.Len()) >= limit {
		return Result{}, refuse(ReasonCrash, LayerCap, "the child's answer ran over %d bytes", limit)
	}
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return Result{}, refuse(ReasonCrash, LayerDuckDB, "the child's answer could not be read")
	}
	if resp.Error != nil {
		return Result{}, resp.Error
	}
	res := resp.Result
	if len(creq.Feed) > 0 {
		// The child answers with a feed whenever one was asked for and the query ran.
		if res.Feed == nil || len(res.Feed.Columns) != len(creq.Feed) {
			return Result{}, refuse(ReasonCrash, LayerDuckDB, "the child answered without the feed asked for")
		}
		if err := readFeed(filepath.Join(creq.Dir, FeedFile), res.Feed, creq.Caps.FeedBytes); err != nil {
			return Result{}, refuse(ReasonCrash, LayerDuckDB, "%v", err)
		}
	}
	res.Start = max(0, took-res.Load-res.Query)
	return res, nil
}

// capCommand runs the child under prlimit (util-linux; when there is one) with caps on
// address space, CPU seconds and core files, killed by ctx at the wall-clock cap. The CPU
// cap is the wall-clock cap on every thread DuckDB may use, plus a second to start.
func capCommand(ctx context.Context, bin string, caps Caps, wall time.Duration) *exec.Cmd {
	as := max(int64(MinAddressSpace), int64(caps.MemoryMB)<<20*2+int64(1<<30))
	cpu := int(math.Ceil(wall.Seconds()))*caps.Threads + 1
	cmd := proclimit.Command(ctx, proclimit.Limits{AddressSpace: as, CPUSeconds: cpu}, bin)
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// childFailure says why the child ended without an answer.
func childFailure(err error, wctx context.Context, caps Caps, wall time.Duration) error {
	if wctx.Err() != nil {
		return refuse(ReasonTime, LayerCap, "killed at the wall-clock cap of %s (the query cap %s and a grace)", wall.Round(time.Millisecond), caps.Timeout)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			switch ws.Signal() {
			case syscall.SIGXCPU, syscall.SIGKILL:
				return refuse(ReasonTime, LayerCap, "killed at the CPU cap (%s of CPU on each of %d threads)", wall.Round(time.Millisecond), caps.Threads)
			case syscall.SIGSEGV, syscall.SIGABRT, syscall.SIGBUS:
				return refuse(ReasonMemory, LayerCap, "the child died (%s), most likely at the address-space cap", ws.Signal())
			}
			return refuse(ReasonCrash, LayerCap, "the child died (%s)", ws.Signal())
		}
		if exit.ExitCode() == 2 {
			// The Go runtime exits 2 when it cannot map memory (fatal error: out of memory).
			return refuse(ReasonMemory, LayerCap, "the child ran out of memory at the address-space cap")
		}
	}
	return refuse(ReasonCrash, LayerCap, "the child ended without an answer")
}
