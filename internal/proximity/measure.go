package proximity

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
