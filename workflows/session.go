package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	policy "github.com/cosci-dev/cosci/internal/supervisor"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// themeThreshold is the similarity at which two top hypotheses share a theme in the research
// overview (the session's clusters use proximity.ClusterThreshold).
const themeThreshold = 0.35

// Temporal refuses a workflow history past 51,200 events or 50 MB, and a session's grows
// by about 42 MB per 1,000 hypotheses. Until sessions continue-as-new, a session ends
// gracefully before either limit, so it still writes its overview, final checkpoint and
// report instead of being killed by the server.
const (
	historyEventBudget = 40_000
	historyBytesBudget = 40 << 20
)

// After this many rounds in a row that produced no hypothesis the provider is clearly
// failing: the session suspends with the last error instead of spinning.
const maxBarrenRounds = 3

// a is only used to name activities; Temporal calls the worker's registered instance.
var a *activities.Activities

// ResearchSession is the co-scientist's supervisor: one workflow per research session.
// It makes a research plan, then runs rounds — generate, evolve, check proximity, review,
// rank in a tournament, meta-review — until the session has its hypotheses, converges, runs
// out of time or budget, or the scientist ends it. Then it writes the research overview, a
// final checkpoint and the report.
func ResearchSession(ctx workflow.Context, req research.Request) (Result, error) {
	s := newSupervisor(ctx, req.WithDefaults())
	if err := s.registerQueries(ctx); err != nil {
		return Result{}, err
	}
	if err := s.req.Validate(); err != nil {
		s.move(ctx, "fail", (*session.Lifecycle).Fail, "invalid request: "+err.Error())
		return Result{}, temporal.NewNonRetryableApplicationError("invalid research session: "+err.Error(), "InvalidRequest", err)
	}
	s.move(ctx, "start", (*session.Lifecycle).Start, "session started")
	// Commands are installed once the session is active: the SDK runs updates that arrived
	// before their handler as soon as it is set, and they must find a running session.
	// Nothing above blocks, so no command can be missed.
	if err := s.registerCommands(ctx); err != nil {
		return Result{}, err
	}

	for {
		// Suspension pauses here between rounds (and inside a round before each turn).
		s.wait(ctx, func() bool { return s.life.Effective() != session.Suspended })
		if s.stopReason = s.shouldStop(ctx); s.stopReason != "" {
			break
		}
		if d := policy.Decide(s.stats()); d.Suspend {
			s.suspendBecause(ctx, d.Reason)
			continue
		}
		s.round(ctx)
	}
	return s.finish(ctx)
}

// supervisor is the session's whole state: small by design (ids, titles, numbers), since
// the texts live in the session store.
type supervisor struct {
	id          string
	req         research.Request
	goal        string
	focus       []string
	feedback    []string
	refinements []session.Refinement
	plan        string // the research plan's summary; "" until planned

	life        session.Lifecycle
	reason      string // why the session is in its state (suspend reason, stop reason)
	startedAt   time.Time
	updatedAt   time.Time
	suspendedAt time.Time
	pausedFor   time.Duration // time spent suspended, which the time limit does not count

	entries []session.Entry
	index   map[string]int     // hypothesis id -> position in entries
	played  map[string]bool    // pairKey -> the pair has met
	sim     map[string]float64 // pairKey -> similarity, from the proximity agent
	edges   []proximity.Edge   // the same, in the order they were found
	nextID  int

	// Work the scientist sent, done at the start of the next round.
	added         []added
	manualReviews []session.Command
	reviewsBy     map[string]int // hypothesis id -> the scientist's reviews of it so far

	generated, evolved, scientistAdded                     int
	reviews, matches, debates, rounds, turnsFailed, barren int
	metaRound                                              int
	metaCritiques                                          []string
	lastTop                                                []string
	topStable                                              int
	checkpoints                                            int
	lastCheckpoint, checkpointPath                         string
	checkpointWanted                                       bool
	usage                                                  research.Usage
	agents                                                 []AgentStat
	lastError                                              string
	terminateReason, stopReason                            string

	events    []session.Event
	persisted int // events[:persisted] are in the store's event log

	shown      searchAttrs // what visibility last saw
	reportPath string
	lastDetail string           // what the command being applied did, for its update's answer
	now        func() time.Time // workflow time, for records made outside a context
}

// added is a scientist's hypothesis accepted but not stored yet.
type added struct {
	id  string
	cmd session.Command
}

