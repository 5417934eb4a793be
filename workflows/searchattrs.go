package workflows

// Search attributes, the memo and the Web UI's details: every key the workflow shows
// Temporal's visibility, the lineage ones included.

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
)

// searchAttrs is what the session shows to visibility (`temporal workflow list --query`).
type searchAttrs struct {
	Status string  `json:"status,omitempty"`
	Count  int64   `json:"count,omitempty"`
	TopElo float64 `json:"top_elo,omitempty"`
	Tokens int64   `json:"tokens,omitempty"`
	Cost   float64 `json:"cost_usd,omitempty"`
}

// show refreshes what the Web UI shows after every step: the live details and, when it
// changed, the SessionStatus search attribute. While a checkpoint is written, visibility
// keeps the state the session returns to: checkpointing lasts milliseconds and is not worth
// two visibility updates.
func (s *supervisor) show(ctx workflow.Context) {
	workflow.SetCurrentDetails(ctx, s.details(ctx))
	if string(s.Life.Effective()) != s.Shown.Status {
		s.publish(ctx)
	}
	s.showNeeds(ctx)
}

// publish updates every search attribute that changed. Counters move with every turn, so
// they are published once a round (and with every state change), not per turn: each
// update is an event in the session's history.
func (s *supervisor) publish(ctx workflow.Context) {
	workflow.SetCurrentDetails(ctx, s.details(ctx))
	now := searchAttrs{Status: string(s.Life.Effective()), Count: int64(len(s.Entries)), Tokens: int64(s.Usage.Tokens())}
	if top := s.top(1); len(top) > 0 {
		now.TopElo = top[0].Elo
	}
	if s.budgets { // sessions started before it do not show their cost to visibility
		now.Cost = s.Usage.CostUSD
	}
	if now == s.Shown {
		return
	}
	updates := []temporal.SearchAttributeUpdate{
		keyStatus.ValueSet(now.Status),
		keyCount.ValueSet(now.Count),
		keyTopElo.ValueSet(now.TopElo),
		keyTokens.ValueSet(now.Tokens),
	}
	if s.budgets {
		updates = append(updates, keyCost.ValueSet(now.Cost))
	}
	if s.Shown.Status == "" {
		updates = append(updates, keyScientist.ValueSet(s.req.ScientistID))
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		workflow.GetLogger(ctx).Warn("cannot update search attributes", "error", err)
		return
	}
	s.Shown = now
}

