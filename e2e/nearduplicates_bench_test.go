package e2e

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/workflows"
)

// nearDuplicates is what a session excluded as near-duplicates, by how the excluded
// hypothesis is related to the one it was found a duplicate of: siblings share a parent,
// kin share an older ancestor, the others are not related by evolution. Latent qualities
// (the simulator's truth) say whether the exclusion lost the better one.
type nearDuplicates struct {
	excluded, referenced int // near-duplicates; those with references
	siblings, kin, other pairStats
}

// pairStats are excluded pairs of one relation: how many, whether the excluded one was
// the better by the simulator's latent quality, the mean latent qualities and the mean
// similarity, and the evolution kinds of the excluded and the kept (as "kind/kind").
type pairStats struct {
	n, excludedBetter                  int
	latentExcluded, latentKept, simSum float64
	kinds                              map[string]int
}

func (p *pairStats) add(excluded, kept research.Hypothesis, sim float64) {
	if p.kinds == nil {
		p.kinds = map[string]int{}
	}
	p.n++
	p.simSum += sim
	le, lk := latentOf(excluded), latentOf(kept)
	p.latentExcluded += le
	p.latentKept += lk
	if le > lk {
		p.excludedBetter++
	}
	p.kinds[excluded.Strategy+"/"+kept.Strategy]++
}

func latentOf(h research.Hypothesis) float64 {
	if h.Latent == nil {
		return 0
	}
	return *h.Latent
}

func (p pairStats) String() string {
	if p.n == 0 {
		return "0"
	}
	f := float64(p.n)
	type kc struct {
		k string
		n int
	}
	var ks []kc
	for k, n := range p.kinds {
		ks = append(ks, kc{k, n})
	}
	slices.SortFunc(ks, func(a, b kc) int { return cmp.Or(b.n-a.n, strings.Compare(a.k, b.k)) })
	var top []string
	for _, k := range ks[:min(4, len(ks))] {
		top = append(top, fmt.Sprintf("%s %d", k.k, k.n))
	}
	return fmt.Sprintf("%d (mean similarity %.2f; latent quality of the excluded %.2f, of the kept %.2f; the excluded the better in %d; excluded/kept kinds: %s)",
		p.n, p.simSum/f, p.latentExcluded/f, p.latentKept/f, p.excludedBetter, strings.Join(top, ", "))
}

var nearDuplicateOf = regexp.MustCompile(`^near-duplicate of (\S+) \(similarity ([0-9.]+)`)

// measureNearDuplicates reads a finished session's ranking (every entry, excluded ones
// too) and its hypotheses from the store, and sorts the near-duplicates it excluded by
// how they are related to the hypothesis they duplicate.
func measureNearDuplicates(tb testing.TB, storeDir, id string) nearDuplicates {
	tb.Helper()
	var entries []session.Entry
	for off := 0; ; off += workflows.MaxPageLimit {
		v := mustQueryWithin[workflows.StateView](tb, time.Minute, id, workflows.QueryState, workflows.Page{Offset: off, Limit: workflows.MaxPageLimit})
		entries = append(entries, v.Hypotheses...)
		if len(v.Hypotheses) == 0 || len(entries) >= v.Total {
			break
		}
	}
	hs := hypothesesOf(tb, storeDir, id)
	var d nearDuplicates
	for _, e := range entries {
		m := nearDuplicateOf.FindStringSubmatch(e.Excluded)
		if m == nil {
			continue
		}
		var sim float64
		fmt.Sscan(m[2], &sim)
		ex, kept := hs[e.ID], hs[m[1]]
		d.excluded++
		if len(ex.References) > 0 {
			d.referenced++
		}
		switch {
		case slices.ContainsFunc(ex.Parents, func(p string) bool { return slices.Contains(kept.Parents, p) }):
			d.siblings.add(ex, kept, sim)
		case sharesAncestor(hs, ex.ID, kept.ID):
			d.kin.add(ex, kept, sim)
		default:
			d.other.add(ex, kept, sim)
		}
	}
	return d
}

// sharesAncestor says whether two hypotheses descend from a common one.
func sharesAncestor(hs map[string]research.Hypothesis, a, b string) bool {
	ancestors := func(id string) map[string]bool {
		seen := map[string]bool{}
		next := slices.Clone(hs[id].Parents)
		for len(next) > 0 {
			p := next[len(next)-1]
			next = next[:len(next)-1]
			if !seen[p] {
				seen[p] = true
				next = append(next, hs[p].Parents...)
			}
		}
		return seen
	}
	x, y := ancestors(a), ancestors(b)
	for p := range x {
		if y[p] {
			return true
		}
	}
	return false
}

// hypothesesOf reads a session's hypotheses from the store, by id.
func hypothesesOf(tb testing.TB, storeDir, id string) map[string]research.Hypothesis {
	tb.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, storeDir)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	keys, err := st.Backend().List(ctx, id, "hypotheses/")
	if err != nil {
		tb.Fatal(err)
	}
	var ids []string
	for _, k := range keys {
		ids = append(ids, strings.TrimSuffix(path.Base(k), ".json")) // h-0001: nothing to unescape
	}
	hs, err := st.Hypotheses(ctx, id, ids)
	if err != nil {
		tb.Fatal(err)
	}
	return hs
}

func (d nearDuplicates) String() string {
	return fmt.Sprintf("near-duplicates excluded: %d (%d with references); siblings %s; kin %s; unrelated %s",
		d.excluded, d.referenced, d.siblings, d.kin, d.other)
}
