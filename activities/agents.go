package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/research"
)

// The co-scientist's other agents: the supervisor's plan, the ranking agent's debates, the
// evolution agent, the meta-review agent (meta-review and final overview), and the
// scientist's own contributions (hypotheses and reviews), which call no model.

// manualReviewOffset keeps a scientist's reviews apart from the agents' in the store: the
// scientist's n-th review of a hypothesis is stored under index n+manualReviewOffset.
const manualReviewOffset = 1000

// maxCritique is the length of a critique in MetaReviewResult, in characters.
const maxCritique = 120

// context loads the shared context a turn's ContextRef names.
func (a *Activities) context(ctx context.Context, sessionID string, ref ContextRef) (research.Context, error) {
	c := research.Context{Focus: ref.Focus, Feedback: ref.Feedback}
	if ref.Plan {
		p, err := a.Store.Plan(ctx, sessionID)
		if err != nil {
			return c, fmt.Errorf("load the research plan for the prompt: %w", err)
		}
		c.Plan = &p
	}
	if ref.MetaReviewRound > 0 {
		m, err := a.Store.MetaReview(ctx, sessionID, ref.MetaReviewRound)
		if err != nil {
			return c, fmt.Errorf("load the meta-review for the prompt: %w", err)
		}
		c.MetaReview = &m
	}
	return c, nil
}

// keep checks a new hypothesis, stores it, and returns what the workflow keeps of the one
// the store holds: h, or the one an earlier attempt of the same turn stored first.
func (a *Activities) keep(ctx context.Context, sessionID string, h research.Hypothesis, usage research.Usage) (GenerateResult, error) {
	if err := h.Check(); err != nil {
		return GenerateResult{}, malformed(err)
	}
	stored, err := a.putHypothesis(ctx, sessionID, h)
	if err != nil {
		return GenerateResult{}, err
	}
	return GenerateResult{HypothesisID: stored.ID, Title: stored.Title, References: len(stored.References), Usage: usage}, nil
}

// putHypothesis stores h and returns the hypothesis the store holds under its id: h, or
// the one an earlier attempt of the same turn stored first.
func (a *Activities) putHypothesis(ctx context.Context, sessionID string, h research.Hypothesis) (research.Hypothesis, error) {
	if err := a.Store.PutHypothesis(ctx, sessionID, h); err != nil {
		return research.Hypothesis{}, err
	}
	return a.Store.Hypothesis(ctx, sessionID, h.ID)
}

// Plan runs the supervisor's planning turn: the research plan, made once per session from
// the goal, goes to the store, where every later prompt that asks for it finds it.
func (a *Activities) Plan(ctx context.Context, in Turn) (PlanResult, error) {
	return runTurn(ctx, a, in, AgentSupervisor, func(m Model) (PlanResult, string, error) {
		req := research.PlanRequest{TurnID: in.TurnID, Goal: in.Goal, Seed: in.Seed}
		req.Prompt, req.Cache = cached(in, AgentSupervisor, prompt.Plan(req), false)
		p, usage, err := m.Plan(ctx, req)
		if err != nil {
			return PlanResult{}, req.Prompt, err
		}
		if len(p.Criteria) == 0 || strings.TrimSpace(p.Summary) == "" {
			return PlanResult{}, req.Prompt, malformed(errors.New("the plan has no evaluation criteria or no summary"))
		}
		if err := a.Store.PutPlan(ctx, in.SessionID, p); err != nil {
			return PlanResult{}, req.Prompt, err
		}
		stored, err := a.Store.Plan(ctx, in.SessionID)
		if err != nil {
			return PlanResult{}, req.Prompt, err
		}
		return PlanResult{Summary: stored.Summary, Usage: usage}, req.Prompt, nil
	})
}

