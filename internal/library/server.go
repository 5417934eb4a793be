package library

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/fulltext"
	"github.com/cosci-dev/cosci/internal/passage"
)

// The literature server's tools, as MCP offers them to a model: search and fetch. Their
// results are structured (the SDK also writes them as the JSON text of the result, which
// is what a client that reads only text sees). A malformed call gets a tool error that
// says what to do: the model reads it and can try again; nothing stops the server.

// SearchInput is what the search tool takes.
type SearchInput struct {
	Query    string `json:"query" jsonschema:"what to look for, in words: a topic, a mechanism, an author, a title"`
	Limit    int    `json:"limit,omitempty" jsonschema:"how many results, from 1 to 50 (default 10)"`
	YearFrom int    `json:"year_from,omitempty" jsonschema:"only works from this year on"`
	YearTo   int    `json:"year_to,omitempty" jsonschema:"only works up to this year"`
	Passages int    `json:"passages,omitempty" jsonschema:"how many passages of the full texts, from 1 to 20 (default 5)"`
}

// Work is a reference as a result names it: what to cite (id) and its details.
type Work struct {
	ID      string   `json:"id"` // the reference's id: its DOI or citation key
	DOI     string   `json:"doi,omitempty"`
	Key     string   `json:"key,omitempty"`
	Title   string   `json:"title"`
	Authors []string `json:"authors,omitempty"`
	Year    int      `json:"year,omitempty"`
	Venue   string   `json:"venue,omitempty"`
	URL     string   `json:"url,omitempty"`
}

func workOf(r Reference) Work {
	return Work{ID: r.ID, DOI: r.DOI, Key: r.Key, Title: r.Title, Authors: r.Authors, Year: r.Year, Venue: r.Venue, URL: r.URL}
}

// SearchHit is one search result.
type SearchHit struct {
	Work
	// Snippet is the passage of the abstract that best matches the query, word for word.
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
}

// SearchOutput is the search tool's result.
type SearchOutput struct {
	Query   string      `json:"query"`
	Total   int         `json:"total"` // how many references matched
	Results []SearchHit `json:"results"`
	// Passages are the full texts' passages that best match, best first.
	Passages []PassageResult `json:"passages"`
	// Reading is how many full texts are still being read (their passages are not
	// searched yet), and Note says so to the model.
	Reading int    `json:"fulltexts_reading,omitempty"`
	Note    string `json:"note,omitempty"`
}

// PassageResult is a passage of a full text, with its reference's details: what to cite
// (id) and where it is (passage, page, section).
type PassageResult struct {
	Work
	Passage string `json:"passage"` // the passage's id: "<id>#p7.2" (page 7), or "<id>#s3.2" in a text without pages
	Page    int    `json:"page,omitempty"`
	// LastPage is the page a passage that crosses a page break ends on, and Breaks the
	// byte offsets in its text at which its next pages start (fulltext.Passage.Breaks).
	LastPage int     `json:"last_page,omitempty"`
	Breaks   []int   `json:"breaks,omitempty"`
	Section  string  `json:"section"`
	Heading  string  `json:"heading,omitempty"`
	Text     string  `json:"text"`
	File     string  `json:"file,omitempty"` // the full text's file, as the library names it
	Score    float64 `json:"score,omitempty"`
}

// FetchInput is what the fetch tool takes.
type FetchInput struct {
	ID      string `json:"id" jsonschema:"the reference's id from a search result (its DOI or citation key), or a passage's id (10.5555/x#p7.2)"`
	Page    int    `json:"page,omitempty" jsonschema:"read this page of the reference's full text"`
	Section string `json:"section,omitempty" jsonschema:"read this section of the full text: abstract, introduction, methods, results, discussion, conclusions or other"`
}

// FetchOutput is the fetch tool's result: the reference, what the library holds of its
// full text, and the passages asked for.
type FetchOutput struct {
	Reference
	Fulltext *TextInfo      `json:"fulltext,omitempty"`
	Passages []PassageShown `json:"passages,omitempty"`
	// More says what of the passages asked for was left out, and how to read it.
	More string `json:"more,omitempty"`
	// FulltextNote says what of its full text the library does not hold yet, or could not
	// read, and why.
	FulltextNote string `json:"fulltext_note,omitempty"`
}

// TextInfo is what the library holds of a reference's full text.
type TextInfo struct {
	File     string         `json:"file"`
	Kind     string         `json:"kind"`
	Pages    int            `json:"pages,omitempty"`
	NoText   []int          `json:"pages_without_text,omitempty"` // scanned pages: no text layer
	Sections map[string]int `json:"sections"`                     // passages by section
	Passages int            `json:"passages"`
	Read     string         `json:"read"` // how to read it
}

