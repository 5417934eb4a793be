package workflows

import (
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/session"
)

// TestEveryCommandIsDescribedAndParsed: a command the workflow registers has a description
// for the Web UI and a payload the session package can parse.
func TestEveryCommandIsDescribedAndParsed(t *testing.T) {
	for _, name := range append(slices.Clone(Commands), HandOver, Message, QueryStatus, QueryProgress, QueryState, QueryHistory, QueryConversation, QueryPage) {
		if Descriptions[name] == "" {
			t.Errorf("%s has no description", name)
		}
	}
	for _, name := range Commands {
		if _, err := session.ParseCommand(name, []byte(`{"nonsense": 1}`)); err == nil || err.Error() == `unknown command "`+name+`"` {
			t.Errorf("%s: the session package does not know its payload (%v)", name, err)
		}
	}
}

// TestCommandsAreTheTable: the exported command names are session.Commands' names, each
// once, and each has a description with its payload for the Web UI.
func TestCommandsAreTheTable(t *testing.T) {
	consts := []string{Suspend, Resume, RefineGoal, Checkpoint, Terminate, AddHypothesis, Review, Feedback, SetBudget, AnswerTool, TrustTool, UntrustTool}
	if !slices.Equal(Commands, consts) {
		t.Errorf("Commands = %v, want the constants %v in the table's order", Commands, consts)
	}
	for _, c := range session.Commands {
		if d := Descriptions[c.Name]; d == "" || (c.Example != "{}" && !strings.Contains(d, c.Example)) {
			t.Errorf("description of %s = %q; want its description and payload %s", c.Name, d, c.Example)
		}
	}
}

// TestPageBounds: a page is clamped to the list, and a negative offset counts from its end.
func TestPageBounds(t *testing.T) {
	tests := []struct {
		p             Page
		n             int
		lo, hi, limit int
	}{
		{Page{}, 120, 0, DefaultPageLimit, DefaultPageLimit},
		{Page{Offset: 100, Limit: 50}, 120, 100, 120, 50},
		{Page{Offset: 500, Limit: 10}, 120, 120, 120, 10},
		{Page{Offset: -20, Limit: 20}, 120, 100, 120, 20},
		{Page{Offset: -20, Limit: 5}, 120, 100, 105, 5},
		{Page{Offset: -50, Limit: 50}, 30, 0, 30, 50},
		{Page{Limit: 10_000}, 2000, 0, MaxPageLimit, MaxPageLimit},
	}
	for _, tt := range tests {
		if lo, hi, limit := tt.p.Bounds(tt.n); lo != tt.lo || hi != tt.hi || limit != tt.limit {
			t.Errorf("%+v of %d = [%d, %d) limit %d; want [%d, %d) limit %d", tt.p, tt.n, lo, hi, limit, tt.lo, tt.hi, tt.limit)
		}
	}
}
