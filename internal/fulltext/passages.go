package fulltext

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/passage"
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
	"methodology": SectionMethods, "method": SectionMethods, "patients and methods": SectionMethods, "subjects and methods": SectionMethods,
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
	st := sections{section: SectionFront}
	for _, b := range blocks {
		if b.heading != "" { // a heading the text's structure gives (JATS, HTML)
			st.section, st.heading = b.section, b.heading
			st.ordinal++
			continue
		}
		text := joinLines(b.lines, vocab)
		if text == "" || paged && pageNumber(text) {
			continue
		}
		if b.section == "" && len(b.lines) <= 2 {
			if h, ok := headingIn(b, text, body, paged && st.section != SectionFront); ok && st.take(h, b, text) {
				continue
			}
		}
		if h, ok := runIn(text); ok && paged && st.section != SectionFront {
			st.take(h, b, text) // and the paragraph is read whole, its head in it
		}
		if rest, ok := abstractLead(text); ok && st.section == SectionFront {
			st.section, st.heading, text = SectionAbstract, "Abstract", rest
		}
		sec := st.section
		if b.section != "" {
			sec = b.section
		}
		if sec == sectionReferences {
			continue
		}
		if sec == SectionFront && b.page == 1 && len(strings.Fields(text)) >= 40 {
			sec = st.unheaded(paras, text)
		}
		join := func(a, c string) string { return joinAcross(a, c, vocab) }
		// A paragraph that runs on from the last column or page, perhaps around a
		// caption, a table or a footnote set inside its sentence: one passage.
		// A float: a caption, a table, a footnote (in a smaller type than the body's).
		float := paged && (isFloat(text) || b.rows >= 2 || b.rows == 1 && len(b.lines) == 1 || b.size > 0 && b.size < 0.85*body ||
			b.gap >= 0.4 && footnoteMark.MatchString(text))
		if k := opened(paras, sec, st.heading, text, float); k >= 0 {
			paras[k].add(text, b.page, join)
			continue
		}
		if n := len(paras); n > 0 && readWith(paras[n-1], sec, st.heading, b.page, text, float, paged) {
			paras[n-1].add(text, b.page, func(a, c string) string { return a + " " + c })
			paras[n-1].float = paras[n-1].float || float
			continue
		}
		paras = append(paras, para{page: b.page, last: b.page, section: sec, heading: st.heading, ordinal: max(st.ordinal, 1), text: text, float: float})
	}
	return cutParas(paras, paged)
}

// runInHead opens a paragraph with a numbered subsection's run-in head: "2.1. Stock as
// a queue. Let a dock hold ..." (amsart's, and any class's \paragraph-style heads with a
// number). A number with one part is not one: a list's item ("1. Measure the ...").
var runInHead = regexp.MustCompile(`^(\d+(?:\.\d+)+\.?)\s+(\p{Lu}[^.]{1,80}?)\.\s+\S`)

// runIn is the run-in head a paragraph opens with, if any.
func runIn(text string) (heading, bool) {
	m := runInHead.FindStringSubmatch(text)
	if m == nil || !titleLike(m[2]) {
		return heading{}, false
	}
	return heading{text: m[1] + " " + m[2], level: 2}, true
}

// sections is where a reading of blocks is: the section and heading the next passage
// is in.
type sections struct {
	section, heading string
	ordinal          int     // the section's place, for ids of a text without pages
	topListed        bool    // the section's top-level heading is a listed one
	topSize          float64 // the type size of the last top-level heading
	// An abstract without a heading is one paragraph; the paragraphs after it, before
	// any heading, are the introduction (Nature's). In a paper whose introduction has no
	// heading, the headings that name no section, until a listed one, are its results.
	abstractSeen, inferred bool
}

// take reads a heading found in block b: the section it opens, or the subsection. It
// says false when the line is not taken as a heading after all: in the references, only
// a listed name is one.
func (st *sections) take(h heading, b block, text string) bool {
	if h.level == 1 && !h.listed && (st.section == sectionReferences || st.topSize > 0 && b.size < 0.95*st.topSize && !numbered.MatchString(text)) {
		h.level = 2 // a reference's first line, or a subheading in a smaller type than its section's
	}
	if st.section == sectionReferences && !h.listed {
		return false
	}
	if h.level == 1 {
		st.topSize = b.size
	}
	switch {
	case h.level == 1 && h.listed:
		st.section, st.topListed, st.inferred = h.kind, true, false
	case h.level == 1 && st.inferred:
		st.section, st.topListed = SectionResults, false
	case h.level == 1:
		st.section, st.topListed = SectionOther, false
	case h.listed && (st.section == SectionFront || !st.topListed):
		st.section = h.kind // a listed name under no listed heading
	}
	st.heading = h.text
	st.ordinal++
	return true
}

// unheaded is the section of a long paragraph on the first page before any heading: the
// abstract, or after it the introduction.
func (st *sections) unheaded(paras []para, text string) string {
	n := len(paras)
	switch {
	case n > 0 && paras[n-1].section == SectionAbstract && continues(paras[n-1].text, text):
		return SectionAbstract
	case st.abstractSeen:
		st.section, st.inferred = SectionIntroduction, true
		return SectionIntroduction
	}
	st.abstractSeen = true
	return SectionAbstract // an abstract without a heading
}

// readWith says whether a block's text is read with the paragraph before it: short
// blocks (a caption and a table's rows) together, and a subheading with the paragraph it
// heads. Not a paragraph cut short by a float (its sentence goes on after the float),
// nor prose into a float (a sentence that opens after a table or an equation is the
// paper's own), nor across a heading or a page.
func readWith(p para, sec, heading string, page int, text string, float, paged bool) bool {
	return p.section == sec && p.heading == heading && max(p.last, p.page) == page &&
		(p.float || float || ended(p.text) || !paged || sec == SectionFront) &&
		!(paged && p.float && !float && startsCapital(text)) &&
		!(paged && float && !p.float && !ended(p.text)) && // a caption set inside a sentence
		(len(p.text) < minPassage && len(text) < minPassage || subheading(p.text))
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

// footnoteMark opens a footnote: a mark, or a number before a capital ("1 See ...").
var footnoteMark = regexp.MustCompile(`^([*†‡§¶∗]|\d{1,2} \p{Lu})`)

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
			id := passage.At("", page, count[key]).Place() // the library names its source
			if !paged {
				id = passage.InSection("", p.ordinal, count[key]).Place()
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
