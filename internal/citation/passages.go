package citation

import (
	"fmt"
	"strconv"
	"strings"

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
	Page    int    // 0 for a text without pages
	Section string
	Text    string
	File    string // the full text's file, as the tool named it
}

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

// located is what a reference's location names in one tool result: the text to check its
// quote against, and the passage (the one named, or the first of the page named). ok is
// false when the result has no such passage.
func located(content string, ref research.Reference) (text string, at Passage, ok bool) {
	ps := Passages(content, ref.ID)
	if ref.Passage != "" {
		for _, p := range ps {
			if samePlace(p.ID, ref.Passage) {
				return p.Text, p, true
			}
		}
		return "", Passage{}, false
	}
	var texts []string
	for _, p := range ps {
		if p.Page == ref.Page {
			if len(texts) == 0 {
				at = p
			}
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n"), at, len(texts) > 0
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
func checkAt(content string, ref research.Reference) Finding {
	text, _, ok := located(content, ref)
	if !ok {
		return Finding{Verdict: research.CitationUnsupported, Note: fmt.Sprintf("the cited %s is not in what the tool returned for %s", where(ref), ref.ID)}
	}
	f := Compare(text, ref.Quote)
	if f.Verdict != research.CitationVerified {
		for _, p := range Passages(content, ref.ID) {
			if Compare(p.Text, ref.Quote).Verdict == research.CitationVerified {
				f.Note = fmt.Sprintf("the quote is from passage %s (%s), not the cited %s", p.ID, pageText(p), where(ref))
				break
			}
		}
	}
	return f
}

func pageText(p Passage) string {
	if p.Page > 0 {
		return fmt.Sprintf("page %d", p.Page)
	}
	return p.Section
}

// place fills in where a reference's quote is, from the tool results the turn read: the
// passage it names (its page, section and file, as the tool gave them, and the result
// that holds it as its source); the page it names (the section of the passage there that
// holds the quote); or, when it names neither, the passage of its source's result that
// holds the quote. A named passage or page no result holds is kept as named: the check
// finds it missing.
func place(r *research.Reference, results []Result) {
	switch {
	case r.Passage != "":
		for _, res := range ordered(results, r.Source) {
			for _, p := range Passages(res.Content, r.ID) {
				if samePlace(p.ID, r.Passage) {
					r.Source, r.Passage, r.Page, r.Section, r.File = res.Source, p.ID, p.Page, p.Section, p.File
					return
				}
			}
		}
	case r.Page > 0:
		for _, res := range ordered(results, r.Source) {
			var on []Passage
			for _, p := range Passages(res.Content, r.ID) {
				if p.Page == r.Page {
					on = append(on, p)
				}
			}
			if len(on) == 0 {
				continue
			}
			r.Source, r.File = res.Source, on[0].File
			for _, p := range on {
				if Compare(p.Text, r.Quote).Verdict == research.CitationVerified {
					r.Section = p.Section
					break
				}
			}
			return
		}
	default:
		for _, res := range results {
			if res.Source != r.Source {
				continue // Resolve chose the result that holds the quote: only its passages place it
			}
			for _, p := range Passages(res.Content, r.ID) {
				if Compare(p.Text, r.Quote).Verdict == research.CitationVerified {
					r.Passage, r.Page, r.Section, r.File = p.ID, p.Page, p.Section, p.File
					return
				}
			}
		}
	}
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
