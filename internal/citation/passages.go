package citation

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/fulltext"
	"github.com/cosci-dev/cosci/internal/research"
)

// Citations at the page: a full text's passages, as a tool result gives them (cosci's
// literature server: a search's passages, a fetch's page, section or passage), each an
// object with its passage id ("10.5555/x#p7.2": the source's id, "#", its place), its
// page, section and text. A reference may name the passage its quote is from, or only a
// page; the check then compares the quote with that passage, or with that page's
// passages, and not with the rest of the source: a quote found on page 3 and cited at
// page 7 is not what page 7 says. A reference that names none is placed, when a passage
// of its source holds its quote, so that the report shows where the words are.

// Passage is a passage of a source's full text as a tool result gives it.
type Passage struct {
	ID      string // the whole passage id, as the tool wrote it
	Page    int    // 0 for a text without pages; the page it starts on
	Section string
	Text    string
	File    string // the full text's file, as the tool named it
	// Breaks are where a passage that crosses a page break runs onto page Page+1,
	// Page+2, ...: byte offsets in Text (fulltext.Passage.Breaks, as the tool gave them).
	Breaks []int
	// LastPage is the page it ends on, as the tool gave it ("last_page"): without
	// Breaks, the passage is read whole at each of its pages.
	LastPage int
}

// OnPage is the passage's sentences on page n (fulltext.Passage.OnPage): all of it for a
// passage on that page alone, "" for one not on it.
func (p Passage) OnPage(n int) string {
	if p.Page == 0 {
		return ""
	}
	if len(p.Breaks) == 0 && p.LastPage > p.Page && n >= p.Page && n <= p.LastPage {
		return p.Text // on these pages, but where each starts was not given
	}
	return fulltext.Passage{Page: p.Page, Text: p.Text, Breaks: p.Breaks}.OnPage(n)
}

