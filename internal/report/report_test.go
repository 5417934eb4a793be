package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// latent is a value no other field uses, so its absence from a report is meaningful.
const latent = 0.987654321

func fixture(n int) Input {
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
	return Input{Final: snap, Hypotheses: hyps, Reviews: reviews}
}

// md renders the input's Markdown report, failing the test if Render fails.
func md(t *testing.T, in Input) string {
	t.Helper()
	f, err := Render(in)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return string(f.Markdown)
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

// hasText fails unless got contains want whole; what names want in the failure.
func hasText(t *testing.T, got, what, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("report lacks %s\n%s\n--- in ---\n%s", what, want, got)
	}
}

// rich is a session with everything a report can show: a plan, an overview, a
// meta-review, a two-level evolution, proximity clusters, exclusions, a deep
// verification, a manual review and a history of checkpoints.
//
// Final ranking (excluded ones interleaved, as a snapshot may hold them):
//
//	evo/2  ← evo/1, gen/02 (grounding)      cluster 2
//	gen/00                                  cluster 1
//	evo/1  ← gen/00, gen/01 (combination)   cluster 2
//	gen/04 excluded: unsafe
//	gen/01                                  cluster 2
//	gen/02                                  cluster 3 (alone)
//	gen/03                                  cluster 1
//	gen/05 excluded: near-duplicate of gen/00, cluster 1
func rich() Input {
	in := fixture(6)
	q := latent
	e := in.Final.Hypotheses
	e[0].Cluster, e[3].Cluster, e[5].Cluster = 1, 1, 1
	e[1].Cluster, e[2].Cluster = 2, 3
	e[4].Excluded = "unsafe: safety score 2 is below the floor 3.5"
	e[5].Excluded = "near-duplicate of gen/00"
	evo1 := session.Entry{ID: "evo/1", Title: "Entry evo/1", Origin: "evolution", Strategy: "combination",
		Parents: []string{"gen/00", "gen/01"}, Round: 2, Cluster: 2, Elo: 1395, Wins: 4, Losses: 1, Reviews: 1, Score: 8}
	evo2 := session.Entry{ID: "evo/2", Title: "Entry evo/2", Origin: "evolution", Strategy: "grounding",
		Parents: []string{"evo/1", "gen/02"}, Round: 3, Cluster: 2, Elo: 1450, Wins: 5, Losses: 0, Reviews: 1, Score: 8.5}
	in.Final.Hypotheses = []session.Entry{evo2, e[0], evo1, e[4], e[1], e[2], e[3], e[5]}
	in.Hypotheses["evo/1"] = research.Hypothesis{ID: "evo/1", Title: "Combined tolerance", Statement: "Statement evo/1",
		Predictions: []string{"P evo/1"}, Origin: "evolution", Strategy: "combination", Parents: []string{"gen/00", "gen/01"}, Latent: &q}
	in.Hypotheses["evo/2"] = research.Hypothesis{ID: "evo/2", Title: "Grounded tolerance", Statement: "Statement evo/2",
		Predictions: []string{"P evo/2"}, Origin: "evolution", Strategy: "grounding", Parents: []string{"evo/1", "gen/02"}, Latent: &q}
	in.Reviews["evo/2"] = []research.Review{{
		HypothesisID: "evo/2", Type: "deep_verification", Verdict: "revise", Critique: "Two premises hold, one is shaky.",
		Scores: research.Scores{Novelty: 8, Plausibility: 8, Testability: 9, Safety: 9}, Reviewer: "agent",
		Assumptions: []research.Assumption{
			{Text: "Persisters are dormant", Verdict: "holds"},
			{Text: "Toxins drive dormancy", Verdict: "doubtful", Note: "contested since 2018"},
		},
	}}
	in.Reviews["gen/00"] = append(in.Reviews["gen/00"], research.Review{
		HypothesisID: "gen/00", Type: "manual", Verdict: "accept", Critique: "I have seen this in the lab.",
		Scores: research.Scores{Novelty: 9, Plausibility: 9, Testability: 8, Safety: 10}, Reviewer: "ada",
	})
	in.Final.Progress.Rounds = 3

	// Three checkpoints: evo/1 appears at the second, evo/2 at the third (the final).
	first, second := in.Final, in.Final
	first.Seq, second.Seq = 1, 2
	first.Hypotheses = nil
	for _, e := range in.Final.Hypotheses {
		if !strings.HasPrefix(e.ID, "evo/") {
			e.Elo = 1200
			first.Hypotheses = append(first.Hypotheses, e)
		}
	}
	second.Hypotheses = []session.Entry{evo1}
	second.Hypotheses[0].Elo = 1250
	second.Hypotheses = append(second.Hypotheses, first.Hypotheses...)
	in.History = []session.Snapshot{first, second, in.Final}

	in.Plan = &research.Plan{
		Summary:     "Study tolerance in biofilms first.",
		Preferences: []string{"Mechanistic explanations"},
		Constraints: []string{"No animal models"},
		Criteria:    []string{"Testable within a month"},
	}
	in.Overview = &research.Overview{
		Summary: "Tolerance arises from dormancy.",
		Themes: []research.OverviewTheme{
			{Title: "Dormancy", Note: "Cells that sleep survive.", Hypotheses: []string{"evo/2", "gen/00"}},
			{Title: "Stress responses", Note: "The SOS response helps.", Hypotheses: []string{"gen/01", "gen/99"}},
		},
		OpenQuestions: []string{"How long do persisters sleep?"},
		Experiments:   []string{"Time-lapse microscopy of biofilms"},
	}
	in.MetaReview = &research.MetaReview{
		Round:     3,
		Critiques: []string{"Predictions are vague", "Ignores growth rate"},
		Strengths: []string{"Mechanistic"},
		Feedback:  "Name the organism in every prediction.",
	}
	return in
}