func newSupervisor(ctx workflow.Context, req research.Request) *supervisor {
	now := workflow.Now(ctx)
	s := &supervisor{
		id:        workflow.GetInfo(ctx).WorkflowExecution.ID,
		req:       req,
		goal:      req.ResearchGoal,
		life:      session.New(),
		startedAt: now,
		updatedAt: now,
		index:     map[string]int{},
		played:    map[string]bool{},
		sim:       map[string]float64{},
		reviewsBy: map[string]int{},
		now:       func() time.Time { return workflow.Now(ctx) },
	}
	for _, agent := range []string{activities.AgentSupervisor, activities.AgentGeneration, activities.AgentReflection,
		activities.AgentRanking, activities.AgentProximity, activities.AgentEvolution, activities.AgentMetaReview} {
		s.agents = append(s.agents, AgentStat{Agent: agent})
	}
	return s
}

// shouldStop names the reason to end the session now, or returns "".
func (s *supervisor) shouldStop(ctx workflow.Context) string {
	switch {
	case s.life.Effective() == session.Terminating:
		if s.terminateReason != "" {
			return "terminated by the scientist: " + s.terminateReason
		}
		return "terminated by the scientist"
	case s.timeUp(ctx):
		return fmt.Sprintf("reached time_limit (%s of research)", s.req.Config.TimeLimit)
	case historyFull(ctx):
		info := workflow.GetInfo(ctx)
		return fmt.Sprintf("reached the workflow history budget (%d events, %d MB): the session ends before Temporal's limits",
			info.GetCurrentHistoryLength(), info.GetCurrentHistorySize()>>20)
	case len(s.added) > 0 || len(s.manualReviews) > 0:
		return "" // the scientist's work gets a round of its own
	}
	if d := policy.Decide(s.stats()); d.Stop {
		return d.Reason
	}
	return ""
}

// historyFull reports whether the workflow history has used its budget.
func historyFull(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	return info.GetCurrentHistoryLength() >= historyEventBudget || info.GetCurrentHistorySize() >= historyBytesBudget
}

// stats is what the supervisor's policy reads.
func (s *supervisor) stats() policy.Stats {
	st := policy.Stats{
		Round:             s.rounds,
		Hypotheses:        s.generated + s.evolved, // the scientist's own do not count against the limit
		Max:               s.req.Config.MaxHypotheses,
		Evolved:           s.evolved,
		MetaReviews:       s.metaRound,
		TopStableRounds:   s.topStable,
		ConvergenceRounds: s.req.Config.ConvergenceRounds,
		TokensUsed:        s.usage.PromptTokens + s.usage.CompletionTokens,
		TokenBudget:       s.req.Config.TokenBudget,
	}
	for _, e := range s.entries {
		if e.Excluded == "" {
			st.Competing++
			if e.Wins+e.Losses > 0 {
				st.Ranked++
			}
		}
	}
	for _, e := range s.top(10) {
		switch e.Origin {
		case "evolution":
			st.TopEvolved++
		case "generation":
			st.TopGenerated++
		}
	}
	return st
}

// round is one pass of the research loop, as the supervisor planned it.
func (s *supervisor) round(ctx workflow.Context) {
	work := policy.Allocate(s.stats())
	s.rounds++
	if s.plan == "" {
		s.makePlan(ctx)
	}
	fresh := s.storeAdded(ctx)
	fresh = append(fresh, s.generate(ctx, work.Generate)...)
	fresh = append(fresh, s.evolve(ctx, work.Evolve)...)
	s.proximity(ctx, fresh)
	reviewed := s.review(ctx, fresh)
	s.storeManualReviews(ctx)
	debates := s.tournament(ctx, fresh, work.Matches)
	s.metaReview(ctx, reviewed, debates)
	s.watchTop()
	s.publish(ctx)

	if work.NewHypotheses() > 0 && len(fresh) == 0 {
		s.barren++
		if s.barren >= maxBarrenRounds && s.life.Effective() == session.Active {
			s.suspendBecause(ctx, fmt.Sprintf("no hypothesis came out of %d rounds; last error: %s. Fix the provider, then resume", s.barren, s.lastError))
			s.barren = 0
		}
	} else {
		s.barren = 0
	}
	if err := s.checkpoint(ctx, fmt.Sprintf("round %d", s.rounds)); err != nil && s.life.Effective() == session.Active {
		s.suspendBecause(ctx, "checkpoint failed: "+err.Error()+". Fix the session store, then resume")
	}
}

