package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/policy"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

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
	if err := s.start(ctx, carried); err != nil {
		return Result{}, err
	}
	if s.Life.State.Terminal() {
		return s.closed(ctx)
	}
	return s.research(ctx)
}

// start brings the session to its first round, in one of three ways: a new session; the
// next run of one that continued as new (carried); or a session continued or forked from
// another's checkpoint (restored). It installs the queries at once and the commands as
// soon as the session can take them: the SDK runs updates that arrived before their
// handler as soon as it is set, and they must find an active session, or, while a
// restored session waits on its parent's checkpoint, be refused until it is active.
// Nothing before the commands are installed blocks, so no command is missed.
func (s *supervisor) start(ctx workflow.Context, carried *Carried) error {
	if err := s.registerQueries(ctx); err != nil {
		return err
	}
	s.graph = since(ctx, versionGraph)
	s.ledger = since(ctx, versionLedger)
	s.budgets = since(ctx, versionBudget)
	// A new session's ratings are fitted; a restored one's as its parent's were (restore).
	s.canFit = since(ctx, versionFitted) && s.ledger
	s.exactCap = since(ctx, versionExactCap)
	s.notifies = since(ctx, versionNotify)
	s.compute = since(ctx, versionCompute)
	s.remarking = since(ctx, versionConversation)
	s.needsMemo = since(ctx, versionNeedsMemo)
	s.lab = since(ctx, versionLab)
	s.labTool = s.lab && since(ctx, versionLabTool)
	if carried != nil {
		if err := s.load(ctx, *carried); err != nil {
			return err
		}
		if !s.Life.State.Terminal() {
			s.note(fmt.Sprintf("run %d of the session: continued as new with %d hypotheses", s.Runs+1, len(s.Entries)))
		}
		if err := s.registerCommands(ctx); err != nil {
			return err
		}
		if s.remarking {
			s.readTexts(ctx) // after the handlers: a message sent meanwhile is not missed
		}
		return nil
	}
	if err := s.joinGraph(ctx); err != nil {
		return s.refuse(ctx, err)
	}
	restored := s.lineage.Relation == lineage.Continue || s.lineage.Relation == lineage.Fork
	if s.canFit && !restored {
		s.Rating = session.RatingFitted
	}
	if restored {
		if err := s.registerCommands(ctx); err != nil {
			return err
		}
		if err := s.restore(ctx); err != nil {
			return s.refuse(ctx, err)
		}
		if s.remarking && s.lineage.Relation == lineage.Continue {
			s.Earlier = s.lineage.Parent // its conversation goes on here: the converse turns read it
		}
	}
	if err := s.req.Validate(); err != nil {
		return s.refuse(ctx, err)
	}
	s.move(ctx, "start", (*session.Lifecycle).Start, "session started")
	if !restored {
		if err := s.registerCommands(ctx); err != nil {
			return err
		}
	}
	// The first thing a session with tools does: check that the workers offer them.
	if err := s.checkTools(ctx); err != nil {
		return s.refuse(ctx, err)
	}
	return nil
}

// research is the supervisor's loop, then the end of the session.
func (s *supervisor) research(ctx workflow.Context) (Result, error) {
	for {
		// Suspension pauses here between rounds (and inside a round before each turn).
		s.wait(ctx, func() bool { return s.Life.Effective() != session.Suspended })
		if s.StopReason = s.shouldStop(ctx); s.StopReason != "" {
			// Experiments waiting for the lab hold the session open (experiments_wait.go).
			waited, err := s.waitForLab(ctx)
			if err != nil {
				return Result{}, err
			}
			if waited {
				s.StopReason = ""
				continue
			}
			break
		}
		if s.continueAsNewDue(ctx) {
			// A turn waiting for the scientist cannot move to the next run: wait for it.
			s.wait(ctx, func() bool { return s.toolTurns == 0 })
			if err := s.continueAsNew(ctx); err != nil {
				return Result{}, err
			}
			continue // it could not: the session suspended until its store is fixed
		}
		if d := policy.Decide(s.stats()); d.Suspend {
			s.suspendBecause(ctx, d.Reason)
			s.Refused = "" // a resume tries again, with the budget the scientist gave
			continue
		}
		if s.awaitingOnlyInFlight() {
			s.awaitInFlight(ctx)
			continue
		}
		if beforeRound != nil {
			beforeRound(ctx, s)
		}
		s.round(ctx)
		if s.lab && len(s.Experiments) > 0 {
			s.applyStandings() // whatever the round's ranking read back, the lab's verdicts stand
		}
	}
	return s.finish(ctx)
}

