package main

import (
	"context"
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

// TestStdio: the command serves MCP on stdin and stdout, as a worker starts it, and logs
// what it skipped on stderr.
func TestStdio(t *testing.T) {
	bin := build(t)
	var stderr strings.Builder
	cmd := exec.Command(bin, "--library", filepath.Join("..", "testdata", "library"), "--index", t.TempDir(), "--watch", "0")
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
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
	} {
		cmd := exec.Command(bin, tt.args...)
		cmd.Env = append(os.Environ(), "COSCI_LIBRARY=")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("literature %v: %v, %s; want it to fail saying %q", tt.args, err, out, tt.want)
		}
	}
}
