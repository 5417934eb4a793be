package fulltext

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// From blocks to passages: headings name the sections (whatever their numbering or case),
// the references are left out, a paragraph that runs on into the next column or page is
// one passage, short blocks (a caption, a table's rows) are read with the next, long
// paragraphs are cut at sentences, and the words a line end hyphenated are joined again.

// Passage lengths, in bytes: a passage is about a paragraph.
const (
	minPassage = 200
	maxPassage = 1500
)

// headings are the section headings papers use, by the section they open. A heading is a
// line of its own, perhaps numbered ("2", "2.", "II.", "B.") and in any case.
var headings = map[string]string{
	"abstract": SectionAbstract, "summary": SectionAbstract,
	"introduction": SectionIntroduction, "background": SectionIntroduction,
	"methods": SectionMethods, "materials and methods": SectionMethods, "material and methods": SectionMethods,
	"methods and materials": SectionMethods, "experimental procedures": SectionMethods, "experimental section": SectionMethods,
	"methodology": SectionMethods, "patients and methods": SectionMethods, "subjects and methods": SectionMethods,
	"online methods": SectionMethods, "star methods": SectionMethods, "experimental": SectionMethods,
	"results": SectionResults, "findings": SectionResults, "results and discussion": SectionResults,
	"discussion": SectionDiscussion, "general discussion": SectionDiscussion,
	"conclusion": SectionConclusions, "conclusions": SectionConclusions, "concluding remarks": SectionConclusions,
	"references": sectionReferences, "bibliography": sectionReferences, "literature cited": sectionReferences,
	"works cited": sectionReferences, "references and notes": sectionReferences, "cited literature": sectionReferences,
	"acknowledgements": SectionOther, "acknowledgments": SectionOther, "acknowledgement": SectionOther,
	"funding": SectionOther, "author contributions": SectionOther, "competing interests": SectionOther,
	"conflict of interest": SectionOther, "conflicts of interest": SectionOther, "declaration of competing interest": SectionOther,
	"data availability": SectionOther, "data availability statement": SectionOther, "supplementary material": SectionOther,
	"supplementary information": SectionOther, "supplementary materials": SectionOther, "appendix": SectionOther,
	"abbreviations": SectionOther, "figure legends": SectionOther,
}

// sectionReferences is the references' section, which gives no passages.
const sectionReferences = "references"

var numbering = regexp.MustCompile(`^(?:\d+(?:\.\d+)*\.?|[IVXivx]+\.|[A-H]\.)\s+`)

// SectionNamed is the section a name or heading names ("Materials and methods",
// "2. Results"), if any.
func SectionNamed(s string) (string, bool) {
	name, ok := headingOf(s)
	if name == sectionReferences {
		return "", false
	}
	return name, ok
}

// headingOf is the section a line opens, if it is a heading.
func headingOf(s string) (string, bool) {
	if len(s) > 60 {
		return "", false
	}
	t := strings.ToLower(strings.TrimSpace(numbering.ReplaceAllString(strings.TrimSpace(s), "")))
	t = strings.Join(strings.Fields(strings.TrimRight(t, ".: ")), " ")
	t = strings.ReplaceAll(t, "&", "and")
	name, ok := headings[t]
	return name, ok
}

// passages reads blocks into passages. paged says the blocks have pages (a PDF): ids are
// then by page (p7.2), else by section (s3.2).
func passages(blocks []block, paged bool) []Passage {
	vocab := vocabulary(blocks)
	type para struct {
		page             int
		section, heading string
		ordinal          int // the section's place, for ids of a text without pages
		text             string
	}
	var paras []para
	section, heading, ordinal := SectionFront, "", 0
	for _, b := range blocks {
		if b.heading != "" { // a heading the text's structure gives (JATS, HTML)
			section, heading = b.section, b.heading
			ordinal++
			continue
		}
		text := joinLines(b.lines, vocab)
		if text == "" {
			continue
		}
		if b.section == "" && len(b.lines) <= 2 {
			if name, ok := headingOf(text); ok {
				section, heading = name, text
				ordinal++
				continue
			}
		}
		sec := section
		if b.section != "" {
			sec = b.section
		}
		if sec == sectionReferences {
			continue
		}
		if sec == SectionFront && b.page == 1 && len(strings.Fields(text)) >= 40 {
			sec = SectionAbstract // an abstract without a heading
		}
		// A paragraph that runs on from the last column or page: one passage.
		if n := len(paras); n > 0 && paras[n-1].section == sec && continues(paras[n-1].text, text) {
			paras[n-1].text = joinAcross(paras[n-1].text, text, vocab)
			continue
		}
		// Short blocks (a caption and a table's rows) are read together, and a subheading
		// with the paragraph it heads.
		if n := len(paras); n > 0 && paras[n-1].section == sec && paras[n-1].page == b.page &&
			(len(paras[n-1].text) < minPassage && len(text) < minPassage || subheading(paras[n-1].text)) {
			paras[n-1].text += " " + text
			continue
		}
		paras = append(paras, para{page: b.page, section: sec, heading: heading, ordinal: max(ordinal, 1), text: text})
	}
	var out []Passage
	count := map[int]int{}
	for _, p := range paras {
		for _, piece := range cut(p.text, maxPassage) {
			key := p.page
			if !paged {
				key = p.ordinal
			}
			count[key]++
			id := fmt.Sprintf("p%d.%d", p.page, count[key])
			if !paged {
				id = fmt.Sprintf("s%d.%d", p.ordinal, count[key])
			}
			h := p.heading
			if h != "" && strings.EqualFold(strings.Join(strings.Fields(numbering.ReplaceAllString(h, "")), " "), p.section) {
				h = ""
			}
			out = append(out, Passage{ID: id, Page: p.page, Section: p.section, Heading: h, Text: piece})
		}
	}
	return out
}

// continues says whether b carries on the paragraph a: a ends mid-sentence and b starts
// with a small letter.
func continues(a, b string) bool {
	last, _ := utf8.DecodeLastRuneInString(a)
	first, _ := utf8.DecodeRuneInString(b)
	return !strings.ContainsRune(".?!:;)\"”’]", last) && unicode.IsLower(first)
}

// subheading says whether a passage is only a heading: a short line with no sentence's end.
func subheading(s string) bool {
	last, _ := utf8.DecodeLastRuneInString(s)
	return len(s) < 80 && !strings.ContainsRune(".?!;)\"”’]", last)
}

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

// cut cuts a text longer than max into pieces at sentence ends, each at most max bytes
// where its sentences allow, and none shorter than a third of max but the last.
func cut(text string, max int) []string {
	if len(text) <= max {
		return []string{text}
	}
	var out []string
	for len(text) > max {
		at := -1
		for i := 0; i+1 < len(text) && i < max; i++ {
			if (text[i] == '.' || text[i] == '?' || text[i] == '!') && text[i+1] == ' ' && i >= max/3 {
				at = i + 1
			}
		}
		if at < 0 {
			at = strings.LastIndexByte(text[:max], ' ')
			if at <= 0 {
				at = max
				for at > 0 && !utf8.RuneStart(text[at]) {
					at--
				}
			}
		}
		out = append(out, strings.TrimSpace(text[:at]))
		text = strings.TrimSpace(text[at:])
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}