// render renders the input, failing the test if Render fails.
func render(t *testing.T, in Input) Files {
	t.Helper()
	f, err := Render(in)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return f
}

func TestSectionsInOrder(t *testing.T) {
	inOrder(t, md(t, rich()),
		"# Research report: ",
		"- **Stop reason:** max_hypotheses reached",
		"- **Usage:** 1,323,579 tokens",
		"## Research goal", "### Refinements",
		"## Research plan", "Study tolerance in biofilms first.",
		"### Preferences", "- Mechanistic explanations",
		"### Constraints", "- No animal models",
		"### Evaluation criteria", "- Testable within a month",
		"## Research overview", "Tolerance arises from dormancy.",
		"### Dormancy", "### Stress responses", "### Open questions", "### Suggested experiments",
		"## Elo over time", "![Elo over time](elo.svg)",
		"## Ranked hypotheses", "| Rank | ID | Title | Elo | W-L | Review score | Origin | Cluster |",
		"## Top hypotheses in detail", "### 1. Grounded tolerance",
		"## Lineage", "## Clusters", "## Excluded",
		"## Meta-review (round 3)", "### Recurring critiques", "### Strengths", "### Feedback to the agents",
	)
}

func TestSectionsOmittedWhenEmpty(t *testing.T) {
	got := md(t, fixture(3))
	for _, absent := range []string{"## Research plan", "## Lineage", "## Clusters", "## Excluded", "## Meta-review", "- **Lineage:**", "- **Cluster:**"} {
		if strings.Contains(got, absent) {
			t.Errorf("report of a plain session has %q", absent)
		}
	}
	inOrder(t, got, "## Research overview", "## Elo over time", "## Ranked hypotheses", "## Top hypotheses in detail")
}

