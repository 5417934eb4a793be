package workflows

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// registerQueries installs the query handlers, first of all, so that even a session
// refused at start can be asked why.
func (s *supervisor) registerQueries(ctx workflow.Context) error {
	queries := map[string]any{
		QueryStatus:   func() (Status, error) { return s.status(), nil },
		QueryProgress: func() (session.Progress, error) { return s.progress(ctx), nil },
		QueryState:    func(p Page) (StateView, error) { return s.stateView(p), nil },
		QueryHistory:  func(p Page) (HistoryView, error) { return s.history(p), nil },
	}
	for _, name := range []string{QueryStatus, QueryProgress, QueryState, QueryHistory} {
		if err := workflow.SetQueryHandlerWithOptions(ctx, name, queries[name], workflow.QueryHandlerOptions{Description: Descriptions[name]}); err != nil {
			return err
		}
	}
	return nil
}

// registerCommands installs every command as an update (with a validator) and as a signal.
func (s *supervisor) registerCommands(ctx workflow.Context) error {
	for _, name := range Commands {
		err := workflow.SetUpdateHandlerWithOptions(ctx, name,
			func(ctx workflow.Context, arg converter.RawValue) (Status, error) {
				cmd, err := decodeCommand(name, arg)
				if err == nil {
					err = s.apply(ctx, cmd, "update")
				}
				st := s.status()
				st.Detail, s.lastDetail = s.lastDetail, ""
				return st, rejected(err)
			},
			workflow.UpdateHandlerOptions{Description: Descriptions[name], Validator: func(ctx workflow.Context, arg converter.RawValue) error {
				cmd, err := decodeCommand(name, arg)
				if err == nil {
					err = s.check(cmd)
				}
				return rejected(err)
			}})
		if err != nil {
			return err
		}
		// Signals carry the same commands without an answer. Each is received raw, so a
		// payload that does not decode is recorded as rejected instead of being dropped.
		ch := workflow.GetSignalChannelWithOptions(ctx, name, workflow.SignalChannelOptions{Description: Descriptions[name]})
		workflow.Go(ctx, func(ctx workflow.Context) {
			for {
				var arg converter.RawValue
				ch.Receive(ctx, &arg)
				cmd, err := decodeCommand(name, arg)
				if err != nil {
					s.logCommand(name, "signal", false, err.Error())
					continue
				}
				_ = s.apply(ctx, cmd, "signal")
			}
		})
	}
	return nil
}

// rejected marks a refused command for the client: not retryable, since sending the same
// command again in the same state gets the same answer.
func rejected(err error) error {
	if err == nil {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), "CommandRejected", nil)
}

// decodeCommand turns a raw signal or update argument (any payload, or none) into a command.
// workflowcheck flags JSON decoding (it uses reflection); decoding a given payload is pure.
//
//workflowcheck:ignore
func decodeCommand(name string, arg converter.RawValue) (session.Command, error) {
	var payload []byte
	if p := arg.Payload(); p != nil {
		var raw json.RawMessage
		if err := converter.GetDefaultDataConverter().FromPayload(p, &raw); err != nil {
			return session.Command{Name: name}, fmt.Errorf("%s: the argument is not JSON", name)
		}
		payload = raw
	}
	return session.ParseCommand(name, payload)
}

// check says whether a command would be accepted now, changing nothing (update validators
// must not change state).
func (s *supervisor) check(cmd session.Command) error {
	l := s.life
	switch cmd.Name {
	case Suspend:
		return l.Suspend()
	case Resume:
		if err := l.Resume(); err != nil {
			return err
		}
		if s.budgetSpent() {
			used := s.usage.PromptTokens + s.usage.CompletionTokens
			return fmt.Errorf("cannot resume: the token budget is spent (%d of %d tokens); raise it with set-budget first", used, s.req.Config.TokenBudget)
		}
		return nil
	case Terminate:
		return l.Terminate()
	}
	if err := l.CanSteer(cmd.Name); err != nil {
		return err
	}
	if cmd.Name == RefineGoal && cmd.Goal != "" {
		if err := research.ScreenGoal(cmd.Goal, s.req.Config.SafetyLevel); err != nil {
			return fmt.Errorf("cannot refine-goal: %w", err)
		}
	}
	if cmd.Name == Review {
		if _, ok := s.index[cmd.HypothesisID]; !ok {
			return fmt.Errorf("cannot review: the session has no hypothesis %q (see them with the state query)", cmd.HypothesisID)
		}
	}
	return nil
}

