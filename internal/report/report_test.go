package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

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
