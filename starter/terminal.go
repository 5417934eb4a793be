package main

// What a terminal may be shown: text from models, tools and people with the characters a
// terminal would act on or hide written as escapes.

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// printable is text from a model or a tool as a terminal may show it: control characters
// (escape sequences, carriage returns, tabs, newlines) and invisible formatting ones
// (bidirectional overrides, zero-width characters, line separators) written as Go escapes
// (\x1b, \u202e), the rest as is.
func printable(s string) string { return escapeHidden(s, func(rune) bool { return false }) }

// escapeHidden writes the hidden characters of s that keep does not keep as Go escapes.
func escapeHidden(s string, keep func(rune) bool) string {
	shown := func(r rune) bool { return !hidden(r) || keep(r) }
	if !strings.ContainsFunc(s, func(r rune) bool { return !shown(r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case shown(r):
			b.WriteRune(r)
		case r < 0x20: // \x1b, \r: never raw inside JSON, which escapes them itself
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			// \u form, in UTF-16 as JSON writes it (a surrogate pair past U+FFFF), so that
			// starter's --json output stays JSON: DEL, C1 controls, bidi and tag characters.
			if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
				fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
			} else {
				fmt.Fprintf(&b, "\\u%04x", r)
			}
		}
	}
	return b.String()
}

// hidden says whether a terminal would act on a character, or show nothing for it: C0 and
// C1 controls (ESC starts the CSI and OSC sequences that clear the screen, retitle the
// window or hide a link), format characters (bidirectional overrides, zero-width ones),
// line and paragraph separators, and bytes that are not UTF-8.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError
}

// terminal is where starter's output goes (run puts it in front of stdout and stderr):
// every character a terminal would act on or hide is written as its Go escape, newlines
// and tabs aside, which starter's own layout uses. Goals, titles, reasons, reports and
// errors carry text from models, tools and people; none of it can move the cursor, clear
// the screen, set the window's title, hide a link (OSC 8) or reorder what is shown.
type terminal struct {
	w       io.Writer
	mu      sync.Mutex // a client's goroutines may write at once
	partial []byte     // the start of a character that the next Write completes
}

func newTerminal(w io.Writer) *terminal { return &terminal{w: w} }

func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	data := append(t.partial, p...)
	t.partial = nil
	// A character split between two writes is kept whole for the next.
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				t.partial = append([]byte(nil), data[i:]...)
				data = data[:i]
			}
			break
		}
	}
	if _, err := io.WriteString(t.w, escapeHidden(string(data), layout)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is left of a character no write completed, escaped.
func (t *terminal) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.partial) == 0 {
		return nil
	}
	rest := t.partial
	t.partial = nil
	_, err := io.WriteString(t.w, escapeHidden(string(rest), layout))
	return err
}

// layout are the control characters starter's own output is laid out with.
func layout(r rune) bool { return r == '\n' || r == '\t' }
