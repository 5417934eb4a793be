package proximity

import (
	"cmp"
	"slices"
)

// Measure is how the proximity agent compares hypotheses, and the thresholds that go with
// it. The thresholds of one measure mean nothing for another (best-F1 duplicate thresholds
// differ by a quarter between embedding models), so each measure carries its own,
// calibrated on the same fixture of paraphrased and distinct hypotheses (TestCalibrate).
type Measure struct {
	Name string `json:"name"` // "lexical", or "embedding:<model>"
	// Duplicate is the similarity from which two hypotheses are near-duplicates, Cluster
	// the one from which they are in one cluster (single linkage), Theme the average from
	// which top hypotheses share a theme in the overview.
	Duplicate float64 `json:"duplicate"`
	Cluster   float64 `json:"cluster"`
	Theme     float64 `json:"theme"`
}

// Lexical is the measure without embeddings: the Jaccard index of two hypotheses' words
// and word pairs for duplicates and clusters (see Signature), tf-idf for themes.
var Lexical = Measure{Name: "lexical", Duplicate: LexicalDuplicate, Cluster: LexicalCluster, Theme: ThemeSimilarity}

// The thresholds of the lexical measure, fitted by TestLexicalThresholdsFit: the duplicate
// threshold is the lowest that merges no distinct pair of the paraphrase fixture and at
// most 2% of the new hypotheses of simulated sessions (whose distinct hypotheses now share
// about as many words as real ones); it catches 2 of the fixture's 12 rewordings, where
// 0.8 caught none. Words cannot do much better: a reworded duplicate and two distinct
// hypotheses on one goal share about as many of them (BENCHMARKS.md), and each new
// hypothesis is compared with every other; embeddings, from any provider's session
// (provider.EmbeddingProviderOf), can. The cluster threshold is the lowest at which no
// cluster holds more than a tenth of a simulated session (single linkage chains a session
// into one below it).
const (
	LexicalDuplicate = 0.29
	LexicalCluster   = 0.26
)

// Embedding is the measure by a model's embeddings (cosine similarity), with thresholds
// for the model from thresholds, else the defaults, which suit OpenAI's
// text-embedding-3 models (see BENCHMARKS.md for how to calibrate another).
func Embedding(model string, thresholds map[string]Measure) Measure {
	if m, ok := thresholds[model]; ok {
		m.Name = "embedding:" + model
		return m
	}
	return Measure{Name: "embedding:" + model, Duplicate: EmbeddingDuplicate, Cluster: EmbeddingCluster, Theme: EmbeddingTheme}
}

// Default thresholds of the embedding measure.
const (
	EmbeddingDuplicate = 0.9
	EmbeddingCluster   = 0.75
	EmbeddingTheme     = 0.55
)

// NeighboursBy is Neighbours for any similarity: for each id in newIDs (in sorted
// order), its k most similar others in ids above floor, most similar first, ties by id,
// each undirected pair once.
func NeighboursBy(newIDs, ids []string, sim func(a, b string) float64, k int, floor float64) []Edge {
	if k <= 0 {
		return nil
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	fresh := slices.Clone(newIDs)
	slices.Sort(fresh)
	fresh = slices.Compact(fresh)
	type key struct{ a, b string }
	seen := map[key]bool{}
	var edges []Edge
	for _, id := range fresh {
		if _, ok := slices.BinarySearch(ids, id); !ok {
			continue
		}
		var cands []Edge
		for _, other := range ids {
			if other == id {
				continue
			}
			if s := sim(id, other); s > floor {
				cands = append(cands, Edge{A: id, B: other, Sim: s})
			}
		}
		slices.SortFunc(cands, func(x, y Edge) int {
			if c := cmp.Compare(y.Sim, x.Sim); c != 0 {
				return c
			}
			return cmp.Compare(x.B, y.B)
		})
		for _, e := range cands[:min(k, len(cands))] {
			kk := key{min(e.A, e.B), max(e.A, e.B)}
			if !seen[kk] {
				seen[kk] = true
				edges = append(edges, e)
			}
		}
	}
	return edges
}
