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
	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
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
//
// carried is nil when a client starts the session; a run that continues as new passes the
// session's state to the next run through it.
func ResearchSession(ctx workflow.Context, req research.Request, carried *Carried) (Result, error) {
	s := newSupervisor(ctx, req)
	if err := s.registerQueries(ctx); err != nil {
		return Result{}, err
	}
	// Sessions started before the session graph existed replay without it.
	s.graph = workflow.GetVersion(ctx, versionGraph, workflow.DefaultVersion, 1) >= 1
	if carried != nil {
		s.load(*carried)
		if err := s.registerCommands(ctx); err != nil {
			return Result{}, err
		}
		s.note(fmt.Sprintf("run %d of the session: continued as new with %d hypotheses", s.Runs+1, len(s.Entries)))
		return s.research(ctx)
	}
	restoring := false
	if s.graph {
		if err := s.placeInGraph(ctx); err != nil {
			return s.refuse(ctx, err)
		}
		restoring = s.lineage.Relation == lineage.Continue || s.lineage.Relation == lineage.Fork
	}
	if restoring {
		// A continued or forked session starts from its parent's checkpoint, which takes
		// activities: the commands are installed first (they are refused until the session
		// is active), so none is missed.
		if err := s.registerCommands(ctx); err != nil {
			return Result{}, err
		}
		if err := s.restore(ctx); err != nil {
			return s.refuse(ctx, err)
		}
	}
	if err := s.req.Validate(); err != nil {
		return s.refuse(ctx, err)
	}
	s.move(ctx, "start", (*session.Lifecycle).Start, "session started")
	if !restoring {
		// Commands are installed once the session is active: the SDK runs updates that
		// arrived before their handler as soon as it is set, and they must find a running
		// session. Nothing above blocks, so no command can be missed.
		if err := s.registerCommands(ctx); err != nil {
			return Result{}, err
		}
	}
	return s.research(ctx)
}

// versionGraph gates the session graph (lineage, continue and fork, continue-as-new,
// subagents) for histories recorded before it.
const versionGraph = "session-graph"

// research is the supervisor's loop, then the end of the session.
func (s *supervisor) research(ctx workflow.Context) (Result, error) {
	for {
		// Suspension pauses here between rounds (and inside a round before each turn).
		s.wait(ctx, func() bool { return s.Life.Effective() != session.Suspended })
		if s.StopReason = s.shouldStop(ctx); s.StopReason != "" {
			break
		}
		if s.graph && s.continueAsNewDue(ctx) {
			return Result{}, s.continueAsNew(ctx)
		}
		if d := policy.Decide(s.stats()); d.Suspend {
			s.suspendBecause(ctx, d.Reason)
			continue
		}
		s.round(ctx)
	}
	return s.finish(ctx)
}

// refuse ends a session that cannot start: its request is invalid, or the checkpoint it
// was to start from cannot be had.
func (s *supervisor) refuse(ctx workflow.Context, err error) (Result, error) {
	s.move(ctx, "fail", (*session.Lifecycle).Fail, "invalid request: "+err.Error())
	return Result{}, temporal.NewNonRetryableApplicationError("invalid research session: "+err.Error(), "InvalidRequest", err)
}

// supervisor is the session's whole state: small by design (ids, titles, numbers), since
// the texts live in the session store. Carried is the part that outlives a run; the rest
// is rebuilt from it.
type supervisor struct {
	Carried
	id      string
	req     research.Request
	raw     research.Request // the request as the client sent it, before defaults
	lineage lineage.Descriptor
	graph   bool // the session-graph version of the workflow: lineage, continue-as-new, subagents

	index map[string]int     // hypothesis id -> position in Entries
	sim   map[string]float64 // pairKey -> similarity, from the proximity agent's Edges

	signals []signal // the channels drainSignals empties before continuing as new

	// What the last checkpoint holds, so the next one sends only the changes (see
	// session.Merge); saved is nil until a checkpoint of this run (or the one that
	// continued as new just before it) was written.
	saved      []session.Entry
	savedEdges int
	newPairs   []string
	reportPath string
	lastDetail string           // what the command being applied did, for its update's answer
	now        func() time.Time // workflow time, for records made outside a context
}

