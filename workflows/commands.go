package workflows

// The scientist's commands, as signals and as updates: decoding, validation, and applying
// them to the session's lifecycle; and the session's own event log.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// registerCommands installs every command as an update (with a validator) and as a signal.
func (s *supervisor) registerCommands(ctx workflow.Context) error {
	for _, name := range Commands {
		err := workflow.SetUpdateHandlerWithOptions(ctx, name,
			func(ctx workflow.Context, arg converter.RawValue) (Status, error) {
				cmd, err := decodeCommand(name, arg)
				if err == nil {
					cmd.Update = s.updateID(ctx)
					cmd.Signs = commandDigest(cmd)
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
		s.listen(ctx, name, func(ctx workflow.Context, arg converter.RawValue) {
			cmd, err := decodeCommand(name, arg)
			if err != nil {
				s.logCommand(cmd, "signal", false, err.Error())
				return
			}
			_ = s.apply(ctx, cmd, "signal")
		})
	}
	// Signals between sessions: a successor asking this session to hand over, and messages.
	s.listen(ctx, HandOver, func(ctx workflow.Context, arg converter.RawValue) {
		var req HandOverRequest
		if err := decodeSignal(arg, &req); err != nil {
			s.logCommand(session.Command{Name: HandOver}, "signal", false, err.Error())
			return
		}
		s.handOver(ctx, req)
	})
	s.listen(ctx, Message, func(ctx workflow.Context, arg converter.RawValue) {
		var m SessionMessage
		if err := decodeSignal(arg, &m); err != nil || strings.TrimSpace(m.Text) == "" {
			s.logCommand(session.Command{Name: Message}, "signal", false, "message: not a {\"from\", \"type\", \"text\"} object with a text")
			return
		}
		s.receive(m)
	})
	if err := s.registerConversation(ctx); err != nil {
		return err
	}
	return s.registerLab(ctx)
}

// signal is a signal channel the session listens on, with what it does with each signal.
type signal struct {
	ch     workflow.ReceiveChannel
	handle func(ctx workflow.Context, arg converter.RawValue)
}

// listen handles every signal of one name as it arrives, in a coroutine of its own. The
// handlers do not block, so a signal is applied whole before anything else runs; before
// continuing as new, drainSignals applies what is still in the channels.
func (s *supervisor) listen(ctx workflow.Context, name string, handle func(workflow.Context, converter.RawValue)) {
	ch := workflow.GetSignalChannelWithOptions(ctx, name, workflow.SignalChannelOptions{Description: Descriptions[name]})
	s.signals = append(s.signals, signal{ch: ch, handle: handle})
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var arg converter.RawValue
			ch.Receive(ctx, &arg)
			handle(ctx, arg)
		}
	})
}

// decodeSignal decodes a raw signal argument into v.
//
//workflowcheck:ignore
func decodeSignal(arg converter.RawValue, v any) error {
	if arg.Payload() == nil {
		return fmt.Errorf("no argument")
	}
	return converter.GetDefaultDataConverter().FromPayload(arg.Payload(), v)
}

// receive records a message from another session; its text steers the next prompts like
// the scientist's feedback.
func (s *supervisor) receive(m SessionMessage) {
	text := strings.TrimSpace(m.Text)
	if len(text) > maxMessage {
		text = strings.ToValidUTF8(text[:maxMessage], "") + "…" // never half a character
	}
	s.Feedback = append(s.Feedback, "from "+orDefault(m.From, "another session")+": "+text)
	s.log(session.Event{Kind: session.EventMessage, Session: m.From, Detail: text})
}

