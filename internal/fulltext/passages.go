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

// para is a paragraph read from blocks, before it is cut into passages.
type para struct {
	page, last       int   // the pages it starts and ends on
	breaks           []int // where in text its pages after the first start
	section, heading string
	ordinal          int // the section's place, for ids of a text without pages
	text             string
	// float says it may stand inside another's sentence: a caption, a table, a figure's
	// text, a footnote. A sentence it interrupts is joined around it.
	float bool
}

// add joins text, from page, onto the paragraph, noting where each new page starts.
func (p *para) add(text string, page int, join func(a, b string) string) {
	joined := join(p.text, text)
	at := len(joined) - len(text)
	if !strings.HasSuffix(joined, text) {
		at = len(joined) - len(strings.TrimSpace(text))
	}
	for pg := max(p.last, p.page) + 1; pg <= page && p.page > 0; pg++ {
		p.breaks = append(p.breaks, max(at, 0))
	}
	p.last = max(p.last, page)
	p.text = joined
}

// passages reads blocks into passages. paged says the blocks have pages (a PDF): ids are
// then by page (p7.2), else by section (s3.2).
func passages(blocks []block, paged bool) []Passage {
	vocab := vocabulary(blocks)
	body := bodySize(blocks)
	var paras []para
	section, heading, ordinal := SectionFront, "", 0
	topListed := false // the section's top-level heading is a listed one
	topSize := 0.0     // the type size of the last top-level heading
	// An abstract without a heading is one paragraph; the paragraphs after it, before
	// any heading, are the introduction (Nature's). In a paper whose introduction has no
	// heading, the headings that name no section, until a listed one, are its results.
	abstractSeen, inferred := false, false
	for _, b := range blocks {
		if b.heading != "" { // a heading the text's structure gives (JATS, HTML)
			section, heading = b.section, b.heading
			ordinal++
			continue
		}
		text := joinLines(b.lines, vocab)
		if text == "" || paged && pageNumber(text) {
			continue
		}
		if b.section == "" && len(b.lines) <= 2 {
			h, ok := headingIn(b, text, body, paged && section != SectionFront)
			if ok && h.level == 1 && !h.listed && (section == sectionReferences || topSize > 0 && b.size < 0.95*topSize && !numbered.MatchString(text)) {
				h.level = 2 // a reference's first line, or a subheading in a smaller type than its section's
			}
			if ok && section == sectionReferences && !h.listed {
				ok = false
			}
			if ok {
				if h.level == 1 {
					topSize = b.size
				}
				switch {
				case h.level == 1 && h.listed:
					section, topListed, inferred = h.kind, true, false
				case h.level == 1 && inferred:
					section, topListed = SectionResults, false
				case h.level == 1:
					section, topListed = SectionOther, false
				case h.listed && (section == SectionFront || !topListed):
					section = h.kind // a listed name under no listed heading
				}
				heading = h.text
				ordinal++
				continue
			}
		}
		if rest, ok := abstractLead(text); ok && section == SectionFront {
			section, heading, text = SectionAbstract, "Abstract", rest
		}
		sec := section
		if b.section != "" {
			sec = b.section
		}
		if sec == sectionReferences {
			continue
		}
		if sec == SectionFront && b.page == 1 && len(strings.Fields(text)) >= 40 {
			n := len(paras)
			switch {
			case n > 0 && paras[n-1].section == SectionAbstract && continues(paras[n-1].text, text):
				sec = SectionAbstract
			case abstractSeen:
				section, sec, inferred = SectionIntroduction, SectionIntroduction, true
			default:
				sec, abstractSeen = SectionAbstract, true // an abstract without a heading
			}
		}
		join := func(a, c string) string { return joinAcross(a, c, vocab) }
		// A paragraph that runs on from the last column or page, perhaps around a
		// caption, a table or a footnote set inside its sentence: one passage.
		float := paged && (isFloat(text) || b.rows >= 2 || b.rows == 1 && len(b.lines) == 1)
		if k := opened(paras, sec, heading, text, float); k >= 0 {
			paras[k].add(text, b.page, join)
			continue
		}
		// Short blocks (a caption and a table's rows) are read together, and a subheading
		// with the paragraph it heads.
		// A paragraph cut short by a float is not: its sentence goes on after the float.
		// Nor is prose read into a float: a sentence that opens after a table or an
		// equation is the paper's own.
		if n := len(paras); n > 0 && paras[n-1].section == sec && paras[n-1].heading == heading && max(paras[n-1].last, paras[n-1].page) == b.page &&
			(paras[n-1].float || float || ended(paras[n-1].text) || !paged || sec == SectionFront) &&
			!(paged && paras[n-1].float && !float && startsCapital(text)) &&
			(len(paras[n-1].text) < minPassage && len(text) < minPassage || subheading(paras[n-1].text)) {
			paras[n-1].add(text, b.page, func(a, c string) string { return a + " " + c })
			paras[n-1].float = paras[n-1].float || float
			continue
		}
		paras = append(paras, para{page: b.page, last: b.page, section: sec, heading: heading, ordinal: max(ordinal, 1), text: text, float: float})
	}
	return cutParas(paras, paged)
}

