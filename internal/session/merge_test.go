package session

import (
	"slices"
	"testing"

	"github.com/cosci-dev/cosci/internal/proximity"
)

func TestMergeCompletesADelta(t *testing.T) {
	base := Snapshot{
		Seq:        1,
		Hypotheses: []Entry{{ID: "h-0001", Elo: 1216}, {ID: "h-0002", Elo: 1184}, {ID: "h-0003", Elo: 1200, Excluded: "duplicate"}},
		Played:     []string{"h-0001|h-0002"},
		Edges:      []proximity.Edge{{A: "h-0001", B: "h-0002", Sim: 0.4}},
	}
	delta := Snapshot{
		Seq:        2,
		Goal:       "refined",
		Hypotheses: []Entry{{ID: "h-0002", Elo: 1230, Wins: 1}, {ID: "h-0004", Elo: 1200}},
		Played:     []string{"h-0002|h-0004", "h-0001|h-0002"},
		Edges:      []proximity.Edge{{A: "h-0004", B: "h-0001", Sim: 0.2}},
	}
	got := Merge(base, delta)
	var ids []string
	for _, e := range got.Hypotheses {
		ids = append(ids, e.ID)
	}
	if want := []string{"h-0002", "h-0001", "h-0004", "h-0003"}; !slices.Equal(ids, want) {
		t.Errorf("ranking %v; want %v (changed Elo applied, new one added, excluded last)", ids, want)
	}
	if got.Hypotheses[0].Wins != 1 {
		t.Errorf("the changed entry was not taken: %+v", got.Hypotheses[0])
	}
	if want := []string{"h-0001|h-0002", "h-0002|h-0004"}; !slices.Equal(got.Played, want) {
		t.Errorf("played %v; want %v", got.Played, want)
	}
	if len(got.Edges) != 2 || got.Goal != "refined" || got.Seq != 2 {
		t.Errorf("merged %+v", got)
	}
	if len(base.Hypotheses) != 3 || base.Hypotheses[1].Elo != 1184 {
		t.Error("Merge changed its base")
	}
}

func TestSameEntry(t *testing.T) {
	e := Entry{ID: "h-0001", Parents: []string{"h-0000"}, Elo: 1200}
	for _, c := range []struct {
		name string
		f    func(*Entry)
		same bool
	}{
		{"identical", func(*Entry) {}, true},
		{"elo", func(x *Entry) { x.Elo++ }, false},
		{"excluded", func(x *Entry) { x.Excluded = "unsafe" }, false},
		{"parents", func(x *Entry) { x.Parents = []string{"h-0002"} }, false},
		{"reviews", func(x *Entry) { x.Reviews = 1 }, false},
	} {
		x := e
		x.Parents = slices.Clone(e.Parents)
		c.f(&x)
		if SameEntry(e, x) != c.same {
			t.Errorf("%s: SameEntry = %v", c.name, !c.same)
		}
	}
}