// Carried is what one run of a session hands to the next when it continues as new: the
// whole supervisor state except what is rebuilt from it. Every field is ids, numbers or
// short titles; the texts stay in the session store.
type Carried struct {
	Goal        string               `json:"goal"`
	Focus       []string             `json:"focus,omitempty"`
	Feedback    []string             `json:"feedback,omitempty"`
	Refinements []session.Refinement `json:"refinements,omitempty"`
	Plan        string               `json:"plan,omitempty"` // the research plan's summary; "" until planned

	Life        session.Lifecycle `json:"life"`
	Reason      string            `json:"reason,omitempty"` // why the session is in its state
	StartedAt   time.Time         `json:"started_at"`
	UpdatedAt   time.Time         `json:"updated_at"`
	SuspendedAt time.Time         `json:"suspended_at"`
	PausedFor   time.Duration     `json:"paused_for"` // time spent suspended, which the time limit does not count

	Entries entryList `json:"entries"`
	Played  pairSet   `json:"played,omitempty"` // pairKey -> the pair has met
	Edges   edgeList  `json:"edges,omitempty"`  // similarities, in the order they were found
	NextID  int       `json:"next_id"`

	// Work the scientist sent, done at the start of the next round.
	Added         []Added           `json:"added,omitempty"`
	ManualReviews []session.Command `json:"manual_reviews,omitempty"`
	ReviewsBy     map[string]int    `json:"reviews_by,omitempty"` // hypothesis id -> the scientist's reviews of it so far

	Generated      int `json:"generated"`
	Evolved        int `json:"evolved"`
	ScientistAdded int `json:"scientist_added"`
	Reviews        int `json:"reviews"`
	Matches        int `json:"matches"`
	Debates        int `json:"debates"`
	Rounds         int `json:"rounds"`
	TurnsFailed    int `json:"turns_failed"`
	Barren         int `json:"barren"`

	MetaRound        int            `json:"meta_round"`
	MetaCritiques    []string       `json:"meta_critiques,omitempty"`
	LastTop          []string       `json:"last_top,omitempty"`
	TopStable        int            `json:"top_stable"`
	Checkpoints      int            `json:"checkpoints"`
	LastCheckpoint   string         `json:"last_checkpoint,omitempty"`
	LastCheckpointAt time.Time      `json:"last_checkpoint_at"`
	CheckpointPath   string         `json:"checkpoint_path,omitempty"`
	CheckpointWanted bool           `json:"checkpoint_wanted,omitempty"`
	Usage            research.Usage `json:"usage"`
	Agents           []AgentStat    `json:"agents"`
	LastError        string         `json:"last_error,omitempty"`
	TerminateReason  string         `json:"terminate_reason,omitempty"`
	StopReason       string         `json:"stop_reason,omitempty"`

	// Events is the tail of the session's own log: the events not yet in the store
	// (Events[Persisted:]) and the latest ones the history query serves from memory.
	// Events[0] has Seq EventBase+1; the earlier ones are in the store's event log.
	Events    []session.Event `json:"events"`
	Persisted int             `json:"persisted"`
	EventBase int             `json:"event_base,omitempty"`

	Shown searchAttrs `json:"shown"` // what visibility last saw
	// Runs counts the runs before this one (continue-as-new generations).
	Runs int `json:"runs,omitempty"`
	// Fresh says the latest checkpoint holds the whole state carried over, so the next
	// run's first checkpoint can be incremental too.
	Fresh bool `json:"fresh,omitempty"`
	// Successor is the session that continues this one, once it asked for the hand-over.
	Successor string `json:"successor,omitempty"`
	// Subagents the session forked (Forks counts them, for their ids), and the hypotheses
	// their results bring into the tournament next round.
	Forks     int           `json:"forks,omitempty"`
	Subagents []SubagentRef `json:"subagents,omitempty"`
	Imports   []Import      `json:"imports,omitempty"`
}

// Added is a scientist's hypothesis accepted but not stored yet.
type Added struct {
	ID  string          `json:"id"`
	Cmd session.Command `json:"cmd"`
}

