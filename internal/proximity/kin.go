package proximity

// Kin: evolved hypotheses inherit their parents' words. A grounded and a more feasible
// version of one parent both keep its title, statement and predictions and add a clause
// each; compared whole they read as near-duplicates of each other (0.6 where the
// duplicate threshold is 0.29), though each adds something the other does not. Two
// hypotheses with an ancestor in common are compared on what each adds to what they
// inherit: two versions that add the same (a parent simplified twice) are still
// near-duplicates, two that add different things compete.

import "slices"

// Without is the signature without the shingles of inherited: what a text adds to it.
func (s Signature) Without(inherited Signature) Signature {
	out := make([]uint64, 0, len(s.shingles))
	for _, h := range s.shingles {
		if _, found := slices.BinarySearch(inherited.shingles, h); !found {
			out = append(out, h)
		}
	}
	return Signature{shingles: out}
}

// Union is the signature of every shingle of sigs.
func Union(sigs ...Signature) Signature {
	var sh []uint64
	for _, s := range sigs {
		sh = append(sh, s.shingles...)
	}
	slices.Sort(sh)
	return Signature{shingles: slices.Compact(sh)}
}

// OwnSimilarity is how alike what a and b add to inherited reads: the Jaccard index of
// their shingles without inherited's. Two that add nothing are copies of what they
// inherit, and of each other: 1.
func OwnSimilarity(a, b, inherited Signature) float64 {
	x, y := a.Without(inherited), b.Without(inherited)
	if len(x.shingles) == 0 && len(y.shingles) == 0 {
		return 1
	}
	return x.Similarity(y)
}

// Kin marks the edges between hypotheses that descend from a common ancestor, neither
// from the other (Edge.Kin), with the similarity of what each adds to what their common
// ancestors say (Edge.Own). parents gives a hypothesis' parents, sign its signature;
// an ancestor sign does not know is passed over (its words stay in the comparison).
func Kin(edges []Edge, parents func(id string) []string, sign func(id string) (Signature, bool)) {
	ancestors := map[string]map[string]bool{}
	ancestorsOf := func(id string) map[string]bool {
		if a, ok := ancestors[id]; ok {
			return a
		}
		seen := map[string]bool{}
		for next := slices.Clone(parents(id)); len(next) > 0; {
			p := next[len(next)-1]
			next = next[:len(next)-1]
			if !seen[p] {
				seen[p] = true
				next = append(next, parents(p)...)
			}
		}
		ancestors[id] = seen
		return seen
	}
	for i, e := range edges {
		a, b := ancestorsOf(e.A), ancestorsOf(e.B)
		if a[e.B] || b[e.A] {
			continue // a line of descent, not kin
		}
		var common []Signature
		for id := range a {
			if s, ok := sign(id); ok && b[id] {
				common = append(common, s)
			}
		}
		x, okA := sign(e.A)
		y, okB := sign(e.B)
		if len(common) == 0 || !okA || !okB {
			continue
		}
		edges[i].Kin, edges[i].Own = true, OwnSimilarity(x, y, Union(common...))
	}
}
