package main

// The documentation's worker command lines are checked against the worker's own flag
// parser (parseFlags), every flag of the worker must be documented, and so must every
// COSCI_* environment variable cosci reads. starter/docs_test.go checks the starter's
// command lines the same way; both read the docs with internal/doccheck.

import (
	"errors"
	"flag"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/doccheck"
)

// TestDocsWorkerCommandLines parses every worker command line of the README's and
// docs/*.md's code blocks with parseFlags, with the environment the line gives it.
func TestDocsWorkerCommandLines(t *testing.T) {
	lines := doccheck.CommandLines(t, doccheck.Files(t, ".."), "worker", "cosci-worker", "worker")
	if len(lines) < 8 {
		t.Fatalf("found only %d worker command lines in the docs; does the extraction still work?", len(lines))
	}
	t.Logf("%d worker command lines", len(lines))
	for _, l := range lines {
		var err error
		docStderr(t, func() { _, err = parseFlags(l.Args, func(k string) string { return l.Env[k] }) }) // the usage the flag package prints
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: %s\n\tdoes not parse: %v", l.Where, l.Text, err)
		}
	}
}

// TestDocsNameEveryWorkerFlag: every flag parseFlags defines appears in the README or a
// docs/*.md file (docs/operating.md included).
func TestDocsNameEveryWorkerFlag(t *testing.T) {
	docs := doccheck.All(doccheck.Files(t, ".."))
	usage := docStderr(t, func() {
		if _, err := parseFlags([]string{"-h"}, func(string) string { return "" }); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("parseFlags(-h) = %v, want flag.ErrHelp", err)
		}
	})
	if n := doccheck.FlagsDocumented(t, docs, usage, "the worker"); n < 10 {
		t.Fatalf("found %d flags in the worker's usage; does it still print them?\n%s", n, usage)
	}
}

// TestDocsNameEveryEnvironmentVariable: every COSCI_* variable that cosci's code or
// scripts name appears in the README or a docs/*.md file.
func TestDocsNameEveryEnvironmentVariable(t *testing.T) {
	docs := doccheck.All(doccheck.Files(t, ".."))
	name := regexp.MustCompile(`\bCOSCI_[A-Z0-9_]*[A-Z0-9]\b`)
	found := map[string]string{} // variable -> a file that names it
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		code := strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go")
		script := strings.HasSuffix(p, ".sh") || d.Name() == "Makefile"
		if !code && !script {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, v := range name.FindAllString(string(b), -1) {
			found[v] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found["COSCI_STORE"] == "" {
		t.Fatalf("found no COSCI_STORE in the code; does the walk still see it? found %v", found)
	}
	for _, v := range slices.Sorted(maps.Keys(found)) {
		if !doccheck.Mentions(docs, v) {
			t.Errorf("no doc mentions %s (named in %s): document it in docs/commands.md (or docs/operating.md)", v, found[v])
		}
	}
}

// TestDocsCheckCatchesAMistake: a misspelled flag fails the check, and an environment
// prefix reaches parseFlags.
func TestDocsCheckCatchesAMistake(t *testing.T) {
	doc := "```sh\nexport COSCI_TOOLS=tools.yaml\nCOSCI_STORE=/tmp/s bin/cosci-worker --slots 2 \\\n  --offline-latency 1s\ngo run ./worker --slot 2\n```\n"
	lines := doccheck.CommandLines(t, map[string]string{"doc.md": doc}, "worker", "cosci-worker", "worker")
	if len(lines) != 2 {
		t.Fatalf("found %d command lines, want 2: %+v", len(lines), lines)
	}
	c, err := parseFlags(lines[0].Args, func(k string) string { return lines[0].Env[k] })
	if err != nil || c.store != "/tmp/s" || c.tools != "tools.yaml" || c.slots != 2 || c.offline.Latency.String() != "1s" {
		t.Errorf("first line: %+v, %v", c, err)
	}
	docStderr(t, func() { _, err = parseFlags(lines[1].Args, func(string) string { return "" }) })
	if err == nil {
		t.Error("--slot was accepted")
	}
}

// docStderr runs f and returns what it wrote to os.Stderr (where the flag package writes).
func docStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	defer func() { r.Close() }()
	f()
	os.Stderr = old
	w.Close()
	return string(<-done)
}
