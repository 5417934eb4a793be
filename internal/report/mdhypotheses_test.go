package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// The report's sections on the hypotheses: the top ten, texts the store lacks, table
// cells, the counts, lineage and reviews.

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
