package activities

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strings"

	"go.temporal.io/sdk/activity"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/store"
)

// The proximity graph keeps, for each new hypothesis, its ProximityNeighbours most similar
// others whose similarity is above ProximityFloor, so it stays small however large the
// session grows.
const (
	ProximityNeighbours = 5
	ProximityFloor      = 0.1
)

// Embedders is what the activities need to embed texts: the worker's provider registry.
type Embedders interface {
	Embedder(provider, model string) (provider.Embedder, error)
}

// Proximity is the proximity agent: it returns the new hypotheses' nearest neighbours
// among every competing one (see package proximity), and the measure it compared them by
// with its thresholds. With a provider that offers embeddings it compares their
// embeddings (cosine), embedding each hypothesis once and caching it in the store; with
// none, their words. The embedding provider is the session's own choice, apart from its
// chat provider (a Claude session may embed with Voyage), or the chat provider's. It compares each new hypothesis with all the others, never all
// with all, so a call costs len(New) × len(All) comparisons.
//
// A hypothesis missing from the store is left out of the graph (and logged) rather than
// failing the call: retrying would not bring it back, and the graph only guides pairing.
func (a *Activities) Proximity(ctx context.Context, in ProximityInput) (ProximityResult, error) {
	hs, err := a.Store.Hypotheses(ctx, in.SessionID, in.All)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return ProximityResult{}, err
		}
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("proximity: some hypotheses are missing; leaving them out", "error", err)
		}
	}
	ids := make([]string, 0, len(hs))
	for id := range hs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	e, model, err := a.embedder(provider.EmbeddingProviderOf(in.Provider, in.EmbeddingProvider), in.EmbeddingModel)
	if err != nil {
		return ProximityResult{}, providerError(err)
	}
	var sim func(x, y string) float64
	measure := proximity.Lexical
	if e != nil {
		vecs, usage, err := a.embeddings(ctx, in.SessionID, model, e, ids, hs)
		var refused *provider.RequestError
		switch {
		case errors.As(err, &refused):
			// The server has no such embedding model (a local server, say): compare words,
			// rather than lose the round's proximity.
			if activity.IsActivity(ctx) {
				activity.GetLogger(ctx).Warn("proximity: the provider refused to embed; comparing words instead", "model", model, "error", err)
			}
		case err != nil:
			return ProximityResult{}, withUsage(providerError(err), usage)
		default:
			measure = proximity.Embedding(model, a.Thresholds)
			sim = func(x, y string) float64 { return proximity.Cosine(vecs[x], vecs[y]) }
			out := a.proximityResult(in, ids, sim, measure)
			out.Usage = usage
			return out, nil
		}
	}
	sigs := make(map[string]proximity.Signature, len(hs))
	for id, h := range hs {
		if err := ctx.Err(); err != nil {
			return ProximityResult{}, err
		}
		sigs[id] = proximity.Sign(h)
	}
	sim = func(x, y string) float64 { return sigs[x].Similarity(sigs[y]) }
	out := a.proximityResult(in, ids, sim, measure)
	if err := a.markKin(ctx, in.SessionID, hs, sigs, out.Edges); err != nil {
		return ProximityResult{}, err
	}
	return out, nil
}

// markKin marks the edges between hypotheses with an ancestor in common with how alike
// what each adds to what they inherit reads (proximity.Kin), reading the ancestors that
// no longer compete from the store. An ancestor the store does not have is passed over.
func (a *Activities) markKin(ctx context.Context, sessionID string, hs map[string]research.Hypothesis, sigs map[string]proximity.Signature, edges []proximity.Edge) error {
	known := maps.Clone(hs)
	for {
		var missing []string
		for _, h := range known {
			for _, p := range h.Parents {
				if _, ok := known[p]; !ok && !slices.Contains(missing, p) {
					missing = append(missing, p)
				}
			}
		}
		if len(missing) == 0 {
			break
		}
		got, err := a.Store.Hypotheses(ctx, sessionID, missing)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, id := range missing {
			h, ok := got[id]
			if !ok {
				h = research.Hypothesis{ID: id} // not in the store: no parents, no words
			}
			known[id] = h
		}
	}
	sign := func(id string) (proximity.Signature, bool) {
		if s, ok := sigs[id]; ok {
			return s, true
		}
		h, ok := known[id]
		if !ok || h.Statement == "" {
			return proximity.Signature{}, false
		}
		sigs[id] = proximity.Sign(h)
		return sigs[id], true
	}
	proximity.Kin(edges, func(id string) []string { return known[id].Parents }, sign)
	for i := range edges {
		edges[i].Own = math.Round(edges[i].Own*1e4) / 1e4
	}
	return nil
}

// proximityResult finds the new hypotheses' neighbours by sim.
func (a *Activities) proximityResult(in ProximityInput, ids []string, sim func(x, y string) float64, m proximity.Measure) ProximityResult {
	edges := proximity.NeighboursBy(in.New, ids, sim, ProximityNeighbours, ProximityFloor)
	for i := range edges {
		// Four decimals are plenty to rank and threshold by, and keep the history small.
		edges[i].Sim = math.Round(edges[i].Sim*1e4) / 1e4
	}
	return ProximityResult{Edges: edges, Measure: m.Name, Duplicate: m.Duplicate, Cluster: m.Cluster}
}

// embedder is the embedder of an embedding provider (provider.EmbeddingProviderOf) and its
// model, or nil when there is none.
func (a *Activities) embedder(providerName, model string) (provider.Embedder, string, error) {
	r, ok := a.Providers.(Embedders)
	if !ok || providerName == "" {
		return nil, "", nil
	}
	model = provider.EmbeddingModelOf(providerName, model)
	e, err := r.Embedder(providerName, model)
	if err != nil || e == nil {
		return nil, "", err
	}
	return e, model, nil
}

// embeddings are the hypotheses' embeddings by model: those the store holds, and the
// others embedded now (and stored, once).
func (a *Activities) embeddings(ctx context.Context, sessionID, model string, e provider.Embedder, ids []string, hs map[string]research.Hypothesis) (map[string][]float32, research.Usage, error) {
	vecs, err := a.Store.Embeddings(ctx, sessionID, model, ids)
	if err != nil {
		return nil, research.Usage{}, err
	}
	var missing, texts []string
	for _, id := range ids {
		if _, ok := vecs[id]; !ok {
			missing = append(missing, id)
			texts = append(texts, EmbeddingText(hs[id]))
		}
	}
	if len(missing) == 0 {
		return vecs, research.Usage{}, nil
	}
	stop := a.keepAlive(ctx)
	got, usage, err := e.Embed(ctx, texts)
	stop()
	if err != nil {
		return nil, usage, err
	}
	for i, id := range missing {
		if err := a.Store.PutEmbedding(ctx, sessionID, id, store.Embedding{Model: model, Vector: got[i]}); err != nil {
			return nil, usage, err
		}
		vecs[id] = got[i]
	}
	// Another attempt may have stored its vectors first: use what the store holds.
	stored, err := a.Store.Embeddings(ctx, sessionID, model, missing)
	if err != nil {
		return nil, usage, err
	}
	for id, v := range stored {
		vecs[id] = v
	}
	return vecs, usage, nil
}

// EmbeddingText is what a hypothesis' embedding is made of: its title, statement and
// predictions (what it claims), not its rationale.
func EmbeddingText(h research.Hypothesis) string {
	return strings.Join(append([]string{h.Title, h.Statement}, h.Predictions...), "\n")
}