// PassageShown is a passage a fetch gives.
type PassageShown struct {
	Passage  string `json:"passage"`
	Page     int    `json:"page,omitempty"`
	LastPage int    `json:"last_page,omitempty"` // as in PassageResult
	Breaks   []int  `json:"breaks,omitempty"`
	Section  string `json:"section"`
	Heading  string `json:"heading,omitempty"`
	Text     string `json:"text"`
}

// maxFetchText is how much passage text one fetch gives: a section longer than this is
// cut at a passage, and the rest named.
const maxFetchText = 24 << 10

// Server is the literature server over a library: an MCP server named "literature" with
// the tools search and fetch.
func Server(lib *Library) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "literature", Title: "A lab's library of references", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name: "search",
		Description: "Search the lab's library of references: ranked by how well titles, keywords, authors and abstracts match the words of the query. " +
			"Each result has an id to fetch or cite, and the passage of its abstract that best matches. " +
			"Also the passages of the full texts the lab holds (papers' PDFs, PMC texts) that best match: each with its reference's id, its passage id, page and section " +
			"(and last_page, with breaks: the offsets in its text where its next pages start, for a passage that runs onto the next page). " +
			"While full texts are still being read, a note says how many: search again later for their passages.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
		res, err := lib.Search(ctx, Query{Text: in.Query, Limit: in.Limit, YearFrom: in.YearFrom, YearTo: in.YearTo, Passages: in.Passages})
		if err != nil {
			return nil, SearchOutput{}, err // a tool error: the model reads it
		}
		out := SearchOutput{Query: strings.TrimSpace(in.Query), Total: res.Total, Results: []SearchHit{}, Passages: []PassageResult{}, Reading: res.Reading}
		if res.Reading > 0 {
			out.Note = readingNote(res.Reading, res.TextTotal)
		}
		for _, h := range res.Hits {
			out.Results = append(out.Results, SearchHit{Work: workOf(h.Reference), Snippet: h.Snippet, Score: h.Score})
		}
		for _, h := range res.Passages {
			p := h.Passage
			out.Passages = append(out.Passages, PassageResult{Work: workOf(h.Reference), Passage: h.PassageID.String(), Page: p.Page, LastPage: lastPage(p), Breaks: p.Breaks,
				Section: p.Section, Heading: p.Heading, Text: p.Text, File: h.File, Score: h.Score})
		}
		return nil, out, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name: "fetch",
		Description: "Fetch one reference of the library by its id (its DOI, or its citation key, as a search result gives it): its details, whole abstract, and what the library holds of its full text. " +
			"With a page or a section, the full text's passages there (with a page, every passage with a sentence on it); with a passage's id (10.5555/x#p7.2), that passage. " +
			"A full text still being read, or that could not be read, is said so in fulltext_note.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in FetchInput) (*mcp.CallToolResult, FetchOutput, error) {
		out, err := fetch(lib, in)
		return nil, out, err
	})
	return s
}

