package doccheck

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/testcheck"
)

// TestCommandLines: the extraction reads continuations, comments, environment prefixes,
// exports, placeholders and `&&` as a shell does, finds a program by its binary's name or
// its `go run` package, and gives each line its file and line.
func TestCommandLines(t *testing.T) {
	doc := "```sh\n" +
		"COSCI_STORE=/tmp/s go run ./starter state <session-id> \\\n  --limit 5   # a comment\n" +
		"bin/starter status tau-1 --jsn\n" +
		"make build && starter frobnicate\n" +
		"```\n"
	lines := CommandLines(t, map[string]string{"doc.md": doc}, "starter", "starter")
	if len(lines) != 3 {
		t.Fatalf("found %d command lines, want 3: %+v", len(lines), lines)
	}
	if got := strings.Join(lines[0].Args, " "); got != "state tau-1 --limit 5" || lines[0].Env["COSCI_STORE"] != "/tmp/s" || lines[0].Where != "doc.md:2" {
		t.Errorf("first line read as %q, env %v, at %s", got, lines[0].Env, lines[0].Where)
	}
	for i, want := range []string{"status tau-1 --jsn", "frobnicate"} {
		if got := strings.Join(lines[i+1].Args, " "); got != want {
			t.Errorf("line %d read as %q, want %q", i+2, got, want)
		}
	}

	doc = "```sh\nexport COSCI_TOOLS=tools.yaml\nCOSCI_STORE=/tmp/s bin/cosci-worker --slots 2 \\\n  --offline-latency 1s\ngo run ./worker --slot 2\n```\n"
	lines = CommandLines(t, map[string]string{"doc.md": doc}, "worker", "cosci-worker", "worker")
	if len(lines) != 2 {
		t.Fatalf("found %d worker command lines, want 2: %+v", len(lines), lines)
	}
	if got := strings.Join(lines[0].Args, " "); got != "--slots 2 --offline-latency 1s" || lines[0].Env["COSCI_STORE"] != "/tmp/s" || lines[0].Env["COSCI_TOOLS"] != "tools.yaml" {
		t.Errorf("first worker line read as %q, env %v", got, lines[0].Env)
	}
	if got := strings.Join(lines[1].Args, " "); got != "--slot 2" || lines[1].Env["COSCI_TOOLS"] != "tools.yaml" || lines[1].Env["COSCI_STORE"] != "" {
		t.Errorf("second worker line read as %q, env %v", got, lines[1].Env)
	}
}

// TestUnknownPlaceholder: a placeholder the check does not know is refused.
func TestUnknownPlaceholder(t *testing.T) {
	if _, err := substitute("<no-such-placeholder>"); err == nil {
		t.Error("an unknown placeholder was accepted")
	}
}

// TestMentions: a phrase is mentioned only as words of its own.
func TestMentions(t *testing.T) {
	for _, c := range []struct {
		text, phrase string
		want         bool
	}{
		{"use --limit 5", "--limit", true},
		{"use `--limit`.", "--limit", true},
		{"use --limit-x 5", "--limit", false},
		{"starter state tau-1", "starter state", true},
		{"starter statex", "starter state", false},
	} {
		if got := Mentions(c.text, c.phrase); got != c.want {
			t.Errorf("Mentions(%q, %q) = %v, want %v", c.text, c.phrase, got, c.want)
		}
	}
}

// TestFiles: the module's README and docs/*.md are read, named relative to the module.
func TestFiles(t *testing.T) {
	docs := Files(t, "../..")
	if docs["README.md"] == "" {
		t.Errorf("no README.md among %v", slices.Sorted(maps.Keys(docs)))
	}
	for name := range docs {
		if name != "README.md" && !strings.HasPrefix(name, "docs/") {
			t.Errorf("read %s, which is neither README.md nor in docs/", name)
		}
	}
	if all := All(docs); !strings.Contains(all, docs["README.md"]) {
		t.Error("All left out the README")
	}
}

// TestFlagsDocumented: every flag of a usage text is looked for as --name, as words of its
// own, and counted; text that is not a flag's line is not a flag.
func TestFlagsDocumented(t *testing.T) {
	usage := "Usage of status:\n  -json\n    \tprint JSON\n  -limit int\n    \thow many (default 5)\n   -indented-more\n"
	for _, tt := range []struct {
		docs   string
		failed []string
	}{
		{"use --json or --limit 5", nil},
		{"use --json", []string{"no doc mentions --limit, a flag of starter status: document it in docs/commands.md (or docs/operating.md)"}},
		{"use --json-x or --limit", []string{"no doc mentions --json, a flag of starter status: document it in docs/commands.md (or docs/operating.md)"}},
	} {
		r := testcheck.NewRecorder(t)
		if n := FlagsDocumented(r, tt.docs, usage, "starter status"); n != 2 || !slices.Equal(r.Failures, tt.failed) {
			t.Errorf("%q: %d flags, failures %q; want 2, %q", tt.docs, n, r.Failures, tt.failed)
		}
	}
}