func TestMarkdownContents(t *testing.T) {
	got := md(t, fixture(3))

	tests := []struct {
		name string
		want []string // in order
	}{
		{"title on one line", []string{"# Research report: Explain why some bacteria survive antibiotics without resistance genes\n"}},
		{"summary", []string{
			"- **Session:** `cosci-7f3a`", "- **Scientist:** ada", "- **State:** completed",
			"- **Stop reason:** max_hypotheses reached", "- **Started:** 2026-03-01T10:00:00Z",
			"- **Elapsed:** 2h30m0s", "- **Provider:** offline", "- **Hypotheses:** 3 of at most 20",
			"- **Reviews:** 6", "- **Matches:** 57", "- **Rounds:** 0", "- **Checkpoints:** 4",
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
			"| Rank | ID | Title | Elo | W-L | Review score | Origin | Cluster |",
			"| 1 | gen/00 | Hypothesis 00 | 1400 | 3-0 | 7.2 | generation/literature | – |",
			"| 2 | gen/01 | Hypothesis 01 | 1390 | 2-1 | 7.2 | generation/literature | – |",
			"| 3 | gen/02 | Hypothesis 02 | 1380 | 1-2 | 7.2 | generation/literature | – |",
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
	if strings.Contains(got, "in the table only") {
		t.Error("a report with 3 hypotheses speaks of a cut")
	}
}

func TestMarkdownRankOrderAsGiven(t *testing.T) {
	// The snapshot's order is the ranking, even where the Elo ratings would sort otherwise
	// (ties broken by the tournament, or a rating just updated): the report must not re-sort.
	in := fixture(3)
	h := in.Final.Hypotheses
	in.Final.Hypotheses = []session.Entry{h[2], h[0], h[1]}
	got := md(t, in)
	inOrder(t, got,
		"| 1 | gen/02 |", "| 2 | gen/00 |", "| 3 | gen/01 |",
		"### 1. Hypothesis 02", "### 2. Hypothesis 00", "### 3. Hypothesis 01")
}

// TestFittedRatings: a fitted session's report says its ratings are fitted and shows each
// with its standard error; an Elo session's shows the bare Elo, as before.
func TestFittedRatings(t *testing.T) {
	in := fixture(3)
	in.Final.Rating = session.RatingFitted
	for i := range in.Final.Hypotheses {
		in.Final.Hypotheses[i].EloSE = 41.6
	}
	e := in.Final.Hypotheses[0]
	got := md(t, in)
	want := elo(e.Elo) + " ± 42"
	for _, s := range []string{"fitted to every match", "| " + want + " |", "- **Elo:** " + want + " ("} {
		if !strings.Contains(got, s) {
			t.Errorf("the fitted report lacks %q", s)
		}
	}
	if plain := md(t, fixture(3)); strings.Contains(plain, "±") || strings.Contains(plain, "fitted") {
		t.Error("an Elo session's report shows errors or says its ratings are fitted")
	}
}

func TestNeverPrintsLatent(t *testing.T) {
	for name, in := range map[string]Input{"plain": fixture(12), "rich": rich()} {
		f := render(t, in)
		for file, b := range map[string][]byte{"report.md": f.Markdown, "report.json": f.JSON, "elo.svg": f.Chart} {
			for _, leak := range []string{"0.987", "98765", "latent", "Latent"} {
				if bytes.Contains(b, []byte(leak)) {
					t.Errorf("%s: %s contains %q: the latent quality leaked", name, file, leak)
				}
			}
		}
	}
}

// detailed counts the hypothesis sections: "### 3. Title".
var detailed = regexp.MustCompile(`(?m)^### \d+\. `)

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
			got := md(t, fixture(tt.n))
			if rows := strings.Count(got, "\n| ") - 1; tt.n > 0 && rows != tt.n {
				t.Errorf("table has %d rows, want %d", rows, tt.n)
			}
			if s := len(detailed.FindAllString(got, -1)); s != tt.sections {
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
	in := fixture(3)
	delete(in.Hypotheses, "gen/01")
	delete(in.Reviews, "gen/01")
	in.Final.Hypotheses[1].Title = "" // and the snapshot lost its copy of the title too
	got := md(t, in)
	inOrder(t, got,
		"| 2 | gen/01 | (text not in store) | 1390 |",
		"### 2. (text not in store)", "- **ID:** `gen/01`", "- **Origin:** generation",
		"(text not in store)", "**Reviews:** none yet.",
		"### 3. Hypothesis 02")

	// With no texts at all the snapshot's titles still name the hypotheses.
	in.Hypotheses, in.Reviews = nil, nil
	got = md(t, in)
	inOrder(t, got, "| 1 | gen/00 | Entry title gen/00 |", "### 1. Entry title gen/00")

	// Nor does a rich session fail without its texts: lineage, clusters and themes fall
	// back on the snapshot.
	r := rich()
	r.Hypotheses, r.Reviews = nil, nil
	got = md(t, r)
	inOrder(t, got,
		"### Dormancy", "- `evo/2` Entry evo/2 (rank 1, Elo 1450)",
		"### 1. Entry evo/2", "- **Origin:** evolution, kind grounding",
		"- **Lineage:** evolved from `evo/1` and `gen/02` by grounding",
		"## Lineage", "- `evo/2` Entry evo/2 (rank 1, Elo 1450) ← `evo/1`, `gen/02` by grounding")
}

func TestMarkdownEscapesTableCells(t *testing.T) {
	in := fixture(1)
	h := in.Hypotheses["gen/00"]
	h.Title = "A | B\nC \\| D"
	in.Hypotheses["gen/00"] = h
	in.Final.Hypotheses[0].ID = "id|x"
	in.Hypotheses["id|x"], in.Reviews["id|x"] = h, in.Reviews["gen/00"]
	got := md(t, in)

	hasText(t, got, "the escaped row", `| 1 | id\|x | A \| B C \\\| D | 1400 | 1-0 | 7.2 | generation/literature | – |`+"\n")
	for _, line := range strings.Split(got, "\n") {
		if !strings.HasPrefix(line, "| 1 ") {
			continue
		}
		// Count the cell delimiters: unescaped pipes only.
		unescaped := strings.Count(strings.ReplaceAll(strings.ReplaceAll(line, `\\`, ""), `\|`, ""), "|")
		if unescaped != 9 {
			t.Errorf("row %q has %d cell delimiters, want 9", line, unescaped)
		}
	}
}

func TestDeterministic(t *testing.T) {
	for name, in := range map[string]Input{"plain": fixture(15), "rich": rich()} {
		first := render(t, in)
		for range 10 {
			got := render(t, in)
			if !bytes.Equal(got.Markdown, first.Markdown) {
				t.Fatalf("%s: two renderings of report.md differ", name)
			}
			if !bytes.Equal(got.JSON, first.JSON) {
				t.Fatalf("%s: two renderings of report.json differ", name)
			}
			if !bytes.Equal(got.Chart, first.Chart) {
				t.Fatalf("%s: two renderings of elo.svg differ", name)
			}
		}
		for file, b := range map[string][]byte{"report.md": first.Markdown, "report.json": first.JSON} {
			if !bytes.HasSuffix(b, []byte("\n")) || bytes.HasSuffix(b, []byte("\n\n")) {
				t.Errorf("%s: %s ends in %q, want exactly one newline", name, file, b[len(b)-10:])
			}
		}
	}
}

// TestRichSections: the lineage, clusters and exclusions of the rich session, each section
// whole, and what the rest of the report says of them.
func TestRichSections(t *testing.T) {
	got := md(t, rich())
	tests := []struct {
		name    string
		section string   // whole
		inOrder []string // elsewhere in the report
		absent  []string
	}{
		{
			name: "lineage",
			// evo/2 is the newest idea: it roots the tree; evo/1 is traced under it, and not again.
			section: "## Lineage\n\n" +
				"How the evolved hypotheses descend from earlier ones. Each line reads \"hypothesis ← the hypotheses it was evolved from\", and the lines indented under it trace those in turn.\n\n" +
				"- `evo/2` Grounded tolerance (rank 1, Elo 1450) ← `evo/1`, `gen/02` by grounding\n" +
				"  - `evo/1` Combined tolerance (rank 3, Elo 1395) ← `gen/00`, `gen/01` by combination\n" +
				"    - `gen/00` Hypothesis 00 (rank 2, Elo 1400)\n" +
				"    - `gen/01` Hypothesis 01 (rank 4, Elo 1390)\n" +
				"  - `gen/02` Hypothesis 02 (rank 5, Elo 1380)\n\n",
			inOrder: []string{
				"### 1. Grounded tolerance", "- **Origin:** evolution, kind grounding",
				"- **Lineage:** evolved from `evo/1` and `gen/02` by grounding",
				"### 3. Combined tolerance", "- **Lineage:** evolved from `gen/00` and `gen/01` by combination",
			},
		},
		{
			name: "clusters",
			section: "## Clusters\n\n" +
				"Hypotheses the proximity graph found similar, best-ranked cluster first.\n\n" +
				"- Cluster 2 (3 hypotheses)\n" +
				"  - `evo/2` Grounded tolerance (rank 1, Elo 1450)\n" +
				"  - `evo/1` Combined tolerance (rank 3, Elo 1395)\n" +
				"  - `gen/01` Hypothesis 01 (rank 4, Elo 1390)\n" +
				"- Cluster 1 (3 hypotheses)\n" +
				"  - `gen/00` Hypothesis 00 (rank 2, Elo 1400)\n" +
				"  - `gen/03` Hypothesis 03 (rank 6, Elo 1370)\n" +
				"  - `gen/05` Hypothesis 05 (excluded, Elo 1350)\n\n",
			inOrder: []string{"### 2. Hypothesis 00", "- **Cluster:** 1, with `gen/03` and `gen/05`"},
			absent:  []string{"Cluster 3"}, // a one-member cluster is not listed
		},
		{
			name: "exclusions",
			section: "## Excluded\n\n" +
				"Hypotheses taken out of the tournament, with the reason.\n\n" +
				"- `gen/04` Hypothesis 04 (Elo 1360): unsafe: safety score 2 is below the floor 3.5\n" +
				"- `gen/05` Hypothesis 05 (Elo 1350): near-duplicate of gen/00\n\n",
			inOrder: []string{"- **Hypotheses:** 8 of at most 20, 2 excluded", "| 4 | gen/01 |", "| 6 | gen/03 |", "### 6. Hypothesis 03"},
			// Excluded hypotheses neither rank nor get a section.
			absent: []string{"| gen/04 |", "Statement gen/04", "| gen/05 |", "Statement gen/05"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hasText(t, got, "the "+tt.name, tt.section)
			inOrder(t, got, tt.inOrder...)
			for _, s := range tt.absent {
				if strings.Contains(got, s) {
					t.Errorf("report has %q", s)
				}
			}
		})
	}
}

// TestHypothesesCountSaysWhatCounts: the scientist's own hypotheses and those a continued
// session started with do not count against max_hypotheses, so the summary says what did
// instead of "21 of at most 20"; a checkpoint from before the split still reads right.
func TestHypothesesCountSaysWhatCounts(t *testing.T) {
	tests := []struct {
		name string
		n    int // hypotheses in the checkpoint
		p    session.Progress
		want string
	}{
		{"all by the agents", 20, session.Progress{Counted: 20}, "- **Hypotheses:** 20 of at most 20\n"},
		{"one by the scientist", 21, session.Progress{Counted: 20, Added: 1},
			"- **Hypotheses:** 21 (20 of at most 20 by the agents, 1 added by the scientist)\n"},
		{"a continued session", 32, session.Progress{Counted: 20, Inherited: 12},
			"- **Hypotheses:** 32 (12 from the parent session, 20 of at most 20 by the agents)\n"},
		{"a checkpoint from before the split", 21, session.Progress{Added: 1},
			"- **Hypotheses:** 21 (20 of at most 20 by the agents, 1 added by the scientist)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fixture(tt.n)
			in.Final.Config.MaxHypotheses = 20
			in.Final.Progress.Counted, in.Final.Progress.Added, in.Final.Progress.Inherited = tt.p.Counted, tt.p.Added, tt.p.Inherited
			got := md(t, in)
			if !strings.Contains(got, tt.want) {
				t.Errorf("report has no %q", tt.want)
			}
			if strings.Contains(got, fmt.Sprintf("%d of at most 20", tt.n)) && tt.n > 20 {
				t.Errorf("report says %d of at most 20", tt.n)
			}
		})
	}
}

func TestLineageSharedAncestryAndCycles(t *testing.T) {
	in := fixture(4)
	e := in.Final.Hypotheses
	// gen/02 and gen/03 both come from gen/01, which (wrongly) claims to come from gen/03.
	e[1].Parents, e[1].Strategy = []string{"gen/03"}, "grounding"
	e[2].Parents, e[2].Strategy = []string{"gen/01"}, "simplification"
	e[3].Parents, e[3].Strategy = []string{"gen/01", "gone"}, "combination"
	got := md(t, in)
	inOrder(t, got, "## Lineage",
		"- `gen/02` Hypothesis 02 (rank 3, Elo 1380) ← `gen/01` by simplification\n",
		"  - `gen/01` Hypothesis 01 (rank 2, Elo 1390) ← `gen/03` by grounding\n",
		"    - `gen/03` Hypothesis 03 (rank 4, Elo 1370) ← `gen/01`, `gone` by combination\n",
		"      - `gen/01` Hypothesis 01 (rank 2, Elo 1390) (a cycle in the recorded lineage)\n",
		"      - `gone` (text not in store) (not in the final ranking)\n",
	)
}

func TestOverviewThemes(t *testing.T) {
	inOrder(t, md(t, rich()),
		"## Research overview\n\nTolerance arises from dormancy.\n\n",
		"### Dormancy\n\nCells that sleep survive.\n\n",
		"- `evo/2` Grounded tolerance (rank 1, Elo 1450)\n",
		"- `gen/00` Hypothesis 00 (rank 2, Elo 1400)\n\n",
		"### Stress responses\n\nThe SOS response helps.\n\n",
		"- `gen/01` Hypothesis 01 (rank 4, Elo 1390)\n",
		"- `gen/99` (text not in store) (not in the final ranking)\n\n",
		"### Open questions\n\n- How long do persisters sleep?\n\n",
		"### Suggested experiments\n\n- Time-lapse microscopy of biofilms\n\n",
		"## Elo over time")
}

func TestOverviewFallback(t *testing.T) {
	in := rich()
	in.Overview = nil
	got := md(t, in)
	inOrder(t, got,
		"## Research overview\n\n",
		"No overview was written for this session. These are the top 6 hypotheses, grouped by proximity cluster",
		"### Cluster 2\n\n- `evo/2` Grounded tolerance (rank 1, Elo 1450)\n- `evo/1` Combined tolerance (rank 3, Elo 1395)\n- `gen/01` Hypothesis 01 (rank 4, Elo 1390)\n\n",
		"### Cluster 1\n\n- `gen/00` Hypothesis 00 (rank 2, Elo 1400)\n- `gen/03` Hypothesis 03 (rank 6, Elo 1370)\n\n",
		"### Cluster 3\n\n- `gen/02` Hypothesis 02 (rank 5, Elo 1380)\n\n",
		"## Elo over time")

	// Unclustered hypotheses are listed without a heading of their own when nothing is
	// clustered, and under "Not clustered" otherwise.
	got = md(t, fixture(2))
	inOrder(t, got, "grouped by proximity cluster", "- `gen/00` Hypothesis 00 (rank 1, Elo 1400)\n- `gen/01`", "## Elo over time")
	if strings.Contains(got, "### Not clustered") {
		t.Error("a session with no clusters has a \"Not clustered\" group")
	}
	in.Final.Hypotheses[1].Cluster = 0 // gen/00
	got = md(t, in)
	inOrder(t, got, "### Cluster 3", "### Not clustered\n\n- `gen/00` Hypothesis 00 (rank 2, Elo 1400)\n\n", "## Elo over time")
}

func TestReviews(t *testing.T) {
	got := md(t, rich())
	inOrder(t, got,
		"### 1. Grounded tolerance",
		"- *deep_verification*: revise, overall 8.5/10",
		"  Two premises hold, one is shaky.\n\n  Assumptions checked:\n\n",
		"  - **holds:** Persisters are dormant\n",
		"  - **doubtful:** Toxins drive dormancy — contested since 2018\n",
		"### 2. Hypothesis 00",
		"- *initial*: accept", "- *full*: revise",
		"- *manual* — manual review by the scientist ada: accept, overall 9/10",
		"  I have seen this in the lab.")
	if n := strings.Count(got, "manual review by the scientist"); n != 1 {
		t.Errorf("%d reviews marked manual, want 1", n)
	}

	in := fixture(1)
	in.Reviews["gen/00"] = []research.Review{{Type: "manual", Verdict: "reject", Reviewer: "ada"}}
	inOrder(t, md(t, in), "- *manual* — manual review by the scientist ada: reject, unscored\n")
}

func TestPlanAndMetaReview(t *testing.T) {
	in := rich()
	in.Plan = &research.Plan{Preferences: []string{"Simple ideas"}}
	got := md(t, in)
	inOrder(t, got,
		"## Research plan\n\n### Preferences\n\n- Simple ideas\n\n### Constraints\n\nNone stated.\n\n### Evaluation criteria\n\nNone stated.\n\n",
		"## Meta-review (round 3)",
		"### Recurring critiques\n\n1. Predictions are vague\n2. Ignores growth rate\n\n",
		"### Strengths\n\n- Mechanistic\n\n",
		"### Feedback to the agents\n\nName the organism in every prediction.\n")
}

// svgText parses an SVG document and returns the text of its <text> elements.
func svgText(t *testing.T, svg []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var texts []string
	var root string
	in := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("elo.svg is not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			in = tok.Name.Local == "text"
		case xml.EndElement:
			in = false
		case xml.CharData:
			if in {
				texts = append(texts, strings.TrimSpace(string(tok)))
			}
		}
	}
	if root != "svg" {
		t.Fatalf("elo.svg's root element is <%s>, want <svg>", root)
	}
	return texts
}

func TestChart(t *testing.T) {
	twelve := fixture(12)
	first := twelve.Final
	first.Seq = 1
	first.Hypotheses = first.Hypotheses[:5]
	twelve.History = []session.Snapshot{first, twelve.Final}

	noHistory := rich()
	noHistory.History = nil

	tests := []struct {
		name string
		in   Input
		ids  []string // in the legend
		not  []string // not in the legend
	}{
		{"rich", rich(), []string{"evo/2", "gen/00", "evo/1", "gen/01", "gen/02", "gen/03"}, []string{"gen/04", "gen/05"}},
		{"top ten of twelve", twelve,
			[]string{"gen/00", "gen/01", "gen/02", "gen/03", "gen/04", "gen/05", "gen/06", "gen/07", "gen/08", "gen/09"},
			[]string{"gen/10", "gen/11"}},
		{"one checkpoint", fixture(3), []string{"gen/00", "gen/01", "gen/02"}, nil},
		{"history without the final", noHistory, []string{"evo/2", "gen/03"}, nil},
		{"no hypotheses", fixture(0), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			texts := svgText(t, render(t, tt.in).Chart)
			for _, id := range tt.ids {
				if !slices.Contains(texts, id) {
					t.Errorf("legend lacks %s; texts: %q", id, texts)
				}
			}
			for _, id := range tt.not {
				if slices.Contains(texts, id) {
					t.Errorf("chart shows %s, which is not in the top", id)
				}
			}
			if !slices.Contains(texts, "Elo") || !slices.Contains(texts, "Checkpoint") {
				t.Errorf("chart lacks its axis labels; texts: %q", texts)
			}
		})
	}
}