// apply carries out a scientist's command and records it, accepted or rejected.
func (s *supervisor) apply(ctx workflow.Context, cmd session.Command, via string) error {
	if err := s.check(cmd); err != nil {
		s.logCommand(cmd.Name, via, false, err.Error())
		return err
	}
	now := workflow.Now(ctx)
	detail := cmd.Reason
	switch cmd.Name {
	case Suspend:
		s.move(ctx, Suspend, (*session.Lifecycle).Suspend, orDefault(cmd.Reason, "suspended by the scientist"))
		s.suspendedAt = now
	case Resume:
		s.pausedFor += now.Sub(s.suspendedAt)
		s.move(ctx, Resume, (*session.Lifecycle).Resume, "resumed by the scientist")
	case Terminate:
		s.terminateReason = cmd.Reason
		s.move(ctx, Terminate, (*session.Lifecycle).Terminate, orDefault(cmd.Reason, "terminated by the scientist"))
	case RefineGoal:
		if cmd.Goal != "" {
			s.goal = cmd.Goal
		}
		if cmd.Focus != "" {
			s.focus = append(s.focus, cmd.Focus)
		}
		if cmd.Goal != "" || cmd.Focus != "" {
			s.refinements = append(s.refinements, session.Refinement{Time: session.Stamp(now), Goal: cmd.Goal, Focus: cmd.Focus})
		}
		detail = strings.TrimSpace("goal: " + orDefault(cmd.Goal, "(unchanged)") + "; focus: " + orDefault(cmd.Focus, "(none)"))
		if cmd.TokenBudget != nil {
			s.req.Config.TokenBudget = *cmd.TokenBudget
			detail += fmt.Sprintf("; token budget: %d", *cmd.TokenBudget)
		}
		// The spec's mid-session interaction: checkpoint the state the refinement applies to.
		s.checkpointWanted = true
	case Checkpoint:
		s.checkpointWanted = true
	case SetBudget:
		s.req.Config.TokenBudget = *cmd.TokenBudget
		detail = fmt.Sprintf("token budget: %d (used so far: %d)", *cmd.TokenBudget, s.usage.PromptTokens+s.usage.CompletionTokens)
	case AddHypothesis:
		id := s.newID()
		s.added = append(s.added, added{id: id, cmd: cmd})
		detail = id + ": " + cmd.Title
		s.lastDetail = "added as " + id + "; it enters the tournament next round"
	case Review:
		s.manualReviews = append(s.manualReviews, cmd)
		detail = cmd.HypothesisID + ": " + strings.TrimSpace(cmd.Verdict+" "+cmd.Critique)
		if cmd.Score != nil {
			detail += fmt.Sprintf(" (score %.1f)", *cmd.Score)
		}
	case Feedback:
		if cmd.Toward != "" {
			s.feedback = append(s.feedback, "toward: "+cmd.Toward)
		}
		if cmd.Away != "" {
			s.feedback = append(s.feedback, "away from: "+cmd.Away)
		}
		detail = strings.Join(s.feedback[max(0, len(s.feedback)-2):], "; ")
	}
	s.logCommand(cmd.Name, via, true, detail)
	return nil
}

// move applies one lifecycle change and records it.
func (s *supervisor) move(ctx workflow.Context, command string, change func(*session.Lifecycle) error, reason string) {
	before := s.life
	if err := change(&s.life); err != nil {
		s.note(err.Error())
		return
	}
	from, to := before.Effective(), s.life.Effective()
	if from == to && before.State == s.life.State {
		return
	}
	s.reason = reason
	s.updatedAt = workflow.Now(ctx)
	s.log(session.Event{Kind: session.EventTransition, From: string(from), To: string(to), Command: command, Detail: reason})
	s.show(ctx)
}

