package library

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
}

// SearchHit is one search result.
type SearchHit struct {
	ID      string   `json:"id"`
	DOI     string   `json:"doi,omitempty"`
	Key     string   `json:"key,omitempty"`
	Title   string   `json:"title"`
	Authors []string `json:"authors,omitempty"`
	Year    int      `json:"year,omitempty"`
	Venue   string   `json:"venue,omitempty"`
	URL     string   `json:"url,omitempty"`
	// Snippet is the passage of the abstract that best matches the query, word for word.
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
}

// SearchOutput is the search tool's result.
type SearchOutput struct {
	Query   string      `json:"query"`
	Total   int         `json:"total"` // how many references matched
	Results []SearchHit `json:"results"`
}

// FetchInput is what the fetch tool takes.
type FetchInput struct {
	ID string `json:"id" jsonschema:"the reference's id from a search result: its DOI or its citation key"`
}

// Server is the literature server over a library: an MCP server named "literature" with
// the tools search and fetch.
func Server(lib *Library) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "literature", Title: "A lab's library of references", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name: "search",
		Description: "Search the lab's library of references: ranked by how well titles, keywords, authors and abstracts match the words of the query. " +
			"Each result has an id to fetch or cite, and the passage of its abstract that best matches.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
		res, err := lib.Search(ctx, Query{Text: in.Query, Limit: in.Limit, YearFrom: in.YearFrom, YearTo: in.YearTo})
		if err != nil {
			return nil, SearchOutput{}, err // a tool error: the model reads it
		}
		out := SearchOutput{Query: strings.TrimSpace(in.Query), Total: res.Total, Results: []SearchHit{}}
		for _, h := range res.Hits {
			out.Results = append(out.Results, SearchHit{ID: h.ID, DOI: h.DOI, Key: h.Key, Title: h.Title, Authors: h.Authors,
				Year: h.Year, Venue: h.Venue, URL: h.URL, Snippet: h.Snippet, Score: h.Score})
		}
		return nil, out, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "fetch",
		Description: "Fetch one reference of the library by its id (its DOI, or its citation key, as a search result gives it): its details and whole abstract.",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in FetchInput) (*mcp.CallToolResult, Reference, error) {
		id := strings.TrimSpace(in.ID)
		if id == "" {
			return nil, Reference{}, fmt.Errorf("the id is empty: give the id of a search result (a DOI or a citation key)")
		}
		r, ok := lib.Get(id)
		if !ok {
			return nil, Reference{}, fmt.Errorf("no reference with id %q in the library; use an id from a search result", id)
		}
		return nil, r, nil
	})
	return s
}