func TestSeries(t *testing.T) {
	in := rich()
	v := newView(in)
	hist := v.checkpoints()
	tests := []struct {
		id   string
		want plotter.XYs
	}{
		{"gen/00", plotter.XYs{{X: 1, Y: 1200}, {X: 2, Y: 1200}, {X: 4, Y: 1400}}},
		{"evo/1", plotter.XYs{{X: 2, Y: 1250}, {X: 4, Y: 1395}}}, // starts where it first appears
		{"evo/2", plotter.XYs{{X: 4, Y: 1450}}},
		{"nowhere", nil},
	}
	for _, tt := range tests {
		if got := series(tt.id, hist); !slices.Equal(got, tt.want) {
			t.Errorf("series(%s) = %v, want %v", tt.id, got, tt.want)
		}
	}

	// History out of order, without the final checkpoint: sorted, and the final added.
	in.History = []session.Snapshot{in.History[1], in.History[0]}
	var seqs []int
	for _, s := range newView(in).checkpoints() {
		seqs = append(seqs, s.Seq)
	}
	if !slices.Equal(seqs, []int{1, 2, 4}) {
		t.Errorf("checkpoints = %v, want seqs 1, 2, 4", seqs)
	}
}

func TestIntegerTicks(t *testing.T) {
	for _, r := range [][2]float64{{1, 3}, {3, 5}, {0, 1}, {1, 250}} {
		ticks := integerTicks{}.Ticks(r[0], r[1])
		labelled := 0
		for _, tk := range ticks {
			if tk.Value != float64(int(tk.Value)) {
				t.Errorf("range %v: tick at %v is not a whole checkpoint", r, tk.Value)
			}
			if tk.Label != "" {
				labelled++
			}
		}
		if labelled == 0 {
			t.Errorf("range %v: no labelled tick", r)
		}
	}
}

