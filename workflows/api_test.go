package workflows

import (
	"slices"
	"testing"

	"github.com/cosci-dev/cosci/internal/session"
)

// TestEveryCommandIsDescribedAndParsed: a command the workflow registers has a description
// for the Web UI and a payload the session package can parse.
func TestEveryCommandIsDescribedAndParsed(t *testing.T) {
	for _, name := range append(slices.Clone(Commands), HandOver, Message, QueryStatus, QueryProgress, QueryState, QueryHistory) {
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
