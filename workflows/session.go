package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// The shape of a research round. A batch is small so that suspend, refine-goal and the
// time limit take effect within one round.
const (
	batchSize        = 4
	matchesPerPlayer = 3
	// After this many rounds in a row that produced no hypothesis the provider is clearly
	// failing: the session suspends with the last error instead of spinning.
	maxBarrenRounds = 3
)

// a is only used to name activities; Temporal calls the worker's registered instance.
var a *activities.Activities

// ResearchSession is the co-scientist's supervisor: one workflow per research session.
// It plans rounds of generation, reflection and ranking until the session has its
// hypotheses, runs out of time, or the scientist ends it; then it writes a final checkpoint
// and the report.
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
	refinements []session.Refinement

	life        session.Lifecycle
	reason      string // why the session is in its state (suspend reason, stop reason)
	startedAt   time.Time
	updatedAt   time.Time
	suspendedAt time.Time
	pausedFor   time.Duration // time spent suspended, which the time limit does not count

	entries []session.Entry
	index   map[string]int // hypothesis id -> position in entries
	played  map[string]bool
	nextID  int

	generated, reviews, matches, rounds, turnsFailed, barren int
	checkpoints                                              int
	lastCheckpoint, checkpointPath                           string
	checkpointWanted                                         bool
	usage                                                    research.Usage
	agents                                                   []AgentStat
	lastError                                                string
	terminateReason, stopReason                              string

	events    []session.Event
	persisted int // events[:persisted] are in the store's event log

	shown      searchAttrs // what visibility last saw
	reportPath string
	now        func() time.Time // workflow time, for records made outside a context
}

func newSupervisor(ctx workflow.Context, req research.Request) *supervisor {
	now := workflow.Now(ctx)
	return &supervisor{
		id:        workflow.GetInfo(ctx).WorkflowExecution.ID,
		req:       req,
		goal:      req.ResearchGoal,
		life:      session.New(),
		startedAt: now,
		updatedAt: now,
		index:     map[string]int{},
		played:    map[string]bool{},
		agents:    []AgentStat{{Agent: "generation"}, {Agent: "reflection"}, {Agent: "ranking"}},
		now:       func() time.Time { return workflow.Now(ctx) },
	}
}

// shouldStop names the reason to end the session, or returns "".
func (s *supervisor) shouldStop(ctx workflow.Context) string {
	switch {
	case s.life.Effective() == session.Terminating:
		if s.terminateReason != "" {
			return "terminated by the scientist: " + s.terminateReason
		}
		return "terminated by the scientist"
	case s.generated >= s.req.Config.MaxHypotheses:
		return fmt.Sprintf("reached max_hypotheses (%d)", s.req.Config.MaxHypotheses)
	case s.timeUp(ctx):
		return fmt.Sprintf("reached time_limit (%s of research)", s.req.Config.TimeLimit)
	}
	return ""
}

// round is one pass of the research loop: generate a batch, review it, and let it play
// its first tournament matches. A checkpoint closes the round.
func (s *supervisor) round(ctx workflow.Context) {
	s.rounds++
	n := min(batchSize, s.req.Config.MaxHypotheses-s.generated)
	fresh := s.generate(ctx, n)
	s.review(ctx, fresh)
	s.tournament(ctx, fresh)
	s.show(ctx)

	if len(fresh) == 0 {
		s.barren++
		if s.barren >= maxBarrenRounds && s.life.Effective() == session.Active {
			s.move(ctx, "suspend", (*session.Lifecycle).Suspend, fmt.Sprintf(
				"no hypothesis came out of %d rounds; last error: %s. Fix the provider, then resume", s.barren, s.lastError))
			s.suspendedAt = workflow.Now(ctx)
			s.barren = 0
		}
	} else {
		s.barren = 0
	}
	if err := s.checkpoint(ctx, fmt.Sprintf("round %d", s.rounds)); err != nil && s.life.Effective() == session.Active {
		s.move(ctx, "suspend", (*session.Lifecycle).Suspend,
			"checkpoint failed: "+err.Error()+". Fix the session store, then resume")
		s.suspendedAt = workflow.Now(ctx)
	}
}

// generate asks for n new hypotheses at once and returns the ids of those that arrived.
func (s *supervisor) generate(ctx workflow.Context, n int) []string {
	ids := make([]string, n)
	s.parallel(ctx, n, func(ctx workflow.Context, i int) {
		if !s.mayStart(ctx) {
			return
		}
		s.nextID++
		id := fmt.Sprintf("h-%04d", s.nextID)
		in := activities.GenerateInput{
			Turn:         s.turnInput("generate-" + id),
			HypothesisID: id,
			Focus:        s.recentFocus(),
		}
		summary := fmt.Sprintf("generate hypothesis %d/%d (%s)", s.generated+i+1, s.req.Config.MaxHypotheses, id)
		var out activities.GenerateResult
		if s.turn(ctx, "generation", summary, in.Turn, id, a.Generate, in, &out) != nil {
			return
		}
		s.usage = s.usage.Add(out.Usage)
		s.add(session.Entry{ID: id, Title: out.Title, Origin: "generation", Round: s.rounds, Elo: tournament.InitialElo})
		ids[i] = id
	})
	return slices.DeleteFunc(ids, func(id string) bool { return id == "" })
}

