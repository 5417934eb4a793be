package citation

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cosci-dev/cosci/internal/fulltext"
	"github.com/cosci-dev/cosci/internal/passage"
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
	ID      passage.ID // its source, and its place in the source's full text
	Page    int        // 0 for a text without pages; the page it starts on
	Section string
	// Heading is its section's heading as the text gives it ("2 Materials and methods"),
	// where that differs from the section's name.
	Heading string
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

// literatureResult is a result of cosci's literature server, read by the JSON names of
// its own types (internal/library's SearchOutput and FetchOutput, which import this
// package, so the names are kept here and held to the library's by its
// TestCitationReadsResults): a search's passages, each naming its reference; a fetch's
// reference, its full text, and the passages asked for.
type literatureResult struct {
	ID       string `json:"id"` // a fetch's reference
	Fulltext *struct {
		File string `json:"file"`
	} `json:"fulltext"`
	Passages []json.RawMessage `json:"passages"` // each read alone: one malformed passage loses only itself
}

// literaturePassage is one passage of a result (library.PassageResult, PassageShown).
type literaturePassage struct {
	Passage  string `json:"passage"` // its whole id: "10.5555/x#p7.2"
	Page     int    `json:"page"`
	LastPage int    `json:"last_page"`
	Breaks   []int  `json:"breaks"`
	Section  string `json:"section"`
	Heading  string `json:"heading"`
	Text     string `json:"text"`
	File     string `json:"file"` // a search's passage names its file; a fetch's, its record's
}

// PassagesIn is every passage of a full text a tool result of cosci's literature server
// gives, in the result's order: a search's passages, a fetch's page, section or passage.
// A result of another shape has none; so does a passage without a text or a well-formed
// id (passage.Parse), and page breaks out of order or outside the text are dropped (the
// passage is then on its first page).
func PassagesIn(content string) []Passage {
	body := strings.TrimSpace(content)
	if len(body) > maxContent || body == "" || body[0] != '{' {
		return nil // the literature server's results are objects, and far shorter
	}
	var res literatureResult
	if json.Unmarshal([]byte(body), &res) != nil {
		return nil
	}
	file := ""
	if res.Fulltext != nil {
		file = res.Fulltext.File // a fetched record's passages are of its full text
	}
	var out []Passage
	for _, raw := range res.Passages {
		var lp literaturePassage
		if len(out) == maxRecords || json.Unmarshal(raw, &lp) != nil {
			continue
		}
		id, err := passage.Parse(lp.Passage)
		if err != nil || id.Source == "" || strings.TrimSpace(lp.Text) == "" {
			continue
		}
		p := Passage{ID: id, Page: max(lp.Page, 0), Section: lp.Section, Heading: lp.Heading, Text: lp.Text, File: file,
			Breaks: breaksOf(lp.Breaks, lp.Text)}
		if lp.File != "" {
			p.File = lp.File
		}
		if lp.LastPage > p.Page && lp.LastPage-p.Page <= maxBreaks {
			p.LastPage = lp.LastPage
		}
		out = append(out, p)
	}
	return out
}

// of is the passages of ps whose source is id.
func of(ps []Passage, id string) []Passage {
	want := ParseID(id)
	var out []Passage
	for _, p := range ps {
		if ParseID(p.ID.Source).Matches(want) {
			out = append(out, p)
		}
	}
	return out
}

// breaksOf is a passage's page breaks as the tool gave them, when they are ascending
// offsets inside its text; else none (a damaged list is no list).
func breaksOf(breaks []int, text string) []int {
	if len(breaks) > maxBreaks {
		return nil
	}
	for i, n := range breaks {
		if n <= 0 || n > len(text) || i > 0 && n <= breaks[i-1] {
			return nil
		}
	}
	return breaks
}

// maxBreaks bounds the page breaks read of one passage.
const maxBreaks = 64

// cited is the passage a reference names, as passage.Parse reads it; ok is false for a
// reference that names none, or names it in no form an id takes.
func cited(ref research.Reference) (passage.ID, bool) {
	id, err := passage.Parse(ref.Passage)
	return id, err == nil
}

// samePlace says whether p is the passage named: the same place, of the same source
// when the name gives one.
func samePlace(p Passage, named passage.ID) bool {
	return p.ID.SamePlace(named) && (named.Source == "" || MatchID(p.ID.Source, named.Source))
}

// located is what a reference's location names in the passages of its source one tool
// result gives (of): the texts to check
// its quote against (the passage named; or each passage's sentences on the page named,
// a passage that crosses onto it or off it included), and the passages they are from. ok
// is false when the result has no such passage.
func located(ps []Passage, ref research.Reference) (texts []string, at []Passage, ok bool) {
	if ref.Passage != "" {
		named, ok := cited(ref)
		for _, p := range ps {
			if ok && samePlace(p, named) {
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
// passage or page of ps, the passages of its source in its result (Compare), or unsupported when the
// result holds no such passage; a quote the source holds elsewhere says where.
//
// A page is read passage by passage, and the best finding is the page's: a page joined
// into one text would read a quote against the first place its words occur, and the
// abstract on page 1 that says "no evidence that" the words the results then state
// would contradict a correct quote of the results. Only when no passage holds the quote
// alone is the page read as one text (a quote that runs from one passage into the next).
func checkAt(ps []Passage, ref research.Reference) Finding {
	texts, _, ok := located(ps, ref)
	var f Finding
	if !ok {
		f = Finding{Verdict: research.CitationUnsupported, Note: fmt.Sprintf("the cited %s is not in what the tool returned for %s", where(ref), ref.ID)}
	} else {
		f = bestOf(texts, ref.Quote)
	}
	if f.Verdict != research.CitationVerified {
		if p, found := holding(ps, ref.Quote); found && ok {
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
func place(r *research.Reference, results []*read) {
	switch {
	case r.Passage != "" || r.Page > 0:
		named := false
		for _, res := range ordered(results, r.Source) {
			texts, at, ok := located(of(res.passages(), r.ID), *r)
			if !ok {
				continue
			}
			if !named {
				named = true
				r.Source, r.File = res.Source, at[0].File
				if r.Passage != "" {
					p := at[0]
					r.Passage, r.Page, r.Section = p.ID.String(), p.Page, p.Section
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
			if _, found := holding(of(res.passages(), r.ID), r.Quote); found {
				r.Source = res.Source // the quote is elsewhere than cited: the check says where
				return
			}
		}
	default:
		for _, res := range results {
			if res.Source != r.Source {
				continue // Resolve chose the result that holds the quote: only its passages place it
			}
			if p, found := holding(of(res.passages(), r.ID), r.Quote); found {
				r.Passage, r.Page, r.Section, r.File = p.ID.String(), p.Page, p.Section, p.File
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
func ordered(results []*read, source string) []*read {
	out := make([]*read, 0, len(results))
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
// ("10.5555/x#p7.2"): the source's id, with the passage in Passage; and a passage named
// by its place alone ("p7.2") as that place of the source cited. Page is the page a
// passage's id names, when the reference gives none.
func passageOf(ref research.Reference) research.Reference {
	if id, err := passage.Parse(ref.ID); err == nil && id.Source != "" {
		ref.ID = id.Source
		if ref.Passage == "" {
			ref.Passage = id.String()
		}
	}
	if id, ok := cited(ref); ok {
		if id.Source == "" {
			ref.Passage = id.In(ref.ID).String()
		}
		if ref.Page == 0 {
			ref.Page = id.Page
		}
	}
	return ref
}