// exported mirrors the documented JSON schema, field for field.
type exported struct {
	Session struct {
		ID          string `json:"id"`
		Scientist   string `json:"scientist"`
		State       string `json:"state"`
		StopReason  string `json:"stop_reason"`
		Seq         int    `json:"seq"`
		Hypotheses  int    `json:"hypotheses"`
		Excluded    int    `json:"excluded"`
		Rounds      int    `json:"rounds"`
		Checkpoints int    `json:"checkpoints"`
		Usage       struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
			TotalTokens      int `json:"total_tokens"`
			Requests         int `json:"requests"`
		} `json:"usage"`
	} `json:"session"`
	Goal        string                `json:"goal"`
	Refinements []session.Refinement  `json:"refinements"`
	Plan        *research.Plan        `json:"plan"`
	Overview    *research.Overview    `json:"overview"`
	MetaReview  *research.MetaReview  `json:"meta_review"`
	Hypotheses  []exportedHypothesis  `json:"hypotheses"`
	Clusters    [][]string            `json:"clusters"`
	Lineage     []exportedLineageItem `json:"lineage"`
}

type exportedHypothesis struct {
	Rank        int      `json:"rank"`
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Statement   string   `json:"statement"`
	Predictions []string `json:"testable_predictions"`
	InStore     bool     `json:"in_store"`
	Origin      string   `json:"origin"`
	Strategy    string   `json:"strategy"`
	Parents     []string `json:"parents"`
	Cluster     int      `json:"cluster"`
	Excluded    string   `json:"excluded"`
	Elo         float64  `json:"elo"`
	ReviewScore *float64 `json:"review_score"`
	Reviews     []struct {
		Type        string                `json:"type"`
		Reviewer    string                `json:"reviewer"`
		Manual      bool                  `json:"manual"`
		Scores      map[string]float64    `json:"scores"`
		Assumptions []research.Assumption `json:"assumptions"`
	} `json:"reviews"`
}