// review runs every enabled review type on each new hypothesis.
func (s *supervisor) review(ctx workflow.Context, ids []string) {
	types := s.req.Config.ReviewTypes
	s.parallel(ctx, len(ids)*len(types), func(ctx workflow.Context, i int) {
		id, typ := ids[i/len(types)], types[i%len(types)]
		if !s.mayStart(ctx) {
			return
		}
		in := activities.ReviewInput{Turn: s.turnInput("review-" + id + "-" + typ), HypothesisID: id, Type: typ}
		var out activities.ReviewResult
		if s.turn(ctx, "reflection", fmt.Sprintf("review %s (%s)", id, typ), in.Turn, id, a.Review, in, &out) != nil {
			return
		}
		s.usage = s.usage.Add(out.Usage)
		e := &s.entries[s.index[id]]
		e.Score = (e.Score*float64(e.Reviews) + out.Score) / float64(e.Reviews+1)
		e.Reviews++
		s.reviews++
	})
}

// tournament lets each new hypothesis play its first matches against the closest-rated
// hypotheses it has not met. Matches run at once; Elo updates apply afterwards in the
// pairing order, so the ratings do not depend on which match finished first.
func (s *supervisor) tournament(ctx workflow.Context, fresh []string) {
	players := make([]tournament.Player, len(s.entries))
	for i, e := range s.entries {
		players[i] = tournament.Player{ID: e.ID, Elo: e.Elo, Matches: e.Wins + e.Losses}
	}
	pairs := tournament.Pair(players, fresh, matchesPerPlayer, func(x, y string) bool { return s.played[pairKey(x, y)] })
	winners := make([]string, len(pairs))
	s.parallel(ctx, len(pairs), func(ctx workflow.Context, i int) {
		m := pairs[i]
		if !s.mayStart(ctx) {
			return
		}
		in := activities.CompareInput{Turn: s.turnInput("match-" + m.A + "-" + m.B), A: m.A, B: m.B}
		var out activities.CompareResult
		if s.turn(ctx, "ranking", fmt.Sprintf("match %s vs %s", m.A, m.B), in.Turn, m.A, a.Compare, in, &out) != nil {
			return
		}
		s.usage = s.usage.Add(out.Usage)
		winners[i] = out.Winner
	})
	for i, m := range pairs {
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
	}
}

// finish ends the session: a final checkpoint, the report, and the completed state.
func (s *supervisor) finish(ctx workflow.Context) (Result, error) {
	s.reason = s.stopReason
	if err := s.checkpoint(ctx, "final"); err != nil {
		s.note("no report: the final checkpoint failed: " + err.Error())
	} else {
		var path string
		rctx := workflow.WithActivityOptions(ctx, storeOptions("write the research report"))
		if err := workflow.ExecuteActivity(rctx, a.Report, activities.ReportInput{SessionID: s.id, Checkpoint: s.checkpoints}).Get(ctx, &path); err != nil {
			s.note("report failed: " + errorText(err))
		} else {
			s.reportPath = path
			s.note("report written to " + path)
		}
	}
	s.move(ctx, "complete", (*session.Lifecycle).Complete, s.stopReason)
	s.show(ctx)
	// Let any update still in its handler answer before the run closes.
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return Result{
		SessionID:  s.id,
		State:      s.life.State,
		StopReason: s.stopReason,
		Hypotheses: len(s.entries),
		Top:        s.ranked()[:min(10, len(s.entries))],
		ReportPath: s.reportPath,
		Checkpoint: s.checkpointPath,
		Usage:      s.usage,
	}, nil
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
// not once the session is ending or out of time. In-flight turns always finish.
func (s *supervisor) mayStart(ctx workflow.Context) bool {
	_ = workflow.Await(ctx, func() bool { return s.life.Effective() != session.Suspended })
	return s.life.Effective() == session.Active && !s.timeUp(ctx)
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
	actx := workflow.WithActivityOptions(ctx, turnOptions(summary))
	err := workflow.ExecuteActivity(actx, fn, in).Get(ctx, out)
	stat := &s.agents[slices.IndexFunc(s.agents, func(st AgentStat) bool { return st.Agent == agent })]
	stat.Turns++
	ev := session.Event{Kind: session.EventTurn, Turn: t.TurnID, Hypothesis: hypothesis, Detail: summary}
	if err != nil {
		stat.Failed++
		s.turnsFailed++
		s.lastError = errorText(err)
		ev.Detail = summary + " failed: " + s.lastError
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

// recentFocus is the scientist's latest focus refinements, newest last; a few are enough
// to steer a prompt, and the payload stays small however often the goal is refined.
func (s *supervisor) recentFocus() []string {
	return slices.Clone(s.focus[max(0, len(s.focus)-5):])
}

func (s *supervisor) add(e session.Entry) {
	s.index[e.ID] = len(s.entries)
	s.entries = append(s.entries, e)
	s.generated++
}

// ranked returns the hypotheses by Elo, highest first; ties by id.
func (s *supervisor) ranked() []session.Entry {
	out := slices.Clone(s.entries)
	slices.SortStableFunc(out, func(x, y session.Entry) int {
		if x.Elo != y.Elo {
			if x.Elo > y.Elo {
				return -1
			}
			return 1
		}
		if x.ID < y.ID {
			return -1
		}
		if x.ID > y.ID {
			return 1
		}
		return 0
	})
	return out
}

func pairKey(x, y string) string {
	if x > y {
		x, y = y, x
	}
	return x + "|" + y
}

// turnOptions: a model turn may take minutes, but a dead worker is noticed within the
// heartbeat timeout. Temporal's retry policy is the only retry mechanism.
func turnOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		Summary:             summary,
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{activities.ErrMalformedAnswer, activities.ErrUnknownProvider},
		},
	}
}

// storeOptions: checkpoints and reports touch only local disk.
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
