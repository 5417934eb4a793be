package proximity

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

var (
	tau = research.Hypothesis{
		Title:     "Microglial exosomes carry tau between brain regions",
		Statement: "We hypothesise that activated microglia package misfolded tau into exosomes and release them at synapses, seeding aggregation in connected neurons.",
		Rationale: "Depleting microglia slows tau spread in mouse models, and exosomes from patient brains contain seed-competent tau.",
		Predictions: []string{
			"Inhibiting exosome synthesis with GW4869 should reduce tau spread to connected regions.",
			"Exosomes isolated from microglia should seed aggregation in cultured neurons.",
		},
	}
	// tauParaphrase says the same thing in other words, and keeps some of them.
	tauParaphrase = research.Hypothesis{
		Title:     "Exosomes released by microglia spread tau across the brain",
		Statement: "Activated microglia may take up misfolded tau, package it into exosomes and release them near synapses, where it seeds aggregation in connected neurons.",
		Rationale: "In mice, removing microglia slows the spread of tau; patient brain exosomes carry seed-competent tau.",
		Predictions: []string{
			"Blocking exosome synthesis should slow tau spread between connected regions.",
			"Microglial exosomes should seed tau aggregation in neurons in culture.",
		},
	}
	// tauNearCopy changes a few words of tau.
	tauNearCopy = research.Hypothesis{
		Title:     tau.Title,
		Statement: "We hypothesise that activated microglia package misfolded tau into exosomes and secrete them at synapses, seeding aggregation in connected neurons.",
		Rationale: tau.Rationale,
		Predictions: []string{
			"Inhibiting exosome synthesis with GW4869 should reduce tau spread to connected regions.",
			"Exosomes purified from microglia should seed aggregation in cultured neurons.",
		},
	}
	soil = research.Hypothesis{
		Title:       "Fungal networks ration nitrogen in drought",
		Statement:   "Mycorrhizal fungi redirect nitrogen toward seedlings when rainfall is scarce.",
		Rationale:   "Isotope labelling in arid grasslands shows transfer through hyphae.",
		Predictions: []string{"Cutting hyphal links should stunt seedlings only under drought."},
	}
)

func TestSimilarity(t *testing.T) {
	tests := []struct {
		name     string
		a, b     research.Hypothesis
		min, max float64
	}{
		{"identical texts", tau, tau, 1, 1},
		{"identical texts, different ids and origins", tau, func() research.Hypothesis { h := tau; h.ID, h.Origin = "h-9", "evolution"; return h }(), 1, 1},
		{"unrelated", tau, soil, 0, 0.02},
		{"paraphrase", tau, tauParaphrase, 0.15, ClusterThreshold},
		{"near copy is a duplicate", tau, tauNearCopy, DuplicateThreshold, 0.99},
		{"paraphrase is not a duplicate at the old threshold", tauParaphrase, tauNearCopy, 0.1, DuplicateThreshold},
		{"empty", research.Hypothesis{}, tau, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Similarity(tt.a, tt.b)
			if got < tt.min || got > tt.max {
				t.Errorf("Similarity = %.3f, want in [%.2f, %.2f]", got, tt.min, tt.max)
			}
			if back := Similarity(tt.b, tt.a); back != got {
				t.Errorf("not symmetric: %v and %v", got, back)
			}
		})
	}
}

func TestWords(t *testing.T) {
	got := Words("The drive drives; DRIVING the studies it studied, under stress.")
	want := []string{"driv", "driv", "driv", "study", "study", "stress"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
}

// sigs signs texts by id; texts sharing words are similar to the degree they share them.
func sigs(texts map[string]string) map[string]Signature {
	m := make(map[string]Signature, len(texts))
	for id, s := range texts {
		m[id] = SignText(s)
	}
	return m
}

func TestNeighbours(t *testing.T) {
	all := sigs(map[string]string{
		"a": "alpha beta gamma delta epsilon",
		"b": "alpha beta gamma delta zeta",      // a: 7/11
		"c": "alpha beta gamma theta iota",      // a: 5/15
		"d": "alpha beta gamma theta iota",      // same as c
		"e": "alpha kappa lambda mu nu",         // a: 1/17
		"f": "omicron pi rho sigma tau upsilon", // nothing shared
	})
	sim := func(x, y string) float64 { return all[x].Similarity(all[y]) }
	tests := []struct {
		name  string
		fresh []string
		k     int
		floor float64
		want  []Edge
	}{
		{"k nearest, most similar first, ties by id", []string{"a"}, 3, 0,
			[]Edge{{A: "a", B: "b", Sim: sim("a", "b")}, {A: "a", B: "c", Sim: sim("a", "c")}, {A: "a", B: "d", Sim: sim("a", "d")}}},
		{"floor drops the weak", []string{"a"}, 10, 0.2,
			[]Edge{{A: "a", B: "b", Sim: sim("a", "b")}, {A: "a", B: "c", Sim: sim("a", "c")}, {A: "a", B: "d", Sim: sim("a", "d")}}},
		{"nothing above the floor", []string{"f"}, 3, 0, nil},
		{"undirected pair once; new ids in id order", []string{"d", "c"}, 1, 0,
			[]Edge{{A: "c", B: "d", Sim: 1}}},
		{"unknown new id skipped, duplicates once", []string{"x", "e", "e"}, 1, 0,
			[]Edge{{A: "e", B: "a", Sim: sim("a", "e")}}},
		{"k zero", []string{"a"}, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Neighbours(tt.fresh, all, tt.k, tt.floor)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Neighbours = %v, want %v", got, tt.want)
			}
			for range 5 { // map order must not matter
				if again := Neighbours(tt.fresh, all, tt.k, tt.floor); !reflect.DeepEqual(again, got) {
					t.Fatalf("not deterministic: %v then %v", got, again)
				}
			}
		})
	}
	if sim("a", "b") != 7.0/11 {
		t.Errorf("sim(a, b) = %v, want 7/11", sim("a", "b"))
	}
}

