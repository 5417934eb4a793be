package workflows

// A round of the session, agent by agent: the plan once, then generation, evolution,
// proximity, reflection, the tournament and the meta-review; and the research overview at
// the end. Each agent step is one or more provider turns (turns.go).

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// round is one pass of the research loop, as the supervisor planned it.
func (s *supervisor) round(ctx workflow.Context) {
	var work policy.Plan
	if !s.exactCap {
		work = policy.Allocate(s.stats())
	}
	finished := s.Rounds
	s.Rounds++
	if s.Plan == "" {
		s.makePlan(ctx)
	}
	fresh := s.storeAdded(ctx)
	fresh = append(fresh, s.storeImports(ctx)...)
	fresh = append(fresh, s.takeLate()...)
	if s.exactCap {
		// The work is planned once the intake is in, so it fills the room that is left
		// (limits.go), with the strategies rotating by the rounds finished as before.
		st := s.stats()
		st.Round, st.Intake = finished, len(fresh)
		work = policy.Allocate(st)
	}
	fresh = append(fresh, s.generate(ctx, work.Generate)...)
	fresh = append(fresh, s.evolve(ctx, work.Evolve)...)
	s.proximity(ctx, fresh)
	reviewed := s.review(ctx, fresh)
	s.storeManualReviews(ctx)
	debates := s.tournament(ctx, fresh, work.Matches)
	delegations := s.metaReview(ctx, reviewed, debates)
	s.watchTop()
	s.publish(ctx)

	if work.NewHypotheses() > 0 && len(fresh) == 0 {
		s.Barren++
		if s.Barren >= maxBarrenRounds && s.Life.Effective() == session.Active {
			s.suspendBecause(ctx, fmt.Sprintf("no hypothesis came out of %d rounds; last error: %s. Fix the provider, then resume", s.Barren, s.LastError))
			s.Barren = 0
		}
	} else {
		s.Barren = 0
	}
	// A milestone: the round's evolution and tournament are done.
	if err := s.checkpoint(ctx, fmt.Sprintf("round %d", s.Rounds)); err != nil && s.Life.Effective() == session.Active {
		if !s.storeFault(ctx, err) {
			s.suspendBecause(ctx, "checkpoint failed: "+err.Error()+". Fix the session store, then resume")
		}
		return
	}
	// Deferred work: subagents start only now that the turn that asked for them has
	// completed, from the checkpoint just written.
	if s.hasSubagents() {
		s.delegate(ctx, delegations)
	}
}

// makePlan asks the supervisor's one provider turn for the research plan: preferences,
// constraints and evaluation criteria, which every later prompt carries.
func (s *supervisor) makePlan(ctx workflow.Context) {
	if !s.mayGo(ctx) {
		return
	}
	in := s.turnInput("plan")
	out, err := turn(ctx, s, activities.AgentSupervisor, "plan the research", in, "", a.Plan, in)
	if err != nil {
		return
	}
	s.spend(activities.AgentSupervisor, out.Usage)
	s.Plan = out.Summary
	if s.Plan == "" {
		s.Plan = "(plan without summary)"
	}
	s.note("research plan: " + s.Plan)
}

