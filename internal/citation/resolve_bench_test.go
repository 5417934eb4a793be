package citation

import (
	"fmt"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// BenchmarkResolve is one turn's resolution: 8 references over the 6 results the turn
// read (two searches with passages and a fetched page, each read twice). Resolve reads
// each result once for the turn, not once for each reference.
func BenchmarkResolve(b *testing.B) {
	var results []Result
	for i := range 2 {
		for j, c := range []string{passageSearch, pageFetch, saunaPage2} {
			results = append(results, Result{Source: fmt.Sprintf("r%d.%d", i, j), Content: c})
		}
	}
	refs := []research.Reference{
		{ID: "10.5555/cosci.tau.001", Passage: "10.5555/cosci.tau.001#p1.13", Quote: "Exosome inhibition lowered seeding activity in the dentate gyrus by 46%"},
		{ID: "10.5555/cosci.tau.001", Page: 2, Quote: "Microglial exosomes carried seed-competent tau"},
		{ID: "10.5555/cosci.tau.001", Quote: "Levels of interleukin-1β and tumour necrosis factor did not differ between groups"},
		{ID: "kim2021", Quote: "Microglia lacking BIN1 released 38% fewer extracellular vesicles than control microglia"},
		{ID: "kim2021#p1.7", Quote: "released 38% fewer extracellular vesicles"},
		{ID: sauna, Page: 3, Quote: "The rise in plasma volume preceded any change in arterial stiffness"},
		{ID: sauna, Quote: "Adherence was high in both arms"},
		{ID: "10.5555/none", Quote: "Nothing holds this"},
	}
	b.ReportAllocs()
	for b.Loop() {
		Resolve(refs, results, nil)
	}
}
