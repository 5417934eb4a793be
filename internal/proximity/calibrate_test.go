package proximity_test

import (
	"encoding/json"
	"flag"
	"os"
	"slices"
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

// A live embedding model to calibrate too (an OpenAI-compatible endpoint, from
// OPENAI_BASE_URL and OPENAI_API_KEY): go test ./internal/proximity -run TestCalibrate -v
// -proximity.embedding-model text-embedding-3-small.
var liveModel = flag.String("proximity.embedding-model", "", "also calibrate this embedding model of the OPENAI_BASE_URL server")

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
		e, err := provider.NewOpenAIEmbedder(provider.OpenAIConfig{APIKey: os.Getenv("OPENAI_API_KEY"), BaseURL: os.Getenv("OPENAI_BASE_URL"), Model: *liveModel})
		if err != nil {
			t.Fatal(err)
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
		if name == "lexical" && ur > 0 && up < 1 {
			t.Errorf("the lexical duplicate threshold %.2f merges distinct hypotheses (precision %.2f)", used[name].Duplicate, up)
		}
	}
	if bestF1["embedding (stand-in)"] < bestF1["lexical"] {
		t.Errorf("embeddings tell rewordings apart worse (best F1 %.2f) than words (%.2f)", bestF1["embedding (stand-in)"], bestF1["lexical"])
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