// Debate runs one turn of a multi-turn debate between in.A and in.B. The transcript lives
// in the store under in.DebateID and grows by one turn per call; the last turn (Number ==
// Of) is the judge's, and its result names the winner.
//
// A turn is idempotent twice over: by its turn ID, like every provider turn, and by its
// number, so a retry that finds its turn already in the transcript (the debate file was
// written, the turn record was not) reuses it instead of asking the model again.
func (a *Activities) Debate(ctx context.Context, in DebateInput) (DebateResult, error) {
	return runTurn(ctx, a, in.Turn, AgentRanking, func(m Model) (DebateResult, string, error) {
		switch {
		case in.A == "" || in.B == "" || in.A == in.B:
			return DebateResult{}, "", invalid("a debate needs two different hypotheses; got %q and %q", in.A, in.B)
		case in.Of < 2:
			return DebateResult{}, "", invalid("a debate of %d turns has no room for both an advocate and the judge; give at least 2", in.Of)
		case in.Number < 1 || in.Number > in.Of:
			return DebateResult{}, "", invalid("debate turn %d of %d does not exist; number turns from 1 to %d", in.Number, in.Of, in.Of)
		}
		d, err := a.Store.Debate(ctx, in.SessionID, in.DebateID)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			d = research.Debate{A: in.A, B: in.B}
		case err != nil:
			return DebateResult{}, "", err
		case d.A != in.A || d.B != in.B:
			return DebateResult{}, "", invalid("debate %s is between %s and %s, not %s and %s; use a new debate id", in.DebateID, d.A, d.B, in.A, in.B)
		}
		if in.Number > len(d.Turns)+1 {
			return DebateResult{}, "", invalid("debate %s has %d turns; turn %d cannot come before turn %d", in.DebateID, len(d.Turns), in.Number, len(d.Turns)+1)
		}
		hs, err := a.Store.Hypotheses(ctx, in.SessionID, []string{in.A, in.B})
		if err != nil {
			return DebateResult{}, "", err
		}
		c, err := a.context(ctx, in.SessionID, in.Context)
		if err != nil {
			return DebateResult{}, "", err
		}
		req := research.DebateRequest{
			TurnID: in.TurnID, Goal: in.Goal, A: hs[in.A], B: hs[in.B],
			Transcript: slices.Clone(d.Turns[:in.Number-1]), Turn: in.Number, Turns: in.Of, Context: c, Seed: in.Seed,
		}
		req.Prompt, req.Cache = cached(in.Turn, AgentRanking, prompt.Debate(req), true)
		last := in.Number == in.Of

		if in.Number <= len(d.Turns) { // spoken by an earlier attempt
			if last && d.Winner == "" {
				return DebateResult{}, req.Prompt, fmt.Errorf("debate %s has its last turn but no winner; it was changed outside cosci", in.DebateID)
			}
			var res DebateResult
			if last {
				res.Winner = d.Winner
			}
			return res, req.Prompt, nil
		}

		ans, usage, err := m.Debate(ctx, req)
		if err != nil {
			return DebateResult{}, req.Prompt, err
		}
		turn := ans.Turn
		turn.Turn, turn.Speaker = in.Number, prompt.DebateSpeaker(in.Number, in.Of)
		turn.Argument = strings.TrimSpace(turn.Argument)
		if turn.Argument == "" {
			return DebateResult{}, req.Prompt, malformed(fmt.Errorf("debate turn %d has no argument", in.Number))
		}
		d.Turns = append(d.Turns, turn)
		var res DebateResult
		if last {
			if ans.Winner != in.A && ans.Winner != in.B {
				return DebateResult{}, req.Prompt, malformed(fmt.Errorf("winner %q is neither %s nor %s", ans.Winner, in.A, in.B))
			}
			d.Winner, d.Reasoning = ans.Winner, strings.TrimSpace(ans.Reasoning)
			res.Winner = ans.Winner
		}
		if err := a.Store.PutDebate(ctx, in.SessionID, in.DebateID, d); err != nil {
			return DebateResult{}, req.Prompt, err
		}
		res.Usage = usage
		return res, req.Prompt, nil
	})
}

