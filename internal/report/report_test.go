package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// latent is a value no other field uses, so its absence from a report is meaningful.
const latent = 0.987654321

func fixture(n int) (session.Snapshot, map[string]research.Hypothesis, map[string][]research.Review) {
	snap := session.Snapshot{
		SessionID:   "cosci-7f3a",
		Seq:         4,
		Time:        "2026-03-01T12:30:00Z",
		State:       session.Completed,
		StopReason:  "max_hypotheses reached",
		ScientistID: "ada",
		Goal:        "Explain why some bacteria survive antibiotics\nwithout resistance genes",
		Refinements: []session.Refinement{
			{Time: "2026-03-01T10:15:00Z", Focus: "persister cells"},
			{Time: "2026-03-01T11:00:00Z", Goal: "Explain antibiotic tolerance in E. coli biofilms"},
			{Time: "2026-03-01T11:45:00Z", Goal: "Explain tolerance in biofilms", Focus: "toxin-antitoxin systems"},
		},
		Config:    research.Config{MaxHypotheses: 20, Provider: "offline"},
		Usage:     research.Usage{PromptTokens: 1234567, CompletionTokens: 89012, Requests: 345},
		StartedAt: "2026-03-01T10:00:00Z",
		Progress: session.Progress{
			HypothesesGenerated: n, ReviewsCompleted: 2 * n, MatchesPlayed: 57,
			Checkpoints: 4, Elapsed: "2h30m0s", State: session.Completed,
		},
	}
	hyps := map[string]research.Hypothesis{}
	reviews := map[string][]research.Review{}
	for i := range n {
		id := fmt.Sprintf("gen/%02d", i)
		q := latent
		snap.Hypotheses = append(snap.Hypotheses, session.Entry{
			ID: id, Title: "Entry title " + id, Origin: "generation",
			Elo: 1400 - float64(10*i), Wins: n - i, Losses: i, Reviews: 2, Score: 7.25,
		})
		hyps[id] = research.Hypothesis{
			ID: id, Title: fmt.Sprintf("Hypothesis %02d", i), Statement: "Statement " + id,
			Rationale: "Rationale " + id, Predictions: []string{"Prediction A " + id, "Prediction B " + id},
			Origin: "generation", Strategy: "literature", Latent: &q,
		}
		reviews[id] = []research.Review{
			{HypothesisID: id, Type: "initial", Verdict: "accept", Critique: "Initial critique " + id,
				Scores: research.Scores{Novelty: 8, Plausibility: 7, Testability: 6, Safety: 9}},
			{HypothesisID: id, Type: "full", Verdict: "revise", Critique: "Full critique " + id,
				Scores: research.Scores{Novelty: 6, Plausibility: 5, Testability: 7, Safety: 8}},
		}
	}
	return snap, hyps, reviews
}

// inOrder fails unless every string in want occurs in got, each after the one before.
func inOrder(t *testing.T, got string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(got[at:], w)
		if i < 0 {
			t.Errorf("report lacks %q after byte %d (or has it out of order)\n%s", w, at, got)
			return
		}
		at += i + len(w)
	}
}

