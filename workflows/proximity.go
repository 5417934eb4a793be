package workflows

// Proximity: how the new hypotheses relate to the others (embeddings or words), which
// excludes near-duplicates and groups the session's hypotheses into clusters.

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/proximity"
)

// proximity asks the proximity agent how the new hypotheses relate to the others, excludes
// near-duplicates (the newer one goes) and re-clusters the session.
func (s *supervisor) proximity(ctx workflow.Context, fresh []string) {
	competing := s.competing()
	if len(fresh) == 0 || len(competing) < 2 || !s.mayGo(ctx) {
		return
	}
	in := activities.ProximityInput{SessionID: s.id, New: fresh, All: competing, Provider: s.req.Config.Provider, EmbeddingModel: s.req.Config.EmbeddingModel, EmbeddingProvider: s.req.Config.EmbeddingProvider}
	t := activities.Turn{SessionID: s.id, TurnID: fmt.Sprintf("proximity-round-%d", s.Rounds)}
	out, err := turn(ctx, s, activities.AgentProximity, fmt.Sprintf("proximity of %d new hypotheses", len(fresh)), t, "", a.Proximity, in)
	if err != nil {
		return
	}
	s.spend(activities.AgentProximity, out.Usage)
	// The measure's own thresholds (embeddings and words differ); a worker from before
	// measures gives none: the lexical ones.
	duplicate := proximity.DuplicateThreshold
	if out.Duplicate > 0 {
		duplicate, s.ClusterAt = out.Duplicate, out.Cluster
	}
	isFresh := func(id string) bool { return slices.Contains(fresh, id) }
	lineage := since(ctx, versionLineage)
	kin := since(ctx, versionKin)
	for _, e := range out.Edges {
		if _, seen := s.sim[activities.PairKey(e.A, e.B)]; !seen {
			s.Edges = append(s.Edges, e)
		}
		s.sim[activities.PairKey(e.A, e.B)] = e.Sim
		sim, how := e.Sim, ""
		if kin && e.Kin {
			sim, how = e.Own, " of what each adds to what they inherit"
		}
		if sim < duplicate || (lineage && (s.descends(e.A, e.B) || s.descends(e.B, e.A))) {
			continue
		}
		// The newer of the two goes: the one made this round, or the later id.
		newer, older := e.A, e.B
		if !isFresh(newer) || (isFresh(older) && older > newer) {
			newer, older = older, newer
		}
		if x := &s.Entries[s.index[newer]]; x.Excluded == "" && s.Entries[s.index[older]].Excluded == "" {
			x.Excluded = fmt.Sprintf("near-duplicate of %s (similarity %.2f%s)", older, sim, how)
			s.note(newer + " excluded: " + x.Excluded)
		}
	}
	if !s.ledger {
		s.cluster() // since the ledger, the Tournament activity numbers the clusters
	}
}

// versionLineage: a hypothesis is never excluded as a near-duplicate of its own ancestor.
// Evolution adds variants of a hypothesis that must compete with it (a grounded or a more
// feasible version keeps most of its parent's words), and thresholds fitted to catch a
// hypothesis written twice in other words would otherwise exclude them. Sessions that
// started before keep excluding them.
const versionLineage = "proximity-lineage"

// versionKin: two hypotheses with an ancestor in common (siblings, cousins) are
// near-duplicates when what each adds to what they inherit reads alike (Edge.Own, from a
// worker that measures it), not when the words they both inherit do. Before it, versions
// of one parent (grounded, more feasible) excluded each other: in BenchmarkGrounding 31
// of 63 near-duplicates excluded were kin. Sessions that started before keep the whole
// comparison.
const versionKin = "proximity-kin"

// descends reports whether hypothesis id descends from ancestor through evolution.
func (s *supervisor) descends(id, ancestor string) bool {
	seen := map[string]bool{}
	next := []string{id}
	for len(next) > 0 {
		cur := next[len(next)-1]
		next = next[:len(next)-1]
		i, ok := s.index[cur]
		if !ok || seen[cur] {
			continue
		}
		seen[cur] = true
		for _, p := range s.Entries[i].Parents {
			if p == ancestor {
				return true
			}
			next = append(next, p)
		}
	}
	return false
}

// cluster numbers the proximity clusters of the competing hypotheses, from 1.
func (s *supervisor) cluster() {
	ids := s.competing()
	edges := slices.DeleteFunc(slices.Clone(s.Edges), func(e proximity.Edge) bool {
		return s.Entries[s.index[e.A]].Excluded != "" || s.Entries[s.index[e.B]].Excluded != ""
	})
	for n, members := range proximity.Clusters(ids, edges, proximity.ClusterThreshold) {
		for _, id := range members {
			s.Entries[s.index[id]].Cluster = n + 1
		}
	}
}
