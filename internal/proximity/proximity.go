// Package proximity is the co-scientist's proximity agent without embeddings: how alike two
// hypotheses read, each hypothesis' nearest neighbours, and the clusters those neighbours
// form. The ranking agent pairs similar hypotheses with it; the overview groups related
// hypotheses with it and spots near-duplicates. Everything here is pure and deterministic.
//
// Similarity is the Jaccard index of two hypotheses' shingle sets. A hypothesis' text is its
// title, statement, rationale and testable predictions; it is lower-cased and split into
// words, stop-words are dropped, the rest lightly stemmed ("drives" and "driving" both
// become "driv"), and the shingles are every remaining word and every pair of consecutive
// remaining words. Single words catch shared vocabulary; pairs catch shared phrasing, so a
// reworded hypothesis scores well below a copy but well above an unrelated one.
package proximity

import (
	"cmp"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/cosci-dev/cosci/internal/research"
)

// DuplicateThreshold and ClusterThreshold are the lexical thresholds of workers before
// measures (and of sessions before the ledger, which clustered in the workflow): a
// workflow replaying their results keeps them. New results carry Lexical's, fitted on the
// paraphrase fixture: at 0.8 the words caught no reworded duplicate, and the threshold
// stayed there only because the simulator then wrote every hypothesis from one template,
// so that two distinct ones on one goal already scored 0.23 on the median pair.
const (
	DuplicateThreshold = 0.8
	ClusterThreshold   = 0.5
)

// Signature is a hypothesis' shingle set, computed once (see Sign) and compared many times.
type Signature struct {
	shingles []uint64 // hashes, sorted, without repeats
}

// Sign computes a hypothesis' signature from its title, statement, rationale and
// predictions. Its id, origin, goal and the like are not part of what it says.
func Sign(h research.Hypothesis) Signature {
	parts := append([]string{h.Title, h.Statement, h.Rationale}, h.Predictions...)
	return SignText(strings.Join(parts, "\n"))
}

// SignText computes the signature of any text, without the identifiers of the sources it
// names (see identifiers).
func SignText(text string) Signature {
	words := Words(identifiers.ReplaceAllString(text, " "))
	sh := make([]uint64, 0, 2*len(words))
	for i, w := range words {
		sh = append(sh, hash(unigramSeed, w, ""))
		if i > 0 {
			sh = append(sh, hash(bigramSeed, words[i-1], w))
		}
	}
	slices.Sort(sh)
	return Signature{shingles: slices.Compact(sh)}
}

// identifiers are the sources' ids a text may name: DOIs, links, PubMed and PMC ids, arXiv
// ids. Split into words they are many shingles ("10", "5555", "cosci", "tau", "011" and
// their pairs), which two hypotheses citing the same papers share whatever they claim: two
// distinct hypotheses whose rationales end "It builds on" the same three DOIs read 0.22
// alike against 0.04 without them, near the duplicate threshold. What a hypothesis cites
// is its references', not its words'.
var identifiers = regexp.MustCompile(`(?i)\b(?:doi:\s*)?10\.\d{4,9}/[^\s,;()\[\]"']+|\bhttps?://\S+|\bPMC\d+\b|\bPMID:?\s*\d+\b|\barXiv:\s*\d{4}\.\d{4,5}(?:v\d+)?`)

// Similarity is the Jaccard index of the two shingle sets: 1 for the same text, 0 for texts
// with no content word in common (and for an empty text).
func (s Signature) Similarity(o Signature) float64 {
	a, b := s.shingles, o.shingles
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	shared := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			shared++
			i++
			j++
		}
	}
	return float64(shared) / float64(len(a)+len(b)-shared)
}

// Similarity is how alike two hypotheses read, from 0 to 1 (see Signature.Similarity).
func Similarity(a, b research.Hypothesis) float64 { return Sign(a).Similarity(Sign(b)) }

// Words returns a text's content words: lower-cased, without stop-words, lightly stemmed.
func Words(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := fields[:0]
	for _, f := range fields {
		if len(f) < 2 || stopwords[f] {
			continue
		}
		out = append(out, stem(f))
	}
	return out
}

// stem strips the commonest English inflections, so that plurals, tenses and adverbs share a
// shingle with their root ("drives", "driving", "drive" all become "driv"). It is
// deliberately crude: it only has to be consistent.
func stem(w string) string {
	for _, suf := range []string{"ational", "ations", "ation", "ities", "ity", "ively", "ive", "ing", "ies", "ied", "ers", "er", "ed", "ly", "es", "s"} {
		if !strings.HasSuffix(w, suf) || len(w)-len(suf) < 3 {
			continue
		}
		if suf == "s" && (strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is")) {
			break // "stress", "locus", "analysis"
		}
		w = w[:len(w)-len(suf)]
		if suf == "ies" || suf == "ied" {
			return w + "y"
		}
		break
	}
	if len(w) > 3 && w[len(w)-1] == 'e' && w[len(w)-2] != 'e' {
		w = w[:len(w)-1] // "drive" as "driv", like "driving"; but "tree" stays
	}
	return w
}

const (
	unigramSeed = 0xcbf29ce484222325 // FNV-1a's offset basis
	bigramSeed  = 0x84222325cbf29ce4
)

