package activities

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/session"
	"github.com/cosci-dev/cosci/internal/tournament"
)

// tournamentOf is a session's tournament: n hypotheses with spread ratings, a few pairs
// that met and a chain of similarities.
func tournamentOf(n int) session.Snapshot {
	snap := session.Snapshot{SessionID: "s-1", Seq: 1}
	for i := 1; i <= n; i++ {
		e := session.Entry{ID: fmt.Sprintf("h-%04d", i), Title: fmt.Sprint("hypothesis ", i), Origin: "generation",
			Elo: tournament.InitialElo + float64((i*37)%200-100), Wins: i % 3, Losses: i % 2}
		if i == 5 {
			e.Excluded = "near-duplicate of h-0004 (similarity 0.91)"
		}
		snap.Hypotheses = append(snap.Hypotheses, e)
		if i > 1 {
			snap.Edges = append(snap.Edges, proximity.Edge{A: fmt.Sprintf("h-%04d", i-1), B: e.ID, Sim: float64(i%10) / 10})
		}
	}
	snap.Played = []string{PairKey("h-0001", "h-0002"), PairKey("h-0003", "h-0004")}
	snap.Hypotheses = session.Rank(snap.Hypotheses)
	return snap
}

// TestTournamentReadsItsLedger: a round scheduled from a checkpoint plus the changes since
// is the round scheduled from the same tournament sent whole, and both are
// tournament.Schedule's; the clusters are named by their first hypothesis.
func TestTournamentReadsItsLedger(t *testing.T) {
	env, a := newActivities(t, &counting{})
	whole := tournamentOf(40)
	base := whole
	base.Hypotheses = whole.Hypotheses[:30]
	base.Played = whole.Played[:1]
	base.Edges = whole.Edges[:20]
	if _, err := a.Store.PutCheckpoint(t.Context(), base, nil); err != nil {
		t.Fatal(err)
	}
	fresh := []string{"h-0039", "h-0040"}
	ledgers := map[string]Ledger{
		"whole":   {Changed: whole.Hypotheses, Played: whole.Played, Edges: whole.Edges},
		"changes": {Base: CheckpointRef{Session: "s-1", Seq: 1}, Changed: whole.Hypotheses[30:], Played: whole.Played[1:], Edges: whole.Edges[20:]},
	}
	var players []tournament.Player
	for _, e := range whole.Hypotheses {
		if e.Excluded == "" {
			players = append(players, tournament.Player{ID: e.ID, Elo: e.Elo, Matches: e.Wins + e.Losses, New: slices.Contains(fresh, e.ID)})
		}
	}
	sim := map[string]float64{}
	for _, e := range whole.Edges {
		sim[PairKey(e.A, e.B)] = e.Sim
	}
	want := tournament.Schedule(players, func(x, y string) float64 { return sim[PairKey(x, y)] }, 12,
		func(x, y string) bool { return slices.Contains(whole.Played, PairKey(x, y)) }, tournament.Options{DebateTopK: 4})
	for name, l := range ledgers {
		got := runTournament(t, env, a, name, TournamentInput{SessionID: "s-1", Ledger: l, New: fresh, Budget: 12, DebateTopK: 4})
		if !reflect.DeepEqual(got.Matches, want) {
			t.Errorf("%s: matches %v, want %v", name, got.Matches, want)
		}
		// h-0006…h-0009 are linked at 0.7 to 0.9, over proximity.ClusterThreshold: one
		// cluster, named 6. h-0001…h-0004 are linked below it, and h-0005 is excluded.
		for _, id := range []string{"h-0006", "h-0007", "h-0008", "h-0009"} {
			if got.Clusters[id] != 6 {
				t.Errorf("%s: %s is in cluster %d, want 6 (named by h-0006)", name, id, got.Clusters[id])
			}
		}
		if c := got.Clusters["h-0002"]; c != 2 {
			t.Errorf("%s: h-0002 is in cluster %d, want its own, 2", name, c)
		}
		if _, ok := got.Clusters["h-0005"]; ok {
			t.Errorf("%s: the excluded h-0005 got a cluster", name)
		}
	}
}

