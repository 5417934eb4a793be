package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// evil is text a model, a tool or a person could send to the scientist's terminal: an
// OSC 8 link that hides where it leads, a screen clear, a window title, a carriage
// return that overwrites the line, a bidirectional override and a line separator.
const evil = "\x1b]8;;http://e\x07click\x1b]8;;\x07\x1b[2J\u202edesrever\x1b]0;t\x07 ok\rFAKE\u2028\u009b1m"

// acts says whether a character would act on a terminal or hide: the ones the terminal
// writer escapes; newlines and tabs are starter's own layout.
func acts(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp))
}

// checkShown fails if out holds a character a terminal would act on, or lacks the escapes
// that show the scientist what was there.
func checkShown(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.IndexFunc(out, acts); i >= 0 {
		t.Errorf("%s prints %q to the terminal:\n%q", what, []rune(out[i:])[0], out)
	}
	for _, want := range []string{`\x1b]8;;http://e\aclick\x1b]8;;\a\x1b[2J\u202edesrever\x1b]0;t\a`} {
		if !strings.Contains(out, want) {
			t.Errorf("%s does not show %s:\n%s", what, want, out)
		}
	}
}

// TestReportCannotDriveTheTerminal: `starter report` prints report.md as the store holds
// it, and run shows every escape sequence in it as text. Before, the bytes reached the
// terminal as they were.
func TestReportCannotDriveTheTerminal(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutReport(t.Context(), "s-1", []byte("# Report: "+evil+"\n\nThe rest.\n")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out, errOut := quiet(t)
	if code := run([]string{"report", "s-1", "--store", dir}); code != 0 {
		t.Fatalf("report exited %d: %s", code, errOut)
	}
	checkShown(t, "starter report", out.String())
	if !strings.Contains(out.String(), "The rest.\n") {
		t.Errorf("the report's own lines are gone:\n%s", out)
	}
}

// TestRenderedTextCannotDriveTheTerminal: what status, progress, state, list, history,
// result and tree print of a goal, a title, a reason, a scientist's name, an event's
// detail or a subagent's name reaches the terminal through run's terminal writer as
// visible escapes, and a newline in a reason cannot start a line of its own.
func TestRenderedTextCannotDriveTheTerminal(t *testing.T) {
	stamp := "2026-01-02T03:04:05Z"
	entry := session.Entry{ID: "h-1", Title: "Title " + evil, Origin: "generation", Excluded: "unsafe " + evil}
	tests := []struct {
		name  string
		draw  func(io.Writer) error
		lines int // how many lines it prints; 0: not checked
	}{
		{"status", func(w io.Writer) error {
			return renderStatus(w, workflows.Status{SessionID: "s-1", State: session.Suspended, Reason: "budget\nstate\tcompleted " + evil,
				ScientistID: "ada\n" + evil, Goal: "Goal " + evil, StartedAt: stamp, UpdatedAt: stamp})
		}, 7},
		{"progress", func(w io.Writer) error {
			return renderProgress(w, session.Progress{State: session.Active,
				Waiting: []session.WaitingCall{{ID: "c-1", Tool: "web.search", Brief: "Brief " + evil, Since: stamp}}})
		}, 0},
		{"state", func(w io.Writer) error {
			return renderState(w, workflows.StateView{SessionID: "s-1", State: session.Completed, Goal: "Goal " + evil, ScientistID: evil,
				Refinements: []session.Refinement{{Time: stamp, Goal: "New " + evil}}, Plan: "Plan " + evil, MetaReview: []string{"Critique " + evil},
				StopReason: "stop\n" + evil, Hypotheses: []session.Entry{entry}, Total: 1})
		}, 0},
		{"list", func(w io.Writer) error {
			return renderList(w, []listRow{{ID: "s-1", Status: "Running", Scientist: "ada " + evil, Goal: "Goal " + evil, Started: time.Unix(0, 0)}})
		}, 2},
		{"history", func(w io.Writer) error {
			return renderHistory(w, workflows.HistoryView{Total: 1, Events: []session.Event{{Seq: 1, Time: stamp, Kind: session.EventCommand,
				Command: "refine", Detail: "Detail " + evil}}})
		}, 1},
		{"result", func(w io.Writer) error {
			return renderResult(w, workflows.Result{SessionID: "s-1", State: session.Completed, StopReason: "done\n" + evil, Hypotheses: 1,
				Top: []session.Entry{entry}}, "")
		}, 0},
		{"tree", func(w io.Writer) error {
			return renderTree(w, &treeNode{ID: "s-1", State: "completed", Children: []*treeNode{{ID: "s-1-sub-1", Name: "Sub " + evil, State: "running"}}}, "s-1")
		}, 2},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		term := newTerminal(&b)
		if err := tt.draw(term); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		out := b.String()
		checkShown(t, tt.name, out)
		if n := strings.Count(out, "\n"); tt.lines > 0 && n != tt.lines {
			t.Errorf("%s prints %d lines, want %d:\n%s", tt.name, n, tt.lines, out)
		}
	}
}

// TestTerminalWriter: the writer escapes what a terminal acts on, keeps newlines, tabs and
// every visible character, and keeps a character split between two writes whole.
func TestTerminalWriter(t *testing.T) {
	for _, tt := range []struct {
		writes []string
		want   string
	}{
		{[]string{"plain é 日本\tcol\n"}, "plain é 日本\tcol\n"},
		{[]string{"\x1b[2J\x1b]0;t\x07"}, `\x1b[2J\x1b]0;t\a`},
		{[]string{"a\rb\u202ec\u200bd\u2028e\u009bf\x7fg"}, `a\rb\u202ec\u200bd\u2028e\u009bf\u007fg`},
		{[]string{"caf\xc3", "\xa9 \xe6\x97", "\xa5"}, "café 日"},
		{[]string{"bad \xff", " end \xe6"}, `bad \ufffd end \ufffd`},
	} {
		var b bytes.Buffer
		term := newTerminal(&b)
		for _, w := range tt.writes {
			if n, err := term.Write([]byte(w)); n != len(w) || err != nil {
				t.Errorf("Write(%q) = %d, %v", w, n, err)
			}
		}
		if err := term.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != tt.want {
			t.Errorf("writes %q show %q, want %q", tt.writes, got, tt.want)
		}
	}
}

// TestHiddenCharactersKeepJSON: what the terminal writer makes of the hidden characters a
// JSON encoder leaves raw (DEL, C1 controls, bidi and tag characters) is still JSON.
func TestHiddenCharactersKeepJSON(t *testing.T) {
	raw, err := json.Marshal(map[string]string{"title": "a\x7fb\u0085c\u202ed\U000E0041e"})
	if err != nil {
		t.Fatal(err)
	}
	shown := printable(string(raw))
	var back map[string]string
	if err := json.Unmarshal([]byte(shown), &back); err != nil {
		t.Fatalf("%s is no longer JSON: %v", shown, err)
	}
	if back["title"] != "a\x7fb\u0085c\u202ed\U000E0041e" || strings.ContainsAny(shown, "\x7f\u0085\u202e\U000E0041") {
		t.Errorf("shown %q, read back %q", shown, back["title"])
	}
}
