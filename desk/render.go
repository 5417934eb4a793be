package main

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/auth"
	"github.com/cosci-dev/cosci/internal/experiment"
	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
)

// progressLine is the live line: state, hypotheses, reviews, matches, rounds, time, cost.
func progressLine(p session.Progress) string {
	parts := []string{string(p.State), "hypotheses " + p.HypothesesText(),
		fmt.Sprintf("reviews %d", p.ReviewsCompleted), fmt.Sprintf("matches %d", p.MatchesPlayed),
		fmt.Sprintf("rounds %d", p.Rounds)}
	switch {
	case p.ElapsedSeconds > 0:
		parts = append(parts, duration(time.Duration(p.ElapsedSeconds*float64(time.Second))))
	case p.Elapsed != "":
		parts = append(parts, p.Elapsed)
	}
	if p.CostUSD > 0 {
		parts = append(parts, "$"+research.Dollars(p.CostUSD))
	}
	parts = append(parts, research.Thousands(p.TokensUsed)+" tokens")
	// What waits for the scientist or a provider is in the line, so an open page says so
	// as it happens; the calls themselves are on the page (reload).
	switch n := len(p.Waiting); n {
	case 0:
	case 1:
		parts = append(parts, "1 tool call waits for your answer")
	default:
		parts = append(parts, fmt.Sprintf("%d tool calls wait for your answer", n))
	}
	if p.Batch != nil {
		parts = append(parts, fmt.Sprintf("waiting for a provider batch of %d %s", p.Batch.Requests, p.Batch.What))
	}
	return strings.Join(parts, " · ")
}

// newSessionID names a session started at the desk as `starter start` would.
func newSessionID(goal string, sealed bool) string {
	if sealed {
		return lineage.NewSealedID("s-")
	}
	return lineage.NewSessionID(goal)
}

// lineage is the tree of id's sessions: up to its root, then down through every session
// started from it. The session index has the sessions from their first checkpoint on;
// Temporal's list adds those that have none yet (a fork started a minute ago).
func (d *desk) lineage(r *http.Request, id string, who auth.Who) (*node, error) {
	rows, err := d.st.Sessions(r.Context())
	if err != nil {
		return nil, err
	}
	indexed := make(map[string]bool, len(rows))
	for _, s := range rows {
		indexed[s.SessionID] = true
	}
	listed, err := d.be.List(r.Context(), treeListed)
	if err != nil {
		d.log.Warn("desk: the tree is the session index's only", "session", id, "error", err)
	}
	for _, l := range listed {
		if !indexed[l.ID] {
			rows = append(rows, store.Summary{SessionID: l.ID, Parent: l.Parent, Relation: l.Relation, Status: session.State(l.Status),
				Goal: l.Goal, ScientistID: l.Scientist, Hypotheses: int(l.Hypotheses)})
		}
	}
	t, ok := store.Lineage(rows, id)
	if !ok {
		t = &store.Tree{Summary: store.Summary{SessionID: id}} // known to neither yet: a tree of one
	}
	return d.readable(r, t, who)
}

// node is a session of a tree as the desk shows it: Hidden, with its id alone, when the
// signed-in person may not read it (another scientist's fork, not shared with them).
type node struct {
	store.Summary
	Hidden   bool
	Children []*node
}

// readable is t with what who may not read hidden.
func (d *desk) readable(r *http.Request, t *store.Tree, who auth.Who) (*node, error) {
	rec, err := d.record(r.Context(), t.SessionID, t.ScientistID)
	if err != nil {
		return nil, err
	}
	n := &node{Summary: t.Summary}
	if !access.Decide(who.Identity, rec, access.ActRead).Allowed {
		n.Summary, n.Hidden = store.Summary{SessionID: t.SessionID, Relation: t.Relation}, true
	}
	for _, c := range t.Children {
		k, err := d.readable(r, c, who)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, k)
	}
	return n, nil
}

// treeListed is how many of Temporal's newest sessions the tree looks through for those
// the index does not have yet.
const treeListed = 1000

// funcs are the templates' helpers; none of them marks text safe.
var funcs = template.FuncMap{
	"add":     func(a, b int) int { return a + b },
	"elo":     func(e float64) string { return fmt.Sprintf("%.0f", e) },
	"score":   func(s float64) string { return fmt.Sprintf("%.1f", s) },
	"shorten": func(s string, n int) string { return research.Shorten(s, n) },
	"join":    strings.Join,
	"fields":  func(name string) []string { s, _ := session.LookupCommand(name); return s.Fields },
	"prose":   prose,
	"when":    timeTag,
	"outcome": experiment.Outcome.Figures,
	"effect":  effectText,
	"short":   func(digest string) string { return digest[:min(len(digest), 12)] },
	// verdictClass is a citation verdict as a class name ("out of context" has spaces).
	"verdictClass": func(v string) string { return "verdict-" + strings.ReplaceAll(v, " ", "-") },
	// sourceWords says whether a check's passage is worth showing: for a quote that is not
	// the source's words, the words it was read against.
	"sourceWords": func(c research.CitationCheck) bool { return c.Passage != "" && c.Verdict != research.CitationVerified },
}

// pageNames are the pages, each a template file with the shared layout.
var pageNames = []string{"list", "session", "hypothesis", "tree", "error", "signedout", "lab", "analysis"}

// pageParts are the template files a page shares with another: an experiment is shown
// alike on the lab's page and its hypothesis' page.
var pageParts = map[string][]string{"lab": {"templates/experiment.html"}, "hypothesis": {"templates/experiment.html"}}

func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).Parse(report.SourceTemplate) // a citation, as the report shows it
		if err == nil {
			t, err = t.ParseFS(templateFS, append([]string{"templates/layout.html", "templates/" + name + ".html"}, pageParts[name]...)...)
		}
		if err != nil {
			return nil, err
		}
		pages[name] = t
	}
	return pages, nil
}
