package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// build builds the literature command into the test's temporary directory.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "literature")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// logLines is what a server writes on stderr, which a test may wait for a line of while
// it runs.
type logLines struct {
	mu      sync.Mutex
	b       strings.Builder
	written chan struct{} // closed and replaced at each write
}

func newLogLines() *logLines { return &logLines{written: make(chan struct{})} }

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	close(l.written)
	l.written = make(chan struct{})
	return len(p), nil
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits until the log holds s, or ctx ends.
func (l *logLines) waitFor(ctx context.Context, s string) bool {
	for {
		l.mu.Lock()
		has, written := strings.Contains(l.b.String(), s), l.written
		l.mu.Unlock()
		if has {
			return true
		}
		select {
		case <-written:
		case <-ctx.Done():
			return false
		}
	}
}

// serveStdio starts the server with args over stdin and stdout, as a worker starts it, and
// connects a client, with a minute to run; stderr is what the server logged.
func serveStdio(t *testing.T, args ...string) (context.Context, *mcp.ClientSession, *logLines) {
	t.Helper()
	stderr := newLogLines()
	cmd := exec.Command(build(t), args...)
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	return ctx, cs, stderr
}

// TestStdio: the command serves MCP on stdin and stdout, as a worker starts it, and logs
// what it skipped on stderr; the full texts, read after it answers, are logged when they
// are indexed, with those it skipped and why.
func TestStdio(t *testing.T) {
	ctx, cs, stderr := serveStdio(t, "--library", filepath.Join("..", "testdata", "library"), "--index", t.TempDir(), "--watch", "0")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "LRP1 uptake"}})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "10.5555/cosci.tau.002") {
		t.Fatalf("search over stdio: %+v, %v", res, err)
	}
	if !stderr.waitFor(ctx, "full texts indexed") {
		t.Fatalf("the full texts' end is not logged:\n%s", stderr)
	}
	cs.Close()
	log := stderr.String()
	if ready, done := strings.Index(log, "library ready"), strings.Index(log, "full texts indexed"); ready < 0 || done < ready {
		t.Errorf("the log does not say the library is ready before its full texts are indexed:\n%s", log)
	}
	for _, want := range []string{"library ready", "references=28", "broken2020", "it has no title",
		"full texts indexed", `"full texts"=3`, "skipped=1", "files/13/Rauch et al. - 2020 - LRP1 is a master regulator of tau uptake and spread.pdf: encrypted: it needs a password to open"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestRefuses(t *testing.T) {
	bin := build(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "name the library: --library FOLDER"},
		{[]string{"--library", filepath.Join(t.TempDir(), "missing")}, "no such file or directory"},
		{[]string{"--library", t.TempDir(), "--max-file-mb", "0"}, "--max-file-mb 0: give 1 MiB or more"},
	} {
		cmd := exec.Command(bin, tt.args...)
		cmd.Env = append(os.Environ(), "COSCI_LIBRARY=")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("literature %v: %v, %s; want it to fail saying %q", tt.args, err, out, tt.want)
		}
	}
}

// TestCaps: a library holding a BibTeX macro bomb (seven levels of ten-fold macros, 10^8
// bytes once expanded) and an export over --max-file-mb is served at once, its other
// references searchable, and stderr names what was skipped and why.
func TestCaps(t *testing.T) {
	dir := t.TempDir()
	var bomb strings.Builder
	bomb.WriteString("@string{m0 = \"xxxxxxxxxx\"}\n")
	for i := 1; i <= 7; i++ {
		fmt.Fprintf(&bomb, "@string{m%d = %sm%d}\n", i, strings.Repeat(fmt.Sprintf("m%d # ", i-1), 9), i-1)
	}
	bomb.WriteString("@article{bomb, title = m7, abstract = m7}\n@article{kept, title = {Microglia after the bomb}}\n")
	big := "@misc{big, title = {Microglia in a big file}}\n" + strings.Repeat(" ", 1<<20)
	for name, text := range map[string]string{"bomb.bib": bomb.String(), "big.bib": big} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cs, stderr := serveStdio(t, "--library", dir, "--index", t.TempDir(), "--watch", "0", "--max-file-mb", "1")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "microglia"}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("search: %+v, %v", res, err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "after the bomb") || strings.Contains(text, "big file") {
		t.Errorf("search found %s; want the reference after the bomb, and nothing of the file over the cap", text)
	}
	cs.Close()
	for _, want := range []string{"references=1", "bomb.bib:6: @string m5: it would be over 256 KiB once its macros are expanded",
		"bomb.bib:9 (bomb): field title: it uses macro m7, which was skipped", "big.bib: not read: it is 1.0 MiB (1048622 bytes), over the cap of 1 MiB on one export file"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