// maxMessage bounds a message's text in the session's state, in bytes.
const maxMessage = 2000

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
	l := s.Life
	switch cmd.Name {
	case Suspend:
		return l.Suspend()
	case Resume:
		if err := l.Resume(); err != nil {
			return err
		}
		if s.budgetSpent() {
			used := s.Usage.PromptTokens + s.Usage.CompletionTokens
			return fmt.Errorf("cannot resume: the token budget is spent (%d of %d tokens); raise it with set-budget first", used, s.req.Config.TokenBudget)
		}
		if s.budgets {
			// A resume that could not pay for one more call would suspend again at once.
			if why := s.budget().Refuses("model", s.Usage, s.inFlight, s.expected("")); why != "" {
				return errors.New("cannot resume: " + why)
			}
		}
		return nil
	case Terminate:
		return l.Terminate()
	}
	toolCommand := cmd.Name == AnswerTool || cmd.Name == TrustTool || cmd.Name == UntrustTool
	if toolCommand && !l.State.Terminal() {
		// A call waits while its turn runs: while the session is active, suspended or
		// ending alike.
	} else if err := l.CanSteer(cmd.Name); err != nil {
		return err
	}
	if cmd.Name == TrustTool || cmd.Name == UntrustTool {
		return s.checkTrust(cmd)
	}
	if cmd.Name == RefineGoal && cmd.Goal != "" {
		if err := research.ScreenGoal(cmd.Goal, s.req.Config.SafetyLevel); err != nil {
			return fmt.Errorf("cannot refine-goal: %w", err)
		}
	}
	if cmd.Name == AnswerTool {
		if !slices.ContainsFunc(s.Waiting, func(w Waiting) bool { return w.ID == cmd.Call && w.Decision == "" }) {
			return s.noSuchCall(cmd.Call)
		}
		return nil
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
		s.logCommand(cmd, via, false, err.Error())
		return err
	}
	now := workflow.Now(ctx)
	detail := cmd.Reason
	switch cmd.Name {
	case Suspend:
		s.move(ctx, Suspend, (*session.Lifecycle).Suspend, orDefault(cmd.Reason, "suspended by the scientist"))
		s.SuspendedAt = now
	case Resume:
		s.resume(ctx, "resumed by the scientist")
	case Terminate:
		s.TerminateReason = cmd.Reason
		s.move(ctx, Terminate, (*session.Lifecycle).Terminate, orDefault(cmd.Reason, "terminated by the scientist"))
	case RefineGoal:
		if cmd.Goal != "" {
			s.Goal = cmd.Goal
		}
		if cmd.Focus != "" {
			s.Focus = append(s.Focus, cmd.Focus)
		}
		if cmd.Goal != "" || cmd.Focus != "" {
			s.Refinements = append(s.Refinements, session.Refinement{Time: session.Stamp(now), Goal: cmd.Goal, Focus: cmd.Focus})
		}
		detail = strings.TrimSpace("goal: " + orDefault(cmd.Goal, "(unchanged)") + "; focus: " + orDefault(cmd.Focus, "(none)"))
		if cmd.TokenBudget != nil {
			s.req.Config.TokenBudget = *cmd.TokenBudget
			detail += fmt.Sprintf("; token budget: %d", *cmd.TokenBudget)
		}
		// A refined goal is a turning point: checkpoint the state the refinement applies to.
		s.CheckpointWanted = true
	case Checkpoint:
		s.CheckpointWanted = true
	case SetBudget:
		var set []string
		if cmd.TokenBudget != nil {
			s.req.Config.TokenBudget = *cmd.TokenBudget
			set = append(set, fmt.Sprintf("token budget: %d (used so far: %d)", *cmd.TokenBudget, s.Usage.PromptTokens+s.Usage.CompletionTokens))
		}
		if cmd.BudgetUSD != nil {
			s.req.Config.BudgetUSD = *cmd.BudgetUSD
			set = append(set, fmt.Sprintf("dollar budget: $%s (spent so far: $%s)", research.Dollars(*cmd.BudgetUSD), research.Dollars(s.Usage.CostUSD)))
		}
		if cmd.MaxHypotheses != nil {
			s.req.Config.MaxHypotheses = *cmd.MaxHypotheses
			set = append(set, fmt.Sprintf("max_hypotheses: %d (made so far: %d)", *cmd.MaxHypotheses, s.made()))
		}
		detail = strings.Join(set, "; ")
	case AddHypothesis:
		id := s.newID()
		s.Added = append(s.Added, Added{ID: id, Cmd: cmd})
		detail = id + ": " + cmd.Title
		s.lastDetail = "added as " + id + "; it enters the tournament next round"
	case Review:
		s.ManualReviews = append(s.ManualReviews, cmd)
		detail = cmd.HypothesisID + ": " + strings.TrimSpace(cmd.Verdict+" "+cmd.Critique)
		if cmd.Score != nil {
			detail += fmt.Sprintf(" (score %.1f)", *cmd.Score)
		}
	case Feedback:
		if cmd.Toward != "" {
			s.Feedback = append(s.Feedback, "toward: "+cmd.Toward)
		}
		if cmd.Away != "" {
			s.Feedback = append(s.Feedback, "away from: "+cmd.Away)
		}
		detail = strings.Join(s.Feedback[max(0, len(s.Feedback)-2):], "; ")
	case TrustTool, UntrustTool:
		detail = s.trust(cmd, now)
		s.lastDetail = detail
	case AnswerTool:
		d, err := s.answerTool(cmd)
		if err != nil {
			s.logCommand(cmd, via, false, err.Error())
			return err
		}
		detail = strings.TrimSpace(d + " " + cmd.Reason)
		s.lastDetail = d
	}
	s.logCommand(cmd, via, true, detail)
	return nil
}

