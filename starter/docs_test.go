package main

// The documentation's starter command lines are checked against the starter's own command
// parser, and every command and flag of the starter must be documented. The worker's
// command lines and flags are checked the same way in worker/docs_test.go; both read the
// docs with internal/doccheck.

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/doccheck"
)

// The message of a command line that parsed and went on to dial Temporal: the test points
// TEMPORAL_CONFIG_FILE at a file that is not TOML, so the client options cannot be read and
// nothing is dialled.
const docsNotDialled = "cannot read the Temporal client configuration"

// docsNoKeys is where codec-server, which dials nothing, stops in the test: it finds no
// keys (the test sets none), before it would listen.
const docsNoKeys = "no keys: set COSCI_KEYS_FILE"

// docsInputFlags are the starter flags that read a file while the command line is parsed;
// the test gives them a file of its own.
var docsInputFlags = []string{"result-file", "predictions-file"}

// TestDocsStarterCommandLines parses every starter command line of the README's and
// docs/*.md's code blocks with the starter's own dispatcher (run), stopping it where it
// would dial Temporal.
func TestDocsStarterCommandLines(t *testing.T) {
	lines := doccheck.CommandLines(t, doccheck.Files(t, ".."), "starter", "starter")
	if len(lines) < 30 {
		t.Fatalf("found only %d starter command lines in the docs; does the extraction still work?", len(lines))
	}
	t.Logf("%d starter command lines", len(lines))
	dir := t.TempDir()
	config := filepath.Join(dir, "temporal.toml")
	input := filepath.Join(dir, "input.txt")
	for file, text := range map[string]string{config: "this is [not toml\n", input: "a line of input\n"} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", config)
	t.Setenv("TEMPORAL_PROFILE", "")
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1") // had anything dialled after all, it fails at once
	t.Setenv("COSCI_STORE", filepath.Join(dir, "no-store"))
	t.Setenv("PGCONNECT_TIMEOUT", "1")
	t.Setenv("COSCI_KEYS_FILE", "")
	t.Setenv("COSCI_KEYS", "")
	t.Chdir(dir)
	oldStdin := stdin
	t.Cleanup(func() { stdin = oldStdin })

	for _, l := range lines {
		args := slices.Clone(l.Args)
		for i, a := range args {
			for _, f := range docsInputFlags {
				switch {
				case (a == "-"+f || a == "--"+f) && i+1 < len(args) && args[i+1] != "-":
					args[i+1] = input
				case strings.HasPrefix(a, "-"+f+"=") || strings.HasPrefix(a, "--"+f+"="):
					if _, v, _ := strings.Cut(a, "="); v != "-" {
						args[i] = "--" + f + "=" + input
					}
				}
			}
		}
		stdin = strings.NewReader("a line of input\n")
		_, errOut := quiet(t)
		code := run(args)
		msg := strings.TrimSpace(errOut.String())
		switch {
		case code == 0: // help
		case code == 1 && (strings.Contains(msg, docsNotDialled) || strings.Contains(msg, docsNoKeys)): // parsed
		case code == 2:
			t.Errorf("%s: %s\n\tdoes not parse: %s", l.Where, l.Text, msg)
		default:
			t.Errorf("%s: %s\n\texited %d before it reached Temporal: %s", l.Where, l.Text, code, msg)
		}
	}
}

// TestDocsNameEveryStarterCommand: every command and subcommand of the starter, and every
// flag each takes, appears in the README or docs/*.md.
func TestDocsNameEveryStarterCommand(t *testing.T) {
	docs := doccheck.All(doccheck.Files(t, ".."))
	check := func(cmd ...string) {
		t.Helper()
		name := "starter " + strings.Join(cmd, " ")
		if !doccheck.Mentions(docs, name) {
			t.Errorf("no doc mentions the command %q: add it to docs/commands.md", name)
		}
		out, _ := quiet(t)
		if code := run(append(slices.Clone(cmd), "-h")); code != 0 {
			t.Fatalf("%s -h exited %d", name, code)
		}
		doccheck.FlagsDocumented(t, docs, out.String(), name)
	}
	for _, c := range commands {
		if c.name == "schedule" {
			continue // its subcommands, below
		}
		check(c.name)
	}
	_, usageText, _ := strings.Cut(scheduleUsage, "Subcommands:\n")
	usageText, _, _ = strings.Cut(usageText, "\n\n")
	subs := regexp.MustCompile(`(?m)^  ([a-z]+)\b`).FindAllStringSubmatch(usageText, -1)
	if len(subs) == 0 {
		t.Fatal("found no subcommands in schedule's usage")
	}
	for _, s := range subs {
		check("schedule", s[1])
	}
}

// TestDocsCheckCatchesAMistake: the check refuses a misspelled flag and an unknown command.
// (How the command lines are read out of a doc is internal/doccheck's test.)
func TestDocsCheckCatchesAMistake(t *testing.T) {
	doc := "```sh\n" +
		"COSCI_STORE=/tmp/s go run ./starter state <session-id> \\\n  --limit 5   # a comment\n" +
		"bin/starter status tau-1 --jsn\n" +
		"make build && starter frobnicate\n" +
		"```\n"
	lines := doccheck.CommandLines(t, map[string]string{"doc.md": doc}, "starter", "starter")
	if len(lines) != 3 {
		t.Fatalf("found %d command lines, want 3: %+v", len(lines), lines)
	}
	for _, l := range lines[1:] {
		_, errOut := quiet(t)
		if code := run(l.Args); code != 2 {
			t.Errorf("%s: exited %d, want 2 (%s)", l.Text, code, errOut)
		}
	}
}
