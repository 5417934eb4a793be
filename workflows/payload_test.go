package workflows

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/cosci-dev/cosci/internal/research"
)

// sizes is a data converter that remembers the largest payload it encoded for each Go type.
// The test environment encodes every activity input and result, signal, update and query
// result through it, as a real worker would.
type sizes struct {
	converter.DataConverter
	mu      sync.Mutex
	largest map[string]int
	count   int
}

func (s *sizes) ToPayload(v any) (*commonpb.Payload, error) {
	p, err := s.DataConverter.ToPayload(v)
	if err == nil {
		s.note(v, proto.Size(p))
	}
	return p, err
}

func (s *sizes) ToPayloads(vs ...any) (*commonpb.Payloads, error) {
	ps, err := s.DataConverter.ToPayloads(vs...)
	if err == nil {
		for i, p := range ps.GetPayloads() {
			s.note(vs[i], proto.Size(p))
		}
	}
	return ps, err
}

func (s *sizes) note(v any, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	name := fmt.Sprintf("%T", v)
	s.largest[name] = max(s.largest[name], n)
}

// TestPayloadsStaySmall runs a session of 500 hypotheses and checks that no payload (activity
// input or result, signal, update, query result) exceeds 256 KiB: texts stay in the store.
func TestPayloadsStaySmall(t *testing.T) {
	h := newHarness(t, 0, nil)
	rec := &sizes{DataConverter: converter.GetDefaultDataConverter(), largest: map[string]int{}}
	h.useConverter(rec)
	// Its history is long, so the finished session closes in a run of its own, which reads
	// the ranking back and answers the queries below.
	h.at(time.Millisecond, func() { h.env.SetCurrentHistoryLength(closingRunAfter + 1) })
	// Mid-session, every query at its largest page, and a long refinement.
	h.at(1, func() {
		h.env.SignalWorkflow(RefineGoal, map[string]string{"focus": strings.Repeat("microglia ", 99)})
	})
	req := goal(500)
	req.Config.ConvergenceRounds = research.MaxConvergenceRounds
	res := h.run(req)
	if res.Hypotheses != 500 {
		t.Fatalf("%d hypotheses, want 500 (stopped: %s)", res.Hypotheses, res.StopReason)
	}
	for _, q := range []string{QueryStatus, QueryProgress} {
		query[any](h, q)
	}
	query[StateView](h, QueryState, Page{Limit: MaxPageLimit})
	query[HistoryView](h, QueryHistory, Page{Limit: MaxPageLimit})

	rec.check(t, "activities.CheckpointInput", "activities.GenerateInput", "activities.RankingPage", "workflows.StateView", "workflows.HistoryView", "workflows.Result")
}

// payloadLimit is the most any payload may weigh: half Temporal's 512 KB warning.
const payloadLimit = 256 << 10

// check fails the test if a payload passed payloadLimit, or if one of the types it must
// have seen was never encoded.
func (s *sizes) check(t *testing.T, mustSee ...string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, typ := range mustSee {
		if s.largest[typ] == 0 {
			t.Errorf("no %s payload was measured; the test does not see what it should", typ)
		}
	}
	for _, typ := range slices.Sorted(maps.Keys(s.largest)) {
		n := s.largest[typ]
		t.Logf("largest %-36s %7d bytes", typ, n)
		if n > payloadLimit {
			t.Errorf("a %s payload is %d bytes, over %d", typ, n, payloadLimit)
		}
	}
	t.Logf("%d payloads measured", s.count)
}