// move applies one lifecycle change and records it.
func (s *supervisor) move(ctx workflow.Context, command string, change func(*session.Lifecycle) error, reason string) {
	before := s.Life
	if err := change(&s.Life); err != nil {
		s.note(err.Error())
		return
	}
	from, to := before.Effective(), s.Life.Effective()
	if from == to && before.State == s.Life.State {
		return
	}
	s.Reason = reason
	s.UpdatedAt = workflow.Now(ctx)
	s.log(session.Event{Kind: session.EventTransition, From: string(from), To: string(to), Command: command, Detail: reason})
	s.show(ctx)
}

// logCommand records a command, accepted or not, with who sent it, and for one an update
// carried, the update's id and the digest its signature covers.
func (s *supervisor) logCommand(cmd session.Command, via string, accepted bool, detail string) {
	e := session.Event{Kind: session.EventCommand, Command: cmd.Name, Via: via, By: cmd.By, Signed: cmd.BySig, Accepted: &accepted, Detail: detail}
	if cmd.Update != "" {
		e.Update, e.Digest = cmd.Update, cmd.Signs
	}
	s.log(e)
}

// versionSignedActs records, with every act an update carries, the update's id and the
// digest of what it carried, which a desk's signature covers (internal/vouch).
const versionSignedActs = "signed-acts"

// updateID is the id of the update being handled, for a run past versionSignedActs; ""
// before it (its acts were recorded without one).
func (s *supervisor) updateID(ctx workflow.Context) string {
	info := workflow.GetCurrentUpdateInfo(ctx)
	if info == nil || !since(ctx, versionSignedActs) {
		return ""
	}
	return info.ID
}

// commandDigest is the digest of a command's payload (session.Command.Digest): JSON and
// a hash, deterministic.
//
//workflowcheck:ignore
func commandDigest(cmd session.Command) string { return cmd.Digest() }

func (s *supervisor) note(detail string) {
	s.log(session.Event{Kind: session.EventNote, Detail: detail})
}

// log appends to the session's own event log; handlers and the main loop share it, and
// workflow coroutines never run at the same time, so appends need no lock.
func (s *supervisor) log(e session.Event) {
	e.Seq = s.EventBase + len(s.Events) + 1
	e.Time = session.Stamp(s.now())
	s.Events = append(s.Events, e)
}