func TestMarkdownContents(t *testing.T) {
	snap, hyps, reviews := fixture(3)
	got := string(Markdown(snap, hyps, reviews))

	tests := []struct {
		name string
		want []string // in order
	}{
		{"title on one line", []string{"# Research report: Explain why some bacteria survive antibiotics without resistance genes\n"}},
		{"summary", []string{
			"- **Session:** `cosci-7f3a`", "- **Scientist:** ada", "- **State:** completed",
			"- **Stop reason:** max_hypotheses reached", "- **Started:** 2026-03-01T10:00:00Z",
			"- **Elapsed:** 2h30m0s", "- **Provider:** offline", "- **Hypotheses:** 3 of at most 20",
			"- **Reviews:** 6", "- **Matches:** 57", "- **Checkpoints:** 4",
			"- **Usage:** 1,323,579 tokens (1,234,567 prompt, 89,012 completion) in 345 requests",
		}},
		{"goal keeps its line breaks", []string{"> Explain why some bacteria survive antibiotics\n> without resistance genes\n"}},
		{"refinements in order", []string{
			"### Refinements",
			"1. 2026-03-01T10:15:00Z\n   - Focus: persister cells",
			"2. 2026-03-01T11:00:00Z\n   - New goal: Explain antibiotic tolerance in E. coli biofilms",
			"3. 2026-03-01T11:45:00Z\n   - New goal: Explain tolerance in biofilms\n   - Focus: toxin-antitoxin systems",
			"## Ranked hypotheses",
		}},
		{"table", []string{
			"| Rank | ID | Title | Elo | W-L | Review score |",
			"| 1 | gen/00 | Hypothesis 00 | 1400 | 3-0 | 7.2 |",
			"| 2 | gen/01 | Hypothesis 01 | 1390 | 2-1 | 7.2 |",
			"| 3 | gen/02 | Hypothesis 02 | 1380 | 1-2 | 7.2 |",
		}},
		{"a detailed section", []string{
			"### 1. Hypothesis 00", "- **ID:** `gen/00`", "- **Elo:** 1400 (3 won, 0 lost)",
			"- **Origin:** generation, strategy literature", "- **Review score:** 7.2 from 2 reviews",
			"**Statement.** Statement gen/00", "**Rationale.** Rationale gen/00",
			"1. Prediction A gen/00\n2. Prediction B gen/00",
			"- *initial*: accept, overall 7.5/10 (novelty 8, plausibility 7, testability 6, safety 9)",
			"Initial critique gen/00",
			"- *full*: revise, overall 6.5/10", "Full critique gen/00",
			"### 2. Hypothesis 01",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { inOrder(t, got, tt.want...) })
	}
	if strings.Contains(got, "more appear in the table only") || strings.Contains(got, "in the table only") {
		t.Error("a report with 3 hypotheses speaks of a cut")
	}
}

func TestMarkdownRankOrderAsGiven(t *testing.T) {
	// The snapshot's order is the ranking, even where the Elo ratings would sort otherwise
	// (ties broken by the tournament, or a rating just updated): the report must not re-sort.
	snap, hyps, reviews := fixture(3)
	h := snap.Hypotheses
	snap.Hypotheses = []session.Entry{h[2], h[0], h[1]}
	got := string(Markdown(snap, hyps, reviews))
	inOrder(t, got,
		"| 1 | gen/02 |", "| 2 | gen/00 |", "| 3 | gen/01 |",
		"### 1. Hypothesis 02", "### 2. Hypothesis 00", "### 3. Hypothesis 01")
}

func TestMarkdownNeverPrintsLatent(t *testing.T) {
	snap, hyps, reviews := fixture(12)
	got := string(Markdown(snap, hyps, reviews))
	for _, leak := range []string{"0.987", "98765", "latent", "Latent"} {
		if strings.Contains(got, leak) {
			t.Errorf("report contains %q: the latent quality leaked", leak)
		}
	}
}

func TestMarkdownTopTen(t *testing.T) {
	tests := []struct {
		n, sections int
		note        string
	}{
		{0, 0, "The session produced no hypotheses."},
		{1, 1, ""},
		{10, 10, ""},
		{11, 10, "The top 10 follow in detail; the other one appears in the table only."},
		{25, 10, "The top 10 follow in detail; the other 15 appear in the table only."},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			snap, hyps, reviews := fixture(tt.n)
			got := string(Markdown(snap, hyps, reviews))
			if rows := strings.Count(got, "\n| ") - 1; tt.n > 0 && rows != tt.n {
				t.Errorf("table has %d rows, want %d", rows, tt.n)
			}
			if s := strings.Count(got, "\n### ") - strings.Count(got, "\n### Refinements"); s != tt.sections {
				t.Errorf("%d hypothesis sections, want %d", s, tt.sections)
			}
			if tt.note != "" && !strings.Contains(got, tt.note) {
				t.Errorf("report lacks %q", tt.note)
			}
			if tt.n > Detailed {
				last := fmt.Sprintf("gen/%02d", tt.n-1)
				if !strings.Contains(got, "| "+last+" |") {
					t.Errorf("%s is missing from the table", last)
				}
				if strings.Contains(got, "Statement "+last) || strings.Contains(got, "### 11.") {
					t.Errorf("%s, ranked beyond the top %d, got a section", last, Detailed)
				}
			}
		})
	}
}