func newSupervisor(ctx workflow.Context, raw research.Request) *supervisor {
	now := workflow.Now(ctx)
	req := raw.WithDefaults()
	s := &supervisor{
		id:    workflow.GetInfo(ctx).WorkflowExecution.ID,
		req:   req,
		raw:   raw,
		index: map[string]int{},
		sim:   map[string]float64{},
		now:   func() time.Time { return workflow.Now(ctx) },
		Carried: Carried{
			Goal:      req.ResearchGoal,
			Life:      session.New(),
			StartedAt: now,
			UpdatedAt: now,
			Played:    pairSet{},
			ReviewsBy: map[string]int{},
		},
	}
	if req.Lineage != nil {
		s.lineage = *req.Lineage
	}
	s.lineage = s.lineage.WithDefaults(s.id)
	for _, agent := range []string{activities.AgentSupervisor, activities.AgentGeneration, activities.AgentReflection,
		activities.AgentRanking, activities.AgentProximity, activities.AgentEvolution, activities.AgentMetaReview} {
		s.Agents = append(s.Agents, AgentStat{Agent: agent})
	}
	return s
}

// load takes over the state a previous run carried, and rebuilds what derives from it.
func (s *supervisor) load(c Carried) {
	s.Carried = c
	if s.Played == nil {
		s.Played = pairSet{}
	}
	if s.ReviewsBy == nil {
		s.ReviewsBy = map[string]int{}
	}
	s.reindex()
	if s.Fresh {
		s.markSaved()
	}
}

// markSaved notes that the latest checkpoint holds the session as it is now.
func (s *supervisor) markSaved() {
	s.saved = slices.Clone(s.Entries)
	s.savedEdges = len(s.Edges)
	s.newPairs = nil
}

// reindex rebuilds the lookups over Entries and Edges.
func (s *supervisor) reindex() {
	s.index = make(map[string]int, len(s.Entries))
	for i, e := range s.Entries {
		s.index[e.ID] = i
	}
	s.sim = make(map[string]float64, len(s.Edges))
	for _, e := range s.Edges {
		s.sim[pairKey(e.A, e.B)] = e.Sim
	}
}