type exportedLineageItem struct {
	ID      string   `json:"id"`
	Parents []string `json:"parents"`
	Kind    string   `json:"kind"`
}

func TestJSON(t *testing.T) {
	in := rich()
	delete(in.Hypotheses, "gen/03")
	f := render(t, in)
	if !json.Valid(f.JSON) {
		t.Fatalf("report.json is not valid JSON\n%s", f.JSON)
	}
	var x exported // a partial mirror: the top level is checked key by key below
	if err := json.Unmarshal(f.JSON, &x); err != nil {
		t.Fatalf("report.json does not decode: %v", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(f.JSON, &top); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"bibliography", "clusters", "goal", "hypotheses", "lineage", "meta_review", "overview", "plan", "refinements", "session"}; !slices.Equal(keys, want) {
		t.Errorf("top-level keys = %v, want %v", keys, want)
	}

	if x.Session.ID != "cosci-7f3a" || x.Session.StopReason != "max_hypotheses reached" || x.Session.Seq != 4 ||
		x.Session.Hypotheses != 8 || x.Session.Excluded != 2 || x.Session.Rounds != 3 ||
		x.Session.Usage.TotalTokens != 1323579 || x.Session.Usage.Requests != 345 {
		t.Errorf("session = %+v", x.Session)
	}
	if x.Goal != in.Final.Goal || len(x.Refinements) != 3 || x.Refinements[2].Focus != "toxin-antitoxin systems" {
		t.Errorf("goal %q, refinements %+v", x.Goal, x.Refinements)
	}
	if x.Plan == nil || x.Plan.Criteria[0] != "Testable within a month" {
		t.Errorf("plan = %+v", x.Plan)
	}
	if x.Overview == nil || len(x.Overview.Themes) != 2 || x.Overview.Experiments[0] != "Time-lapse microscopy of biofilms" {
		t.Errorf("overview = %+v", x.Overview)
	}
	if x.MetaReview == nil || x.MetaReview.Round != 3 || x.MetaReview.Feedback == "" {
		t.Errorf("meta_review = %+v", x.MetaReview)
	}

	var order []string
	for _, h := range x.Hypotheses {
		order = append(order, fmt.Sprintf("%d:%s", h.Rank, h.ID))
	}
	if want := []string{"1:evo/2", "2:gen/00", "3:evo/1", "4:gen/01", "5:gen/02", "6:gen/03", "0:gen/04", "0:gen/05"}; !slices.Equal(order, want) {
		t.Errorf("hypotheses = %v, want %v", order, want)
	}
	h := x.Hypotheses[0]
	if h.Title != "Grounded tolerance" || h.Statement != "Statement evo/2" || !h.InStore || h.Origin != "evolution" ||
		h.Strategy != "grounding" || !slices.Equal(h.Parents, []string{"evo/1", "gen/02"}) || h.Cluster != 2 ||
		h.ReviewScore == nil || *h.ReviewScore != 8.5 || len(h.Reviews) != 1 ||
		len(h.Reviews[0].Assumptions) != 2 || h.Reviews[0].Assumptions[1].Note != "contested since 2018" ||
		h.Reviews[0].Scores["overall"] != 8.5 {
		t.Errorf("hypotheses[0] = %+v", h)
	}
	if r := x.Hypotheses[1].Reviews; len(r) != 3 || !r[2].Manual || r[2].Reviewer != "ada" || r[0].Manual {
		t.Errorf("gen/00's reviews = %+v", r)
	}
	if g := x.Hypotheses[5]; g.InStore || g.Title != "Entry title gen/03" || g.Statement != "" || g.Predictions == nil || g.Parents == nil {
		t.Errorf("gen/03, not in store = %+v", g)
	}
	if g := x.Hypotheses[7]; g.Excluded != "near-duplicate of gen/00" || g.Cluster != 1 {
		t.Errorf("gen/05 = %+v", g)
	}
	if want := [][]string{{"evo/2", "evo/1", "gen/01"}, {"gen/00", "gen/03", "gen/05"}}; !slices.EqualFunc(x.Clusters, want, slices.Equal) {
		t.Errorf("clusters = %v, want %v", x.Clusters, want)
	}
	wantLineage := []exportedLineageItem{
		{"evo/2", []string{"evo/1", "gen/02"}, "grounding"},
		{"evo/1", []string{"gen/00", "gen/01"}, "combination"},
	}
	if !slices.EqualFunc(x.Lineage, wantLineage, func(a, b exportedLineageItem) bool {
		return a.ID == b.ID && a.Kind == b.Kind && slices.Equal(a.Parents, b.Parents)
	}) {
		t.Errorf("lineage = %+v, want %+v", x.Lineage, wantLineage)
	}
	if bytes.Contains(bytes.ToLower(f.JSON), []byte("latent")) {
		t.Error("report.json mentions latent")
	}
}

func TestJSONEmpty(t *testing.T) {
	f := render(t, fixture(0))
	var top map[string]any
	if err := json.Unmarshal(f.JSON, &top); err != nil {
		t.Fatalf("report.json does not decode: %v", err)
	}
	for _, k := range []string{"plan", "overview", "meta_review"} {
		if top[k] != nil {
			t.Errorf("%s = %v, want null", k, top[k])
		}
	}
	for _, k := range []string{"hypotheses", "clusters", "lineage"} {
		if l, ok := top[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %#v, want []", k, top[k])
		}
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
		if got := research.Shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("research.Shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestCode(t *testing.T) {
	for in, want := range map[string]string{
		"gen/1": "`gen/1`",
		"a`b":   "``a`b``",
		"`x":    "`` `x ``",
		"":      "",
	} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUsageShowsEstimatedCost(t *testing.T) {
	for u, want := range map[research.Usage]string{
		{PromptTokens: 1200, CompletionTokens: 300, Requests: 4}:                                             "1,500 tokens (1,200 prompt, 300 completion) in 4 requests",
		{PromptTokens: 1000, CompletionTokens: 0, Requests: 1, CostUSD: 0.0125}:                              "1,000 tokens (1,000 prompt, 0 completion) in 1 requests; estimated cost $0.013 (from the worker's price table)",
		{PromptTokens: 8000, CompletionTokens: 500, Requests: 2, CachedTokens: 6000, CacheWriteTokens: 1000}: "8,500 tokens (8,000 prompt, 500 completion) in 2 requests; 6,000 prompt tokens (75%) served from the provider's cache, 1,000 written to it",
	} {
		if got := usage(u); got != want {
			t.Errorf("usage(%+v) = %q, want %q", u, got, want)
		}
	}
}

// TestSpentByAgent: the report says what each agent's calls cost, in the order a round
// runs the agents, and what was spent against the session's budgets.
func TestSpentByAgent(t *testing.T) {
	snap := session.Snapshot{
		Config: research.Config{BudgetUSD: 2, TokenBudget: 100000},
		Usage:  research.Usage{PromptTokens: 40000, CompletionTokens: 2000, CostUSD: 0.42},
		SpentBy: map[string]research.Usage{
			"ranking":    {Requests: 20, PromptTokens: 24000, CachedTokens: 12000, CompletionTokens: 1000, CostUSD: 0.2},
			"generation": {Requests: 4, PromptTokens: 16000, CompletionTokens: 1000, CostUSD: 0.22},
			"oracle":     {Requests: 1},
		},
	}
	var b bytes.Buffer
	spentBy(&b, snap)
	want := "| agent | requests | prompt tokens | from cache | completion tokens | cost |\n|---|---:|---:|---:|---:|---:|\n" +
		"| generation | 4 | 16,000 | 0 | 1,000 | $0.22 |\n" +
		"| ranking | 20 | 24,000 | 12,000 | 1,000 | $0.20 |\n" +
		"| oracle | 1 | 0 | 0 | 0 | $0.00 |\n\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if got := budget(snap.Usage, snap.Config); got != "$0.42 of $2.00; 42,000 of 100,000 tokens" {
		t.Errorf("budget = %q", got)
	}
	b.Reset()
	spentBy(&b, session.Snapshot{})
	if b.Len() != 0 {
		t.Errorf("a session that kept no usage by agent gets a table: %q", b.String())
	}
}