// opened is the paragraph text carries on, if any: the last one, or the last that ends
// mid-sentence with only floats (captions, tables, a figure's words, a footnote) after
// it; -1 for none. A float's text (a table's cells) carries on only a float, or a text
// that ends in a sign.
func opened(paras []para, sec, heading, text string, float bool) int {
	n := len(paras)
	if n == 0 || paras[n-1].section != sec || paras[n-1].heading != heading {
		return -1 // a heading stands between
	}
	for k := n - 1; k >= 0 && k >= n-5 && !float; k-- {
		p := paras[k]
		if p.section != sec || p.heading != heading {
			break
		}
		if !p.float && continues(p.text, text) {
			return k
		}
		if !p.float && len(p.text) >= 2*minPassage {
			break
		}
	}
	last, _ := utf8.DecodeLastRuneInString(paras[n-1].text)
	if (!float || paras[n-1].float || strings.ContainsRune(signs, last)) && continues(paras[n-1].text, text) {
		return n - 1 // a caption or a table that runs on into the next column
	}
	return -1
}

// isFloat says whether a block's text is a float's: a figure's or a table's caption, or
// a table's cells (more digits than letters).
func isFloat(text string) bool {
	letters, digits := 0, 0
	for _, r := range text {
		switch {
		case unicode.IsLetter(r):
			letters++
		case unicode.IsDigit(r):
			digits++
		}
	}
	return caption.MatchString(text) || digits > letters // a table's cells
}

func startsCapital(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// ended says whether a text ends a sentence.
func ended(s string) bool {
	last, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".?!:;)\"”’]", last)
}

// cutParas cuts long paragraphs into passages at sentences: each piece has the page it
// starts on and the breaks within it, and its id by that page.
func cutParas(paras []para, paged bool) []Passage {
	var out []Passage
	count := map[int]int{}
	for _, p := range paras {
		if paged && pageNumber(p.text) {
			continue
		}
		whole := Passage{Page: p.page, Breaks: p.breaks}
		for _, sp := range cut(p.text, maxPassage) {
			page := whole.PageAt(sp.Start)
			var breaks []int
			for _, b := range p.breaks {
				if b > sp.Start && b < sp.End {
					breaks = append(breaks, b-sp.Start)
				}
			}
			key := page
			if !paged {
				key = p.ordinal
			}
			count[key]++
			id := fmt.Sprintf("p%d.%d", page, count[key])
			if !paged {
				id = fmt.Sprintf("s%d.%d", p.ordinal, count[key])
			}
			h := p.heading
			if h != "" && strings.EqualFold(strings.Join(strings.Fields(numbering.ReplaceAllString(h, "")), " "), p.section) {
				h = ""
			}
			out = append(out, Passage{ID: id, Page: page, Section: p.section, Heading: h, Text: p.text[sp.Start:sp.End], Breaks: breaks})
		}
	}
	return out
}

// continues says whether b carries on the paragraph a: a ends mid-sentence and b starts
// with a small letter.
func continues(a, b string) bool {
	last, _ := utf8.DecodeLastRuneInString(a)
	first, _ := utf8.DecodeRuneInString(b)
	if strings.ContainsRune(".?!:;)\"”’]", last) {
		return false
	}
	return unicode.IsLower(first) || unicode.IsDigit(first) && (openWords[strings.ToLower(lastWord(a))] || strings.ContainsRune(signs, last))
}

// signs end no sentence: "(p <" goes on into its number, even one that reads as a
// table's cell.
const signs = "<>=≤≥±×+−–,(/"

// openWords are the words no sentence ends with: a text ending in one (or in a sign, "p <")
// goes on into a number ("... and in" "45 of 206 in the control group.").
var openWords = func() words {
	w := words{}
	for _, t := range strings.Fields("a an the of in on at by for from to with and or than as into over under between within") {
		w[t] = true
	}
	return w
}()

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

// cut cuts a text longer than max into pieces at sentence ends, each at most max bytes
// where its sentences allow, and none shorter than a third of max but the last: their
// spans in text, without the spaces between them.
func cut(text string, max int) []Span {
	var out []Span
	start := 0
	for len(text)-start > max {
		rest := text[start:]
		at := -1
		for i := 0; i+1 < len(rest) && i < max; i++ {
			if (rest[i] == '.' || rest[i] == '?' || rest[i] == '!') && rest[i+1] == ' ' && i >= max/3 {
				at = i + 1
			}
		}
		if at < 0 {
			at = strings.LastIndexByte(rest[:max], ' ')
			if at <= 0 {
				at = max
				for at > 0 && !utf8.RuneStart(rest[at]) {
					at--
				}
			}
		}
		out = append(out, trimSpan(text, start, start+at))
		start += at
		for start < len(text) && text[start] == ' ' {
			start++
		}
	}
	if start < len(text) {
		out = append(out, trimSpan(text, start, len(text)))
	}
	return out
}

func trimSpan(text string, start, end int) Span {
	for start < end && text[start] == ' ' {
		start++
	}
	for end > start && text[end-1] == ' ' {
		end--
	}
	return Span{start, end}
}