// Evolve runs an evolution turn: a new hypothesis, with id in.HypothesisID, evolved from
// in.Parents by in.Kind. It never changes a parent; the new hypothesis records them.
func (a *Activities) Evolve(ctx context.Context, in EvolveInput) (GenerateResult, error) {
	t, rec := in.Turn, stepRecord(in.Loop)
	if in.Loop.On() {
		t.TurnID = StepID(in.TurnID, in.Loop.Step)
	}
	return runStep(ctx, a, t, AgentEvolution, rec, func(m Model) (GenerateResult, string, error) {
		if !slices.Contains(research.EvolutionKinds, in.Kind) {
			return GenerateResult{}, "", invalid("evolution kind %q is not one of %s", in.Kind, strings.Join(research.EvolutionKinds, ", "))
		}
		if len(in.Parents) == 0 {
			return GenerateResult{}, "", invalid("evolution of %s names no parents", in.HypothesisID)
		}
		if slices.Contains(in.Parents, in.HypothesisID) {
			return GenerateResult{}, "", invalid("hypothesis %s cannot be its own parent", in.HypothesisID)
		}
		found, err := a.Store.Hypotheses(ctx, in.SessionID, in.Parents)
		if err != nil {
			return GenerateResult{}, "", err
		}
		parents := make([]research.Hypothesis, len(in.Parents))
		var inherited []research.Reference
		for i, id := range in.Parents {
			parents[i] = found[id]
			inherited = append(inherited, found[id].References...)
		}
		c, err := a.context(ctx, in.SessionID, in.Context)
		if err != nil {
			return GenerateResult{}, "", err
		}
		req := research.EvolveRequest{
			TurnID: t.TurnID, HypothesisID: in.HypothesisID, Goal: in.Goal, Kind: in.Kind,
			Parents: parents, Context: c, Seed: in.Seed,
		}
		var (
			h     research.Hypothesis
			usage research.Usage
		)
		if in.Loop.On() {
			if req.Tooling, err = a.tooling(ctx, in.SessionID, in.TurnID, in.Loop, rec); err != nil {
				return GenerateResult{}, "", err
			}
			req.Prompt, req.Cache = cached(in.Turn, AgentEvolution, prompt.Evolve(req), true)
			sm, err := stepper(m)
			if err != nil {
				return GenerateResult{}, req.Prompt, err
			}
			st, u, err := sm.EvolveStep(ctx, req)
			if err != nil {
				return GenerateResult{}, req.Prompt, err
			}
			if len(st.Calls) > 0 {
				return GenerateResult{Calls: pending(rec, st), Usage: u}, req.Prompt, nil
			}
			answered(rec)
			h, usage = st.Answer, u
			// A parent's source may be cited again without fetching it anew.
			h.References = citation.Resolve(h.References, foundIn(req.Tooling), inherited)
		} else {
			req.Prompt, req.Cache = cached(in.Turn, AgentEvolution, prompt.Evolve(req), true)
			if h, usage, err = m.Evolve(ctx, req); err != nil {
				return GenerateResult{}, req.Prompt, err
			}
		}
		h.ID, h.Goal, h.Origin, h.Strategy = in.HypothesisID, in.Goal, "evolution", in.Kind
		h.Parents = slices.Clone(in.Parents)
		out, err := a.keep(ctx, in.SessionID, h, usage)
		return out, req.Prompt, err
	})
}

// MetaReview runs the meta-review turn of one round: it reads every review of the listed
// hypotheses and every listed debate, stores the recurring critique, and returns its
// headline. Debates that never started (none is in the store) are skipped.
func (a *Activities) MetaReview(ctx context.Context, in MetaReviewInput) (MetaReviewResult, error) {
	return runTurn(ctx, a, in.Turn, AgentMetaReview, func(m Model) (MetaReviewResult, string, error) {
		if in.Round < 1 {
			return MetaReviewResult{}, "", invalid("meta-review round %d; number rounds from 1", in.Round)
		}
		var reviews []research.Review
		for _, id := range in.Hypotheses {
			rs, err := a.Store.Reviews(ctx, in.SessionID, id)
			if err != nil {
				return MetaReviewResult{}, "", err
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
				return MetaReviewResult{}, "", err
			}
			debates = append(debates, d)
		}
		c, err := a.context(ctx, in.SessionID, in.Context)
		if err != nil {
			return MetaReviewResult{}, "", err
		}
		req := research.MetaReviewRequest{TurnID: in.TurnID, Goal: in.Goal, Round: in.Round, Reviews: reviews, Debates: debates, Context: c, Seed: in.Seed}
		req.Prompt, req.Cache = cached(in.Turn, AgentMetaReview, prompt.MetaReview(req), false)
		mr, usage, err := m.MetaReview(ctx, req)
		if err != nil {
			return MetaReviewResult{}, req.Prompt, err
		}
		mr.Round = in.Round
		// Whatever the model (a parser that could not see the request, a test double), a
		// delegation starts a subagent: keep only those on the round's hypotheses.
		mr.Delegations = prompt.CheckDelegations(mr.Delegations, prompt.RoundHypotheses(req))
		if err := a.Store.PutMetaReview(ctx, in.SessionID, mr); err != nil {
			return MetaReviewResult{}, req.Prompt, err
		}
		stored, err := a.Store.MetaReview(ctx, in.SessionID, in.Round)
		if err != nil {
			return MetaReviewResult{}, req.Prompt, err
		}
		// The delegations come from the store too: a retried turn whose first attempt was
		// stored must start the subagents that attempt asked for, not a new answer's.
		res := MetaReviewResult{Round: stored.Round, Critiques: []string{}, Delegations: stored.Delegations, Usage: usage}
		for _, c := range stored.Critiques[:min(3, len(stored.Critiques))] {
			res.Critiques = append(res.Critiques, research.Shorten(c, maxCritique))
		}
		return res, req.Prompt, nil
	})
}

