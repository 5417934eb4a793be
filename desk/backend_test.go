package main

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/workflows"
)

// olderWorker is Temporal as a worker of a build before the page query answers it: the
// page query is unknown, the four others are answered. It records what was asked.
type olderWorker struct {
	client.Client // nil: any other call panics
	asked         []string
}

type value struct{ v any }

func (v value) HasValue() bool { return true }
func (v value) Get(out any) error {
	b, err := json.Marshal(v.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func (o *olderWorker) QueryWorkflow(_ context.Context, id, _ string, name string, _ ...any) (converter.EncodedValue, error) {
	o.asked = append(o.asked, name)
	switch name {
	case workflows.QueryPage:
		return nil, serviceerror.NewQueryFailed("unknown queryType page. KnownQueryTypes=[status progress state conversation]")
	case workflows.QueryStatus:
		return value{workflows.Status{SessionID: id, State: session.Active, ScientistID: "ada@lab"}}, nil
	case workflows.QueryProgress:
		return value{session.Progress{State: session.Active, HypothesesGenerated: 3}}, nil
	case workflows.QueryState:
		return value{workflows.StateView{SessionID: id, Total: 3, Hypotheses: []session.Entry{{ID: "h-0001"}}}}, nil
	case workflows.QueryConversation:
		return value{workflows.ConversationView{Total: 1, Messages: []workflows.ConversationEntry{{Message: session.Message{ID: "m-0001"}}}}}, nil
	}
	return nil, serviceerror.NewQueryFailed("unknown queryType " + name)
}

// TestPageByParts: a worker of an older build, which knows no page query, is asked the
// four queries the page is made of, and the page is whole.
func TestPageByParts(t *testing.T) {
	o := &olderWorker{}
	b := &temporalBackend{c: o}
	v, err := b.Page(t.Context(), "s-1", workflows.PageRequest{Ranking: workflows.Page{Limit: 25}, Conversation: latest})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"page", "status", "progress", "state", "conversation"}; !slices.Equal(o.asked, want) {
		t.Errorf("asked %v, want %v", o.asked, want)
	}
	if v.Status.ScientistID != "ada@lab" || v.Progress.HypothesesGenerated != 3 || len(v.State.Hypotheses) != 1 || v.Conversation.Total != 1 {
		t.Errorf("the page by parts: %+v", v)
	}
}
