package experiment

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/cosci-dev/cosci/internal/session"
)

func ids(es []session.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func result(exp, h string, s session.Standing) Result {
	return Result{Experiment: exp, Hypothesis: h, Data: "sha256:" + exp, Arrived: Mark{Event: 1}, Standing: s}
}

func TestStandings(t *testing.T) {
	const (
		sup = session.Supported
		ref = session.Refuted
		inc = session.Inconclusive
	)
	withdrawn := result("e-9", "h-1", ref)
	withdrawn.Withdrawal = "failed assay"
	for _, c := range []struct {
		name    string
		results []Result
		want    session.Standing
	}{
		{"none", nil, session.Untested},
		{"one supported", []Result{result("e-1", "h-1", sup)}, sup},
		{"one refuted", []Result{result("e-1", "h-1", ref)}, ref},
		{"one inconclusive", []Result{result("e-1", "h-1", inc)}, inc},
		{"supported and inconclusive", []Result{result("e-1", "h-1", sup), result("e-2", "h-1", inc)}, sup},
		{"refuted and inconclusive", []Result{result("e-1", "h-1", inc), result("e-2", "h-1", ref)}, ref},
		{"they disagree", []Result{result("e-1", "h-1", sup), result("e-2", "h-1", ref)}, inc},
		{"withdrawn counts for nothing", []Result{withdrawn}, session.Untested},
		{"withdrawn beside supported", []Result{withdrawn, result("e-1", "h-1", sup)}, sup},
		{"not yet analysed", []Result{result("e-1", "h-1", session.Untested)}, session.Untested},
		{"another hypothesis", []Result{result("e-1", "h-2", ref)}, session.Untested},
	} {
		if got := Standings(c.results)["h-1"]; got != c.want {
			t.Errorf("%s: %q; want %q", c.name, got, c.want)
		}
	}
}

// randomEntries is a ranking as a tournament leaves it: fitted Elo ratings, close
// together, a few excluded.
func randomEntries(rng *rand.Rand, n int) []session.Entry {
	es := make([]session.Entry, n)
	for i := range es {
		es[i] = session.Entry{ID: fmt.Sprintf("h-%04d", i+1), Elo: 1200 + float64(rng.IntN(200)) - 100, EloSE: 30}
		if rng.IntN(10) == 0 {
			es[i].Excluded = "near-duplicate"
		}
	}
	return es
}

// TestFeedback: over random rankings, a refuted hypothesis leaves the top 3 whichever
// of them it was, a supported one ranks above the untested ones rated less than
// session.SupportedBonus above it, and a
// withdrawn result leaves the ranking exactly as it was without it, the ratings untouched.
func TestFeedback(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 1))
	for seed := range 200 {
		entries := randomEntries(rng, 5+rng.IntN(40))
		before := slices.Clone(entries)
		plain := session.Rank(entries)
		top := session.Top(entries, 3)
		if len(session.Top(entries, 4)) < 4 {
			continue
		}
		// Refute one of the top 3, support one from lower down.
		refuted := top[rng.IntN(3)].ID
		competing := session.Top(entries, len(entries))
		supported := competing[3+rng.IntN(len(competing)-3)]
		results := []Result{result("e-1", refuted, session.Refuted), result("e-2", supported.ID, session.Supported)}
		ranked := session.Rank(Apply(entries, results))
		if slices.Contains(ids(session.Top(Apply(entries, results), 3)), refuted) {
			t.Fatalf("seed %d: refuted %s still in the top 3 %v", seed, refuted, ids(session.Top(Apply(entries, results), 3)))
		}
		// The supported one ranks above every untested one rated less than the bonus
		// above it, below every one rated more.
		at := slices.IndexFunc(ranked, func(e session.Entry) bool { return e.ID == supported.ID })
		for i, e := range ranked {
			if e.Excluded != "" || e.Standing != session.Untested {
				continue
			}
			if above := i < at; above != (e.Elo > supported.Elo+session.SupportedBonus || e.Elo == supported.Elo+session.SupportedBonus && e.ID < supported.ID) {
				t.Errorf("seed %d: untested %s (Elo %.0f) ranks above supported %s (Elo %.0f): %v", seed, e.ID, e.Elo, supported.ID, supported.Elo, above)
			}
		}
		// Withdraw the refutation: the ranking is as if it had never been.
		results[0].Withdrawal = "failed assay"
		if got, want := ids(session.Rank(Apply(entries, results))), ids(session.Rank(Apply(entries, results[1:]))); !slices.Equal(got, want) {
			t.Errorf("seed %d: the withdrawn result still acts: %v; want %v", seed, got, want)
		}
		results[1].Withdrawal = "mislabelled plate"
		if got := session.Rank(Apply(entries, results)); !reflect.DeepEqual(got, plain) {
			t.Errorf("seed %d: with every result withdrawn the ranking is not the tournament's", seed)
		}
		if !reflect.DeepEqual(entries, before) {
			t.Fatalf("seed %d: Apply changed the entries it was given", seed)
		}
	}
}

func TestApplyClearsStaleStanding(t *testing.T) {
	es := []session.Entry{{ID: "h-1", Elo: 1300, Standing: session.Refuted}, {ID: "h-2", Elo: 1200}}
	if got := Apply(es, nil); got[0].Standing != session.Untested {
		t.Errorf("an entry kept the standing %q no active result gives it", got[0].Standing)
	}
}

// TestChanged: what a result changed is shown as its standing before and after and the
// rank moves it caused, and the same for a withdrawn result (what withdrawing it undid).
func TestChanged(t *testing.T) {
	es := []session.Entry{
		{ID: "h-1", Elo: 1300}, {ID: "h-2", Elo: 1250}, {ID: "h-3", Elo: 1240}, {ID: "h-4", Elo: 1100},
	}
	results := []Result{result("e-1", "h-1", session.Refuted), result("e-2", "h-4", session.Inconclusive)}
	c := Changed(es, results, 0)
	want := Change{Experiment: "e-1", Hypothesis: "h-1", Before: session.Untested, After: session.Refuted, Moves: []Move{
		{"h-2", 2, 1}, {"h-3", 3, 2}, {"h-4", 4, 3}, {"h-1", 1, 4},
	}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Changed = %+v\nwant %+v", c, want)
	}
	results[0].Withdrawal = "failed assay"
	if got := Changed(es, results, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("a withdrawn result's change = %+v; want what it did while it stood", got)
	}
	if c := Changed(es, results, 1); c.Before != session.Untested || c.After != session.Inconclusive || len(c.Moves) != 0 {
		t.Errorf("an inconclusive result: %+v; want no moves", c)
	}
	if !reflect.DeepEqual(results[0].Withdrawal, "failed assay") {
		t.Error("Changed changed the results it was given")
	}
}