// Overview runs the last turn of a session: the research overview of the top hypotheses,
// grouped by the proximity clusters, in the light of the latest meta-review.
func (a *Activities) Overview(ctx context.Context, in OverviewInput) (OverviewResult, error) {
	return runTurn(ctx, a, in.Turn, AgentMetaReview, func(m Model) (OverviewResult, string, error) {
		if len(in.Top) == 0 {
			return OverviewResult{}, "", invalid("an overview needs at least one top hypothesis")
		}
		found, err := a.Store.Hypotheses(ctx, in.SessionID, in.Top)
		if err != nil {
			return OverviewResult{}, "", err
		}
		top := make([]research.Hypothesis, len(in.Top))
		for i, id := range in.Top {
			top[i] = found[id]
		}
		c, err := a.context(ctx, in.SessionID, in.Context)
		if err != nil {
			return OverviewResult{}, "", err
		}
		// Themes group what a reader would group: the top compared with one another.
		if in.Clusters, err = a.themesOf(ctx, in.SessionID, provider.EmbeddingProviderOf(in.Provider, in.EmbeddingProvider), in.EmbeddingModel, top); err != nil {
			return OverviewResult{}, "", err
		}
		req := research.OverviewRequest{TurnID: in.TurnID, Goal: in.Goal, Top: top, Clusters: in.Clusters, MetaReview: c.MetaReview, Context: c, Seed: in.Seed}
		req.Prompt, req.Cache = cached(in.Turn, AgentMetaReview, prompt.Overview(req), false)
		ov, usage, err := m.Overview(ctx, req)
		if err != nil {
			return OverviewResult{}, req.Prompt, err
		}
		known := slices.Clone(in.Top)
		for _, cl := range in.Clusters {
			known = append(known, cl...)
		}
		for _, th := range ov.Themes {
			for _, id := range th.Hypotheses {
				if !slices.Contains(known, id) {
					return OverviewResult{}, req.Prompt, malformed(fmt.Errorf("theme %q names hypothesis %q, which is not among those given", th.Title, id))
				}
			}
		}
		if err := a.Store.PutOverview(ctx, in.SessionID, ov); err != nil {
			return OverviewResult{}, req.Prompt, err
		}
		stored, err := a.Store.Overview(ctx, in.SessionID)
		if err != nil {
			return OverviewResult{}, req.Prompt, err
		}
		return OverviewResult{Themes: len(stored.Themes), Usage: usage}, req.Prompt, nil
	})
}

// AddHypothesis stores a scientist's own hypothesis as it was written, to compete with the
// agents'. It calls no model. Hypotheses are written once, so a retry changes nothing; an
// id that already names another hypothesis is refused.
func (a *Activities) AddHypothesis(ctx context.Context, in AddHypothesisInput) (GenerateResult, error) {
	h := research.Hypothesis{
		ID:          in.HypothesisID,
		Title:       strings.TrimSpace(in.Title),
		Statement:   strings.TrimSpace(in.Statement),
		Rationale:   strings.TrimSpace(in.Rationale),
		Predictions: slices.Clone(in.Predictions),
		Origin:      "scientist",
		Strategy:    "scientist",
		Goal:        in.Goal,
	}
	if h.ID == "" {
		return GenerateResult{}, invalid("the scientist's hypothesis has no id")
	}
	if err := h.Check(); err != nil {
		return GenerateResult{}, invalid("the scientist's hypothesis cannot compete: %v", err)
	}
	stored, err := a.putHypothesis(ctx, in.SessionID, h)
	if err != nil {
		return GenerateResult{}, err
	}
	if stored.Origin != h.Origin || stored.Statement != h.Statement {
		return GenerateResult{}, invalid("hypothesis id %s is already taken by another hypothesis", h.ID)
	}
	a.Metrics.Hypotheses(ctx, "scientist", 1)
	return GenerateResult{HypothesisID: stored.ID, Title: stored.Title}, nil
}

