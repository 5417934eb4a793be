package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// serveStdio starts the server with args over stdin and stdout, as a worker starts it, and
// connects a client, with a minute to run; stderr is what the server logged.
func serveStdio(t *testing.T, args ...string) (context.Context, *mcp.ClientSession, *strings.Builder) {
	t.Helper()
	var stderr strings.Builder
	cmd := exec.Command(build(t), args...)
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	return ctx, cs, &stderr
}

// TestStdio: the command serves MCP on stdin and stdout, as a worker starts it, and logs
// what it skipped on stderr.
func TestStdio(t *testing.T) {
	ctx, cs, stderr := serveStdio(t, "--library", filepath.Join("..", "testdata", "library"), "--index", t.TempDir(), "--watch", "0")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "LRP1 uptake"}})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "10.5555/cosci.tau.002") {
		t.Fatalf("search over stdio: %+v, %v", res, err)
	}
	cs.Close()
	for _, want := range []string{"library ready", "references=28", "broken2020", "it has no title"} {
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
