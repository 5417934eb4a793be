package fulltext

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Headings by what they are: a name papers give their sections ("Materials and methods"),
// a numbered line ("2.1 Cohort assembly", "II. System architecture", "A. Front end"), or
// a short line set in a larger type than the body. A heading is a line of its own with no
// sentence's end.

// heading is a heading read from a PDF's block.
type heading struct {
	text   string
	kind   string // the section a listed name opens
	listed bool
	level  int // 1 for a section, 2 for a subsection
}

var numbered = regexp.MustCompile(`^(\d+(?:\.\d+)*\.?|[IVX]+\.|[A-H]\.)\s+(\S.*)$`)

// headingIn says whether a block is a heading, and of what. unlisted allows headings
// by layout alone (a larger type), which the front matter's title would be.
func headingIn(b block, text string, body float64, unlisted bool) (heading, bool) {
	if len(text) > 100 {
		return heading{}, false
	}
	m := numbered.FindStringSubmatch(text)
	depth := 0
	if m != nil {
		depth = 1
		if strings.Count(strings.TrimSuffix(m[1], "."), ".") > 0 || len(m[1]) == 2 && m[1][0] >= 'A' && m[1][0] <= 'H' {
			depth = 2
		}
	}
	if kind, ok := headingOf(text); ok {
		return heading{text: text, kind: kind, listed: true, level: max(depth, 1)}, true
	}
	name := text
	if m != nil {
		name = m[2]
	}
	if !titleLike(name) || caption.MatchString(text) {
		return heading{}, false
	}
	larger := body > 0 && b.size > 1.05*body
	// A letter ("A. Front end") numbers a subsection, and only after the front matter:
	// "A. Person" there is an author.
	switch {
	case m != nil && (b.gap > 0.3 || larger) && len(b.lines) == 1 && (unlisted || !unicode.IsLetter(rune(m[1][0]))):
		return heading{text: text, level: depth}, true
	case m == nil && unlisted && (larger || b.alone) && len(b.lines) == 1 && len(strings.Fields(name)) <= 12:
		level := 1
		if !larger {
			level = 2 // in the body's type: a subheading
		}
		return heading{text: text, level: level}, true
	}
	return heading{}, false
}

// titleLike says whether a line reads as a heading's name: a capital first, mostly
// letters, no sentence's or clause's end, no label and no list.
func titleLike(s string) bool {
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	if !unicode.IsUpper(first) || strings.ContainsRune(".,;:=", last) || len(strings.Fields(s)) > 14 ||
		strings.Contains(s, ": ") || strings.Count(s, ",") > 1 || strings.Contains(s, ". ") {
		return false // a label ("Keywords: ..."), a list, a sentence's end inside
	}
	letters, other := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case !unicode.IsSpace(r):
			other++
		}
	}
	return letters >= 3*other && letters >= 3
}

// bodySize is the height of the body's lines: the most common block size, by lines.
func bodySize(blocks []block) float64 {
	var sizes []float64
	for _, b := range blocks {
		for range b.lines {
			if b.size > 0 {
				sizes = append(sizes, b.size)
			}
		}
	}
	if len(sizes) == 0 {
		return 0
	}
	slices.Sort(sizes)
	return sizes[len(sizes)/2]
}

// abstractLead reads a paragraph that opens with its heading ("Abstract—Pressure ...",
// IEEE's), giving the rest.
func abstractLead(text string) (string, bool) {
	for _, lead := range []string{"Abstract", "ABSTRACT", "Summary"} {
		rest, ok := strings.CutPrefix(text, lead)
		if !ok {
			continue
		}
		r, size := utf8.DecodeRuneInString(rest)
		if strings.ContainsRune("—–-:.", r) {
			return strings.TrimSpace(rest[size:]), true
		}
	}
	return "", false
}
