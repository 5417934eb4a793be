package activities

// The meta-review agent's turns: the recurring critique of a round (MetaReview), and the
// research overview that ends a session (Overview).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/research"
)

// maxCritique is the length of a critique in MetaReviewResult, in characters.
const maxCritique = 120

// MetaReview runs the meta-review turn of one round: it reads every review of the listed
// hypotheses and every listed debate, stores the recurring critique, and returns its
// headline. Debates that never started (none is in the store) are skipped.
func (a *Activities) MetaReview(ctx context.Context, in MetaReviewInput) (MetaReviewResult, error) {
	return runTurn(ctx, a, metaReview, in)
}

var metaReview = declare(agent[MetaReviewInput, research.MetaReviewRequest, research.MetaReview, MetaReviewResult]{
	activity: "MetaReview", label: AgentMetaReview, prompt: prompt.MetaReview, spec: prompt.MetaReviewSpec, prepare: prepareMetaReview,
})

type metaReviewTurn = turn[research.MetaReviewRequest, research.MetaReview, MetaReviewResult]

// prepareMetaReview reads the round's reviews and debates; the critique is kept in the
// store, and its headline read back from there.
func prepareMetaReview(ctx context.Context, a *Activities, in MetaReviewInput, turnID string) (metaReviewTurn, error) {
	if in.Round < 1 {
		return metaReviewTurn{}, invalid("meta-review round %d; number rounds from 1", in.Round)
	}
	var reviews []research.Review
	for _, id := range in.Hypotheses {
		rs, err := a.Store.Reviews(ctx, in.SessionID, id)
		if err != nil {
			return metaReviewTurn{}, err
		}
		reviews = append(reviews, rs...)
	}
	var debates []research.Debate
	for _, id := range in.Debates {
		d, err := a.Store.Debate(ctx, in.SessionID, id)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return metaReviewTurn{}, err
		}
		debates = append(debates, d)
	}
	c, err := a.context(ctx, in.SessionID, in.Context)
	if err != nil {
		return metaReviewTurn{}, err
	}
	keep := func(req research.MetaReviewRequest, mr research.MetaReview, usage research.Usage) (MetaReviewResult, error) {
		mr.Round = in.Round
		// Whatever the model (a parser that could not see the request, a test double), a
		// delegation starts a subagent: keep only those on the round's hypotheses.
		mr.Delegations = prompt.CheckDelegations(mr.Delegations, prompt.RoundHypotheses(req))
		if err := a.Store.PutMetaReview(ctx, in.SessionID, mr); err != nil {
			return MetaReviewResult{}, err
		}
		stored, err := a.Store.MetaReview(ctx, in.SessionID, in.Round)
		if err != nil {
			return MetaReviewResult{}, err
		}
		// The delegations come from the store too: a retried turn whose first attempt was
		// stored must start the subagents that attempt asked for, not a new answer's.
		res := MetaReviewResult{Round: stored.Round, Critiques: []string{}, Delegations: stored.Delegations, Usage: usage}
		for _, c := range stored.Critiques[:min(3, len(stored.Critiques))] {
			res.Critiques = append(res.Critiques, research.Shorten(c, maxCritique))
		}
		return res, nil
	}
	req := research.MetaReviewRequest{TurnID: turnID, Goal: in.Goal, Round: in.Round, Reviews: reviews, Debates: debates, Context: c, Seed: in.Seed}
	return metaReviewTurn{req: req, keep: keep}, nil
}

// Overview runs the last turn of a session: the research overview of the top hypotheses,
// grouped by the proximity clusters, in the light of the latest meta-review.
func (a *Activities) Overview(ctx context.Context, in OverviewInput) (OverviewResult, error) {
	return runTurn(ctx, a, overview, in)
}

var overview = declare(agent[OverviewInput, research.OverviewRequest, research.Overview, OverviewResult]{
	activity: "Overview", label: AgentMetaReview, prompt: prompt.Overview, spec: prompt.OverviewSpec, prepare: prepareOverview,
})

type overviewTurn = turn[research.OverviewRequest, research.Overview, OverviewResult]

// prepareOverview reads the top hypotheses and groups them into themes; an overview may
// only name hypotheses it was given.
func prepareOverview(ctx context.Context, a *Activities, in OverviewInput, turnID string) (overviewTurn, error) {
	if len(in.Top) == 0 {
		return overviewTurn{}, invalid("an overview needs at least one top hypothesis")
	}
	top, err := a.hypothesesInOrder(ctx, in.SessionID, in.Top)
	if err != nil {
		return overviewTurn{}, err
	}
	c, err := a.context(ctx, in.SessionID, in.Context)
	if err != nil {
		return overviewTurn{}, err
	}
	// Themes group what a reader would group: the top compared with one another.
	if in.Clusters, err = a.themesOf(ctx, in.SessionID, provider.EmbeddingProviderOf(in.Provider, in.EmbeddingProvider), in.EmbeddingModel, top); err != nil {
		return overviewTurn{}, err
	}
	keep := func(_ research.OverviewRequest, ov research.Overview, usage research.Usage) (OverviewResult, error) {
		known := slices.Clone(in.Top)
		for _, cl := range in.Clusters {
			known = append(known, cl...)
		}
		for _, th := range ov.Themes {
			for _, id := range th.Hypotheses {
				if !slices.Contains(known, id) {
					return OverviewResult{}, malformed(fmt.Errorf("theme %q names hypothesis %q, which is not among those given", th.Title, id))
				}
			}
		}
		if err := a.Store.PutOverview(ctx, in.SessionID, ov); err != nil {
			return OverviewResult{}, err
		}
		stored, err := a.Store.Overview(ctx, in.SessionID)
		if err != nil {
			return OverviewResult{}, err
		}
		return OverviewResult{Themes: len(stored.Themes), Usage: usage}, nil
	}
	req := research.OverviewRequest{TurnID: turnID, Goal: in.Goal, Top: top, Clusters: in.Clusters, MetaReview: c.MetaReview, Context: c, Seed: in.Seed}
	return overviewTurn{req: req, keep: keep}, nil
}
