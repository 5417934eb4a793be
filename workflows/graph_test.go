package workflows

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/store"
	"github.com/cosci-dev/cosci/internal/tournament"
	"github.com/stretchr/testify/mock"
)

// TestContinueAsNewAt2000Hypotheses runs a 2,000-hypothesis session through several
// continue-as-new generations, the way the server would: each run is told, some way in,
// that continuing as new is suggested. Feedback signals arrive every few minutes
// throughout, across every boundary. Every one must be applied exactly once, the event
// log must stay one gapless sequence, and the queries must answer in every run. No
// payload of any kind may pass 256 KiB, and every checkpoint must read back as exactly
// what the session sent, whole or as changes, with as many pairs as matches played.
var canHypotheses = 2000

func TestContinueAsNewAt2000Hypotheses(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 hypotheses take about a minute")
	}
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	req := goal(canHypotheses)
	req.Config.ReviewTypes = []string{"initial"}
	req.Config.ConvergenceRounds = 1000 // explore to the end
	var carried *Carried
	sent, runs := 0, 0
	var res Result
	rec := &sizes{DataConverter: converter.GetDefaultDataConverter(), largest: map[string]int{}}
	var sentCheckpoints []activities.CheckpointInput
	for {
		h := newHarnessOn(t, st, time.Second, nil)
		h.env.SetTestTimeout(5 * time.Minute)
		h.env.SetDataConverter(rec)
		before := 0
		if carried != nil {
			before = len(carried.Entries)
		}
		// Queries answer at once in every run, with the carried session.
		h.at(time.Millisecond, func() {
			if h.env.IsWorkflowCompleted() {
				return // a last run with nothing left to do ended at once: there is no run to ask
			}
			if _, err := h.env.QueryWorkflow(QueryProgress); err != nil {
				t.Fatalf("run %d at %v: query: %v (workflow error: %v)", runs+1, h.env.Now(), err, h.env.GetWorkflowError())
			}
			p := query[session.Progress](h, QueryProgress)
			if p.HypothesesGenerated < before {
				t.Errorf("run %d: progress says %d hypotheses; the previous run ended with %d", runs+1, p.HypothesesGenerated, before)
			}
			hist := query[HistoryView](h, QueryHistory, Page{Offset: 0, Limit: 5})
			if hist.Total < hist.InStore || (carried != nil && hist.Total < carried.EventBase+len(carried.Events)) {
				t.Errorf("run %d: history total %d, in store %d", runs+1, hist.Total, hist.InStore)
			}
		})
		for k := 1; k <= 60; k++ {
			h.at(time.Duration(k)*90*time.Second, func() {
				sent++
				h.env.SignalWorkflow(Feedback, map[string]any{"toward": fmt.Sprintf("signal %d", sent)})
			})
		}
		// The server suggests continuing as new some way into each run.
		h.at(12*time.Minute, func() { h.env.SetContinueAsNewSuggested(true) })
		h.env.ExecuteWorkflow(ResearchSession, req, carried)
		if !h.env.IsWorkflowCompleted() {
			t.Fatal("a run did not complete")
		}
		runs++
		sentCheckpoints = append(sentCheckpoints, h.checkpoints...)
		var can *workflow.ContinueAsNewError
		if err := h.env.GetWorkflowError(); errors.As(err, &can) {
			carried = nil
			if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &req, &carried); err != nil {
				t.Fatal(err)
			}
			if size := can.Input.Size(); size > payloadLimit {
				t.Errorf("run %d carries %d bytes; want at most %d", runs, size, payloadLimit)
			}
			size := func(v any) int { b, _ := json.Marshal(v); return len(b) }
			t.Logf("run %d continued as new with %d hypotheses, %d events kept, %d bytes carried (entries %d, pairs %d, edges %d, events %d)",
				runs, len(carried.Entries), len(carried.Events), can.Input.Size(), size(carried.Entries), size(carried.Played), size(carried.Edges), size(carried.Events))
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if err := h.env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		break
	}
	if runs < 4 {
		t.Errorf("%d runs; want the session to continue as new several times", runs)
	}
	if res.Hypotheses < 2000 || res.StopReason != "reached max_hypotheses (2000)" {
		t.Errorf("result: %d hypotheses, stop reason %q", res.Hypotheses, res.StopReason)
	}
	events, err := st.Events(t.Context(), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for i, e := range events {
		if e.Seq != i+1 {
			t.Fatalf("event %d has seq %d: the log lost or repeated events across runs", i+1, e.Seq)
		}
		if e.Kind == session.EventCommand && e.Command == Feedback && e.Accepted != nil && *e.Accepted {
			got[e.Detail]++
		}
	}
	applied := 0
	for _, n := range got {
		applied += n
	}
	if applied != sent || len(got) != sent {
		t.Errorf("%d feedback signals sent, %d applied (%d distinct)", sent, applied, len(got))
	}
	t.Logf("%d runs, %d hypotheses, %d events, %d signals", runs, res.Hypotheses, len(events), sent)
	rec.check(t, "activities.CheckpointInput", "activities.TournamentInput", "activities.RankingPage", "*workflows.Carried")
	checkRestores(t, st, res.SessionID, sentCheckpoints)
}

