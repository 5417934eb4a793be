package fulltext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Words across line ends: a word hyphenated at a line end is joined again, unless the
// hyphen is the word's own (the paper writes the word with one, or it is a known
// compound), and the text is put in Unicode's compatibility form with its spacing tidied.

// joinAcross joins a paragraph's parts across a column or page break, where a word may be
// hyphenated as at a line end.
func joinAcross(a, b string, vocab words) string {
	return joinLines([]string{a, b}, vocab)
}

// words are the words a document uses, to tell a line end's hyphen that breaks a word
// ("expres-" "sion") from one of a compound ("seed-" "competent").
type words map[string]bool

func vocabulary(blocks []block) words {
	v := words{}
	for _, b := range blocks {
		if b.section == sectionReferences || len(b.lines) == 1 && isReferences(b.lines[0]) {
			break // a reference's title is another paper's spelling ("postmortem")
		}
		for _, l := range b.lines {
			f := strings.Fields(l)
			for i, w := range f {
				w = strings.ToLower(strings.TrimFunc(fold(w), isPunctNotHyphen))
				if i == len(f)-1 && strings.HasSuffix(w, "-") {
					continue // a line end's hyphen says nothing yet
				}
				if i == 0 {
					continue // may be a word's second half
				}
				v[w] = true
			}
		}
	}
	return v
}

func isPunctNotHyphen(r rune) bool { return r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// joinLines joins a block's lines into one text: a word hyphenated at a line end is joined
// again (without the hyphen, unless the document writes the word with one, or writes both
// halves as words and not the whole), a soft hyphen is dropped, and the text is put in
// Unicode's compatibility form (ligatures unfolded) with its spacing tidied.
func joinLines(lines []string, vocab words) string {
	var b strings.Builder
	for _, l := range lines {
		l = strings.TrimSpace(fold(l))
		if l == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(l)
			continue
		}
		text := b.String()
		switch {
		case strings.HasSuffix(text, "\x02") || strings.HasSuffix(text, "\u00ad"):
			// A soft hyphen at the line end (PDFium writes it \x02): the word goes on.
			text = strings.TrimSuffix(strings.TrimSuffix(text, "\x02"), "\u00ad")
			b.Reset()
			b.WriteString(text + l)
		case hyphenBreak(text, l):
			head := lastWord(text)
			tail := firstWord(l)
			joined := strings.ToLower(strings.TrimSuffix(head, "-") + tail)
			compound := strings.ToLower(head + tail)
			keep := vocab[compound] || !vocab[joined] && (compoundTails[strings.ToLower(tail)] ||
				compoundHeads[strings.ToLower(strings.TrimSuffix(lastPart(head), "-"))] && utf8.RuneCountInString(tail) >= 4 ||
				strings.Count(head, "-") >= 2 && joiners[strings.ToLower(strings.TrimSuffix(lastPart(head), "-"))] ||
				vocab[strings.ToLower(strings.TrimSuffix(lastPart(head), "-"))] && vocab[strings.ToLower(tail)] &&
					utf8.RuneCountInString(tail) >= 3 && utf8.RuneCountInString(lastPart(head)) >= 4)
			if !keep {
				text = strings.TrimSuffix(text, "-")
			}
			b.Reset()
			b.WriteString(text + l)
		default:
			b.WriteByte(' ')
			b.WriteString(l)
		}
	}
	return tidy(b.String())
}

// compoundTails are the second halves of the compounds scientific text writes with a
// hyphen ("adeno-associated", "Iba1-positive"): a line end after their hyphen keeps it.
var compoundTails = func() words {
	w := words{}
	for _, t := range strings.Fields(`associated derived dependent independent induced mediated positive negative
		specific treated like related based free type wide competent linked binding containing expressing
		labelled labeled deficient knockout fold dose term scale level sensitive resistant inducible regulated
		activated stimulated driven targeted responsive controlled matched blind blinded year month week day
		old month onset stage phase life cell cells receptor protein analysis analyses`) {
		w[t] = true
	}
	return w
}()

// compoundHeads are the first halves of compounds written with a hyphen ("post-mortem",
// "self-report", "dose-response"), which TeX breaks at their own hyphen and rarely
// inside a plain word. "pre" and "inter" are not: "pre-sented" is a word broken.
var compoundHeads = func() words {
	w := words{}
	for _, t := range strings.Fields(`post ante non anti self cross well dose time half semi multi long short high low
		age sex case double single whole full`) {
		w[t] = true
	}
	return w
}()

// joiners are the short words inside compounds of several parts ("silicon-on-insulator",
// "state-of-the-art"): a line end after "-on-" keeps its hyphen.
var joiners = func() words {
	w := words{}
	for _, t := range strings.Fields("on of the to by at for and or over") {
		w[t] = true
	}
	return w
}()

func isReferences(line string) bool {
	name, ok := headingOf(line)
	return ok && name == sectionReferences
}

// hyphenBreak says whether a line ending in text breaks a word the next line l goes on
// with: a letter and a hyphen, then a letter.
func hyphenBreak(text, l string) bool {
	if !strings.HasSuffix(text, "-") || len(text) < 2 {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(text[:len(text)-1])
	first, _ := utf8.DecodeRuneInString(l)
	return unicode.IsLetter(before) && unicode.IsLetter(first)
}

func lastWord(s string) string {
	if i := strings.LastIndexFunc(s, unicode.IsSpace); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimLeftFunc(s, isPunctNotHyphen)
}

// lastPart is a compound's last part: "anti-in-" gives "in-".
func lastPart(w string) string {
	t := strings.TrimSuffix(w, "-")
	if i := strings.LastIndex(t, "-"); i >= 0 {
		return w[i+1:]
	}
	return w
}

func firstWord(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		return s
	}
	return s[:end]
}

// fold puts text in Unicode's compatibility form: ligatures ("ﬁ"), full-width letters and
// non-breaking spaces as their plain forms. It keeps \x02, the soft hyphen PDFium writes.
func fold(s string) string {
	return norm.NFKC.String(s)
}

// tidy drops control and invisible formatting characters and collapses spacing.
func tidy(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\u00ad' || r == '\x02' || r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\ufeff' || r == '\u2060':
			return -1
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
