package report

import (
	"regexp"
	"strings"
	"unicode"
)

// Escaping what models and people wrote, so that it reads as text in the Markdown report
// (and in the HTML rendered from it), never as markup.

// oneLine collapses all whitespace, newlines included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell makes s safe inside a table cell: mdText (below), its "|" escaped so it
// cannot end the cell.
func cell(s string) string { return mdText(s) }

// mdText is a one-line text from a model, a tool or a person as the report shows it:
// literally, whatever Markdown or HTML it holds (see escapeLine).
func mdText(s string) string { return escapeLine(oneLine(s)) }

// mdBlock is a text of several lines, escaped as mdText is, keeping its line breaks (and so
// its paragraphs).
func mdBlock(s string) string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")), "\n")
	for i, l := range lines {
		lines[i] = escapeLine(l)
	}
	return strings.Join(lines, "\n")
}

// mdEscaper backslash-escapes the punctuation that makes Markdown structure inline:
// links and images ([ ]), code spans, emphasis and strikethrough, table cells, headings'
// closing marks, and the backslash itself so that none of the text's own combines with
// an escape. "<" and ">" become entities, which every renderer decodes and none reads as
// HTML or an autolink.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", `*`, `\*`, `[`, `\[`, `]`, `\]`, `#`, `\#`, `~`, `\~`, `|`, `\|`,
	`<`, `&lt;`, `>`, `&gt;`)

// entityRE is an HTML character reference, which Markdown decodes: "&" that starts one
// becomes "&amp;", so "&#106;" stays those characters. Any other "&" is left as written.
var entityRE = regexp.MustCompile(`&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);`)

// blockStartRE is what, at the start of a line, makes a list item, an ordered list's
// number, a setext heading's underline or a thematic break.
var blockStartRE = regexp.MustCompile(`^([-+=]|[0-9]{1,9}[.)])`)

// escapeLine makes one line of untrusted text show as itself in Markdown: its inline
// punctuation escaped (mdEscaper), "_" too where it could start or end emphasis (not
// inside a word: snake_case stays readable), its white space at either end gone (four
// spaces before would make a code block, two after a line break) and a leading list,
// heading or rule marker escaped.
func escapeLine(l string) string {
	l = strings.Trim(l, " \t")
	l = entityRE.ReplaceAllStringFunc(l, func(e string) string { return "&amp;" + e[1:] })
	l = mdEscaper.Replace(l)
	if strings.Contains(l, "_") {
		var b strings.Builder
		rs := []rune(l)
		for i, r := range rs {
			if r == '_' && (i == 0 || i == len(rs)-1 || !wordRune(rs[i-1]) || !wordRune(rs[i+1])) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		l = b.String()
	}
	if m := blockStartRE.FindStringIndex(l); m != nil {
		l = l[:m[1]-1] + `\` + l[m[1]-1:]
	}
	return l
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// code renders s as an inline code span, with a fence longer than any run of backticks
// in s, so ids print verbatim whatever they hold.
func code(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " " // CommonMark strips one space each side
	}
	return fence + s + fence
}

// quote renders an untrusted text as a block quote, keeping its line breaks.
func quote(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "> –"
	}
	lines := strings.Split(mdBlock(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// indent is an untrusted text of several lines (mdBlock) kept inside the list item it
// starts in.
func indent(s, prefix string) string {
	return strings.ReplaceAll(mdBlock(s), "\n", "\n"+prefix)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func orText(s string) string {
	if strings.TrimSpace(s) == "" {
		return missing
	}
	return strings.TrimSpace(s)
}