// fetch answers the fetch tool: a reference, and the passages asked for.
func fetch(lib *Library, in FetchInput) (FetchOutput, error) {
	id := strings.TrimSpace(in.ID)
	if id == "" {
		return FetchOutput{}, fmt.Errorf("the id is empty: give the id of a search result (a DOI or a citation key)")
	}
	pid, err := passage.Parse(id)
	isPassage := err == nil
	if isPassage && pid.Source == "" {
		return FetchOutput{}, fmt.Errorf("%q is a passage's place without its source: give the passage's id as a result gave it (10.5555/x#p7.2)", id)
	}
	r, ok := lib.Get(pid.Source) // a passage's source, or the id whole
	if !ok {
		if strings.Contains(id, "#") && !isPassage {
			return FetchOutput{}, fmt.Errorf("no reference with id %q in the library, and it %v", id, passage.ErrNoPlace)
		}
		return FetchOutput{}, fmt.Errorf("no reference with id %q in the library; use an id from a search result", pid.Source)
	}
	out := FetchOutput{Reference: r}
	_, t, doc, has := lib.FullText(r.ID)
	out.FulltextNote = textNote(lib, r.ID, has, t.Name)
	if !has {
		if !isPassage && in.Page == 0 && in.Section == "" {
			return out, nil
		}
		if out.FulltextNote != "" {
			return FetchOutput{}, fmt.Errorf("%s: %s", r.ID, out.FulltextNote)
		}
		return FetchOutput{}, fmt.Errorf("%s has no full text in the library, only its abstract: fetch it by its id alone", r.ID)
	}
	info := &TextInfo{File: t.Name, Kind: t.Kind, Pages: t.Pages, NoText: t.NoText, Sections: map[string]int{}, Passages: len(doc.Passages)}
	for _, p := range doc.Passages {
		info.Sections[p.Section]++
	}
	info.Read = "fetch with a page or a section to read its passages"
	out.Fulltext = info
	var want []fulltext.Passage
	switch {
	case isPassage:
		i := slices.IndexFunc(doc.Passages, func(p fulltext.Passage) bool { return p.ID == pid.Place() })
		if i < 0 {
			return FetchOutput{}, fmt.Errorf("%s has no passage %q: its passages run from %s to %s; fetch a page or a section to find one", r.ID, pid.Place(), doc.Passages[0].ID, doc.Passages[len(doc.Passages)-1].ID)
		}
		want = doc.Passages[i : i+1]
	case in.Page != 0:
		var err error
		if want, err = onPage(r.ID, t, doc, in.Page); err != nil {
			return FetchOutput{}, err
		}
	case in.Section != "":
		name := strings.ToLower(strings.TrimSpace(in.Section))
		if s, ok := fulltext.SectionNamed(name); ok {
			name = s
		}
		for _, p := range doc.Passages {
			if p.Section == name {
				want = append(want, p)
			}
		}
		if len(want) == 0 {
			var have []string
			for s := range info.Sections {
				have = append(have, s)
			}
			slices.Sort(have)
			return FetchOutput{}, fmt.Errorf("the full text of %s has no %s section; it has %s", r.ID, name, strings.Join(have, ", "))
		}
	default:
		return out, nil
	}
	size := 0
	for i, p := range want {
		if size+len(p.Text) > maxFetchText && i > 0 {
			how := "by id"
			if t.Pages > 0 {
				how = "by page or by id"
			}
			out.More = fmt.Sprintf("%d more passages, from %s to %s, left out to keep this result short; fetch them %s",
				len(want)-i, shownID(r.ID, want[i]), shownID(r.ID, want[len(want)-1]), how)
			break
		}
		size += len(p.Text)
		out.Passages = append(out.Passages, PassageShown{Passage: shownID(r.ID, p), Page: p.Page, LastPage: lastPage(p), Breaks: p.Breaks, Section: p.Section, Heading: p.Heading, Text: p.Text})
	}
	return out, nil
}

// shownID is a passage's id as a result writes it ("10.5555/x#p7.2").
func shownID(source string, p fulltext.Passage) string {
	id, _ := passageID(source, p)
	return id.String()
}

// onPage is every passage of a text with a sentence on page n: those that start on it,
// and those that run onto it from the pages before.
func onPage(id string, t Text, doc fulltext.Document, n int) ([]fulltext.Passage, error) {
	switch {
	case t.Pages == 0:
		return nil, fmt.Errorf("the full text of %s has no pages (a %s text): fetch a section instead", id, t.Kind)
	case n < 0 || n > t.Pages:
		return nil, fmt.Errorf("page %d is out of range: the full text of %s has %d pages", n, id, t.Pages)
	case slices.Contains(t.NoText, n):
		return nil, fmt.Errorf("page %d of %s has no text layer (a scanned page): nothing on it can be read or quoted", n, id)
	}
	var want []fulltext.Passage
	for _, p := range doc.Passages {
		if p.Page <= n && n <= p.LastPage() {
			want = append(want, p)
		}
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("page %d of %s gives no passages (its text is running heads or references only)", n, id)
	}
	return want, nil
}

// lastPage is the page a passage ends on, when it is not the page it starts on.
func lastPage(p fulltext.Passage) int {
	if n := p.LastPage(); n > p.Page {
		return n
	}
	return 0
}

// readingNote is what a search says of the full texts still being read.
func readingNote(reading, total int) string {
	verb := "are"
	if reading == 1 {
		verb = "is"
	}
	return fmt.Sprintf("%d of %d full texts %s still being read: their passages are not searched yet; search again later for them", reading, total, verb)
}

// textNote says what the library does not hold of a reference's full text: the file
// still being read, or the files it could not read and why (a truncated or unreadable
// file is named, never served shorter). has says whether it holds a text, named name.
func textNote(lib *Library, id string, has bool, name string) string {
	reading, problems := lib.textStatus(id)
	var why []string
	for _, p := range problems {
		why = append(why, p.String())
	}
	switch {
	case reading != "" && has:
		return fmt.Sprintf("its full text %s changed and is being read again: this is the text as read before; fetch again later for the new one", reading)
	case reading != "":
		return fmt.Sprintf("its full text %s is still being read: fetch it again later for its passages", reading)
	case len(why) > 0 && has:
		return fmt.Sprintf("not read: %s; the full text here is %s", strings.Join(why, "; "), name)
	case len(why) > 0:
		return fmt.Sprintf("its full text was not read: %s; the library holds only its abstract", strings.Join(why, "; "))
	}
	return ""
}