// checkRestores reads back every checkpoint of a session and compares it with what the
// session sent: whole, or the changes since an earlier one, merged. Each must also be
// consistent in itself: every match played is a pair that met (no pair meets twice) and
// every hypothesis is in the ranking.
func checkRestores(t *testing.T, st *store.Store, id string, sent []activities.CheckpointInput) {
	t.Helper()
	want := map[int]session.Snapshot{}
	for _, in := range sent {
		snap := in.Snapshot
		if in.Base > 0 {
			snap = session.Merge(want[in.Base], snap)
		}
		want[snap.Seq] = snap
	}
	if len(want) < 10 {
		t.Fatalf("%d checkpoints were sent; the test should see many", len(want))
	}
	for _, seq := range slices.Sorted(maps.Keys(want)) {
		got, err := st.Checkpoint(t.Context(), id, seq)
		if err != nil {
			t.Fatalf("checkpoint %d: %v", seq, err)
		}
		w := want[seq]
		switch {
		case !slices.EqualFunc(got.Hypotheses, w.Hypotheses, session.SameEntry):
			t.Errorf("checkpoint %d restores %d hypotheses that differ from the %d sent", seq, len(got.Hypotheses), len(w.Hypotheses))
		case !slices.Equal(got.Played, w.Played) || !slices.Equal(got.Edges, w.Edges) || !slices.Equal(got.Results, w.Results):
			t.Errorf("checkpoint %d restores %d pairs, %d similarities and %d results; %d, %d and %d were sent",
				seq, len(got.Played), len(got.Edges), len(got.Results), len(w.Played), len(w.Edges), len(w.Results))
		case !reflect.DeepEqual(got.Progress, w.Progress) || got.NextID != w.NextID || got.State != w.State:
			t.Errorf("checkpoint %d restores progress %+v, next id %d, state %s; sent %+v, %d, %s", seq, got.Progress, got.NextID, got.State, w.Progress, w.NextID, w.State)
		case matchesIn(got) != got.Progress.MatchesPlayed || len(got.Hypotheses) != got.Progress.HypothesesGenerated:
			t.Errorf("checkpoint %d holds %d matches and %d hypotheses; its progress says %d matches and %d hypotheses",
				seq, matchesIn(got), len(got.Hypotheses), got.Progress.MatchesPlayed, got.Progress.HypothesesGenerated)
		}
	}
	last, err := st.Checkpoint(t.Context(), id, slices.Max(slices.Collect(maps.Keys(want))))
	if err != nil {
		t.Fatal(err)
	}
	checkFitted(t, last)
	t.Logf("%d checkpoints restore exactly", len(want))
}

// matchesIn is how many matches a checkpoint records: its pairs for Elo ratings, which
// never meet twice, its results for fitted ones.
func matchesIn(snap session.Snapshot) int {
	if snap.Rating == session.RatingFitted {
		return len(snap.Results)
	}
	return len(snap.Played)
}

