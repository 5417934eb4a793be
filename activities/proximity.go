package activities

import (
	"context"
	"errors"
	"io/fs"
	"math"

	"go.temporal.io/sdk/activity"

	"github.com/cosci-dev/cosci/internal/proximity"
)

// The proximity graph keeps, for each new hypothesis, its ProximityNeighbours most similar
// others whose similarity is above ProximityFloor, so it stays small however large the
// session grows.
const (
	ProximityNeighbours = 5
	ProximityFloor      = 0.1
)

// Proximity is the proximity agent: it reads the texts of every competing hypothesis and
// returns the new ones' nearest neighbours (see package proximity). It compares each new
// hypothesis with all the others, never all with all, so a call costs len(New) × len(All)
// comparisons. It calls no model, so it is not a turn: it is cheap to run again.
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
	sigs := make(map[string]proximity.Signature, len(hs))
	for id, h := range hs {
		if err := ctx.Err(); err != nil {
			return ProximityResult{}, err
		}
		sigs[id] = proximity.Sign(h)
	}
	edges := proximity.Neighbours(in.New, sigs, ProximityNeighbours, ProximityFloor)
	for i := range edges {
		// Four decimals are plenty to rank and threshold by, and keep the history small.
		edges[i].Sim = math.Round(edges[i].Sim*1e4) / 1e4
	}
	out := ProximityResult{Edges: edges}
	return out, nil
}
