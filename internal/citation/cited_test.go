package citation

import (
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// TestJoin: stored references and checks paired by the one rule: in order when the checks
// are the references' own (two quotes of one source keep their own verdicts), else by the
// source's id in any of its written forms, each check taken once.
func TestJoin(t *testing.T) {
	const a, b = "10.5555/cosci.a", "10.5555/cosci.b"
	ref := func(id, quote string) research.Reference { return research.Reference{ID: id, Quote: quote} }
	check := func(id, verdict string) research.CitationCheck {
		return research.CitationCheck{ID: id, Verdict: verdict}
	}
	for _, tc := range []struct {
		name   string
		refs   []research.Reference
		checks []research.CitationCheck
		want   []string // each reference's verdict, "" unchecked
	}{
		{"two quotes of one source", []research.Reference{ref(a, "q1"), ref(a, "q2")},
			[]research.CitationCheck{check(a, research.CitationVerified), check(a, research.CitationAltered)},
			[]string{research.CitationVerified, research.CitationAltered}},
		{"an id written another way", []research.Reference{ref(a, "q1")},
			[]research.CitationCheck{check("https://doi.org/10.5555/COSCI.A", research.CitationOverstated)},
			[]string{research.CitationOverstated}},
		{"out of order", []research.Reference{ref(a, "q1"), ref(b, "q2")},
			[]research.CitationCheck{check(b, research.CitationInvented), check(a, research.CitationVerified)},
			[]string{research.CitationVerified, research.CitationInvented}},
		{"a check missing", []research.Reference{ref(a, "q1"), ref(b, "q2"), ref(a, "q3")},
			[]research.CitationCheck{check(a, research.CitationVerified), check(a, research.CitationUnsupported)},
			[]string{research.CitationVerified, "", research.CitationUnsupported}},
		{"no checks", []research.Reference{ref(a, "q1")}, nil, []string{""}},
	} {
		got := Join(tc.refs, tc.checks)
		if len(got) != len(tc.refs) {
			t.Fatalf("%s: %d joined of %d references", tc.name, len(got), len(tc.refs))
		}
		for i, c := range got {
			if c.Quote != tc.refs[i].Quote || c.Check.Verdict != tc.want[i] || c.Checked() != (tc.want[i] != "") {
				t.Errorf("%s: %d: %q %q; want %q %q", tc.name, i, c.Quote, c.Check.Verdict, tc.refs[i].Quote, tc.want[i])
			}
		}
	}
}

// TestCheckMakesCited: Check gives each reference back whole with its check, in order,
// and Checks is what a review stores of them.
func TestCheckMakesCited(t *testing.T) {
	const record = `{"results": [{"id": "10.5555/cosci.a", "title": "A", "snippet": "Microglia carry tau in exosomes."}]}`
	refs := []research.Reference{
		{ID: "10.5555/cosci.a", Source: "r", Quote: "Microglia carry tau in exosomes", Passage: "10.5555/cosci.a#p2.1"},
		{ID: "10.5555/cosci.b", Quote: "Astrocytes do"},
	}
	got := Check(refs, map[string]string{"r": record})
	if len(got) != 2 || got[0].Reference.Quote != refs[0].Quote || got[1].Check.Verdict != research.CitationInvented {
		t.Fatalf("Check = %+v", got)
	}
	if at, ok := got[0].At(); !ok || at.Page != 2 || at.Index != 1 || at.Source != "10.5555/cosci.a" {
		t.Errorf("At = %+v, %v", at, ok)
	}
	if cs := Checks(got); len(cs) != 2 || cs[1].ID != "10.5555/cosci.b" || cs[1].Verdict != research.CitationInvented {
		t.Errorf("Checks = %+v", cs)
	}
}
