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
	consts := []string{Suspend, Resume, RefineGoal, Checkpoint, Terminate, AddHypothesis, Review, Feedback, SetBudget, AnswerTool}
	if !slices.Equal(Commands, consts) {
		t.Errorf("Commands = %v, want the constants %v in the table's order", Commands, consts)
	}
	for _, c := range session.Commands {
		if d := Descriptions[c.Name]; d == "" || (c.Example != "{}" && !strings.Contains(d, c.Example)) {
			t.Errorf("description of %s = %q; want its description and payload %s", c.Name, d, c.Example)
		}
	}
}
