package citation_test

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Labels are checked by construction with a normalisation of this file's own, apart
// from the package's: NFKC, lower case, a line-break hyphen joined, then letters and
// digits only.

var lineBreakHyphen = regexp.MustCompile(`(\pL)-\s+(\pL)`)

// folded are a text's words as this benchmark compares them.
func folded(s string) []string {
	s = strings.ReplaceAll(norm.NFKC.String(s), "\u00ad", "")
	s = lineBreakHyphen.ReplaceAllString(s, "$1$2")
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func words(s string) int { return len(folded(s)) }

// within says whether a quote's words run in the text, in order and together.
func within(text, quote string) bool {
	q := folded(quote)
	return len(q) > 0 && strings.Contains(" "+strings.Join(folded(text), " ")+" ", " "+strings.Join(q, " ")+" ")
}

// nowhere says the quote's letters and digits are not in the text in a row, whatever
// the spacing: the stronger test a dishonest quote must pass.
func nowhere(text, quote string) bool {
	return !strings.Contains(strings.Join(folded(text), ""), strings.Join(folded(quote), ""))
}

var ellipsis = regexp.MustCompile(`\s*(\[\.\.\.\]|\[…\]|\.\.\.|…)\s*`)

// elidedWithin says whether each piece of a quote with elisions runs in the text, in order.
func elidedWithin(text, quote string) bool {
	t := " " + strings.Join(folded(text), " ") + " "
	at, pieces := 0, 0
	for _, p := range ellipsis.Split(quote, -1) {
		if len(folded(p)) == 0 {
			continue
		}
		i := strings.Index(t[at:], " "+strings.Join(folded(p), " ")+" ")
		if i < 0 {
			return false
		}
		at += i + 1
		pieces++
	}
	return pieces > 0
}

var (
	pValue       = regexp.MustCompile(`(?i)\bp ?([<=]) ?\.(\d)`)
	dashRange    = regexp.MustCompile(`(\d)%?[–-](\d)`)
	percentRange = regexp.MustCompile(`(\d)% to (\d)`)
)

// rewritten is a text as the benchmark reads one written otherwise: its words folded,
// British spellings American, Greek letters named, numbers in words as digits, p-values
// with their leading zero and ranges with "to".
func rewritten(s string) string {
	for _, n := range greekNames {
		s = strings.ReplaceAll(s, n.from, n.to)
	}
	s = pValue.ReplaceAllString(s, "p $1 0.$2")
	s = dashRange.ReplaceAllString(s, "$1 to $2")
	s = percentRange.ReplaceAllString(s, "$1 to $2")
	for n, name := range spelledNumbers { // "twenty-four" is one number
		if strings.Contains(name, "-") {
			s = strings.ReplaceAll(strings.ReplaceAll(s, name, strconv.Itoa(n)), strings.ToUpper(name[:1])+name[1:], strconv.Itoa(n))
		}
	}
	ws := folded(s)
	for i, w := range ws {
		for _, p := range britishAmerican {
			if w == strings.ToLower(p.from) {
				ws[i] = strings.ToLower(p.to)
			}
		}
		for n, name := range spelledNumbers {
			if w == name {
				ws[i] = strconv.Itoa(n)
			}
		}
	}
	return strings.Join(ws, " ")
}
