package proximity

import (
	"math"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
)

// Themes of the research overview: which of the top hypotheses a reader would put
// together. The session's proximity graph is made for pairing and near-duplicates: it
// keeps each hypothesis' few nearest neighbours at the moment it arrived, so among the
// ten best there are few edges, and what a shared template of words makes alike
// dominates what a shared idea does. Themes compare the top hypotheses with one another
// directly instead, weighting each word by how rare it is among them (tf-idf): the words
// every hypothesis uses say nothing about which belong together, the mechanism two of
// them share says a lot. An evolved hypothesis joins its parent's theme when both are in
// the top, as a reader follows the lineage.

// ThemeSimilarity is the tf-idf cosine from which two top hypotheses share a theme
// (average linkage), calibrated on TestThemes' groupings of what a reader would group.
const ThemeSimilarity = 0.12

// MaxThemes bounds how many themes an overview has; the least similar merge first past it.
const MaxThemes = 5

// ThemeSim is how alike two top hypotheses are, for grouping them into themes.
type ThemeSim func(i, j int) float64

// TFIDF returns the tf-idf cosine similarity of a set of hypotheses among themselves,
// over their content words and word pairs (see Words).
func TFIDF(hs []research.Hypothesis) ThemeSim {
	docs := make([]map[string]float64, len(hs))
	df := map[string]int{}
	for i, h := range hs {
		parts := append([]string{h.Title, h.Title, h.Statement, h.Rationale}, h.Predictions...) // the title says what it claims: twice
		words := Words(strings.Join(parts, "\n"))
		tf := map[string]float64{}
		for k, w := range words {
			tf[w]++
			if k > 0 {
				tf[words[k-1]+" "+w]++
			}
		}
		for term := range tf {
			df[term]++
		}
		docs[i] = tf
	}
	n := float64(len(hs))
	vecs := make([]map[string]float64, len(hs))
	norms := make([]float64, len(hs))
	for i, tf := range docs {
		v := map[string]float64{}
		var norm float64
		for term, f := range tf {
			w := (1 + math.Log(f)) * math.Log((1+n)/float64(1+df[term]))
			if w > 0 {
				v[term] = w
				norm += w * w
			}
		}
		vecs[i], norms[i] = v, math.Sqrt(norm)
	}
	return func(i, j int) float64 {
		if norms[i] == 0 || norms[j] == 0 {
			return 0
		}
		a, b := vecs[i], vecs[j]
		if len(b) < len(a) {
			a, b = b, a
		}
		var dot float64
		for term, w := range a {
			dot += w * b[term]
		}
		return dot / (norms[i] * norms[j])
	}
}

// Cosine is the cosine similarity of two vectors (embeddings), 0 for an empty one.
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range min(len(a), len(b)) {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// ThemesOf groups the top hypotheses (ranked, best first) by sim, average linkage, merging
// while two themes are at least threshold alike on average, and further while there are
// more than MaxThemes; a hypothesis evolved from another of the top starts in its
// parent's theme. Each theme lists its members best first; the themes come in the order
// of their best member.
func ThemesOf(top []research.Hypothesis, sim ThemeSim, threshold float64) [][]string {
	n := len(top)
	groups := make([][]int, n)
	for i := range top {
		groups[i] = []int{i}
	}
	at := func(id string) int {
		return slices.IndexFunc(top, func(h research.Hypothesis) bool { return h.ID == id })
	}
	find := func(i int) int {
		return slices.IndexFunc(groups, func(g []int) bool { return slices.Contains(g, i) })
	}
	merge := func(x, y int) {
		if x > y {
			x, y = y, x
		}
		groups[x] = append(groups[x], groups[y]...)
		groups = slices.Delete(groups, y, y+1)
	}
	for i, h := range top {
		for _, p := range h.Parents {
			if j := at(p); j >= 0 {
				if gi, gj := find(i), find(j); gi != gj {
					merge(gi, gj)
				}
			}
		}
	}
	linkage := func(g, h []int) float64 {
		var s float64
		for _, i := range g {
			for _, j := range h {
				s += sim(i, j)
			}
		}
		return s / float64(len(g)*len(h))
	}
	for len(groups) > 1 {
		bx, by, best := -1, -1, -1.0
		for x := range groups {
			for y := x + 1; y < len(groups); y++ {
				if l := linkage(groups[x], groups[y]); l > best {
					bx, by, best = x, y, l
				}
			}
		}
		if best < threshold && len(groups) <= MaxThemes {
			break
		}
		merge(bx, by)
	}
	out := make([][]string, 0, len(groups))
	for _, g := range groups {
		slices.Sort(g)
		ids := make([]string, len(g))
		for k, i := range g {
			ids[k] = top[i].ID
		}
		out = append(out, ids)
	}
	slices.SortFunc(out, func(x, y []string) int { return at(x[0]) - at(y[0]) })
	return out
}