func TestClusters(t *testing.T) {
	ids := []string{"h1", "h2", "h3", "h4", "h5", "h6", "h7"}
	edges := []Edge{
		{A: "h1", B: "h3", Sim: 0.9},
		{A: "h3", B: "h5", Sim: 0.6}, // chains h1-h3-h5 (single linkage)
		{A: "h2", B: "h4", Sim: 0.7},
		{A: "h6", B: "h2", Sim: 0.4},  // below the threshold
		{A: "h7", B: "hx", Sim: 0.99}, // hx is not among ids
	}
	tests := []struct {
		name      string
		threshold float64
		want      [][]string
	}{
		{"at 0.5", 0.5, [][]string{{"h1", "h3", "h5"}, {"h2", "h4"}, {"h6"}, {"h7"}}},
		{"inclusive threshold", 0.4, [][]string{{"h1", "h3", "h5"}, {"h2", "h4", "h6"}, {"h7"}}},
		{"duplicates only", 0.8, [][]string{{"h1", "h3"}, {"h2"}, {"h4"}, {"h5"}, {"h6"}, {"h7"}}},
		{"all singletons", 1, [][]string{{"h1"}, {"h2"}, {"h3"}, {"h4"}, {"h5"}, {"h6"}, {"h7"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clusters(ids, edges, tt.threshold); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Clusters = %v, want %v", got, tt.want)
			}
		})
	}
	if got := Clusters(nil, edges, 0.5); len(got) != 0 {
		t.Errorf("Clusters of nothing = %v", got)
	}
}

// TestOfflineHypotheses checks the lexical measure's thresholds against what the offline
// simulator writes: distinct hypotheses for one goal, worded apart. Few may count as
// duplicates (each new hypothesis is compared with every other, so a few pairs above the
// threshold are the price of catching rewordings at all), and the clusters must stay small
// (a low threshold chains them all into one).
func TestOfflineHypotheses(t *testing.T) {
	var o simulator.Offline
	all := map[string]Signature{}
	var ids []string
	for i := range 200 {
		h, _, err := o.Generate(context.Background(), research.GenerateRequest{
			TurnID: fmt.Sprint("generate-", i), Seed: 1,
			Goal: "Why does tau pathology spread between brain regions in Alzheimer's disease?",
		})
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("h-%04d", i)
		all[id], ids = Sign(h), append(ids, id)
	}
	edges := Neighbours(ids, all, 5, 0.1)
	merged := map[string]bool{}
	for _, e := range edges {
		if e.Sim >= Lexical.Duplicate {
			merged[max(e.A, e.B)] = true
		}
	}
	if len(merged) > len(ids)/20 {
		t.Errorf("%d of %d distinct hypotheses count as duplicates at %.2f; want at most 5%%", len(merged), len(ids), Lexical.Duplicate)
	}
	clusters := Clusters(ids, edges, Lexical.Cluster)
	largest := 0
	for _, c := range clusters {
		largest = max(largest, len(c))
	}
	if len(clusters) < 50 || largest > 25 {
		t.Errorf("%d clusters, the largest of %d: the threshold chains unrelated hypotheses", len(clusters), largest)
	}
	t.Logf("%d edges, %d duplicates, %d clusters, the largest of %d", len(edges), len(merged), len(clusters), largest)
}

func BenchmarkNeighbours(b *testing.B) {
	var o simulator.Offline
	all := map[string]Signature{}
	var fresh []string
	for i := range 1000 {
		h, _, _ := o.Generate(context.Background(), research.GenerateRequest{TurnID: fmt.Sprint("generate-", i), Seed: 1, Goal: "Why do bacteria share antibiotic resistance genes?"})
		id := fmt.Sprintf("h-%04d", i)
		all[id] = Sign(h)
		if i%100 == 0 {
			fresh = append(fresh, id)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		Neighbours(fresh, all, 5, 0.1)
	}
}