// Marks a manual review derives from a verdict given without a score.
var verdictMarks = map[string]float64{"accept": 8, "revise": 5, "reject": 2}

// ManualReview stores a scientist's review of one hypothesis. A score alone sets all four
// marks and implies the verdict (6.5 and above accept, 4 and above revise, else reject); a
// verdict alone implies the marks (accept 8, revise 5, reject 2). The review is stored
// apart from the agents' (index in.Index+1000), so it never replaces one. A scientist's
// review does not judge safety: its result's Safety is 10, so it never excludes a
// hypothesis on its own.
func (a *Activities) ManualReview(ctx context.Context, in ManualReviewInput) (ReviewResult, error) {
	if in.Index < 0 {
		return ReviewResult{}, invalid("manual review index %d is negative; number a scientist's reviews from 0", in.Index)
	}
	verdict := strings.ToLower(strings.TrimSpace(in.Verdict))
	if verdict != "" && !slices.Contains(research.Verdicts, verdict) {
		return ReviewResult{}, invalid("verdict %q is not one of %s", in.Verdict, strings.Join(research.Verdicts, ", "))
	}
	var score float64
	switch {
	case in.Score != nil:
		score = *in.Score
		if math.IsNaN(score) || score < 0 || score > 10 {
			return ReviewResult{}, invalid("score %g is not from 0 to 10", score)
		}
	case verdict != "":
		score = verdictMarks[verdict]
	default:
		return ReviewResult{}, invalid("a manual review needs a score, a verdict or both")
	}
	if verdict == "" {
		verdict = research.VerdictOf(score)
	}
	if _, err := a.Store.Hypothesis(ctx, in.SessionID, in.HypothesisID); errors.Is(err, fs.ErrNotExist) {
		return ReviewResult{}, invalid("session %s has no hypothesis %s to review", in.SessionID, in.HypothesisID)
	} else if err != nil {
		return ReviewResult{}, err
	}
	reviewer := strings.TrimSpace(in.Scientist)
	if reviewer == "" {
		reviewer = research.DefaultScientistID
	}
	r := research.Review{
		HypothesisID: in.HypothesisID,
		Type:         "scientist",
		Scores:       research.Scores{Novelty: score, Plausibility: score, Testability: score, Safety: score},
		Critique:     strings.TrimSpace(in.Critique),
		Verdict:      verdict,
		Reviewer:     reviewer,
	}
	if err := a.Store.PutReview(ctx, in.SessionID, in.Index+manualReviewOffset, r); err != nil {
		return ReviewResult{}, err
	}
	return ReviewResult{HypothesisID: in.HypothesisID, Type: r.Type, Score: score, Safety: 10, Verdict: verdict}, nil
}

// cached is a rendered prompt as a request carries it: its text, and how a provider may
// cache it. The calls of one agent in one round of a session share a key (a provider that
// routes by key sends them where their prefix is cached); breakpoints says whether the
// turn is one of many of its agent in a round, so that marking its prefix for the cache
// pays for the write.
func cached(t Turn, agent string, p prompt.Text, breakpoints bool) (string, research.Cache) {
	return p.Prompt, research.Cache{Prefix: p.Prefix, Key: CacheKey(t.SessionID, t.Round, agent), Breakpoints: breakpoints}
}

// CacheKey names the calls of one agent in one round of a session: a short hash, since a
// session's id may be long and the key is sent to the provider.
func CacheKey(sessionID string, round int, agent string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s", sessionID, round, agent)))
	return "cosci-" + hex.EncodeToString(sum[:12])
}