// makePlan asks the supervisor's one provider turn for the research plan: preferences,
// constraints and evaluation criteria, which every later prompt carries.
func (s *supervisor) makePlan(ctx workflow.Context) {
	if !s.mayStart(ctx) {
		return
	}
	in := s.turnInput("plan")
	var out activities.PlanResult
	if s.turn(ctx, activities.AgentSupervisor, "plan the research", in, "", a.Plan, in, &out) != nil {
		return
	}
	s.usage = s.usage.Add(out.Usage)
	s.plan = out.Summary
	if s.plan == "" {
		s.plan = "(plan without summary)"
	}
	s.note("research plan: " + s.plan)
}

// generate asks for new hypotheses by the strategies the supervisor chose.
func (s *supervisor) generate(ctx workflow.Context, work []policy.Assignment) []string {
	var strategies []string
	for _, w := range work {
		for range w.N {
			strategies = append(strategies, w.Kind)
		}
	}
	ids := make([]string, len(strategies))
	s.parallel(ctx, len(strategies), func(ctx workflow.Context, i int) {
		if !s.mayStart(ctx) {
			return
		}
		id := s.newID()
		in := activities.GenerateInput{
			Turn:         s.turnInput("generate-" + id),
			HypothesisID: id,
			Focus:        s.recent(s.focus),
			Strategy:     strategies[i],
			Context:      s.contextRef(),
		}
		summary := fmt.Sprintf("generate hypothesis %d/%d (%s, %s)", s.generated+s.evolved+i+1, s.req.Config.MaxHypotheses, id, strategies[i])
		var out activities.GenerateResult
		if s.turn(ctx, activities.AgentGeneration, summary, in.Turn, id, a.Generate, in, &out) != nil {
			return
		}
		s.usage = s.usage.Add(out.Usage)
		s.add(session.Entry{ID: id, Title: out.Title, Origin: "generation", Strategy: strategies[i], Round: s.rounds, Elo: tournament.InitialElo})
		s.generated++
		ids[i] = id
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
	ids := make([]string, len(kinds))
	s.parallel(ctx, len(kinds), func(ctx workflow.Context, i int) {
		parents := []string{best[i%len(best)].ID}
		if (kinds[i] == research.EvolveCombination || kinds[i] == research.EvolveInspiration) && len(best) > 1 {
			parents = append(parents, best[(i+1)%len(best)].ID)
		}
		if !s.mayStart(ctx) {
			return
		}
		id := s.newID()
		in := activities.EvolveInput{Turn: s.turnInput("evolve-" + id), HypothesisID: id, Kind: kinds[i], Parents: parents, Context: s.contextRef()}
		summary := fmt.Sprintf("evolve %s by %s into %s", strings.Join(parents, " + "), kinds[i], id)
		var out activities.GenerateResult
		if s.turn(ctx, activities.AgentEvolution, summary, in.Turn, id, a.Evolve, in, &out) != nil {
			return
		}
		s.usage = s.usage.Add(out.Usage)
		s.add(session.Entry{ID: id, Title: out.Title, Origin: "evolution", Strategy: kinds[i], Parents: parents, Round: s.rounds, Elo: tournament.InitialElo})
		s.evolved++
		ids[i] = id
	})
	return slices.DeleteFunc(ids, func(id string) bool { return id == "" })
}

// storeAdded stores the hypotheses the scientist added since the last round; they enter
// the tournament like any other.
func (s *supervisor) storeAdded(ctx workflow.Context) []string {
	var ids []string
	for len(s.added) > 0 {
		ad := s.added[0]
		s.added = s.added[1:]
		in := activities.AddHypothesisInput{
			SessionID: s.id, HypothesisID: ad.id, Scientist: s.req.ScientistID, Goal: s.goal,
			Title: ad.cmd.Title, Statement: ad.cmd.Statement, Rationale: ad.cmd.Rationale, Predictions: ad.cmd.Predictions,
		}
		var out activities.GenerateResult
		actx := workflow.WithActivityOptions(ctx, storeOptions("store the scientist's hypothesis "+ad.id))
		if err := workflow.ExecuteActivity(actx, a.AddHypothesis, in).Get(ctx, &out); err != nil {
			s.note(fmt.Sprintf("the scientist's hypothesis %s could not be stored: %s", ad.id, errorText(err)))
			continue
		}
		s.add(session.Entry{ID: ad.id, Title: ad.cmd.Title, Origin: "scientist", Strategy: "scientist", Round: s.rounds, Elo: tournament.InitialElo})
		s.scientistAdded++
		ids = append(ids, ad.id)
	}
	return ids
}

// storeManualReviews stores the scientist's reviews and weighs each in like two agent
// reviews: a scientist's judgement counts for more than one pass of the reflection agent.
func (s *supervisor) storeManualReviews(ctx workflow.Context) {
	for len(s.manualReviews) > 0 {
		cmd := s.manualReviews[0]
		s.manualReviews = s.manualReviews[1:]
		s.reviewsBy[cmd.HypothesisID]++
		in := activities.ManualReviewInput{
			SessionID: s.id, HypothesisID: cmd.HypothesisID, Scientist: s.req.ScientistID, Index: s.reviewsBy[cmd.HypothesisID],
			Score: cmd.Score, Verdict: cmd.Verdict, Critique: cmd.Critique,
		}
		var out activities.ReviewResult
		actx := workflow.WithActivityOptions(ctx, storeOptions("store the scientist's review of "+cmd.HypothesisID))
		if err := workflow.ExecuteActivity(actx, a.ManualReview, in).Get(ctx, &out); err != nil {
			s.note(fmt.Sprintf("the scientist's review of %s could not be stored: %s", cmd.HypothesisID, errorText(err)))
			continue
		}
		e := &s.entries[s.index[cmd.HypothesisID]]
		e.Score = (e.Score*float64(e.Reviews) + 2*out.Score) / float64(e.Reviews+2)
		e.Reviews += 2
		s.reviews++
	}
}

// proximity asks the proximity agent how the new hypotheses relate to the others, excludes
// near-duplicates (the newer one goes) and re-clusters the session.
func (s *supervisor) proximity(ctx workflow.Context, fresh []string) {
	competing := s.competing()
	if len(fresh) == 0 || len(competing) < 2 || !s.mayStart(ctx) {
		return
	}
	in := activities.ProximityInput{SessionID: s.id, New: fresh, All: competing}
	var out activities.ProximityResult
	t := activities.Turn{SessionID: s.id, TurnID: fmt.Sprintf("proximity-round-%d", s.rounds)}
	if s.turn(ctx, activities.AgentProximity, fmt.Sprintf("proximity of %d new hypotheses", len(fresh)), t, "", a.Proximity, in, &out) != nil {
		return
	}
	isFresh := func(id string) bool { return slices.Contains(fresh, id) }
	for _, e := range out.Edges {
		if _, seen := s.sim[pairKey(e.A, e.B)]; !seen {
			s.edges = append(s.edges, proximity.Edge{A: e.A, B: e.B, Sim: e.Sim})
		}
		s.sim[pairKey(e.A, e.B)] = e.Sim
		if e.Sim < proximity.DuplicateThreshold {
			continue
		}
		// The newer of the two goes: the one made this round, or the later id.
		newer, older := e.A, e.B
		if !isFresh(newer) || (isFresh(older) && older > newer) {
			newer, older = older, newer
		}
		if x := &s.entries[s.index[newer]]; x.Excluded == "" && s.entries[s.index[older]].Excluded == "" {
			x.Excluded = fmt.Sprintf("near-duplicate of %s (similarity %.2f)", older, e.Sim)
			s.note(newer + " excluded: " + x.Excluded)
		}
	}
	s.cluster()
}

// cluster numbers the proximity clusters of the competing hypotheses, from 1.
func (s *supervisor) cluster() {
	ids := s.competing()
	edges := slices.DeleteFunc(slices.Clone(s.edges), func(e proximity.Edge) bool {
		return s.entries[s.index[e.A]].Excluded != "" || s.entries[s.index[e.B]].Excluded != ""
	})
	for n, members := range proximity.Clusters(ids, edges, proximity.ClusterThreshold) {
		for _, id := range members {
			s.entries[s.index[id]].Cluster = n + 1
		}
	}
}

// review runs every enabled review type on each new hypothesis, and excludes one whose
// safety score falls below the session's safety floor. It returns the ids it reviewed.
func (s *supervisor) review(ctx workflow.Context, fresh []string) []string {
	ids := slices.DeleteFunc(slices.Clone(fresh), func(id string) bool { return s.entries[s.index[id]].Excluded != "" })
	types := s.req.Config.ReviewTypes
	floor := research.SafetyFloor(s.req.Config.SafetyLevel)
	s.parallel(ctx, len(ids)*len(types), func(ctx workflow.Context, i int) {
		id, typ := ids[i/len(types)], types[i%len(types)]
		if !s.mayStart(ctx) {
			return
		}
		in := activities.ReviewInput{Turn: s.turnInput("review-" + id + "-" + typ), HypothesisID: id, Type: typ, Context: s.contextRef()}
		var out activities.ReviewResult
		if s.turn(ctx, activities.AgentReflection, fmt.Sprintf("review %s (%s)", id, typ), in.Turn, id, a.Review, in, &out) != nil {
			return
		}
		s.usage = s.usage.Add(out.Usage)
		e := &s.entries[s.index[id]]
		e.Score = (e.Score*float64(e.Reviews) + out.Score) / float64(e.Reviews+1)
		e.Reviews++
		s.reviews++
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
	var players []tournament.Player
	for _, e := range s.entries {
		if e.Excluded == "" {
			players = append(players, tournament.Player{ID: e.ID, Elo: e.Elo, Matches: e.Wins + e.Losses, New: slices.Contains(fresh, e.ID)})
		}
	}
	// Debates are for the top of the ranking: the top quarter, at least 2 and at most 10,
	// so a young session does not turn every match into a multi-turn debate.
	opts := tournament.Options{DebateTopK: max(2, min(10, len(players)/4))}
	matches := tournament.Schedule(players, s.similarity, budget, func(x, y string) bool { return s.played[pairKey(x, y)] }, opts)
	winners := make([]string, len(matches))
	s.parallel(ctx, len(matches), func(ctx workflow.Context, i int) {
		if matches[i].Debate {
			winners[i] = s.debate(ctx, matches[i])
		} else {
			winners[i] = s.compare(ctx, matches[i])
		}
	})
	var debates []string
	for i, m := range matches {
		if winners[i] == "" {
			continue
		}
		s.played[pairKey(m.A, m.B)] = true
		x, y := &s.entries[s.index[m.A]], &s.entries[s.index[m.B]]
		aWon := winners[i] == m.A
		x.Elo, y.Elo = tournament.Update(x.Elo, y.Elo, aWon, tournament.K(x.Wins+x.Losses), tournament.K(y.Wins+y.Losses))
		if aWon {
			x.Wins++
			y.Losses++
		} else {
			y.Wins++
			x.Losses++
		}
		s.matches++
		if m.Debate {
			s.debates++
			debates = append(debates, debateID(m))
		}
	}
	return debates
}

func (s *supervisor) compare(ctx workflow.Context, m tournament.Match) string {
	if !s.mayStart(ctx) {
		return ""
	}
	in := activities.CompareInput{Turn: s.turnInput("match-" + m.A + "-" + m.B), A: m.A, B: m.B}
	var out activities.CompareResult
	if s.turn(ctx, activities.AgentRanking, fmt.Sprintf("match %s vs %s", m.A, m.B), in.Turn, m.A, a.Compare, in, &out) != nil {
		return ""
	}
	s.usage = s.usage.Add(out.Usage)
	return out.Winner
}

// debate plays a multi-turn debate, one durable turn at a time; the last turn judges. A
// debate cut short (the session ending, a failed turn) has no winner and changes no rating.
func (s *supervisor) debate(ctx workflow.Context, m tournament.Match) string {
	id := debateID(m)
	for n := 1; n <= m.Turns; n++ {
		if !s.mayStart(ctx) {
			return ""
		}
		in := activities.DebateInput{Turn: s.turnInput(fmt.Sprintf("%s-turn-%d", id, n)), DebateID: id, A: m.A, B: m.B, Number: n, Of: m.Turns}
		var out activities.DebateResult
		summary := fmt.Sprintf("debate %s vs %s, turn %d/%d", m.A, m.B, n, m.Turns)
		if s.turn(ctx, activities.AgentRanking, summary, in.Turn, m.A, a.Debate, in, &out) != nil {
			return ""
		}
		s.usage = s.usage.Add(out.Usage)
		if n == m.Turns {
			return out.Winner
		}
	}
	return ""
}

func debateID(m tournament.Match) string { return "debate-" + m.A + "-" + m.B }

// metaReview asks for the recurring critique of the round; the next round's generation and
// reflection prompts carry it.
func (s *supervisor) metaReview(ctx workflow.Context, reviewed, debates []string) {
	if len(reviewed) == 0 && len(debates) == 0 {
		return
	}
	if !s.mayStart(ctx) {
		return
	}
	in := activities.MetaReviewInput{Turn: s.turnInput(fmt.Sprintf("meta-review-round-%d", s.rounds)), Round: s.rounds, Hypotheses: reviewed, Debates: debates}
	var out activities.MetaReviewResult
	if s.turn(ctx, activities.AgentMetaReview, fmt.Sprintf("meta-review of round %d", s.rounds), in.Turn, "", a.MetaReview, in, &out) != nil {
		return
	}
	s.usage = s.usage.Add(out.Usage)
	s.metaRound = out.Round
	s.metaCritiques = out.Critiques
}

// watchTop counts the rounds the top stayed the same hypotheses (in any order: ratings
// inside the top keep moving): the supervisor's convergence signal.
func (s *supervisor) watchTop() {
	var top []string
	for _, e := range s.top(policy.TopK) {
		top = append(top, e.ID)
	}
	slices.Sort(top)
	if len(top) == policy.TopK && slices.Equal(top, s.lastTop) {
		s.topStable++
	} else {
		s.topStable = 0
	}
	s.lastTop = top
}

// finish ends the session: the scientist's last contributions, the research overview, a
// final checkpoint, the report, and the completed state.
func (s *supervisor) finish(ctx workflow.Context) (Result, error) {
	s.reason = s.stopReason
	s.storeAdded(ctx)
	s.storeManualReviews(ctx)
	s.overview(ctx)
	if err := s.checkpoint(ctx, "final"); err != nil {
		s.note("no report: the final checkpoint failed: " + err.Error())
	} else {
		var path string
		rctx := workflow.WithActivityOptions(ctx, storeOptions("write the research report"))
		if err := workflow.ExecuteActivity(rctx, a.Report, activities.ReportInput{SessionID: s.id, Checkpoint: s.checkpoints, MetaReviewRound: s.metaRound}).Get(ctx, &path); err != nil {
			s.note("report failed: " + errorText(err))
		} else {
			s.reportPath = path
			s.note("report written to " + path)
		}
	}
	s.move(ctx, "complete", (*session.Lifecycle).Complete, s.stopReason)
	s.publish(ctx)
	// Let any update still in its handler answer before the run closes.
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return Result{
		SessionID:  s.id,
		State:      s.life.State,
		StopReason: s.stopReason,
		Hypotheses: len(s.entries),
		Top:        s.top(10),
		ReportPath: s.reportPath,
		Checkpoint: s.checkpointPath,
		Usage:      s.usage,
	}, nil
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
	// Themes group the top hypotheses among themselves, more loosely than the session's
	// clusters: the overview is about which ideas belong together, not near-duplicates.
	edges := slices.DeleteFunc(slices.Clone(s.edges), func(e proximity.Edge) bool {
		return !slices.Contains(ids, e.A) || !slices.Contains(ids, e.B)
	})
	clusters := proximity.Clusters(ids, edges, themeThreshold)
	rank := func(id string) int { return slices.Index(ids, id) }
	for _, c := range clusters {
		slices.SortFunc(c, func(x, y string) int { return rank(x) - rank(y) })
	}
	slices.SortStableFunc(clusters, func(x, y []string) int { return rank(x[0]) - rank(y[0]) })
	in := activities.OverviewInput{Turn: s.turnInput("overview"), Top: ids, Clusters: clusters, Context: s.contextRef()}
	var out activities.OverviewResult
	if s.turn(ctx, activities.AgentMetaReview, "write the research overview", in.Turn, "", a.Overview, in, &out) == nil {
		s.usage = s.usage.Add(out.Usage)
	}
}

// checkpoint writes a snapshot of the session to the store.
func (s *supervisor) checkpoint(ctx workflow.Context, why string) error {
	s.checkpointWanted = false
	if err := s.life.BeginCheckpoint(); err != nil {
		return err
	}
	seq := s.checkpoints + 1
	snap := s.snapshot(ctx, seq)
	if s.stopReason != "" {
		// The final checkpoint is the record of the finished session the report is made from.
		snap.State = session.Completed
	}
	upTo := len(s.events)
	in := activities.CheckpointInput{Snapshot: snap, Events: s.events[s.persisted:upTo]}
	cctx := workflow.WithActivityOptions(ctx, storeOptions(fmt.Sprintf("checkpoint %d (%s)", seq, why)))
	var path string
	err := workflow.ExecuteActivity(cctx, a.Checkpoint, in).Get(ctx, &path)
	if endErr := s.life.EndCheckpoint(); endErr != nil {
		return endErr
	}
	if err != nil {
		s.log(session.Event{Kind: session.EventCheckpoint, Detail: fmt.Sprintf("checkpoint %d (%s) failed: %s", seq, why, errorText(err))})
		return errors.New(errorText(err))
	}
	s.persisted = upTo
	s.checkpoints = seq
	s.checkpointPath = path
	s.lastCheckpoint = session.Stamp(workflow.Now(ctx))
	s.log(session.Event{Kind: session.EventCheckpoint, Detail: fmt.Sprintf("checkpoint %d (%s) written to %s", seq, why, path)})
	return nil
}

// snapshot is the session as a checkpoint records it.
func (s *supervisor) snapshot(ctx workflow.Context, seq int) session.Snapshot {
	state := s.life.Effective()
	p := s.progress(ctx)
	p.State, p.Checkpoints, p.LastCheckpoint = state, seq, session.Stamp(workflow.Now(ctx))
	return session.Snapshot{
		SessionID:   s.id,
		Seq:         seq,
		Time:        session.Stamp(workflow.Now(ctx)),
		State:       state,
		StopReason:  s.stopReason,
		ScientistID: s.req.ScientistID,
		Goal:        s.goal,
		Refinements: s.refinements,
		Config:      s.req.Config,
		Hypotheses:  s.ranked(),
		Progress:    p,
		Usage:       s.usage,
		StartedAt:   session.Stamp(s.startedAt),
	}
}

// suspendBecause suspends the session on its own account (a spent budget, a failing
// provider or store), with the reason the scientist will see.
func (s *supervisor) suspendBecause(ctx workflow.Context, reason string) {
	s.move(ctx, "suspend", (*session.Lifecycle).Suspend, reason)
	s.suspendedAt = workflow.Now(ctx)
}

// parallel runs fn(i) for i in [0, n) as workflow coroutines and waits for all of them,
// serving checkpoint requests while it waits.
func (s *supervisor) parallel(ctx workflow.Context, n int, fn func(ctx workflow.Context, i int)) {
	done := 0
	for i := range n {
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer func() { done++ }()
			fn(ctx, i)
		})
	}
	s.wait(ctx, func() bool { return done == n })
}

// wait blocks until cond holds, writing any checkpoint the scientist asks for meanwhile
// (a suspended session can still be checkpointed).
func (s *supervisor) wait(ctx workflow.Context, cond func() bool) {
	for {
		_ = workflow.Await(ctx, func() bool { return cond() || s.checkpointWanted })
		if !s.checkpointWanted {
			return
		}
		_ = s.checkpoint(ctx, "requested")
	}
}

// mayStart waits while the session is suspended, then says whether a new turn may start:
// not once the session is ending, out of time or out of budget. In-flight turns finish.
func (s *supervisor) mayStart(ctx workflow.Context) bool {
	_ = workflow.Await(ctx, func() bool { return s.life.Effective() != session.Suspended })
	return s.life.Effective() == session.Active && !s.timeUp(ctx) && !s.budgetSpent()
}

func (s *supervisor) budgetSpent() bool {
	b := s.req.Config.TokenBudget
	return b > 0 && s.usage.PromptTokens+s.usage.CompletionTokens >= b
}

// timeUp reports whether the session has researched for its time limit. Time spent
// suspended does not count: a paused session keeps its budget.
func (s *supervisor) timeUp(ctx workflow.Context) bool {
	limit := time.Duration(s.req.Config.TimeLimit)
	return limit > 0 && s.activeTime(ctx) >= limit
}

func (s *supervisor) activeTime(ctx workflow.Context) time.Duration {
	now := workflow.Now(ctx)
	d := now.Sub(s.startedAt) - s.pausedFor
	if s.life.Effective() == session.Suspended {
		d -= now.Sub(s.suspendedAt)
	}
	return d
}

// turn runs one provider turn as an activity and books it: agent statistics, the event
// log, the live details in the Web UI.
func (s *supervisor) turn(ctx workflow.Context, agent, summary string, t activities.Turn, hypothesis string, fn, in, out any) error {
	opts := turnOptions(summary)
	if agent == activities.AgentProximity {
		opts.TaskQueue = TaskQueue // a computation over the store, not a model call
	}
	actx := workflow.WithActivityOptions(ctx, opts)
	err := workflow.ExecuteActivity(actx, fn, in).Get(ctx, out)
	stat := &s.agents[slices.IndexFunc(s.agents, func(st AgentStat) bool { return st.Agent == agent })]
	stat.Turns++
	ev := session.Event{Kind: session.EventTurn, Turn: t.TurnID, Hypothesis: hypothesis, Detail: summary}
	if err != nil {
		stat.Failed++
		s.turnsFailed++
		s.usage = s.usage.Add(activities.SpentBy(err)) // a failed turn's tokens count too
		s.lastError = errorText(err)
		ev.Detail = summary + " failed: " + s.lastError
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == activities.ErrProviderAuth && s.life.Effective() == session.Active {
			// Retrying cannot fix credentials: pause until a human does.
			defer s.suspendBecause(ctx, "the model provider refused the worker's credentials: "+app.Message()+
				". Fix the key in the worker's environment, restart the worker, then resume")
		}
	} else {
		stat.Succeeded++
	}
	s.log(ev)
	s.show(ctx)
	return err
}

func (s *supervisor) turnInput(turnID string) activities.Turn {
	return activities.Turn{
		SessionID: s.id, TurnID: turnID, Goal: s.goal,
		Provider: s.req.Config.Provider, Model: s.req.Config.Model, Seed: s.req.Config.Seed,
	}
}

// contextRef names the shared context a turn's prompt carries.
func (s *supervisor) contextRef() activities.ContextRef {
	return activities.ContextRef{Plan: s.plan != "", MetaReviewRound: s.metaRound, Focus: s.recent(s.focus), Feedback: s.recent(s.feedback)}
}

// recent is the scientist's latest steering, newest last; a few are enough to steer a
// prompt, and the payload stays small however often the scientist steers.
func (s *supervisor) recent(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return slices.Clone(list[max(0, len(list)-5):])
}

func (s *supervisor) newID() string {
	s.nextID++
	return fmt.Sprintf("h-%04d", s.nextID)
}

func (s *supervisor) add(e session.Entry) {
	s.index[e.ID] = len(s.entries)
	s.entries = append(s.entries, e)
}

// competing lists the ids still in the tournament, in the order they were made.
func (s *supervisor) competing() []string {
	var ids []string
	for _, e := range s.entries {
		if e.Excluded == "" {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

func (s *supervisor) similarity(x, y string) float64 { return s.sim[pairKey(x, y)] }

// ranked returns every hypothesis by Elo, highest first, ties by id; excluded ones last.
func (s *supervisor) ranked() []session.Entry {
	out := slices.Clone(s.entries)
	slices.SortStableFunc(out, func(x, y session.Entry) int {
		if (x.Excluded == "") != (y.Excluded == "") {
			if x.Excluded == "" {
				return -1
			}
			return 1
		}
		if x.Elo != y.Elo {
			if x.Elo > y.Elo {
				return -1
			}
			return 1
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out
}

// top returns the n best competing hypotheses.
func (s *supervisor) top(n int) []session.Entry {
	r := s.ranked()
	k := 0
	for k < len(r) && k < n && r[k].Excluded == "" {
		k++
	}
	return r[:k]
}

func pairKey(x, y string) string {
	if x > y {
		x, y = y, x
	}
	return x + "|" + y
}

// turnOptions: a model turn may take minutes, but a dead worker is noticed within the
// heartbeat timeout. Temporal's retry policy is the only retry mechanism. Turns run on the
// turns queue, where each worker bounds how many run at once (its provider slots).
func turnOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           TurnsQueue,
		Summary:             summary,
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{activities.ErrMalformedAnswer, activities.ErrUnknownProvider, activities.ErrProviderAuth, activities.ErrProviderRequest},
		},
	}
}

// storeOptions: checkpoints, reports and the scientist's texts touch only local disk.
func storeOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		Summary:             summary,
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
	}
}

// errorText is the innermost message of an activity failure: what went wrong, without the
// layers of "activity error (type: ..., scheduledEventID: ...)".
func errorText(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Error()
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return "timed out (" + timeout.TimeoutType().String() + ")"
	}
	return err.Error()
}