// generate asks for new hypotheses by the strategies the supervisor chose.
func (s *supervisor) generate(ctx workflow.Context, work []policy.Assignment) []string {
	var strategies []string
	for _, w := range work {
		for range w.N {
			strategies = append(strategies, w.Kind)
		}
	}
	input := func(i int) activities.GenerateInput {
		id := s.newID()
		return activities.GenerateInput{
			Turn:         s.turnInput("generate-" + id),
			HypothesisID: id,
			Focus:        s.recent(s.Focus),
			Strategy:     strategies[i],
			Context:      s.contextRef(),
		}
	}
	// Batched turns are known before they start, their ids with them; the others take
	// their ids as they start, as they always have.
	inputs := make([]*activities.GenerateInput, len(strategies))
	var turns []activities.BatchTurn
	for i, st := range strategies {
		if s.batching(activities.AgentGeneration, st) {
			in := input(i)
			inputs[i] = &in
			turns = append(turns, activities.BatchTurn{Generate: &in})
		}
	}
	name, release := s.batch(ctx, "hypotheses", activities.AgentGeneration, turns)
	defer release()
	ids := make([]string, len(strategies))
	s.parallel(ctx, len(strategies), func(ctx workflow.Context, i int) {
		if !s.mayStart(ctx) {
			return
		}
		s.making++
		defer func() { s.making-- }()
		var in activities.GenerateInput
		if inputs[i] != nil {
			in = *inputs[i]
			in.Batch = name
		} else {
			in = input(i)
		}
		id := in.HypothesisID
		summary := fmt.Sprintf("generate hypothesis %d/%d (%s, %s)", s.Generated+s.Evolved+i+1, s.req.Config.MaxHypotheses, id, strategies[i])
		tools := s.toolsFor(activities.AgentGeneration, strategies[i])
		out, err := toolTurn(ctx, s, activities.AgentGeneration, summary, in.Turn, id, a.Generate, in, tools, (*activities.GenerateInput).SetLoop)
		if err != nil {
			return
		}
		s.spend(activities.AgentGeneration, out.Usage)
		s.add(session.Entry{ID: id, Title: out.Title, Origin: "generation", Strategy: strategies[i], Round: s.Rounds, Elo: tournament.InitialElo, References: out.References})
		s.Generated++
		s.deliver(ctx, ids, i, id)
	})
	return slices.DeleteFunc(ids, func(id string) bool { return id == "" })
}

// evolve makes new hypotheses from the best ones. Evolution never edits a hypothesis: each
// result is new, records its parents, and enters the tournament at 1200 like any other.
func (s *supervisor) evolve(ctx workflow.Context, work []policy.Assignment) []string {
	var kinds []string
	for _, w := range work {
		for range w.N {
			kinds = append(kinds, w.Kind)
		}
	}
	best := s.top(3)
	if len(best) == 0 {
		return nil
	}
	parentsOf := func(i int) []string {
		parents := []string{best[i%len(best)].ID}
		if (kinds[i] == research.EvolveCombination || kinds[i] == research.EvolveInspiration) && len(best) > 1 {
			parents = append(parents, best[(i+1)%len(best)].ID)
		}
		return parents
	}
	input := func(i int) activities.EvolveInput {
		id := s.newID()
		return activities.EvolveInput{Turn: s.turnInput("evolve-" + id), HypothesisID: id, Kind: kinds[i], Parents: parentsOf(i), Context: s.contextRef()}
	}
	inputs := make([]*activities.EvolveInput, len(kinds))
	var turns []activities.BatchTurn
	for i, kind := range kinds {
		if s.batching(activities.AgentEvolution, kind) {
			in := input(i)
			inputs[i] = &in
			turns = append(turns, activities.BatchTurn{Evolve: &in})
		}
	}
	name, release := s.batch(ctx, "evolutions", activities.AgentEvolution, turns)
	defer release()
	ids := make([]string, len(kinds))
	s.parallel(ctx, len(kinds), func(ctx workflow.Context, i int) {
		parents := parentsOf(i)
		if !s.mayStart(ctx) {
			return
		}
		s.making++
		defer func() { s.making-- }()
		var in activities.EvolveInput
		if inputs[i] != nil {
			in = *inputs[i]
			in.Batch = name
		} else {
			in = input(i)
		}
		id := in.HypothesisID
		summary := fmt.Sprintf("evolve %s by %s into %s", strings.Join(parents, " + "), kinds[i], id)
		tools := s.toolsFor(activities.AgentEvolution, kinds[i])
		out, err := toolTurn(ctx, s, activities.AgentEvolution, summary, in.Turn, id, a.Evolve, in, tools, (*activities.EvolveInput).SetLoop)
		if err != nil {
			return
		}
		s.spend(activities.AgentEvolution, out.Usage)
		s.add(session.Entry{ID: id, Title: out.Title, Origin: "evolution", Strategy: kinds[i], Parents: parents, Round: s.Rounds, Elo: tournament.InitialElo, References: out.References})
		s.Evolved++
		s.deliver(ctx, ids, i, id)
	})
	return slices.DeleteFunc(ids, func(id string) bool { return id == "" })
}

