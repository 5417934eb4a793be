// Package toolstest runs MCP tool servers inside a test: a Box whose servers are in-process
// (over the SDK's in-memory transports), and a small literature server that keeps the
// literature contract (search, fetch) over a handful of references written for tests.
package toolstest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/tools"
)

// Box is a tools.Box whose servers run in this process. It counts the connections it
// makes, and can end a server's session as if the server died.
type Box struct {
	*tools.Box
	mu       sync.Mutex
	connects map[string]int
	sessions map[string]*mcp.ServerSession
}

// NewBox connects to the given servers by name. Names in missing are configured but
// cannot be started (their command does not exist).
func NewBox(t testing.TB, servers map[string]*mcp.Server, missing ...string) *Box {
	t.Helper()
	var cfg tools.Config
	for _, name := range append(slices.Sorted(maps.Keys(servers)), missing...) {
		cfg.Servers = append(cfg.Servers, tools.Server{Name: name})
	}
	return NewBoxOf(t, cfg, servers)
}

// NewBoxOf is NewBox for a configuration of the test's own (trust, limits): each of its
// servers is the one of servers by that name, or cannot be started if there is none.
func NewBoxOf(t testing.TB, cfg tools.Config, servers map[string]*mcp.Server) *Box {
	t.Helper()
	for i := range cfg.Servers {
		if len(cfg.Servers[i].Command) == 0 && cfg.Servers[i].URL == "" {
			cfg.Servers[i].Command = []string{"unused"}
		}
	}
	b := &Box{Box: tools.Open(cfg, func(string) string { return "" }, nil), connects: map[string]int{}, sessions: map[string]*mcp.ServerSession{}}
	b.Connect = func(s tools.Server) (mcp.Transport, error) {
		srv, ok := servers[s.Name]
		if !ok {
			return nil, fmt.Errorf("exec: %q: executable file not found in $PATH", s.Command[0])
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			return nil, err
		}
		b.mu.Lock()
		b.connects[s.Name]++
		b.sessions[s.Name] = ss
		b.mu.Unlock()
		return ct, nil
	}
	t.Cleanup(b.Close)
	return b
}

// Connects says how many times the box connected to a server.
func (b *Box) Connects(name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.connects[name]
}

// Kill ends a server's session, as if the server process died.
func (b *Box) Kill(name string) {
	b.mu.Lock()
	ss := b.sessions[name]
	b.mu.Unlock()
	if ss != nil {
		_ = ss.Close()
	}
}

// Reference is one entry of the test library.
type Reference struct {
	ID       string   `json:"id"`
	DOI      string   `json:"doi,omitempty"`
	Title    string   `json:"title"`
	Authors  []string `json:"authors"`
	Year     int      `json:"year"`
	Venue    string   `json:"venue"`
	Abstract string   `json:"abstract"`
}

// References are the test library's entries (invented for tests).
var References = []Reference{
	{ID: "10.5555/cosci.test.001", DOI: "10.5555/cosci.test.001", Title: "Microglia carry tau between synapses", Authors: []string{"Ito, Kenji", "Müller, Anna"}, Year: 2021, Venue: "Journal of Test Neuroscience",
		Abstract: "Microglia phagocytose tau aggregates and release them in exosomes. Depleting microglia halved the spread of tau pathology in mice. Exosome inhibitors slowed propagation between connected regions."},
	{ID: "10.5555/cosci.test.002", DOI: "10.5555/cosci.test.002", Title: "LRP1 mediates neuronal uptake of tau", Authors: []string{"Rauch, Jennifer"}, Year: 2020, Venue: "Test Nature",
		Abstract: "The receptor LRP1 controls the endocytosis of tau in neurons. Knocking down LRP1 blocked tau uptake and reduced spread. LRP1 binds tau through its lysine residues."},
	{ID: "garcia2019", Title: "Neuronal activity accelerates tau propagation", Authors: []string{"Garcia, Maria"}, Year: 2019, Venue: "Proceedings of Tests",
		Abstract: "Enhanced neuronal activity increases the release of tau. Chemogenetic silencing of neurons slowed the propagation of tau pathology. Activity dependence suggests synaptic transfer of tau seeds."},
	{ID: "10.5555/cosci.test.004", DOI: "10.5555/cosci.test.004", Title: "O-GlcNAcase inhibition reduces tau aggregation", Authors: []string{"Lee, Min"}, Year: 2022, Venue: "Drug Tests",
		Abstract: "Inhibitors of O-GlcNAcase raise tau O-GlcNAcylation and reduce its aggregation. Treated mice showed fewer tau tangles. O-GlcNAc modification competes with phosphorylation of tau."},
	{ID: "10.5555/cosci.test.005", DOI: "10.5555/cosci.test.005", Title: "Persister cells tolerate antibiotics through dormancy", Authors: []string{"Balaban, Nathalie"}, Year: 2018, Venue: "Microbe Tests",
		Abstract: "Persister bacteria survive antibiotics without resistance genes by entering dormancy. Toxin-antitoxin modules and ppGpp signalling trigger the dormant state. Persisters regrow once the drug is removed."},
}