// TestRankingPages: the pages of a checkpoint's ranking, in the order the hypotheses were
// made, add up to the whole ranking.
func TestRankingPages(t *testing.T) {
	env, a := newActivities(t, &counting{})
	snap := tournamentOf(23)
	if _, err := a.Store.PutCheckpoint(t.Context(), snap, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for offset := 0; ; {
		v, err := env.ExecuteActivity(a.Ranking, RankingInput{Checkpoint: CheckpointRef{Session: "s-1", Seq: 1}, Offset: offset, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var page RankingPage
		if err := v.Get(&page); err != nil {
			t.Fatal(err)
		}
		if page.Total != 23 || len(page.Hypotheses) > 10 {
			t.Fatalf("page at %d: %d of %d", offset, len(page.Hypotheses), page.Total)
		}
		if len(page.Hypotheses) == 0 {
			break
		}
		for _, e := range page.Hypotheses {
			got = append(got, e.ID)
		}
		offset += len(page.Hypotheses)
	}
	var want []string
	for i := 1; i <= 23; i++ {
		want = append(want, fmt.Sprintf("h-%04d", i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages hold %v, want %v", got, want)
	}
}

func TestByCreation(t *testing.T) {
	ids := []string{"h-10000", "h-0002", "h-9999", "h-0010", "h-0001"}
	slices.SortFunc(ids, byCreation)
	if want := []string{"h-0001", "h-0002", "h-0010", "h-9999", "h-10000"}; !slices.Equal(ids, want) {
		t.Errorf("got %v, want %v", ids, want)
	}
}

// TestFittedTournamentReadsItsLedger: for a fitted session, the ratings and the batch come
// from every result, those in the checkpoint and those sent since: the same as from all
// of them sent whole, and the same as tournament.FitFrom (started from the records' fitted
// ratings) and tournament.Active make of them. Only the ratings that moved come back.
func TestFittedTournamentReadsItsLedger(t *testing.T) {
	env, a := newActivities(t, &counting{})
	whole := tournamentOf(40)
	whole.Rating = session.RatingFitted
	for i := range 120 {
		x, y := fmt.Sprintf("h-%04d", i%40+1), fmt.Sprintf("h-%04d", (i*7+3)%40+1)
		if x != y {
			whole.Results = append(whole.Results, tournament.Result{A: x, B: y, AWon: (i*13)%5 < 3})
		}
	}
	base := whole
	base.Hypotheses = whole.Hypotheses[:30]
	base.Results = whole.Results[:80]
	if _, err := a.Store.PutCheckpoint(t.Context(), base, nil); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range whole.Hypotheses {
		if e.Excluded == "" {
			ids = append(ids, e.ID)
		}
	}
	// One record already holds its fitted rating: the fit starts from it, and it must not
	// come back as a change.
	cold := tournament.Fit(ids, whole.Results)
	same := slices.IndexFunc(whole.Hypotheses, func(e session.Entry) bool { return e.ID == "h-0010" })
	whole.Hypotheses[same].Elo, whole.Hypotheses[same].EloSE = cold.By["h-0010"].Elo(), cold.By["h-0010"].EloSE()
	from := map[string]tournament.Rating{"h-0010": tournament.RatingOf(whole.Hypotheses[same].Elo, whole.Hypotheses[same].EloSE)}
	fit := tournament.FitFrom(from, ids, whole.Results)

	lead := map[string]int{}
	for _, r := range whole.Results {
		lead[r.A]++
		lead[r.B]--
	}
	var cs []tournament.Contender
	for _, id := range ids {
		cs = append(cs, tournament.Contender{ID: id, Rating: fit.By[id], Lead: lead[id]})
	}
	sim := map[string]float64{}
	for _, e := range whole.Edges {
		sim[PairKey(e.A, e.B)] = e.Sim
	}
	want := tournament.Active(cs, func(x, y string) float64 { return sim[PairKey(x, y)] }, 12, tournament.ActiveOptions{TopK: 5, Seed: 7})
	ledgers := map[string]Ledger{
		"whole":   {Changed: whole.Hypotheses, Edges: whole.Edges, Results: whole.Results},
		"changes": {Base: CheckpointRef{Session: "s-1", Seq: 1}, Changed: whole.Hypotheses[30:], Results: whole.Results[80:]},
	}
	for name, l := range ledgers {
		if name == "changes" { // the record with its fitted rating is a change since the checkpoint
			l.Changed = append(l.Changed, whole.Hypotheses[same])
		}
		got := runTournament(t, env, a, name, TournamentInput{SessionID: "s-1", Ledger: l, Budget: 12, Fitted: true, TopK: 5, Seed: 7})
		if !reflect.DeepEqual(got.Matches, want) {
			t.Errorf("%s: matches %v, want %v", name, got.Matches, want)
		}
		if _, ok := got.Ratings["h-0010"]; ok {
			t.Errorf("%s: h-0010's record holds its fitted rating, yet it came back", name)
		}
		if len(got.Ratings) < len(ids)/2 {
			t.Errorf("%s: %d ratings came back; every other record has an old Elo", name, len(got.Ratings))
		}
		for id, r := range got.Ratings {
			if r.Elo != fit.By[id].Elo() || r.SE != fit.By[id].EloSE() {
				t.Errorf("%s: %s rated %+v; the fit has %.2f ± %.2f", name, id, r, fit.By[id].Elo(), fit.By[id].EloSE())
			}
		}
		if _, ok := got.Ratings["h-0005"]; ok {
			t.Errorf("%s: the excluded h-0005 was rated", name)
		}
		if got.Boundary != fit.BoundarySE(ids, 5) || got.Boundary <= 0 {
			t.Errorf("%s: boundary %.2f, want %.2f", name, got.Boundary, fit.BoundarySE(ids, 5))
		}
	}
}

// runTournament runs the Tournament activity on in and returns its result; what names the
// case in a failure.
func runTournament(t *testing.T, env *testsuite.TestActivityEnvironment, a *Activities, what string, in TournamentInput) TournamentResult {
	t.Helper()
	v, err := env.ExecuteActivity(a.Tournament, in)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var got TournamentResult
	if err := v.Get(&got); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return got
}

// TestFittedRatingsAreCapped: when more ratings move than one fit sends back, the top's
// come first, then the furthest moved, and never more than ratingsPerFit.
func TestFittedRatingsAreCapped(t *testing.T) {
	env, a := newActivities(t, &counting{})
	snap := tournamentOf(300)
	for i := range 900 {
		x, y := fmt.Sprintf("h-%04d", i%300+1), fmt.Sprintf("h-%04d", (i*7+3)%300+1)
		if x != y {
			snap.Results = append(snap.Results, tournament.Result{A: x, B: y, AWon: i%300 < (i*7+3)%300})
		}
	}
	got := runTournament(t, env, a, "300 hypotheses", TournamentInput{SessionID: "s-1", Ledger: Ledger{Changed: snap.Hypotheses, Results: snap.Results}, Fitted: true, TopK: 10})
	if len(got.Ratings) != ratingsPerFit || len(got.Matches) != 0 {
		t.Fatalf("%d ratings and %d matches; want %d ratings (every record is stale) and no matches for budget 0", len(got.Ratings), len(got.Matches), ratingsPerFit)
	}
	var ids []string
	for _, e := range snap.Hypotheses {
		if e.Excluded == "" {
			ids = append(ids, e.ID)
		}
	}
	for _, id := range tournament.Fit(ids, snap.Results).Ranked(ids)[:20] {
		if _, ok := got.Ratings[id]; !ok {
			t.Errorf("%s is in the fit's top 20 but its rating did not come back", id)
		}
	}
}