// refuse ends a session that cannot start: its request is invalid, or the checkpoint it
// was to start from cannot be had.
func (s *supervisor) refuse(ctx workflow.Context, err error) error {
	s.move(ctx, "fail", (*session.Lifecycle).Fail, "invalid request: "+err.Error())
	return temporal.NewNonRetryableApplicationError("invalid research session: "+err.Error(), "InvalidRequest", err)
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
	ledger  bool // the tournament's pairs and graph live in the store (ledger.go)
	budgets bool // budgets count the calls in flight and the next call's estimate (budget.go)
	// inFlight is what the calls under way are expected to spend (budget.go); zero
	// between rounds, so no run hands any over.
	inFlight research.Usage
	// Batch is the provider batch a step waits for (batch.go); nil between steps.
	Batch  *session.BatchWait
	canFit bool // this version fits ratings; whether the session does is Carried.Rating
	// exactCap: max_hypotheses holds on every path (limits.go); making counts the
	// generation and evolution turns running, whose hypotheses will count against it.
	exactCap bool
	making   int
	notifies bool // the session tells the worker's webhook when it needs a person or ends (notify.go)
	// needsMemo: the session keeps what it waits for its scientist for in its memo (needs.go).
	needsMemo bool
	compute   bool // fits and the report run on ComputeQueue (compute.go)

	index map[string]int     // hypothesis id -> position in Entries
	sim   map[string]float64 // activities.PairKey -> similarity, from the proximity agent's Edges

	signals []signal // the channels drainSignals empties before continuing as new

	// What the last checkpoint holds, so the next one sends only the changes (see
	// session.Merge); saved is nil until a checkpoint of this run (or the one that
	// continued as new just before it) was written.
	saved      []session.Entry
	savedEdges int
	newPairs   []string
	lastDetail string              // what the command being applied did, for its update's answer
	stopWatch  workflow.CancelFunc // stops watching an unavailable store (faults.go); nil when not watching
	// autoResumed: the session resumed itself after a store fault and has not checkpointed
	// since; storeFlaps: how often the store failed again right after such a resume.
	autoResumed bool
	storeFlaps  int
	now         func() time.Time // workflow time, for records made outside a context
	// Tool-using turns in flight, the calls that wait for the scientist, and whether the
	// session is ending (waiting calls are then refused).
	toolTurns    int
	Waiting      []Waiting
	closingTools bool
	// The conversation (conversation.go): the latest messages' texts, for the query, and
	// whether the agents' prompts carry the scientist's remarks (versionConversation).
	texts     map[string]string
	remarking bool
	// lab: the session takes the lab's data and experiments, and waits for the lab before
	// it ends (versionLab); labMoves counts the lab's accepted updates, which wake the wait.
	lab      bool
	labMoves int
	labTool  bool // the tool-using turns may analyse the session's tables (labtool.go)
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
	// RankingAt, when above 0, says Entries is in checkpoint RankingAt instead, for the next
	// run to read back (ledger.go).
	RankingAt int `json:"ranking_at,omitempty"`
	// The pairs that met and the similarities: all of them before the ledger; since, those
	// the last checkpoint does not hold yet.
	Played pairSet  `json:"played,omitempty"` // activities.PairKey -> the pair has met
	Edges  edgeList `json:"edges,omitempty"`  // similarities, in the order they were found
	NextID int      `json:"next_id"`

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

	MetaRound     int      `json:"meta_round"`
	MetaCritiques []string `json:"meta_critiques,omitempty"`
	LastTop       []string `json:"last_top,omitempty"`
	TopStable     int      `json:"top_stable"`
	// Rating is session.RatingFitted when the ratings are fitted (rating.go), decided at
	// the session's start; Results are the matches judged since the last checkpoint,
	// Boundary and LastBoundary the top's boundary standard error now and a round ago.
	Rating           string              `json:"rating,omitempty"`
	Results          []tournament.Result `json:"results,omitempty"`
	Boundary         float64             `json:"boundary_se,omitempty"`
	Scheduled        int                 `json:"scheduled,omitempty"` // matches scheduled, to number them (tournament.Match.N)
	LastBoundary     float64             `json:"last_boundary_se,omitempty"`
	Checkpoints      int                 `json:"checkpoints"`
	LastCheckpoint   string              `json:"last_checkpoint,omitempty"`
	LastCheckpointAt time.Time           `json:"last_checkpoint_at"`
	CheckpointPath   string              `json:"checkpoint_path,omitempty"`
	CheckpointWanted bool                `json:"checkpoint_wanted,omitempty"`
	Usage            research.Usage      `json:"usage"`
	// Refused is why the budget refused a call this round (budget.go): the session
	// suspends with it after the round.
	Refused string `json:"refused,omitempty"`
	// BatchSeq numbers the session's provider batches, for their names; NoBatchAPI says
	// why the session's provider has no batch API, once a batch was refused for it.
	BatchSeq        int         `json:"batch_seq,omitempty"`
	NoBatchAPI      string      `json:"no_batch_api,omitempty"`
	Agents          []AgentStat `json:"agents"`
	LastError       string      `json:"last_error,omitempty"`
	TerminateReason string      `json:"terminate_reason,omitempty"`
	StopReason      string      `json:"stop_reason,omitempty"`

	// Events is the tail of the session's own log: the events not yet in the store
	// (Events[Persisted:]) and the latest ones the history query serves from memory.
	// Events[0] has Seq EventBase+1; the earlier ones are in the store's event log.
	Events    []session.Event `json:"events"`
	Persisted int             `json:"persisted"`
	EventBase int             `json:"event_base,omitempty"`

	Shown searchAttrs `json:"shown"` // what visibility last saw
	// NeedsShown is what the needs memo last said (needs.go); OwnSuspension why the
	// session suspended itself, until it resumes.
	NeedsShown    session.Needs `json:"needs_shown,omitzero"`
	OwnSuspension string        `json:"own_suspension,omitempty"`
	// Runs counts the runs before this one (continue-as-new generations).
	Runs int `json:"runs,omitempty"`
	// Fresh says the latest checkpoint holds the whole state carried over, so the next
	// run's first checkpoint can be incremental too.
	Fresh bool `json:"fresh,omitempty"`
	// Successor is the session that continues this one, once it asked for the hand-over.
	Successor string `json:"successor,omitempty"`
	// ReportPath is where the finished session's report is.
	ReportPath string `json:"report_path,omitempty"`
	// Subagents the session forked (Forks counts them, for their ids), and the hypotheses
	// their results bring into the tournament next round.
	Forks     int           `json:"forks,omitempty"`
	Subagents []SubagentRef `json:"subagents,omitempty"`
	// Delegated is the tasks finished subagents did, "task hypothesis-id", once a run that
	// continued as new has dropped their records.
	Delegated []string `json:"delegated,omitempty"`
	Imports   []Import `json:"imports,omitempty"`

	// Tool use: calls made, those that failed or returned a tool error, whether the
	// session's tool budget is spent, and how many calls waited for the scientist (to
	// name the next one). Late are hypotheses whose turns waited for the scientist and
	// finished after their round's step: the next round takes them in.
	ToolCalls  int      `json:"tool_calls,omitempty"`
	ToolErrors int      `json:"tool_errors,omitempty"`
	ToolsSpent bool     `json:"tools_spent,omitempty"`
	CallSeq    int      `json:"call_seq,omitempty"`
	Late       []string `json:"late,omitempty"`
	// ApproveServers are the session's tool servers whose every call waits for the
	// scientist, as the workers' tools file said at the session's start (an external
	// server, unless it says approve: false).
	ApproveServers []string `json:"approve_servers,omitempty"`
	// Trusted are the tools the scientist trusted for the session (trust-tool): their
	// calls do not wait for approval, whatever approve_tools and the servers say.
	Trusted []session.Trust `json:"trusted,omitempty"`
	// ClusterAt is the cluster threshold of the measure the proximity agent compares by
	// (0: the lexical one).
	ClusterAt float64 `json:"cluster_at,omitempty"`

	// The conversation with the scientist (conversation.go): Messages numbers them;
	// Conversation holds the latest (ids, who, when, proposals and their status; the
	// texts are in the store), ConversationBase counts the older ones, in the store only.
	// Earlier is the session this one continues, whose conversation it can read.
	Messages         int               `json:"messages,omitempty"`
	Conversation     []session.Message `json:"conversation,omitempty"`
	ConversationBase int               `json:"conversation_base,omitempty"`
	Earlier          string            `json:"earlier,omitempty"`

	// The lab (experiments.go): the session's tables (names, digests, arrival marks), its
	// experiments with their plans, states and results, and the count that names them.
	Datasets      []LabDataset    `json:"datasets,omitempty"`
	Experiments   []LabExperiment `json:"experiments,omitempty"`
	ExperimentSeq int             `json:"experiment_seq,omitempty"`
	// HistoryBase is the history events of the session's earlier runs, so that the lab's
	// marks (experiment.Mark.Event) order across continue-as-new: a new run's event ids
	// start again from 1.
	HistoryBase int64 `json:"history_base,omitempty"`
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

// load takes over the state a previous run carried, reads back the hypotheses it left in
// its last checkpoint, and rebuilds what derives from them.
func (s *supervisor) load(ctx workflow.Context, c Carried) error {
	s.Carried = c
	if s.Played == nil {
		s.Played = pairSet{}
	}
	if s.ReviewsBy == nil {
		s.ReviewsBy = map[string]int{}
	}
	if at := s.RankingAt; at > 0 {
		entries, err := s.readRanking(ctx, activities.CheckpointRef{Session: s.id, Seq: at})
		if err != nil {
			return err
		}
		s.Entries, s.RankingAt = entries, 0
	}
	if s.lab && len(s.Experiments) > 0 {
		s.applyStandings()
	}
	s.reindex()
	if s.Fresh {
		s.markSaved()
	}
	return nil
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
	case s.historyBudgetSpent(ctx):
		info := workflow.GetInfo(ctx)
		return fmt.Sprintf("reached the workflow history budget (%d events, %d MB): the session ends before Temporal's limits",
			info.GetCurrentHistoryLength(), info.GetCurrentHistorySize()>>20)
	case len(s.Added) > 0 || len(s.ManualReviews) > 0:
		return "" // the scientist's work gets a round of its own
	case s.exactCap && len(s.Late) > 0:
		return "" // so do hypotheses that came in late: they are reviewed and ranked like any other
	}
	if d := policy.Decide(s.stats()); d.Stop {
		return d.Reason
	}
	return ""
}

// stats is what the supervisor's policy reads.
func (s *supervisor) stats() policy.Stats {
	st := policy.Stats{
		Round:             s.Rounds,
		Hypotheses:        s.made(), // the scientist's own do not count against the limit
		Max:               s.req.Config.MaxHypotheses,
		Evolved:           s.Evolved,
		MetaReviews:       s.MetaRound,
		TopStableRounds:   s.TopStable,
		ConvergenceRounds: s.req.Config.ConvergenceRounds,
		TopK:              s.topK(),
		Fitted:            s.fitted(),
		TokensUsed:        s.Usage.PromptTokens + s.Usage.CompletionTokens,
		TokenBudget:       s.req.Config.TokenBudget,
		OverBudget:        s.Refused,
	}
	if s.exactCap {
		st.InFlight = s.making
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