type searchIn struct {
	Query string `json:"query" jsonschema:"what to look for"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many results, 1 to 50"`
}

type hit struct {
	ID      string   `json:"id"`
	DOI     string   `json:"doi,omitempty"`
	Title   string   `json:"title"`
	Authors []string `json:"authors"`
	Year    int      `json:"year"`
	Venue   string   `json:"venue"`
	Snippet string   `json:"snippet"`
	Score   float64  `json:"score"`
}

type searchOut struct {
	Query   string `json:"query"`
	Total   int    `json:"total"`
	Results []hit  `json:"results"`
}

type fetchIn struct {
	ID string `json:"id" jsonschema:"a DOI or a citation key from a search result"`
}

// Library is a literature server over References: search (by shared words, ranked by how
// many) and fetch (by id). Calls counts every call it answered, by tool.
func Library(calls *Calls) *mcp.Server { return LibraryOf(calls, References, false) }

// LibraryOf is Library over other references. With text, fetch answers in plain text (the
// reference's fields, a line each), as many servers do, rather than in JSON, which
// escapes what a record holds.
func LibraryOf(calls *Calls, refs []Reference, text bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "literature", Version: "test"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "Search the library"}, func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
		calls.add("search")
		if strings.TrimSpace(in.Query) == "" {
			return nil, searchOut{}, fmt.Errorf("the query is empty; say what to look for")
		}
		if in.Limit == 0 {
			in.Limit = 10
		}
		words := strings.Fields(strings.ToLower(in.Query))
		out := searchOut{Query: in.Query, Results: []hit{}}
		for _, r := range refs {
			text := strings.ToLower(r.Title + " " + r.Abstract)
			score := 0
			for _, w := range words {
				if strings.Contains(text, w) {
					score++
				}
			}
			if score == 0 {
				continue
			}
			out.Total++
			first, _, _ := strings.Cut(r.Abstract, ". ")
			out.Results = append(out.Results, hit{ID: r.ID, DOI: r.DOI, Title: r.Title, Authors: r.Authors, Year: r.Year, Venue: r.Venue, Snippet: first + ".", Score: float64(score)})
		}
		slices.SortStableFunc(out.Results, func(a, b hit) int { return int(b.Score - a.Score) })
		out.Results = out.Results[:min(in.Limit, len(out.Results))]
		return nil, out, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fetch", Description: "Fetch a reference by id"}, func(ctx context.Context, _ *mcp.CallToolRequest, in fetchIn) (*mcp.CallToolResult, Reference, error) {
		calls.add("fetch")
		for _, r := range refs {
			if !strings.EqualFold(r.ID, strings.TrimSpace(in.ID)) {
				continue
			}
			if text {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("id: %s\ntitle: %s\nauthors: %s\nyear: %d\nvenue: %s\nabstract: %s",
					r.ID, r.Title, strings.Join(r.Authors, "; "), r.Year, r.Venue, r.Abstract)}}}, Reference{}, nil
			}
			return nil, r, nil
		}
		return nil, Reference{}, fmt.Errorf("no reference with id %q in the library; use an id from a search result", in.ID)
	})
	return s
}

type webIn struct {
	Query string `json:"query" jsonschema:"what to look for on the web"`
}

type webOut struct {
	Query string   `json:"query"`
	Pages []string `json:"pages"`
}

// Web is a server with one tool, search, standing for a tool that reaches outside the lab:
// a call sends its query out. Calls counts the calls it answered, and Queries keeps what
// each sent.
func Web(calls *Calls) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "test"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "Search the web"}, func(ctx context.Context, _ *mcp.CallToolRequest, in webIn) (*mcp.CallToolResult, webOut, error) {
		calls.add("search")
		calls.sent(in.Query)
		return nil, webOut{Query: in.Query, Pages: []string{"https://example.org/tau"}}, nil
	})
	return s
}

// Calls counts a server's calls by tool.
type Calls struct {
	mu      sync.Mutex
	n       map[string]int
	queries []string
}

func (c *Calls) sent(q string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queries = append(c.queries, q)
}

// Queries are what the calls sent, in order (the Web server's).
func (c *Calls) Queries() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.queries)
}

func (c *Calls) add(tool string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[tool]++
}

// Of is how many calls of the tool were answered.
func (c *Calls) Of(tool string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[tool]
}