// deliver hands a new hypothesis to its parallel step (ids[i]), or, if the step moved on
// while its turn waited for the scientist, to the next round (Late).
func (s *supervisor) deliver(ctx workflow.Context, ids []string, i int, id string) {
	if late(ctx) {
		s.Late = append(s.Late, id)
		return
	}
	ids[i] = id
}

// takeLate takes the hypotheses that arrived after their round's step.
func (s *supervisor) takeLate() []string {
	ids := s.Late
	s.Late = nil
	return ids
}

// storeAdded stores the hypotheses the scientist added since the last round; they enter
// the tournament like any other.
func (s *supervisor) storeAdded(ctx workflow.Context) []string {
	var ids []string
	for len(s.Added) > 0 {
		ad := s.Added[0]
		s.Added = s.Added[1:]
		in := activities.AddHypothesisInput{
			SessionID: s.id, HypothesisID: ad.ID, Scientist: s.req.ScientistID, Goal: s.Goal,
			Title: ad.Cmd.Title, Statement: ad.Cmd.Statement, Rationale: ad.Cmd.Rationale, Predictions: ad.Cmd.Predictions,
		}
		var out activities.GenerateResult
		actx := workflow.WithActivityOptions(ctx, storeOptions("store the scientist's hypothesis "+ad.ID))
		if err := s.untilStored(ctx, s.mayGo, func() error { return workflow.ExecuteActivity(actx, a.AddHypothesis, in).Get(ctx, &out) }); err != nil {
			s.note(fmt.Sprintf("the scientist's hypothesis %s could not be stored: %s", ad.ID, errorText(err)))
			continue
		}
		s.add(session.Entry{ID: ad.ID, Title: ad.Cmd.Title, Origin: "scientist", Strategy: "scientist", Round: s.Rounds, Elo: tournament.InitialElo})
		s.ScientistAdded++
		ids = append(ids, ad.ID)
	}
	return ids
}