// hash is FNV-1a over a and, when set, a separator and b.
func hash(seed uint64, a, b string) uint64 {
	const prime = 0x100000001b3
	h := uint64(seed)
	for i := 0; i < len(a); i++ {
		h = (h ^ uint64(a[i])) * prime
	}
	if b != "" {
		h = (h ^ ' ') * prime
		for i := 0; i < len(b); i++ {
			h = (h ^ uint64(b[i])) * prime
		}
	}
	return h
}

// Edge is a similarity between two hypotheses, from 0 (unrelated) to 1 (the same).
type Edge struct {
	A   string  `json:"a"`
	B   string  `json:"b"`
	Sim float64 `json:"sim"`
	// Kin says that A and B descend from a common ancestor (neither from the other), and
	// Own is then how alike what each adds to what they inherit reads (see Kin): the
	// measure a near-duplicate is found by between kin. Words only: an embedding has no
	// words to take the inherited ones out of.
	Kin bool    `json:"kin,omitempty"`
	Own float64 `json:"own,omitempty"`
}

// Neighbours returns, for each id in newIDs (in sorted order), its k most similar other
// hypotheses in all whose similarity is above floor, most similar first, ties by id. Each
// edge's A is the new hypothesis. An undirected pair appears once: when two new hypotheses
// pick each other, the edge is kept where the first (in id order) picked it. Ids in newIDs
// that all lacks are skipped. The cost is len(newIDs) × len(all) comparisons, never all × all.
func Neighbours(newIDs []string, all map[string]Signature, k int, floor float64) []Edge {
	sim := func(a, b string) float64 { return all[a].Similarity(all[b]) }
	return NeighboursBy(newIDs, slices.Collect(maps.Keys(all)), sim, k, floor)
}

// NeighboursBy is Neighbours for any similarity between the hypotheses ids names (an
// embedding's, say): for each id in newIDs that ids holds, its k most similar others
// above floor, on the same terms.
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
	cands := make([]Edge, 0, len(ids))
	for _, id := range fresh {
		if _, ok := slices.BinarySearch(ids, id); !ok {
			continue
		}
		cands = cands[:0]
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
			if seen[kk] {
				continue
			}
			seen[kk] = true
			edges = append(edges, e)
		}
	}
	return edges
}

// Clusters returns the connected components of the graph on ids whose edges have Sim >=
// threshold (single linkage). Each cluster is sorted; clusters are ordered by their first
// id; a hypothesis with no such edge is a cluster of its own. Edges to ids not in ids are
// ignored.
func Clusters(ids []string, edges []Edge, threshold float64) [][]string {
	parent := make(map[string]string, len(ids))
	for _, id := range ids {
		parent[id] = id
	}
	var find func(string) string
	find = func(x string) string {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, e := range edges {
		if e.Sim < threshold {
			continue
		}
		if _, ok := parent[e.A]; !ok {
			continue
		}
		if _, ok := parent[e.B]; !ok {
			continue
		}
		ra, rb := find(e.A), find(e.B)
		if ra != rb {
			parent[max(ra, rb)] = min(ra, rb) // the smaller id is the root: deterministic
		}
	}
	// Walk ids, not the maps: the workflow runs this, and map order is not deterministic.
	groups := map[string][]string{}
	var roots []string
	for _, id := range ids {
		r := find(id)
		if _, seen := groups[r]; !seen {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], id)
	}
	out := make([][]string, 0, len(roots))
	for _, r := range roots {
		g := groups[r]
		slices.Sort(g)
		out = append(out, slices.Compact(g))
	}
	slices.SortFunc(out, func(x, y []string) int { return cmp.Compare(x[0], y[0]) })
	return out
}

// ThemeThreshold is the similarity at which two top hypotheses share a theme in the
// research overview: looser than ClusterThreshold, since the overview is about which ideas
// belong together, not near-duplicates.
const ThemeThreshold = 0.35

// Themes groups the top hypotheses (ids ranked best first) among themselves by the edges
// between them (at ThemeThreshold); each theme lists its members best first, and the
// themes come in the order of their best member.
func Themes(top []string, edges []Edge) [][]string {
	edges = slices.DeleteFunc(slices.Clone(edges), func(e Edge) bool {
		return !slices.Contains(top, e.A) || !slices.Contains(top, e.B)
	})
	themes := Clusters(top, edges, ThemeThreshold)
	rank := func(id string) int { return slices.Index(top, id) }
	for _, t := range themes {
		slices.SortFunc(t, func(x, y string) int { return rank(x) - rank(y) })
	}
	slices.SortStableFunc(themes, func(x, y []string) int { return rank(x[0]) - rank(y[0]) })
	return themes
}

// stopwords are English function words and the words every hypothesis uses whatever it is
// about, which say nothing about what a hypothesis claims.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each either few for
from further had has have having he her here hers him his how however i if in into is it its
itself just less may me might more most much must my neither no nor not of off on once only
or other our ours out over own per same shall she should so some such than that the their
theirs them then there these they this those through thus to too under until up upon very
via was we were what when where whether which while who whom why will with within without
would yet you your
hypothesis hypothesise hypothesize hypothesised hypothesized propose proposed suggest
suggests predict predicts prediction predictions should would`) {
		m[w] = true
	}
	return m
}()
