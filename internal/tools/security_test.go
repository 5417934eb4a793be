package tools

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain runs this test binary as a stdio tool server's stand-in when
// COSCI_TOOLS_TEST_HELPER says so (TestStderrIsReadInBoundedLines).
func TestMain(m *testing.M) {
	if os.Getenv("COSCI_TOOLS_TEST_HELPER") == "stderr" {
		// 10 MB without a newline, then a line with a terminal's escape sequences.
		chunk := []byte(strings.Repeat("a", 1<<16))
		for n := 0; n < 10<<20; n += len(chunk) {
			if _, err := os.Stderr.Write(chunk); err != nil {
				os.Exit(2)
			}
		}
		fmt.Fprint(os.Stderr, "\nafter \x1b[31mred\x1b[0m\r\x07 done\u202e\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// logged keeps the records a logger is given.
type logged struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logged) Enabled(context.Context, slog.Level) bool { return true }
func (l *logged) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}
func (l *logged) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logged) WithGroup(string) slog.Handler      { return l }

// TestStderrIsReadInBoundedLines: a stdio server that writes 10 MB to stderr without a
// newline costs the worker one bounded line, logged cut and saying so; control characters
// never reach the log.
func TestStderrIsReadInBoundedLines(t *testing.T) {
	var log logged
	cfg := Config{Servers: []Server{{Name: "noisy", Command: []string{os.Args[0]}, Env: []string{"COSCI_TOOLS_TEST_HELPER"}}}}
	b := Open(cfg, func(k string) string {
		return map[string]string{"COSCI_TOOLS_TEST_HELPER": "stderr", "PATH": os.Getenv("PATH")}[k]
	}, slog.New(&log))
	tr, err := b.transport(cfg.Servers[0])
	if err != nil {
		t.Fatal(err)
	}
	cmd := tr.(*mcp.CommandTransport).Command
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	w := cmd.Stderr.(*logWriter)
	if cap(w.buf) > 2*MaxLogLine {
		t.Errorf("the stderr reader holds %d bytes, want at most %d", cap(w.buf), 2*MaxLogLine)
	}
	var lines []string
	var cut []bool
	for _, r := range log.records {
		lines = append(lines, r.Message)
		c := false
		r.Attrs(func(a slog.Attr) bool {
			c = c || a.Key == "cut"
			return true
		})
		cut = append(cut, c)
	}
	if len(lines) != 2 {
		var lens []int
		for _, l := range lines {
			lens = append(lens, len(l))
		}
		t.Fatalf("%d lines logged (of %v bytes), want 2", len(lines), lens)
	}
	if len(lines[0]) != MaxLogLine || strings.Trim(lines[0], "a") != "" || !cut[0] {
		t.Errorf("the long line logged as %d bytes (cut noted: %v), want its first %d, noted as cut", len(lines[0]), cut[0], MaxLogLine)
	}
	if lines[1] != "after [31mred[0m done" || cut[1] {
		t.Errorf("the line after logged as %q (cut: %v), want it whole without control characters", lines[1], cut[1])
	}
}