func (s *supervisor) logCommand(name, via string, accepted bool, detail string) {
	s.log(session.Event{Kind: session.EventCommand, Command: name, Via: via, Accepted: &accepted, Detail: detail})
}

func (s *supervisor) note(detail string) {
	s.log(session.Event{Kind: session.EventNote, Detail: detail})
}

// log appends to the session's own event log; handlers and the main loop share it, and
// workflow coroutines never run at the same time, so appends need no lock.
func (s *supervisor) log(e session.Event) {
	e.Seq = len(s.events) + 1
	e.Time = session.Stamp(s.now())
	s.events = append(s.events, e)
}

func (s *supervisor) status() Status {
	return Status{
		SessionID:   s.id,
		State:       s.life.State,
		After:       s.life.After,
		Reason:      s.reason,
		ScientistID: s.req.ScientistID,
		Goal:        s.goal,
		StartedAt:   session.Stamp(s.startedAt),
		UpdatedAt:   session.Stamp(s.updatedAt),
	}
}

func (s *supervisor) progress(ctx workflow.Context) session.Progress {
	elapsed := workflow.Now(ctx).Sub(s.startedAt)
	return session.Progress{
		HypothesesGenerated: len(s.entries),
		MaxHypotheses:       s.req.Config.MaxHypotheses,
		ReviewsCompleted:    s.reviews,
		MatchesPlayed:       s.matches,
		Debates:             s.debates,
		Evolved:             s.evolved,
		Added:               s.scientistAdded,
		Excluded:            len(s.entries) - len(s.competing()),
		MetaReviews:         s.metaRound,
		TokensUsed:          s.usage.PromptTokens + s.usage.CompletionTokens,
		Rounds:              s.rounds,
		TurnsFailed:         s.turnsFailed,
		Elapsed:             elapsed.Round(1e7).String(),
		ElapsedSeconds:      elapsed.Seconds(),
		LastCheckpoint:      s.lastCheckpoint,
		Checkpoints:         s.checkpoints,
		State:               s.life.State,
	}
}

func (s *supervisor) stateView(p Page) StateView {
	ranked := s.ranked()
	lo, hi, limit := p.bounds(len(ranked))
	return StateView{
		SessionID:   s.id,
		State:       s.life.State,
		Goal:        s.goal,
		Refinements: s.refinements,
		ScientistID: s.req.ScientistID,
		Config:      s.req.Config,
		Hypotheses:  ranked[lo:hi],
		Total:       len(ranked),
		Offset:      lo,
		Limit:       limit,
		Agents:      s.agents,
		TopShare:    s.topShare(),
		Plan:        s.plan,
		MetaReview:  s.metaCritiques,
		Usage:       s.usage,
		TokenBudget: s.req.Config.TokenBudget,
		StopReason:  s.stopReason,
	}
}

// topShare counts where the current top 10 came from.
func (s *supervisor) topShare() map[string]int {
	share := map[string]int{"generation": 0, "evolution": 0, "scientist": 0}
	for _, e := range s.top(10) {
		share[e.Origin]++
	}
	return share
}

func (s *supervisor) history(p Page) HistoryView {
	lo, hi, limit := p.bounds(len(s.events))
	return HistoryView{Events: s.events[lo:hi], Total: len(s.events), Offset: lo, Limit: limit}
}

// bounds clamps a page to a list of n items.
func (p Page) bounds(n int) (lo, hi, limit int) {
	limit = p.Limit
	if limit <= 0 {
		limit = DefaultPageLimit
	}
	limit = min(limit, MaxPageLimit)
	lo = min(max(p.Offset, 0), n)
	return lo, min(lo+limit, n), limit
}

// searchAttrs is what the session shows to visibility (`temporal workflow list --query`).
type searchAttrs struct {
	status string
	count  int64
	topElo float64
	tokens int64
}