// details is the live Markdown the Web UI shows for the running session.
func (s *supervisor) details(ctx workflow.Context) string {
	p := s.progress(ctx)
	var b strings.Builder
	b.WriteString("**" + string(s.Life.State) + "**")
	if s.Reason != "" {
		b.WriteString(" — " + s.Reason)
	}
	b.WriteString("\n\n| round | hypotheses | reviews | matches | failed turns | checkpoints | elapsed |\n|---|---|---|---|---|---|---|\n")
	b.WriteString(fmt.Sprintf("| %d | %s | %d | %d | %d | %d | %s |\n", p.Rounds, p.HypothesesText(),
		p.ReviewsCompleted, p.MatchesPlayed, p.TurnsFailed, p.Checkpoints, p.Elapsed))
	if len(s.req.Config.Tools) > 0 {
		b.WriteString(fmt.Sprintf("\n**Tools:** %d calls of %d (%d failed or errors) · %s\n", s.ToolCalls, s.req.Config.ToolSessionBudget(), s.ToolErrors, strings.Join(s.req.Config.Tools, ", ")))
	}
	if w := s.Batch; w != nil {
		b.WriteString(fmt.Sprintf("\n**Waiting for a batch** of %d %s: %s, submitted %s (answers within 24 hours, at half the price)\n", w.Requests, w.What, w.ID, w.Submitted))
	}
	if ws := s.waiting(); len(ws) > 0 {
		b.WriteString("\n**Waiting for the scientist** (answer-tool):\n\n| call | tool | about | since |\n|---|---|---|---|\n")
		for _, w := range ws {
			b.WriteString(fmt.Sprintf("| %s | %s | %s | %s |\n", w.ID, w.Tool, strings.ReplaceAll(w.Brief, "|", "/"), w.Since))
		}
	}
	if s.Usage.Requests > 0 {
		b.WriteString("\n**Cost:** " + costText(s.Usage, s.req.Config) + "\n")
	}
	b.WriteString("\n| agent | turns | failed | tokens | cost |\n|---|---|---|---|---|\n")
	for _, st := range s.Agents {
		b.WriteString(fmt.Sprintf("| %s | %d | %d | %d | $%s |\n", st.Agent, st.Turns, st.Failed, st.Usage.Tokens(), research.Dollars(st.Usage.CostUSD)))
	}
	if s.Plan != "" {
		b.WriteString("\n**Plan:** " + s.Plan + "\n")
	}
	if len(s.MetaCritiques) > 0 {
		b.WriteString(fmt.Sprintf("\n**Meta-review (round %d):** %s\n", s.MetaRound, strings.Join(s.MetaCritiques, "; ")))
	}
	if top := s.top(5); len(top) > 0 {
		b.WriteString("\n| rank | hypothesis | origin | Elo | W-L |\n|---|---|---|---|---|\n")
		for i, e := range top {
			rating := fmt.Sprintf("%.0f", e.Elo)
			if e.EloSE > 0 {
				rating += fmt.Sprintf(" ± %.0f", e.EloSE)
			}
			b.WriteString(fmt.Sprintf("| %d | %s %s | %s/%s | %s | %d-%d |\n", i+1, e.ID, strings.ReplaceAll(e.Title, "|", "/"),
				e.Origin, e.Strategy, rating, e.Wins, e.Losses))
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

// Custom search attributes the workflow maintains; the dev server must have them registered
// (`make server` does).
const (
	AttrSessionStatus   = "SessionStatus"   // Keyword
	AttrScientistID     = "ScientistId"     // Keyword
	AttrHypothesisCount = "HypothesisCount" // Int
	AttrTopElo          = "TopElo"          // Double
	AttrTotalTokens     = "TotalTokens"     // Int: prompt plus completion tokens so far
	AttrCostUSD         = "CostUSD"         // Double: what the model calls cost so far (an estimate)
	// Lineage, set once at start: `temporal workflow list --query "ParentSession='X'"`.
	AttrSessionType      = "SessionType"      // Keyword: user, cron, heartbeat, subagent
	AttrConversation     = "ConversationId"   // Keyword
	AttrParentSession    = "ParentSession"    // Keyword
	AttrSourceCheckpoint = "SourceCheckpoint" // Int: the parent's checkpoint it started from
)

// MemoLineage is the memo key that holds a session's lineage.Descriptor.
const MemoLineage = "lineage"

// MemoGoal is the memo key that holds the goal a session started with, for `starter list`:
// a memo, not a search attribute, because a memo is encoded (encrypted, with keys) and a
// goal is unpublished research.
const MemoGoal = "goal"

// SearchAttributes maps each custom search attribute to its type, in the form
// `temporal server start-dev --search-attribute NAME=TYPE` takes.
var SearchAttributes = map[string]string{
	AttrSessionStatus:    "Keyword",
	AttrScientistID:      "Keyword",
	AttrHypothesisCount:  "Int",
	AttrTopElo:           "Double",
	AttrTotalTokens:      "Int",
	AttrCostUSD:          "Double",
	AttrSessionType:      "Keyword",
	AttrConversation:     "Keyword",
	AttrParentSession:    "Keyword",
	AttrSourceCheckpoint: "Int",
}

var (
	keyStatus    = temporal.NewSearchAttributeKeyKeyword(AttrSessionStatus)
	keyScientist = temporal.NewSearchAttributeKeyKeyword(AttrScientistID)
	keyCount     = temporal.NewSearchAttributeKeyInt64(AttrHypothesisCount)
	keyTopElo    = temporal.NewSearchAttributeKeyFloat64(AttrTopElo)
	keyTokens    = temporal.NewSearchAttributeKeyInt64(AttrTotalTokens)
	keyCost      = temporal.NewSearchAttributeKeyFloat64(AttrCostUSD)
)

func showLineage(ctx workflow.Context, d lineage.Descriptor) error {
	updates := []temporal.SearchAttributeUpdate{
		keySessionType.ValueSet(string(d.Type)),
		keyConversation.ValueSet(d.Conversation),
	}
	if d.Parent != "" {
		updates = append(updates, keyParent.ValueSet(d.Parent))
	}
	if d.Checkpoint > 0 {
		updates = append(updates, keySourceCheckpoint.ValueSet(int64(d.Checkpoint)))
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		return err
	}
	return workflow.UpsertMemo(ctx, map[string]any{MemoLineage: d})
}

var (
	keySessionType      = temporal.NewSearchAttributeKeyKeyword(AttrSessionType)
	keyConversation     = temporal.NewSearchAttributeKeyKeyword(AttrConversation)
	keyParent           = temporal.NewSearchAttributeKeyKeyword(AttrParentSession)
	keySourceCheckpoint = temporal.NewSearchAttributeKeyInt64(AttrSourceCheckpoint)
)