// shouldStop names the reason to end the session now, or returns "".
func (s *supervisor) shouldStop(ctx workflow.Context) string {
	switch {
	case s.Life.Effective() == session.Terminating:
		if s.TerminateReason != "" {
			return "terminated by the scientist: " + s.TerminateReason
		}
		return "terminated by the scientist"
	case s.timeUp(ctx):
		return fmt.Sprintf("reached time_limit (%s of research)", s.req.Config.TimeLimit)
	case !s.graph && historyFull(ctx):
		// Since the session graph, a session continues as new instead.
		info := workflow.GetInfo(ctx)
		return fmt.Sprintf("reached the workflow history budget (%d events, %d MB): the session ends before Temporal's limits",
			info.GetCurrentHistoryLength(), info.GetCurrentHistorySize()>>20)
	case len(s.Added) > 0 || len(s.ManualReviews) > 0:
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
		Round:             s.Rounds,
		Hypotheses:        s.Generated + s.Evolved, // the scientist's own do not count against the limit
		Max:               s.req.Config.MaxHypotheses,
		Evolved:           s.Evolved,
		MetaReviews:       s.MetaRound,
		TopStableRounds:   s.TopStable,
		ConvergenceRounds: s.req.Config.ConvergenceRounds,
		TokensUsed:        s.Usage.PromptTokens + s.Usage.CompletionTokens,
		TokenBudget:       s.req.Config.TokenBudget,
	}
	for _, e := range s.Entries {
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
	s.Rounds++
	if s.Plan == "" {
		s.makePlan(ctx)
	}
	fresh := s.storeAdded(ctx)
	fresh = append(fresh, s.storeImports(ctx)...)
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
		s.suspendBecause(ctx, "checkpoint failed: "+err.Error()+". Fix the session store, then resume")
		return
	}
	// Deferred work: subagents start only now that the turn that asked for them has
	// completed, from the checkpoint just written.
	if s.graph {
		s.delegate(ctx, delegations)
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
	s.Usage = s.Usage.Add(out.Usage)
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
	ids := make([]string, len(strategies))
	s.parallel(ctx, len(strategies), func(ctx workflow.Context, i int) {
		if !s.mayStart(ctx) {
			return
		}
		id := s.newID()
		in := activities.GenerateInput{
			Turn:         s.turnInput("generate-" + id),
			HypothesisID: id,
			Focus:        s.recent(s.Focus),
			Strategy:     strategies[i],
			Context:      s.contextRef(),
		}
		summary := fmt.Sprintf("generate hypothesis %d/%d (%s, %s)", s.Generated+s.Evolved+i+1, s.req.Config.MaxHypotheses, id, strategies[i])
		var out activities.GenerateResult
		if s.turn(ctx, activities.AgentGeneration, summary, in.Turn, id, a.Generate, in, &out) != nil {
			return
		}
		s.Usage = s.Usage.Add(out.Usage)
		s.add(session.Entry{ID: id, Title: out.Title, Origin: "generation", Strategy: strategies[i], Round: s.Rounds, Elo: tournament.InitialElo})
		s.Generated++
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
		s.Usage = s.Usage.Add(out.Usage)
		s.add(session.Entry{ID: id, Title: out.Title, Origin: "evolution", Strategy: kinds[i], Parents: parents, Round: s.Rounds, Elo: tournament.InitialElo})
		s.Evolved++
		ids[i] = id
	})
	return slices.DeleteFunc(ids, func(id string) bool { return id == "" })
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
		if err := workflow.ExecuteActivity(actx, a.AddHypothesis, in).Get(ctx, &out); err != nil {
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
		if err := workflow.ExecuteActivity(actx, a.ManualReview, in).Get(ctx, &out); err != nil {
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
	if len(fresh) == 0 || len(competing) < 2 || !s.mayStart(ctx) {
		return
	}
	in := activities.ProximityInput{SessionID: s.id, New: fresh, All: competing}
	var out activities.ProximityResult
	t := activities.Turn{SessionID: s.id, TurnID: fmt.Sprintf("proximity-round-%d", s.Rounds)}
	if s.turn(ctx, activities.AgentProximity, fmt.Sprintf("proximity of %d new hypotheses", len(fresh)), t, "", a.Proximity, in, &out) != nil {
		return
	}
	isFresh := func(id string) bool { return slices.Contains(fresh, id) }
	for _, e := range out.Edges {
		if _, seen := s.sim[pairKey(e.A, e.B)]; !seen {
			s.Edges = append(s.Edges, proximity.Edge{A: e.A, B: e.B, Sim: e.Sim})
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
		if x := &s.Entries[s.index[newer]]; x.Excluded == "" && s.Entries[s.index[older]].Excluded == "" {
			x.Excluded = fmt.Sprintf("near-duplicate of %s (similarity %.2f)", older, e.Sim)
			s.note(newer + " excluded: " + x.Excluded)
		}
	}
	s.cluster()
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
		s.Usage = s.Usage.Add(out.Usage)
		e := &s.Entries[s.index[id]]
		e.Score = (e.Score*float64(e.Reviews) + out.Score) / float64(e.Reviews+1)
		e.Reviews++
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
	var players []tournament.Player
	for _, e := range s.Entries {
		if e.Excluded == "" {
			players = append(players, tournament.Player{ID: e.ID, Elo: e.Elo, Matches: e.Wins + e.Losses, New: slices.Contains(fresh, e.ID)})
		}
	}
	// Debates are for the top of the ranking: the top quarter, at least 2 and at most 10,
	// so a young session does not turn every match into a multi-turn debate.
	opts := tournament.Options{DebateTopK: max(2, min(10, len(players)/4))}
	matches := tournament.Schedule(players, s.similarity, budget, func(x, y string) bool { return s.Played[pairKey(x, y)] }, opts)
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
		s.Played[pairKey(m.A, m.B)] = true
		s.newPairs = append(s.newPairs, pairKey(m.A, m.B))
		x, y := &s.Entries[s.index[m.A]], &s.Entries[s.index[m.B]]
		aWon := winners[i] == m.A
		x.Elo, y.Elo = tournament.Update(x.Elo, y.Elo, aWon, tournament.K(x.Wins+x.Losses), tournament.K(y.Wins+y.Losses))
		if aWon {
			x.Wins++
			y.Losses++
		} else {
			y.Wins++
			x.Losses++
		}
		s.Matches++
		if m.Debate {
			s.Debates++
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
	s.Usage = s.Usage.Add(out.Usage)
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
		s.Usage = s.Usage.Add(out.Usage)
		if n == m.Turns {
			return out.Winner
		}
	}
	return ""
}

func debateID(m tournament.Match) string { return "debate-" + m.A + "-" + m.B }

// metaReview asks for the recurring critique of the round; the next round's generation and
// reflection prompts carry it.
func (s *supervisor) metaReview(ctx workflow.Context, reviewed, debates []string) []research.Delegation {
	if len(reviewed) == 0 && len(debates) == 0 {
		return nil
	}
	if !s.mayStart(ctx) {
		return nil
	}
	in := activities.MetaReviewInput{Turn: s.turnInput(fmt.Sprintf("meta-review-round-%d", s.Rounds)), Round: s.Rounds, Hypotheses: reviewed, Debates: debates}
	var out activities.MetaReviewResult
	if s.turn(ctx, activities.AgentMetaReview, fmt.Sprintf("meta-review of round %d", s.Rounds), in.Turn, "", a.MetaReview, in, &out) != nil {
		return nil
	}
	s.Usage = s.Usage.Add(out.Usage)
	s.MetaRound = out.Round
	s.MetaCritiques = out.Critiques
	return out.Delegations
}

// watchTop counts the rounds the top stayed the same hypotheses (in any order: ratings
// inside the top keep moving): the supervisor's convergence signal.
func (s *supervisor) watchTop() {
	var top []string
	for _, e := range s.top(policy.TopK) {
		top = append(top, e.ID)
	}
	slices.Sort(top)
	if len(top) == policy.TopK && slices.Equal(top, s.LastTop) {
		s.TopStable++
	} else {
		s.TopStable = 0
	}
	s.LastTop = top
}

// finish ends the session: the scientist's last contributions, the research overview, a
// final checkpoint, the report, and the completed state.
func (s *supervisor) finish(ctx workflow.Context) (Result, error) {
	s.Reason = s.StopReason
	if s.graph {
		s.awaitSubagents(ctx)
	}
	s.storeAdded(ctx)
	s.storeImports(ctx)
	s.storeManualReviews(ctx)
	s.overview(ctx)
	if err := s.checkpoint(ctx, "final"); err != nil {
		s.note("no report: the final checkpoint failed: " + err.Error())
	} else {
		var path string
		rctx := workflow.WithActivityOptions(ctx, storeOptions("write the research report"))
		if err := workflow.ExecuteActivity(rctx, a.Report, activities.ReportInput{SessionID: s.id, Checkpoint: s.Checkpoints, MetaReviewRound: s.MetaRound}).Get(ctx, &path); err != nil {
			s.note("report failed: " + errorText(err))
		} else {
			s.reportPath = path
			s.note("report written to " + path)
		}
	}
	s.tellSuccessor(ctx)
	if s.graph {
		s.tellForeground(ctx)
	}
	s.move(ctx, "complete", (*session.Lifecycle).Complete, s.StopReason)
	s.publish(ctx)
	if workflow.GetVersion(ctx, versionFinalLog, workflow.DefaultVersion, 1) >= 1 {
		s.logTail(ctx)
	}
	// Let any update still in its handler answer before the run closes.
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return Result{
		SessionID:   s.id,
		State:       s.Life.State,
		StopReason:  s.StopReason,
		Hypotheses:  len(s.Entries),
		Top:         s.top(10),
		ReportPath:  s.reportPath,
		Checkpoint:  s.CheckpointPath,
		Usage:       s.Usage,
		ContinuedAs: s.Successor,
	}, nil
}

// versionFinalLog gates logTail for histories recorded before it.
const versionFinalLog = "final-log"

// logTail stores the events logged after the final checkpoint (its own record, the
// report, the completion), so the store's event log holds the whole session.
func (s *supervisor) logTail(ctx workflow.Context) {
	upTo := len(s.Events)
	if s.Persisted == upTo {
		return
	}
	lctx := workflow.WithActivityOptions(ctx, storeOptions("log the session's last events"))
	if err := workflow.ExecuteActivity(lctx, a.Log, activities.LogInput{SessionID: s.id, Events: s.Events[s.Persisted:upTo]}).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("the session's last events are not in its store log", "error", err)
		return
	}
	s.Persisted = upTo
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
	edges := slices.DeleteFunc(slices.Clone(s.Edges), func(e proximity.Edge) bool {
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
		s.Usage = s.Usage.Add(out.Usage)
	}
}

// checkpoint writes a snapshot of the session to the store.
func (s *supervisor) checkpoint(ctx workflow.Context, why string) error {
	s.CheckpointWanted = false
	if err := s.Life.BeginCheckpoint(); err != nil {
		return err
	}
	seq := s.Checkpoints + 1
	snap := s.snapshot(ctx, seq)
	if s.StopReason != "" {
		// The final checkpoint is the record of the finished session the report is made from.
		snap.State = session.Completed
	}
	upTo := len(s.Events)
	in := activities.CheckpointInput{Snapshot: snap, Events: s.Events[s.Persisted:upTo]}
	if s.graph && s.saved != nil {
		// Incremental: only what changed since the last checkpoint; the store merges.
		in.Base = s.Checkpoints
		for i, e := range s.Entries {
			if i >= len(s.saved) || !session.SameEntry(e, s.saved[i]) {
				in.Snapshot.Hypotheses = append(in.Snapshot.Hypotheses, e)
			}
		}
		in.Snapshot.Played = slices.Sorted(slices.Values(s.newPairs))
		in.Snapshot.Edges = s.Edges[s.savedEdges:]
	} else {
		in.Snapshot.Hypotheses = s.ranked()
		in.Snapshot.Played = workflow.DeterministicKeys(s.Played)
		in.Snapshot.Edges = s.Edges
	}
	cctx := workflow.WithActivityOptions(ctx, storeOptions(fmt.Sprintf("checkpoint %d (%s)", seq, why)))
	var path string
	err := workflow.ExecuteActivity(cctx, a.Checkpoint, in).Get(ctx, &path)
	if endErr := s.Life.EndCheckpoint(); endErr != nil {
		return endErr
	}
	if err != nil {
		s.log(session.Event{Kind: session.EventCheckpoint, Detail: fmt.Sprintf("checkpoint %d (%s) failed: %s", seq, why, errorText(err))})
		return errors.New(errorText(err))
	}
	s.Persisted = upTo
	s.trimEvents(eventsKept)
	s.markSaved()
	s.Checkpoints = seq
	s.CheckpointPath = path
	s.LastCheckpoint = session.Stamp(workflow.Now(ctx))
	s.LastCheckpointAt = workflow.Now(ctx)
	s.log(session.Event{Kind: session.EventCheckpoint, Detail: fmt.Sprintf("checkpoint %d (%s) written to %s", seq, why, path)})
	return nil
}

// snapshot is the session as a checkpoint records it, without the lists that grow with
// it (hypotheses, pairs, similarities): checkpoint adds them whole or as changes.
func (s *supervisor) snapshot(ctx workflow.Context, seq int) session.Snapshot {
	state := s.Life.Effective()
	p := s.progress(ctx)
	p.State, p.Checkpoints, p.LastCheckpoint = state, seq, session.Stamp(workflow.Now(ctx))
	return session.Snapshot{
		SessionID:   s.id,
		Seq:         seq,
		Time:        session.Stamp(workflow.Now(ctx)),
		State:       state,
		StopReason:  s.StopReason,
		ScientistID: s.req.ScientistID,
		Goal:        s.Goal,
		Refinements: s.Refinements,
		Config:      s.req.Config,
		Progress:    p,
		Usage:       s.Usage,
		StartedAt:   session.Stamp(s.StartedAt),

		Lineage:       &s.lineage,
		Plan:          s.Plan,
		Focus:         s.Focus,
		Feedback:      s.Feedback,
		MetaCritiques: s.MetaCritiques,
		NextID:        s.NextID,
		ReviewsBy:     s.ReviewsBy,
	}
}

// suspendBecause suspends the session on its own account (a spent budget, a failing
// provider or store), with the reason the scientist will see.
func (s *supervisor) suspendBecause(ctx workflow.Context, reason string) {
	s.move(ctx, "suspend", (*session.Lifecycle).Suspend, reason)
	s.SuspendedAt = workflow.Now(ctx)
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
		_ = workflow.Await(ctx, func() bool { return cond() || s.CheckpointWanted })
		if !s.CheckpointWanted {
			return
		}
		why := "requested"
		if s.graph && s.checkpointDue(ctx) {
			why = "interval"
		}
		_ = s.checkpoint(ctx, why)
	}
}

// mayStart waits while the session is suspended, then says whether a new turn may start:
// not once the session is ending, out of time or out of budget. In-flight turns finish.
func (s *supervisor) mayStart(ctx workflow.Context) bool {
	_ = workflow.Await(ctx, func() bool { return s.Life.Effective() != session.Suspended })
	return s.Life.Effective() == session.Active && !s.timeUp(ctx) && !s.budgetSpent()
}

func (s *supervisor) budgetSpent() bool {
	b := s.req.Config.TokenBudget
	return b > 0 && s.Usage.PromptTokens+s.Usage.CompletionTokens >= b
}

// timeUp reports whether the session has researched for its time limit. Time spent
// suspended does not count: a paused session keeps its budget.
func (s *supervisor) timeUp(ctx workflow.Context) bool {
	limit := time.Duration(s.req.Config.TimeLimit)
	return limit > 0 && s.activeTime(ctx) >= limit
}

func (s *supervisor) activeTime(ctx workflow.Context) time.Duration {
	now := workflow.Now(ctx)
	d := now.Sub(s.StartedAt) - s.PausedFor
	if s.Life.Effective() == session.Suspended {
		d -= now.Sub(s.SuspendedAt)
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
	stat := &s.Agents[slices.IndexFunc(s.Agents, func(st AgentStat) bool { return st.Agent == agent })]
	stat.Turns++
	ev := session.Event{Kind: session.EventTurn, Turn: t.TurnID, Hypothesis: hypothesis, Detail: summary}
	if err != nil {
		stat.Failed++
		s.TurnsFailed++
		s.Usage = s.Usage.Add(activities.SpentBy(err)) // a failed turn's tokens count too
		s.LastError = errorText(err)
		ev.Detail = summary + " failed: " + s.LastError
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == activities.ErrProviderAuth && s.Life.Effective() == session.Active {
			// Retrying cannot fix credentials: pause until a human does.
			defer s.suspendBecause(ctx, "the model provider refused the worker's credentials: "+app.Message()+
				". Fix the key in the worker's environment, restart the worker, then resume")
		}
	} else {
		stat.Succeeded++
	}
	s.log(ev)
	s.show(ctx)
	if s.graph && s.checkpointDue(ctx) {
		s.CheckpointWanted = true // written by the round's wait, between turns
	}
	return err
}

// checkpointDue says whether the session has researched for its checkpoint interval
// since the last checkpoint (or its start).
func (s *supervisor) checkpointDue(ctx workflow.Context) bool {
	since := s.LastCheckpointAt
	if since.IsZero() {
		since = s.StartedAt
	}
	return workflow.Now(ctx).Sub(since) >= time.Duration(s.req.Config.CheckpointInterval)
}

func (s *supervisor) turnInput(turnID string) activities.Turn {
	return activities.Turn{
		SessionID: s.id, TurnID: turnID, Goal: s.Goal,
		Provider: s.req.Config.Provider, Model: s.req.Config.Model, Seed: s.req.Config.Seed,
	}
}

// contextRef names the shared context a turn's prompt carries.
func (s *supervisor) contextRef() activities.ContextRef {
	return activities.ContextRef{Plan: s.Plan != "", MetaReviewRound: s.MetaRound, Focus: s.recent(s.Focus), Feedback: s.recent(s.Feedback)}
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
	s.NextID++
	return fmt.Sprintf("h-%04d", s.NextID)
}

func (s *supervisor) add(e session.Entry) {
	s.index[e.ID] = len(s.Entries)
	s.Entries = append(s.Entries, e)
}

// competing lists the ids still in the tournament, in the order they were made.
func (s *supervisor) competing() []string {
	var ids []string
	for _, e := range s.Entries {
		if e.Excluded == "" {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

func (s *supervisor) similarity(x, y string) float64 { return s.sim[pairKey(x, y)] }

// ranked returns every hypothesis by Elo, highest first, ties by id; excluded ones last.
func (s *supervisor) ranked() []session.Entry { return session.Rank(s.Entries) }

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
