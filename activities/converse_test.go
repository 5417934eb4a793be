package activities

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// TestProposableAgree: the converse prompt's schema and the session name the same commands.
func TestProposableAgree(t *testing.T) {
	if !slices.Equal(prompt.Proposable, session.Proposable) || prompt.MaxProposals != session.MaxProposals || prompt.MaxAnswerLength != session.MaxAnswerLength {
		t.Errorf("prompt: %v, %d, %d; session: %v, %d, %d", prompt.Proposable, prompt.MaxProposals, prompt.MaxAnswerLength, session.Proposable, session.MaxProposals, session.MaxAnswerLength)
	}
}

// TestCheckProposals: a proposal is kept only as the session would take its command, with
// its effect written from it.
func TestCheckProposals(t *testing.T) {
	for _, tt := range []struct {
		command, args string
		wantEffect    string // "" for dropped
		wantDropped   string
	}{
		{"refine-goal", `{"focus": "microglia"}`, `Adds the focus "microglia"`, ""},
		{"feedback", `{"away": "cell-free assays"}`, `away from "cell-free assays"`, ""},
		{"set-budget", `{"max_hypotheses": 50}`, "max_hypotheses to 50", ""},
		{"review", `{"hypothesis_id": "h-0001", "score": 11}`, "", "score is 11"},
		{"suspend", `{"by": "mallory"}`, "", `"by" is the confirming scientist's`},
		{"checkpoint", `{}`, "", "not a command an answer may propose"},
		{"refine-goal", `{"focsu": "x"}`, "", `does not take "focsu"`},
	} {
		kept, dropped := checkProposals([]research.ProposedCommand{{Command: tt.command, Args: json.RawMessage(tt.args)}})
		switch {
		case tt.wantEffect != "" && (len(kept) != 1 || !strings.Contains(kept[0].Effect, tt.wantEffect)):
			t.Errorf("%s %s: kept %+v, dropped %v; want the effect %q", tt.command, tt.args, kept, dropped, tt.wantEffect)
		case tt.wantDropped != "" && (len(kept) != 0 || len(dropped) != 1 || !strings.Contains(dropped[0], tt.wantDropped)):
			t.Errorf("%s %s: kept %+v, dropped %v; want it dropped with %q", tt.command, tt.args, kept, dropped, tt.wantDropped)
		}
	}
}