func TestMarkdownMissingTexts(t *testing.T) {
	snap, hyps, reviews := fixture(3)
	delete(hyps, "gen/01")
	delete(reviews, "gen/01")
	snap.Hypotheses[1].Title = "" // and the snapshot lost its copy of the title too
	got := string(Markdown(snap, hyps, reviews))
	inOrder(t, got,
		"| 2 | gen/01 | (text not in store) | 1390 |",
		"### 2. (text not in store)", "- **ID:** `gen/01`", "- **Origin:** generation",
		"(text not in store)", "**Reviews:** none yet.",
		"### 3. Hypothesis 02")

	// With no texts at all the snapshot's titles still name the hypotheses.
	got = string(Markdown(snap, nil, nil))
	inOrder(t, got, "| 1 | gen/00 | Entry title gen/00 |", "### 1. Entry title gen/00")
}

func TestMarkdownEscapesTableCells(t *testing.T) {
	snap, hyps, reviews := fixture(1)
	h := hyps["gen/00"]
	h.Title = "A | B\nC \\| D"
	hyps["gen/00"] = h
	snap.Hypotheses[0].ID = "id|x"
	hyps["id|x"], reviews["id|x"] = h, reviews["gen/00"]
	got := string(Markdown(snap, hyps, reviews))

	want := `| 1 | id\|x | A \| B C \\\| D | 1400 | 1-0 | 7.2 |` + "\n"
	if !strings.Contains(got, want) {
		t.Errorf("report lacks the escaped row %q\n%s", want, got)
	}
	for _, line := range strings.Split(got, "\n") {
		if !strings.HasPrefix(line, "| 1 ") {
			continue
		}
		// Count the cell delimiters: unescaped pipes only.
		unescaped := strings.Count(strings.ReplaceAll(strings.ReplaceAll(line, `\\`, ""), `\|`, ""), "|")
		if unescaped != 7 {
			t.Errorf("row %q has %d cell delimiters, want 7", line, unescaped)
		}
	}
}

func TestMarkdownDeterministic(t *testing.T) {
	snap, hyps, reviews := fixture(15)
	first := Markdown(snap, hyps, reviews)
	for range 20 {
		if got := Markdown(snap, hyps, reviews); !bytes.Equal(got, first) {
			t.Fatal("two renderings of the same session differ")
		}
	}
	if !bytes.HasSuffix(first, []byte("\n")) || bytes.HasSuffix(first, []byte("\n\n")) {
		t.Errorf("report ends in %q, want exactly one newline", first[len(first)-10:])
	}
}

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"two\nlines  here", 20, "two lines here"},
		{"the quick brown fox jumps", 12, "the quick…"},
		{"abcdefghijklmnop", 6, "abcde…"},
		{"ééééééé", 4, "ééé…"},
	}
	for _, tt := range tests {
		if got := shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"gen/1", "`gen/1`"},
		{"a`b", "``a`b``"},
		{"`x", "`` `x ``"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := code(tt.in); got != tt.want {
			t.Errorf("code(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestThousands(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-12345, "-12,345"}}
	for _, tt := range tests {
		if got := thousands(tt.n); got != tt.want {
			t.Errorf("thousands(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