// storeManualReviews stores the scientist's reviews and weighs each in like two agent
// reviews: a scientist's judgement counts for more than one pass of the reflection agent.
func (s *supervisor) storeManualReviews(ctx workflow.Context) {
	for len(s.ManualReviews) > 0 {
		cmd := s.ManualReviews[0]
		s.ManualReviews = s.ManualReviews[1:]
		s.ReviewsBy[cmd.HypothesisID]++
		in := activities.ManualReviewInput{
			SessionID: s.id, HypothesisID: cmd.HypothesisID, Scientist: s.req.ScientistID, Index: s.ReviewsBy[cmd.HypothesisID],
			Score: cmd.Score, Verdict: cmd.Verdict, Critique: cmd.Critique,
		}
		var out activities.ReviewResult
		actx := workflow.WithActivityOptions(ctx, storeOptions("store the scientist's review of "+cmd.HypothesisID))
		if err := s.untilStored(ctx, s.mayGo, func() error { return workflow.ExecuteActivity(actx, a.ManualReview, in).Get(ctx, &out) }); err != nil {
			s.note(fmt.Sprintf("the scientist's review of %s could not be stored: %s", cmd.HypothesisID, errorText(err)))
			continue
		}
		e := &s.Entries[s.index[cmd.HypothesisID]]
		e.Score = (e.Score*float64(e.Reviews) + 2*out.Score) / float64(e.Reviews+2)
		e.Reviews += 2
		s.Reviews++
	}
}

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
	lineage := workflow.GetVersion(ctx, versionLineage, workflow.DefaultVersion, 1) >= 1
	for _, e := range out.Edges {
		if _, seen := s.sim[activities.PairKey(e.A, e.B)]; !seen {
			s.Edges = append(s.Edges, e)
		}
		s.sim[activities.PairKey(e.A, e.B)] = e.Sim
		if e.Sim < duplicate || (lineage && (s.descends(e.A, e.B) || s.descends(e.B, e.A))) {
			continue
		}
		// The newer of the two goes: the one made this round, or the later id.
		newer, older := e.A, e.B
		if !isFresh(newer) || (isFresh(older) && older > newer) {
			newer, older = older, newer
		}
		if x := &s.Entries[s.index[newer]]; x.Excluded == "" && s.Entries[s.index[older]].Excluded == "" {
			x.Excluded = fmt.Sprintf("near-duplicate of %s (similarity %.2f)", older, e.Sim)
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

// review runs every enabled review type on each new hypothesis, and excludes one whose
// safety score falls below the session's safety floor. It returns the ids it reviewed.
func (s *supervisor) review(ctx workflow.Context, fresh []string) []string {
	ids := slices.DeleteFunc(slices.Clone(fresh), func(id string) bool { return s.Entries[s.index[id]].Excluded != "" })
	types := s.req.Config.ReviewTypes
	floor := research.SafetyFloor(s.req.Config.SafetyLevel)
	input := func(id, typ string) activities.ReviewInput {
		return activities.ReviewInput{Turn: s.turnInput("review-" + id + "-" + typ), HypothesisID: id, Type: typ, Context: s.contextRef()}
	}
	// A batched turn runs with the input it was submitted with: what it asked is paid
	// for, and a refinement meanwhile applies to the calls made after it.
	inputs := make([]*activities.ReviewInput, len(ids)*len(types))
	var turns []activities.BatchTurn
	for i := range inputs {
		if typ := types[i%len(types)]; s.batching(activities.AgentReflection, typ) {
			in := input(ids[i/len(types)], typ)
			inputs[i] = &in
			turns = append(turns, activities.BatchTurn{Review: &in})
		}
	}
	name, release := s.batch(ctx, "reviews", activities.AgentReflection, turns)
	defer release()
	s.parallel(ctx, len(ids)*len(types), func(ctx workflow.Context, i int) {
		id, typ := ids[i/len(types)], types[i%len(types)]
		if !s.mayStart(ctx) {
			return
		}
		in := input(id, typ)
		if inputs[i] != nil && name != "" {
			in = *inputs[i]
			in.Batch = name
		}
		tools := s.toolsFor(activities.AgentReflection, typ)
		out, err := toolTurn(ctx, s, activities.AgentReflection, fmt.Sprintf("review %s (%s)", id, typ), in.Turn, id, a.Review, in, tools, (*activities.ReviewInput).SetLoop)
		if err != nil {
			return
		}
		s.spend(activities.AgentReflection, out.Usage)
		e := &s.Entries[s.index[id]]
		e.Score = (e.Score*float64(e.Reviews) + out.Score) / float64(e.Reviews+1)
		e.Reviews++
		e.Flagged = max(e.Flagged, out.Invented+out.Unsupported) // every review checks the same citations
		s.Reviews++
		if out.Safety < floor && e.Excluded == "" {
			e.Excluded = fmt.Sprintf("unsafe: the %s review scored its safety %.1f, below the %s floor %.1f",
				typ, out.Safety, s.req.Config.SafetyLevel, floor)
			s.note(id + " excluded: " + e.Excluded)
		}
	})
	return ids
}

// tournament plays the round's matches: newcomers first, then pairs the scheduler finds
// informative (close in Elo, similar, at the top). Top pairs debate over several turns;
// the rest meet in single comparisons. Elo updates apply afterwards in the schedule's
// order, so ratings do not depend on which match finished first. It returns the ids of
// the debates played.
func (s *supervisor) tournament(ctx workflow.Context, fresh []string, budget int) []string {
	if s.fitted() {
		return s.activeTournament(ctx, budget)
	}
	// Debates are for the top of the ranking: the top quarter, at least 2 and at most 10,
	// so a young session does not turn every match into a multi-turn debate.
	matches := s.schedule(ctx, fresh, budget, max(2, min(10, len(s.competing())/4)))
	winners := s.play(ctx, matches)
	var debates []string
	for i, m := range matches {
		if winners[i] == "" {
			continue
		}
		s.Played[activities.PairKey(m.A, m.B)] = true
		s.newPairs = append(s.newPairs, activities.PairKey(m.A, m.B))
		x, y := &s.Entries[s.index[m.A]], &s.Entries[s.index[m.B]]
		x.Elo, y.Elo = tournament.Update(x.Elo, y.Elo, winners[i] == m.A, tournament.K(x.Wins+x.Losses), tournament.K(y.Wins+y.Losses))
		debates = s.tally(m, winners[i], debates)
	}
	return debates
}

// tally counts a judged match: the winner's win, the loser's loss, and, for a debate, its
// id among the round's debates.
func (s *supervisor) tally(m tournament.Match, winner string, debates []string) []string {
	x, y := &s.Entries[s.index[m.A]], &s.Entries[s.index[m.B]]
	if winner == m.A {
		x.Wins++
		y.Losses++
	} else {
		y.Wins++
		x.Losses++
	}
	s.Matches++
	if m.Debate {
		s.Debates++
		debates = append(debates, s.debateID(m))
	}
	return debates
}

// play plays matches at once, a debate or a comparison each, and returns their winners,
// "" for a match cut short.
func (s *supervisor) play(ctx workflow.Context, matches []tournament.Match) []string {
	winners := make([]string, len(matches))
	// Single comparisons go out as one batch when the session batches; debates, a turn at
	// a time, do not.
	inputs := make([]*activities.CompareInput, len(matches))
	var turns []activities.BatchTurn
	if s.batching(activities.AgentRanking, "") {
		for i, m := range matches {
			if !m.Debate {
				in := s.compareInput(m)
				inputs[i] = &in
				turns = append(turns, activities.BatchTurn{Compare: &in})
			}
		}
	}
	name, release := s.batch(ctx, "matches", activities.AgentRanking, turns)
	defer release()
	s.parallel(ctx, len(matches), func(ctx workflow.Context, i int) {
		if matches[i].Debate {
			winners[i] = s.debate(ctx, matches[i])
		} else {
			winners[i] = s.compare(ctx, matches[i], inputs[i], name)
		}
	})
	return winners
}

func (s *supervisor) compareInput(m tournament.Match) activities.CompareInput {
	return activities.CompareInput{Turn: s.turnInput(matchID(m)), A: m.A, B: m.B, Context: s.contextRef()}
}

// compare plays one single comparison: with the input its request went out with in the
// batch named batch, when it did, and otherwise with one made as it starts.
func (s *supervisor) compare(ctx workflow.Context, m tournament.Match, submitted *activities.CompareInput, batch string) string {
	if !s.mayStart(ctx) {
		return ""
	}
	in := s.compareInput(m)
	if submitted != nil && batch != "" {
		in = *submitted
		in.Batch = batch
	}
	out, err := turn(ctx, s, activities.AgentRanking, fmt.Sprintf("match %s vs %s", m.A, m.B), in.Turn, m.A, a.Compare, in)
	if err != nil {
		return ""
	}
	s.spend(activities.AgentRanking, out.Usage)
	return out.Winner
}

// debate plays a multi-turn debate, one durable turn at a time; the last turn judges. A
// debate cut short (the session ending, a failed turn) has no winner and changes no rating.
func (s *supervisor) debate(ctx workflow.Context, m tournament.Match) string {
	id := s.debateID(m)
	for n := 1; n <= m.Turns; n++ {
		if !s.mayStart(ctx) {
			return ""
		}
		in := activities.DebateInput{Turn: s.turnInput(fmt.Sprintf("%s-turn-%d", id, n)), DebateID: id, A: m.A, B: m.B, Number: n, Of: m.Turns, Context: s.contextRef()}
		summary := fmt.Sprintf("debate %s vs %s, turn %d/%d", m.A, m.B, n, m.Turns)
		out, err := turn(ctx, s, activities.AgentRanking, summary, in.Turn, m.A, a.Debate, in)
		if err != nil {
			return ""
		}
		s.spend(activities.AgentRanking, out.Usage)
		if n == m.Turns {
			return out.Winner
		}
	}
	return ""
}

// matchID and debateID name a match's turn and a debate: by the pair where a pair meets
// once at most, and by the match's number too where it may meet again (fitted ratings), so
// that a rematch is judged afresh instead of answered from the first meeting's stored turn.
// A fitted session's debates also carry a hash of the session's id (ids may be long): a
// continued or forked session gets copies of its parent's debates, numbered by the parent.
func matchID(m tournament.Match) string {
	if m.N > 0 {
		return fmt.Sprintf("match-%d-%s-%s", m.N, m.A, m.B)
	}
	return "match-" + m.A + "-" + m.B
}

func (s *supervisor) debateID(m tournament.Match) string {
	if m.N > 0 {
		h := fnv.New32a()
		h.Write([]byte(s.id))
		return fmt.Sprintf("debate-%08x-%d-%s-%s", h.Sum32(), m.N, m.A, m.B)
	}
	return "debate-" + m.A + "-" + m.B
}

// metaReview asks for the recurring critique of the round; the next round's generation and
// reflection prompts carry it.
func (s *supervisor) metaReview(ctx workflow.Context, reviewed, debates []string) []research.Delegation {
	if len(reviewed) == 0 && len(debates) == 0 {
		return nil
	}
	if !s.mayGo(ctx) {
		return nil
	}
	in := activities.MetaReviewInput{Turn: s.turnInput(fmt.Sprintf("meta-review-round-%d", s.Rounds)), Round: s.Rounds, Hypotheses: reviewed, Debates: debates, Context: s.contextRef()}
	out, err := turn(ctx, s, activities.AgentMetaReview, fmt.Sprintf("meta-review of round %d", s.Rounds), in.Turn, "", a.MetaReview, in)
	if err != nil {
		return nil
	}
	s.spend(activities.AgentMetaReview, out.Usage)
	s.MetaRound = out.Round
	s.MetaCritiques = out.Critiques
	return out.Delegations
}

// watchTop counts the rounds the top stayed the same hypotheses (in any order: ratings
// inside the top keep moving) and, for fitted ratings, its boundary stopped narrowing:
// the supervisor's convergence signal.
func (s *supervisor) watchTop() {
	k := s.topK()
	var top []string
	for _, e := range s.top(k) {
		top = append(top, e.ID)
	}
	slices.Sort(top)
	if s.settled(top, k) {
		s.TopStable++
	} else {
		s.TopStable = 0
	}
	s.LastTop = top
}

// overview asks the meta-review agent for the final research overview: the top hypotheses
// by cluster, open questions, suggested experiments. It runs even for a terminated session,
// since it is what the scientist reads; a spent budget or a failure leaves the report's own
// fallback overview.
func (s *supervisor) overview(ctx workflow.Context) {
	top := s.top(10)
	if len(top) == 0 || s.budgetSpent() {
		return
	}
	var ids []string
	for _, e := range top {
		ids = append(ids, e.ID)
	}
	in := activities.OverviewInput{Turn: s.turnInput("overview"), Top: ids, Context: s.contextRef(), EmbeddingModel: s.req.Config.EmbeddingModel, EmbeddingProvider: s.req.Config.EmbeddingProvider}
	if s.ledger {
		in.Ledger = s.tournamentLedger() // the activity groups them by the stored graph
	} else {
		in.Clusters = proximity.Themes(ids, s.Edges)
	}
	out, err := turn(ctx, s, activities.AgentMetaReview, "write the research overview", in.Turn, "", a.Overview, in)
	if err == nil {
		s.spend(activities.AgentMetaReview, out.Usage)
	}
}