// breaksOf reads a passage's page breaks as the tool gave them: ascending offsets inside
// its text, or none (a damaged list is no list: the passage is then on its first page).
func breaksOf(v any, text string) []int {
	list, ok := v.([]any)
	if !ok || len(list) == 0 || len(list) > maxBreaks {
		return nil
	}
	out := make([]int, 0, len(list))
	for _, x := range list {
		n, err := strconv.Atoi(scalar(x))
		if err != nil || n <= 0 || n > len(text) || len(out) > 0 && n <= out[len(out)-1] {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// maxBreaks bounds the page breaks read of one passage.
const maxBreaks = 64

// SplitPassage splits an id that names a passage ("10.5555/x#p7.2") into the source's id
// and the passage's place ("p7.2"); an id without a place is returned whole.
func SplitPassage(id string) (source, place string) {
	i := strings.LastIndexByte(id, '#')
	if i <= 0 || i == len(id)-1 || strings.ContainsAny(id[i+1:], " /") {
		return id, ""
	}
	return id[:i], id[i+1:]
}

// Passages is every passage a tool result gives of the source id, in the result's order.
func Passages(content, id string) []Passage {
	body := strings.TrimSpace(content)
	if len(body) > maxContent {
		body = strings.ToValidUTF8(body[:maxContent], "")
	}
	if body == "" || body[0] != '{' && body[0] != '[' {
		return nil
	}
	v, _ := decodeJSON(body)
	want := ParseID(id)
	var out []Passage
	var walk func(v any, file string, depth int)
	walk = func(v any, file string, depth int) {
		if depth > maxDepth || len(out) >= maxRecords {
			return
		}
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(x, file, depth+1)
			}
		case map[string]any:
			if f := scalar(dig(v, "fulltext", "file")); f != "" {
				file = f // a fetched record's passages are of its full text
			}
			if pid, text := scalar(v["passage"]), scalar(v["text"]); pid != "" && text != "" {
				source, place := SplitPassage(pid)
				if place != "" && ParseID(source).Matches(want) {
					p := Passage{ID: pid, Section: scalar(v["section"]), Text: text, File: file}
					if f := scalar(v["file"]); f != "" {
						p.File = f
					}
					p.Page, _ = strconv.Atoi(scalar(v["page"]))
					p.Breaks = breaksOf(v["breaks"], text)
					if last, err := strconv.Atoi(scalar(v["last_page"])); err == nil && last > p.Page && last-p.Page <= maxBreaks {
						p.LastPage = last
					}
					out = append(out, p)
				}
				return
			}
			for _, k := range sortedMapKeys(v) {
				walk(v[k], file, depth+1)
			}
		}
	}
	walk(v, "", 0)
	return out
}

// samePlace says whether two passage ids name the same passage.
func samePlace(a, b string) bool {
	sa, pa := SplitPassage(a)
	sb, pb := SplitPassage(b)
	return strings.EqualFold(pa, pb) && (sa == "" || sb == "" || MatchID(sa, sb))
}

// pageOf is the page a passage's place names ("p7.2": 7), or 0.
func pageOf(place string) int {
	p, ok := strings.CutPrefix(strings.ToLower(place), "p")
	if !ok {
		return 0
	}
	p, _, _ = strings.Cut(p, ".")
	n, _ := strconv.Atoi(p)
	return n
}

// located is what a reference's location names in one tool result: the texts to check
// its quote against (the passage named; or each passage's sentences on the page named,
// a passage that crosses onto it or off it included), and the passages they are from. ok
// is false when the result has no such passage.
func located(content string, ref research.Reference) (texts []string, at []Passage, ok bool) {
	ps := Passages(content, ref.ID)
	if ref.Passage != "" {
		for _, p := range ps {
			if samePlace(p.ID, ref.Passage) {
				return []string{p.Text}, []Passage{p}, true
			}
		}
		return nil, nil, false
	}
	for _, p := range ps {
		if text := p.OnPage(ref.Page); text != "" {
			texts, at = append(texts, text), append(at, p)
		}
	}
	return texts, at, len(texts) > 0
}

// where names a reference's location, for a note: "passage 10.5555/x#p7.2", "page 7".
func where(ref research.Reference) string {
	if ref.Passage != "" {
		return "passage " + ref.Passage
	}
	return fmt.Sprintf("page %d", ref.Page)
}

// checkAt is the finding of a reference that names a passage or a page, against that
// passage or page of the record content holds (Compare), or unsupported when the
// result holds no such passage; a quote the source holds elsewhere says where.
//
// A page is read passage by passage, and the best finding is the page's: a page joined
// into one text would read a quote against the first place its words occur, and the
// abstract on page 1 that says "no evidence that" the words the results then state
// would contradict a correct quote of the results. Only when no passage holds the quote
// alone is the page read as one text (a quote that runs from one passage into the next).
func checkAt(content string, ref research.Reference) Finding {
	texts, _, ok := located(content, ref)
	var f Finding
	if !ok {
		f = Finding{Verdict: research.CitationUnsupported, Note: fmt.Sprintf("the cited %s is not in what the tool returned for %s", where(ref), ref.ID)}
	} else {
		f = bestOf(texts, ref.Quote)
	}
	if f.Verdict != research.CitationVerified {
		if p, found := holding(Passages(content, ref.ID), ref.Quote); found && ok {
			f.Note = fmt.Sprintf("the quote is from passage %s (%s), not the cited %s", p.ID, pageText(p, ref.Quote), where(ref))
		} else if found {
			f.Note += fmt.Sprintf("; the quote is from passage %s (%s)", p.ID, pageText(p, ref.Quote))
		}
	}
	return f
}

// bestOf is the best finding of a quote against each of texts, or against them joined
// when none holds it alone.
func bestOf(texts []string, quote string) Finding {
	best := Finding{Verdict: research.CitationUnsupported, Note: "the record does not say this"}
	for i, text := range texts {
		if f := Compare(text, quote); i == 0 || rank(f.Verdict) < rank(best.Verdict) {
			best = f
		}
		if best.Verdict == research.CitationVerified {
			return best
		}
	}
	if best.Verdict == research.CitationUnsupported && len(texts) > 1 {
		if f := Compare(strings.Join(texts, "\n\n"), quote); rank(f.Verdict) < rank(best.Verdict) {
			best = f
		}
	}
	return best
}

// holding is the first passage that holds the quote, word for word up to how it is
// written.
func holding(ps []Passage, quote string) (Passage, bool) {
	for _, p := range ps {
		if Compare(p.Text, quote).Verdict == research.CitationVerified {
			return p, true
		}
	}
	return Passage{}, false
}

// pageText names where in a passage that holds it a quote is: its page (of a passage
// that crosses a page break, the page whose sentences hold it), or its section.
func pageText(p Passage, quote string) string {
	if p.Page == 0 {
		return p.Section
	}
	for n := p.Page + 1; n <= p.Page+len(p.Breaks); n++ { // without breaks: its first page
		if Compare(p.OnPage(n), quote).Verdict == research.CitationVerified && Compare(p.OnPage(n-1), quote).Verdict != research.CitationVerified {
			return fmt.Sprintf("page %d", n)
		}
	}
	return fmt.Sprintf("page %d", p.Page)
}

// place fills in where a reference's quote is, from the tool results the turn read: the
// passage it names (its page, section and file, as the tool gave them, and the result
// that holds it as its source); the page it names (the section of the passage there that
// holds the quote); or, when it names neither, the passage of its source's result that
// holds the quote. A named passage or page no result holds is kept as named: the check
// finds it missing.
//
// When no result's named passage or page holds the quote and another result the turn
// read has it in a passage, that result is the source: the check then finds the quote
// is not at the place cited and says where it is, whichever results the turn read it in.
func place(r *research.Reference, results []Result) {
	switch {
	case r.Passage != "" || r.Page > 0:
		named := false
		for _, res := range ordered(results, r.Source) {
			texts, at, ok := located(res.Content, *r)
			if !ok {
				continue
			}
			if !named {
				named = true
				r.Source, r.File = res.Source, at[0].File
				if r.Passage != "" {
					p := at[0]
					r.Passage, r.Page, r.Section = p.ID, p.Page, p.Section
				}
			}
			if bestOf(texts, r.Quote).Verdict == research.CitationVerified {
				r.Source = res.Source
				if r.Passage == "" {
					r.Section = sectionHolding(texts, at, r.Quote)
				}
				return
			}
		}
		for _, res := range ordered(results, r.Source) {
			if _, found := holding(Passages(res.Content, r.ID), r.Quote); found {
				r.Source = res.Source // the quote is elsewhere than cited: the check says where
				return
			}
		}
	default:
		for _, res := range results {
			if res.Source != r.Source {
				continue // Resolve chose the result that holds the quote: only its passages place it
			}
			if p, found := holding(Passages(res.Content, r.ID), r.Quote); found {
				r.Passage, r.Page, r.Section, r.File = p.ID, p.Page, p.Section, p.File
				return
			}
		}
	}
}

// sectionHolding is the section of the passage whose text holds the quote ("" for none).
func sectionHolding(texts []string, at []Passage, quote string) string {
	for i, text := range texts {
		if Compare(text, quote).Verdict == research.CitationVerified {
			return at[i].Section
		}
	}
	return ""
}

// ordered is results with the one of digest source first.
func ordered(results []Result, source string) []Result {
	out := make([]Result, 0, len(results))
	for _, r := range results {
		if r.Source == source {
			out = append(out, r)
		}
	}
	for _, r := range results {
		if r.Source != source {
			out = append(out, r)
		}
	}
	return out
}

// passageOf reads a reference's id as a model may write it, naming a passage
// ("10.5555/x#p7.2"): the source's id, with the passage in Passage.
func passageOf(ref research.Reference) research.Reference {
	if source, place := SplitPassage(ref.ID); place != "" {
		ref.ID = source
		if ref.Passage == "" {
			ref.Passage = source + "#" + place
		}
	}
	if ref.Passage != "" {
		if source, place := SplitPassage(ref.Passage); place == "" {
			ref.Passage = ref.ID + "#" + source // the place alone ("p7.2")
		} else if ref.Page == 0 {
			ref.Page = pageOf(place)
		}
	}
	return ref
}