// checkFitted checks that a fitted session's checkpoint ranks its hypotheses by the fit
// of its results: the records of the fit's top 20 hold their Elo and error as
// tournament.Fit has them, to the record's tolerance (half a point and a fortieth of the
// error) and the fit's own (the session's fits start from the records, tournament.FitFrom,
// and end within a hundredth of a point of a cold fit); the others, which may wait a few
// fits for their turn (activities.ratingsPerFit), within a quarter of their error.
func checkFitted(t *testing.T, snap session.Snapshot) {
	t.Helper()
	if snap.Rating != session.RatingFitted {
		t.Fatalf("checkpoint %d of %s has rating %q; want %q", snap.Seq, snap.SessionID, snap.Rating, session.RatingFitted)
	}
	var ids []string
	for _, e := range snap.Hypotheses {
		if e.Excluded == "" {
			ids = append(ids, e.ID)
		}
	}
	fit := tournament.Fit(ids, snap.Results)
	slices.SortFunc(ids, func(x, y string) int { return cmp.Compare(fit.By[y].Strength, fit.By[x].Strength) })
	top := map[string]bool{}
	for _, id := range ids[:min(20, len(ids))] {
		top[id] = true
	}
	off := 0
	for _, e := range snap.Hypotheses {
		r := fit.By[e.ID]
		tolerance := max(0.5, r.EloSE()/40) + 0.05
		if !top[e.ID] {
			tolerance = max(tolerance, r.EloSE()/4)
		}
		if e.Excluded == "" && (math.Abs(e.Elo-r.Elo()) > tolerance || math.Abs(e.EloSE-r.EloSE()) > tolerance) {
			if off++; off <= 5 {
				t.Errorf("checkpoint %d: %s has Elo %.2f ± %.2f; the fit of its %d results gives %.2f ± %.2f", snap.Seq, e.ID, e.Elo, e.EloSE, len(snap.Results), r.Elo(), r.EloSE())
			}
		}
	}
	if off > 0 {
		t.Errorf("checkpoint %d: %d of %d ratings are not the fit's", snap.Seq, off, len(ids))
	}
}

// TestContinueAsNewWaitsForItsCheckpoint: the next run reads its hypotheses from the
// checkpoint written before continuing as new, so when that checkpoint cannot be written
// the session suspends with the reason instead, and continues as new once the scientist
// resumes it with the store fixed; the next run has every hypothesis.
func TestContinueAsNewWaitsForItsCheckpoint(t *testing.T) {
	h := newHarness(t, time.Second, nil)
	var suggested, broken bool
	calls := 0
	h.env.OnActivity(h.acts.Checkpoint, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.CheckpointInput) (string, error) {
		if suggested {
			calls++
			if calls >= 2 && broken { // the round's checkpoint goes through, the next does not
				return "", errors.New("no space left on device")
			}
		}
		return h.acts.Checkpoint(ctx, in)
	})
	h.at(5*time.Second, func() { h.env.SetContinueAsNewSuggested(true); suggested, broken = true, true })
	var before int
	h.at(5*time.Minute, func() {
		st := query[Status](h, QueryStatus)
		if st.State != session.Suspended || !strings.Contains(st.Reason, "before continuing as new failed: no space left on device") {
			t.Errorf("with the store full: %s (%s); want suspended, saying why", st.State, st.Reason)
		}
		before = query[session.Progress](h, QueryProgress).HypothesesGenerated
		broken = false
		h.mustUpdate(Resume, nil)
	})
	h.env.ExecuteWorkflow(ResearchSession, goal(30), (*Carried)(nil))
	var can *workflow.ContinueAsNewError
	if err := h.env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("the run ended with %v; want it to continue as new once resumed", err)
	}
	var req research.Request
	var carried *Carried
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &req, &carried); err != nil {
		t.Fatal(err)
	}
	next := newHarnessOn(t, h.store, 0, nil)
	next.env.ExecuteWorkflow(ResearchSession, req, carried)
	p := query[session.Progress](next, QueryProgress)
	if before == 0 || p.HypothesesGenerated < before || carried.RankingAt == 0 {
		t.Errorf("the next run has %d hypotheses (ranking at checkpoint %d); the suspended run had %d", p.HypothesesGenerated, carried.RankingAt, before)
	}
}