// show refreshes what the Web UI shows after every step: the live details and, when it
// changed, the SessionStatus search attribute. While a checkpoint is written, visibility
// keeps the state the session returns to: checkpointing lasts milliseconds and is not worth
// two visibility updates.
func (s *supervisor) show(ctx workflow.Context) {
	workflow.SetCurrentDetails(ctx, s.details(ctx))
	if string(s.life.Effective()) != s.shown.status {
		s.publish(ctx)
	}
}

// publish updates every search attribute that changed. Counters move with every turn, so
// they are published once a round (and with every state change), not per turn: each
// update is an event in the session's history.
func (s *supervisor) publish(ctx workflow.Context) {
	workflow.SetCurrentDetails(ctx, s.details(ctx))
	now := searchAttrs{status: string(s.life.Effective()), count: int64(len(s.entries)), tokens: int64(s.usage.Tokens())}
	if top := s.top(1); len(top) > 0 {
		now.topElo = top[0].Elo
	}
	if now == s.shown {
		return
	}
	updates := []temporal.SearchAttributeUpdate{
		keyStatus.ValueSet(now.status),
		keyCount.ValueSet(now.count),
		keyTopElo.ValueSet(now.topElo),
		keyTokens.ValueSet(now.tokens),
	}
	if s.shown.status == "" {
		updates = append(updates, keyScientist.ValueSet(s.req.ScientistID))
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		workflow.GetLogger(ctx).Warn("cannot update search attributes", "error", err)
		return
	}
	s.shown = now
}

var (
	keyStatus    = temporal.NewSearchAttributeKeyKeyword(AttrSessionStatus)
	keyScientist = temporal.NewSearchAttributeKeyKeyword(AttrScientistID)
	keyCount     = temporal.NewSearchAttributeKeyInt64(AttrHypothesisCount)
	keyTopElo    = temporal.NewSearchAttributeKeyFloat64(AttrTopElo)
	keyTokens    = temporal.NewSearchAttributeKeyInt64(AttrTotalTokens)
)

// details is the live Markdown the Web UI shows for the running session.
func (s *supervisor) details(ctx workflow.Context) string {
	p := s.progress(ctx)
	var b strings.Builder
	b.WriteString("**" + string(s.life.State) + "**")
	if s.reason != "" {
		b.WriteString(" — " + s.reason)
	}
	b.WriteString("\n\n| round | hypotheses | reviews | matches | failed turns | checkpoints | elapsed |\n|---|---|---|---|---|---|---|\n")
	b.WriteString(fmt.Sprintf("| %d | %d/%d | %d | %d | %d | %d | %s |\n", p.Rounds, p.HypothesesGenerated, p.MaxHypotheses,
		p.ReviewsCompleted, p.MatchesPlayed, p.TurnsFailed, p.Checkpoints, p.Elapsed))
	b.WriteString("\n| agent | turns | failed |\n|---|---|---|\n")
	for _, st := range s.agents {
		b.WriteString(fmt.Sprintf("| %s | %d | %d |\n", st.Agent, st.Turns, st.Failed))
	}
	if s.plan != "" {
		b.WriteString("\n**Plan:** " + s.plan + "\n")
	}
	if len(s.metaCritiques) > 0 {
		b.WriteString(fmt.Sprintf("\n**Meta-review (round %d):** %s\n", s.metaRound, strings.Join(s.metaCritiques, "; ")))
	}
	if top := s.top(5); len(top) > 0 {
		b.WriteString("\n| rank | hypothesis | origin | Elo | W-L |\n|---|---|---|---|---|\n")
		for i, e := range top {
			b.WriteString(fmt.Sprintf("| %d | %s %s | %s/%s | %.0f | %d-%d |\n", i+1, e.ID, strings.ReplaceAll(e.Title, "|", "/"),
				e.Origin, e.Strategy, e.Elo, e.Wins, e.Losses))
		}
	}
	return b.String()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
