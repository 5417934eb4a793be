package report

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

// Location is where in its source a quote is, as a reader would cite it: "p. 7,
// Results", "p. 7", "Results" (a text without pages), or "". The section comes from a
// tool result: only its letters and spaces are kept, and only a short name.
func Location(r research.Reference) string {
	var parts []string
	if r.Page > 0 && r.Page < 1_000_000 {
		parts = append(parts, fmt.Sprintf("p. %d", r.Page))
	}
	if s := sectionName(r.Section); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func sectionName(s string) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || r == ' ' {
			return r
		}
		return ' '
	}, s)), " ")
	if s == "" || len(s) > 40 {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
