package proximity_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
)

// The calibration fixture: hypotheses in groups of one topic, some rewording another.
type fixtureItem struct {
	ID, Text, Same, Theme string
}

func loadFixture(t testing.TB) []fixtureItem {
	t.Helper()
	b, err := os.ReadFile("testdata/paraphrases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Theme string `json:"theme"`
			Items []struct {
				ID, Text, Same string
			} `json:"items"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var items []fixtureItem
	for _, g := range f.Groups {
		for _, it := range g.Items {
			items = append(items, fixtureItem{ID: it.ID, Text: it.Text, Same: it.Same, Theme: g.Theme})
		}
	}
	return items
}

// scored is one pair of the fixture, its similarity, and what a reader says of it.
type scored struct {
	sim              float64
	duplicate, theme bool
}

func pairs(items []fixtureItem, sim func(a, b int) float64) []scored {
	var out []scored
	for i := range items {
		for j := i + 1; j < len(items); j++ {
			a, b := items[i], items[j]
			out = append(out, scored{sim: sim(i, j), duplicate: a.Same == b.ID || b.Same == a.ID, theme: a.Theme == b.Theme})
		}
	}
	return out
}

// prf is the precision, recall and F1 of calling pairs at or above threshold positive.
func prf(ps []scored, threshold float64, positive func(scored) bool) (p, r, f float64) {
	var tp, fp, fn float64
	for _, s := range ps {
		switch hit := s.sim >= threshold; {
		case hit && positive(s):
			tp++
		case hit:
			fp++
		case positive(s):
			fn++
		}
	}
	if tp == 0 {
		return 0, 0, 0
	}
	p, r = tp/(tp+fp), tp/(tp+fn)
	return p, r, 2 * p * r / (p + r)
}

// best is the threshold with the best F1, the highest of equals.
func best(ps []scored, positive func(scored) bool) (threshold, f float64) {
	for _, s := range ps {
		if _, _, fs := prf(ps, s.sim, positive); fs > f || (fs == f && s.sim > threshold) {
			threshold, f = s.sim, fs
		}
	}
	return threshold, f
}

// measures are the measures calibrated: words (Jaccard of shingles), and the stand-in
// embedding the tests' fake OpenAI server returns (simulator.Embed).
func measures(items []fixtureItem) map[string]func(a, b int) float64 {
	sigs := make([]proximity.Signature, len(items))
	vecs := make([][]float32, len(items))
	for i, it := range items {
		sigs[i] = proximity.SignText(it.Text)
		vecs[i] = simulator.Embed(it.Text)
	}
	return map[string]func(a, b int) float64{
		"lexical":              func(a, b int) float64 { return sigs[a].Similarity(sigs[b]) },
		"embedding (stand-in)": func(a, b int) float64 { return proximity.Cosine(vecs[a], vecs[b]) },
	}
}

// A live embedding model to calibrate too, from the provider and with the environment a
// worker would use (provider.Registry.Embedder): OpenAI or the OPENAI_BASE_URL server by
// default, or voyage (VOYAGE_API_KEY), or openai-compatible (COSCI_EMBEDDING_BASE_URL):
// go test ./internal/proximity -run TestCalibrate -v -proximity.embedding-model text-embedding-3-small
// go test ./internal/proximity -run TestCalibrate -v -proximity.embedding-provider voyage -proximity.embedding-model voyage-3.5
var (
	liveModel    = flag.String("proximity.embedding-model", "", "also calibrate this embedding model")
	liveProvider = flag.String("proximity.embedding-provider", "openai", "the embedding provider of -proximity.embedding-model: openai, openai-compatible or voyage")
)

// TestCalibrate reports, for each measure, the best-F1 thresholds for near-duplicates and
// for same-topic pairs on the fixture, with precision and recall, and precision and
// recall at the thresholds cosci uses. It checks that the lexical measure's duplicate
// threshold never merges distinct hypotheses, and that embeddings tell rewordings from
// distinct hypotheses at least as well as words do. Run with -v for the table
// (BENCHMARKS.md, "Proximity").
func TestCalibrate(t *testing.T) {
	items := loadFixture(t)
	ms := measures(items)
	names := []string{"lexical", "embedding (stand-in)"}
	used := map[string]proximity.Measure{"lexical": proximity.Lexical, "embedding (stand-in)": proximity.Embedding("stand-in", nil)}
	if *liveModel != "" {
		e, err := (&provider.Registry{Env: os.Getenv}).Embedder(*liveProvider, *liveModel)
		if err != nil || e == nil {
			t.Fatalf("the embedder of %s %s: %v", *liveProvider, *liveModel, err)
		}
		texts := make([]string, len(items))
		for i, it := range items {
			texts[i] = it.Text
		}
		vecs, _, err := e.Embed(t.Context(), texts)
		if err != nil {
			t.Fatal(err)
		}
		name := "embedding " + *liveModel
		ms[name] = func(a, b int) float64 { return proximity.Cosine(vecs[a], vecs[b]) }
		used[name] = proximity.Embedding(*liveModel, nil)
		names = append(names, name)
	}
	dup := func(s scored) bool { return s.duplicate }
	topic := func(s scored) bool { return s.theme }
	bestF1 := map[string]float64{}
	for _, name := range names {
		ps := pairs(items, ms[name])
		dt, df := best(ps, dup)
		dp, dr, _ := prf(ps, dt, dup)
		ct, cf := best(ps, topic)
		cp, cr, _ := prf(ps, ct, topic)
		up, ur, uf := prf(ps, used[name].Duplicate, dup)
		bestF1[name] = df
		t.Logf("%s: duplicates: best F1 %.2f at %.2f (precision %.2f, recall %.2f); at cosci's %.2f: precision %.2f, recall %.2f, F1 %.2f. Same topic: best F1 %.2f at %.2f (precision %.2f, recall %.2f)",
			name, df, dt, dp, dr, used[name].Duplicate, up, ur, uf, cf, ct, cp, cr)
		if name == "lexical" && (ur == 0 || up < 1) {
			t.Errorf("the lexical duplicate threshold %.2f: precision %.2f, recall %.2f; want some duplicates caught and no distinct hypotheses merged", used[name].Duplicate, up, ur)
		}
	}
	if bestF1["embedding (stand-in)"] < bestF1["lexical"] {
		t.Errorf("embeddings tell rewordings apart worse (best F1 %.2f) than words (%.2f)", bestF1["embedding (stand-in)"], bestF1["lexical"])
	}
}

// Simulated sessions: the offline simulator's hypotheses for a few goals, in the order a
// session makes them, across the generation strategies or by literature exploration
// alone. Their texts are worded apart (simulator/wording.go) as real hypotheses on one
// goal are.
var simGoals = []string{
	"Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease",
	"Why does tau pathology spread between brain regions in Alzheimer's disease?",
	"Why do naked mole-rats resist cancer?",
	"Identify mechanisms of antibiotic tolerance in Pseudomonas aeruginosa biofilms",
	"Find metabolic vulnerabilities of glioblastoma stem cells",
}

func simulated(t testing.TB, goal string, n int, mixed bool) []research.Hypothesis {
	t.Helper()
	var o simulator.Offline
	strategies := []string{research.StrategyLiterature}
	if mixed {
		strategies = []string{research.StrategyLiterature, research.StrategyDebate, research.StrategyAssumptions, research.StrategyFeedback}
	}
	hs := make([]research.Hypothesis, n)
	for i := range hs {
		h, _, err := o.Generate(context.Background(), research.GenerateRequest{TurnID: fmt.Sprint("generate-", i), Goal: goal, Strategy: strategies[i%len(strategies)], Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		h.ID = fmt.Sprintf("h-%04d", i+1)
		hs[i] = h
	}
	return hs
}

// simSessions are the signatures of simulated sessions of 200, for each goal with mixed
// strategies and with literature exploration alone, made once.
var simSessions = func() func(testing.TB) [][]proximity.Signature {
	var once sync.Once
	var sessions [][]proximity.Signature
	return func(t testing.TB) [][]proximity.Signature {
		once.Do(func() {
			for k := range 2 * len(simGoals) {
				var sigs []proximity.Signature
				for _, h := range simulated(t, simGoals[k/2], 200, k%2 == 0) {
					sigs = append(sigs, proximity.Sign(h))
				}
				sessions = append(sessions, sigs)
			}
		})
		return sessions
	}
}()

// simGraph is a simulated session's proximity graph: each hypothesis' five nearest
// neighbours above 0.1, as the proximity agent keeps them.
type simGraph struct {
	ids   []string
	edges []proximity.Edge
}

var simGraphs = func() func(testing.TB) []simGraph {
	var once sync.Once
	var graphs []simGraph
	return func(t testing.TB) []simGraph {
		once.Do(func() {
			for _, session := range simSessions(t) {
				all := map[string]proximity.Signature{}
				var ids []string
				for i, s := range session {
					id := fmt.Sprintf("h-%04d", i+1)
					all[id], ids = s, append(ids, id)
				}
				graphs = append(graphs, simGraph{ids, proximity.Neighbours(ids, all, 5, 0.1)})
			}
		})
		return graphs
	}
}()

// mergedShare is the share of new hypotheses in simulated sessions of 60 that the words'
// duplicate threshold would exclude: those with an earlier one at or above it. Each new
// hypothesis is compared with every other, so a threshold that merges few pairs of the
// fixture still merges many hypotheses of a session.
func mergedShare(t testing.TB, threshold float64) float64 {
	merged, all := 0, 0
	for _, session := range simSessions(t) {
		var sigs []proximity.Signature
		for _, s := range session[:60] {
			if slices.ContainsFunc(sigs, func(o proximity.Signature) bool { return s.Similarity(o) >= threshold }) {
				merged++
			}
			if len(sigs) > 0 {
				all++
			}
			sigs = append(sigs, s)
		}
	}
	return float64(merged) / float64(all)
}

// largestCluster is the largest cluster, as a share, of simulated sessions of 200 at a
// cluster threshold (single linkage over each hypothesis' five nearest neighbours).
func largestCluster(t testing.TB, threshold float64) float64 {
	largest := 0.0
	for _, g := range simGraphs(t) {
		for _, c := range proximity.Clusters(g.ids, g.edges, threshold) {
			largest = max(largest, float64(len(c))/float64(len(g.ids)))
		}
	}
	return largest
}

// TestLexicalThresholdsFit fits the words' thresholds and checks that cosci's are the
// fitted ones (refit after changing the measure, the fixture or the simulator's wording,
// and update proximity.LexicalDuplicate and LexicalCluster and BENCHMARKS.md):
//
//   - duplicate: the lowest threshold (in hundredths) at which no distinct pair of the
//     fixture is merged (precision 1) and at most 2% of the new hypotheses of simulated
//     sessions of 60 are; the fixture's recall there is what the words catch;
//   - cluster: the lowest at which no cluster of a simulated session of 200 holds more
//     than a tenth of it (lower, single linkage chains the session into one).
//
// The simulated sessions are five goals, each with mixed strategies and with literature
// exploration alone (whose texts are the most alike).
func TestLexicalThresholdsFit(t *testing.T) {
	items := loadFixture(t)
	ps := pairs(items, measures(items)["lexical"])
	dup := func(s scored) bool { return s.duplicate }
	duplicate := math.NaN()
	for c := 5; c <= 100; c++ {
		th := float64(c) / 100
		if p, r, _ := prf(ps, th, dup); p == 1 && r > 0 && mergedShare(t, th) <= 0.02 {
			duplicate = th
			break
		}
	}
	cluster := math.NaN()
	for c := 5; c <= 100; c++ {
		if th := float64(c) / 100; largestCluster(t, th) <= 0.1 {
			cluster = th
			break
		}
	}
	p, r, _ := prf(ps, duplicate, dup)
	cp, cr, _ := prf(ps, cluster, func(s scored) bool { return s.theme })
	pairwise, _ := best(ps, dup)
	t.Logf("duplicate %.2f: fixture precision %.2f, recall %.2f; %.3f of simulated new hypotheses merged (%.3f at the pairwise best %.2f, %.3f at 0.80). Cluster %.2f: the largest cluster %.2f of a simulated session; same topic on the fixture: precision %.2f, recall %.2f",
		duplicate, p, r, mergedShare(t, duplicate), mergedShare(t, pairwise), pairwise, mergedShare(t, 0.8), cluster, largestCluster(t, cluster), cp, cr)
	if math.Abs(duplicate-proximity.LexicalDuplicate) > 0.005 || math.Abs(cluster-proximity.LexicalCluster) > 0.005 {
		t.Errorf("fitted duplicate %.2f and cluster %.2f; cosci uses %.2f and %.2f: update proximity.LexicalDuplicate, LexicalCluster and BENCHMARKS.md",
			duplicate, cluster, proximity.LexicalDuplicate, proximity.LexicalCluster)
	}
	if !(cluster < duplicate) {
		t.Errorf("cluster %.2f is not below duplicate %.2f: a duplicate must be in its original's cluster", cluster, duplicate)
	}
}

// TestSimulatorWordsDistinctHypothesesApart: the simulator's distinct hypotheses on one
// goal share about as many words as distinct hypotheses on one topic of the fixture (its
// 60 same-topic pairs written by hand): the median within 0.03 of theirs, and the 90th
// percentile within 0.05. Before the simulator worded them apart (one template for all)
// the median was 0.18.
func TestSimulatorWordsDistinctHypothesesApart(t *testing.T) {
	quantile := func(xs []float64, q float64) float64 {
		slices.Sort(xs)
		return xs[int(q*float64(len(xs)-1))]
	}
	items := loadFixture(t)
	var real []float64
	for _, s := range pairs(items, measures(items)["lexical"]) {
		if s.theme && !s.duplicate {
			real = append(real, s.sim)
		}
	}
	var sim []float64
	for _, g := range simGoals {
		hs := simulated(t, g, 60, true)
		sigs := make([]proximity.Signature, len(hs))
		for i, h := range hs {
			sigs[i] = proximity.Sign(h)
		}
		for i := range sigs {
			for j := i + 1; j < len(sigs); j++ {
				sim = append(sim, sigs[i].Similarity(sigs[j]))
			}
		}
	}
	rm, r90, sm, s90 := quantile(real, 0.5), quantile(real, 0.9), quantile(sim, 0.5), quantile(sim, 0.9)
	t.Logf("distinct hypotheses: the fixture's on one topic median %.3f, 90th percentile %.3f; the simulator's on one goal median %.3f, 90th percentile %.3f, max %.3f",
		rm, r90, sm, s90, quantile(sim, 1))
	if sm > rm+0.03 || s90 > r90+0.05 {
		t.Errorf("the simulator's distinct hypotheses share more words than real ones: median %.3f (real %.3f), 90th percentile %.3f (real %.3f)", sm, rm, s90, r90)
	}
}

// TestThemes: the overview's themes group what a reader would group. In windows of three
// topics of the fixture (nine hypotheses), the grouping by tf-idf agrees with the topics
// on most pairs (Rand index); and an evolved hypothesis joins its parent.
func TestThemes(t *testing.T) {
	items := loadFixture(t)
	byTopic := map[string][]fixtureItem{}
	var topics []string
	for _, it := range items {
		if it.Same != "" {
			continue // near-duplicates are the proximity agent's, not a theme's
		}
		if _, ok := byTopic[it.Theme]; !ok {
			topics = append(topics, it.Theme)
		}
		byTopic[it.Theme] = append(byTopic[it.Theme], it)
	}
	var total float64
	windows := 0
	for s := 0; s+3 <= len(topics); s++ {
		var hs []research.Hypothesis
		var want []string
		for _, name := range topics[s : s+3] {
			for _, it := range byTopic[name] {
				hs = append(hs, research.Hypothesis{ID: it.ID, Title: it.Text})
				want = append(want, name)
			}
		}
		got := proximity.ThemesOf(hs, proximity.TFIDF(hs), proximity.ThemeSimilarity)
		if len(got) > proximity.MaxThemes {
			t.Errorf("%d themes; at most %d", len(got), proximity.MaxThemes)
		}
		theme := map[string]int{}
		for g, ids := range got {
			for _, id := range ids {
				theme[id] = g
			}
		}
		agree, all := 0, 0
		for i := range hs {
			for j := i + 1; j < len(hs); j++ {
				all++
				if (want[i] == want[j]) == (theme[hs[i].ID] == theme[hs[j].ID]) {
					agree++
				}
			}
		}
		total += float64(agree) / float64(all)
		windows++
	}
	if rand := total / float64(windows); rand < 0.75 {
		t.Errorf("themes agree with a reader's topics on %.2f of pairs; want at least 0.75", rand)
	} else {
		t.Logf("themes agree with a reader's topics on %.2f of pairs (%d windows of three topics)", rand, windows)
	}
	// Lineage: an evolved hypothesis is in its parent's theme, however its words differ.
	hs := []research.Hypothesis{
		{ID: "a", Title: "Microglia carry tau in exosomes"},
		{ID: "b", Title: "Persisters survive antibiotics by dormancy"},
		{ID: "c", Title: "Something else entirely, worded anew", Parents: []string{"a"}},
	}
	got := proximity.ThemesOf(hs, proximity.TFIDF(hs), proximity.ThemeSimilarity)
	if len(got) != 2 || !slices.Equal(got[0], []string{"a", "c"}) {
		t.Errorf("themes %v; want c with its parent a", got)
	}
}
