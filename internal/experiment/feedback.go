package experiment

import (
	"cmp"
	"slices"

	"github.com/cosci-dev/cosci/internal/session"
)

// Result is a lab result of an experiment: the data that arrived, the registered
// analysis' outcome and the standing it earned, and, once withdrawn, why.
type Result struct {
	Experiment string           `json:"experiment"`
	Hypothesis string           `json:"hypothesis"`
	Data       string           `json:"data"`
	Arrived    Mark             `json:"arrived"`
	Outcome    Outcome          `json:"outcome,omitzero"`
	Standing   session.Standing `json:"standing,omitempty"` // "" until analysed
	Why        string           `json:"why,omitempty"`
	Withdrawal string           `json:"withdrawal,omitempty"` // why it was withdrawn; "" while it stands
}

// Active reports whether the result counts: analysed and not withdrawn.
func (r Result) Active() bool { return r.Withdrawal == "" && r.Standing != session.Untested }

// Results lists every result of the experiments, standing and withdrawn.
func Results(exps []Experiment) []Result {
	var rs []Result
	for _, e := range exps {
		rs = append(rs, e.Withdrawn...)
		if e.Result != nil {
			rs = append(rs, *e.Result)
		}
	}
	return rs
}

// Standings is each tested hypothesis' standing from its active results. One result gives
// its own; several agree or else say nothing: refuted only if none supports it, supported
// only if none refutes it, and inconclusive when they disagree (the lab contradicts
// itself; another experiment must decide) or none decided.
func Standings(results []Result) map[string]session.Standing {
	seen := map[string][3]int{} // supported, inconclusive, refuted
	var order []string          // the hypotheses in the results' order: the workflow calls this, and ranging over a map is not deterministic
	for _, r := range results {
		if !r.Active() {
			continue
		}
		c, ok := seen[r.Hypothesis]
		if !ok {
			order = append(order, r.Hypothesis)
		}
		switch r.Standing {
		case session.Supported:
			c[0]++
		case session.Refuted:
			c[2]++
		default:
			c[1]++
		}
		seen[r.Hypothesis] = c
	}
	out := make(map[string]session.Standing, len(seen))
	for _, h := range order {
		switch c := seen[h]; {
		case c[0] > 0 && c[2] == 0:
			out[h] = session.Supported
		case c[2] > 0 && c[0] == 0:
			out[h] = session.Refuted
		default:
			out[h] = session.Inconclusive
		}
	}
	return out
}

// Apply is the ranking's input with the lab's verdicts: a copy of entries, each with the
// standing its active results give it (none for the untested, whatever it carried). The
// ratings are the tournament's, untouched: session.Rank then orders by standing in tiers
// and by rating within a tier. Computing the standings afresh from the active results, and
// never adjusting a rating, is what makes a withdrawn result undo its effect exactly.
//
// How results change the ranking (for docs/experiments.md): a refuted hypothesis ranks
// below every hypothesis the lab has not refuted, whatever its rating, so it leaves the
// top 3; a supported one ranks as if rated session.SupportedBonus (100 Elo) higher, above
// the untested hypotheses rated near it but not above ones the tournament clearly prefers;
// an inconclusive result changes nothing. The asymmetry is deliberate. A refutation is the
// world disagreeing, which no number of won matches outweighs, and a session must not
// recommend what its own lab refuted. A support says the prediction held once, which a
// mediocre hypothesis can also do: placing every supported hypothesis above every untested
// one (tiers) locked hypotheses tested early above better ones found later, and lost
// quality in the closed-loop benchmark wherever the tournament's ratings were accurate
// (BENCHMARKS.md); a bonus of 100 Elo never lost significantly there. Within these rules
// the tournament's order stands.
func Apply(entries []session.Entry, results []Result) []session.Entry {
	st := Standings(results)
	out := slices.Clone(entries)
	for i := range out {
		out[i].Standing = st[out[i].ID]
	}
	return out
}

// Move is a hypothesis' place in the ranking (1 first) before and after a result.
type Move struct {
	Hypothesis string `json:"hypothesis"`
	From       int    `json:"from"`
	To         int    `json:"to"`
}

// Change is what one result changed: its hypothesis' standing before and after it, and
// every hypothesis whose rank it moved, by new rank.
type Change struct {
	Experiment string           `json:"experiment"`
	Hypothesis string           `json:"hypothesis"`
	Before     session.Standing `json:"before"`
	After      session.Standing `json:"after"`
	Moves      []Move           `json:"moves,omitempty"`
}

// Changed is what results[i] changes, the other results as they are: the ranking without
// it against the ranking with it. For a withdrawn result it is what the result did while
// it stood, which its withdrawal undid.
func Changed(entries []session.Entry, results []Result, i int) Change {
	without, with := slices.Clone(results), slices.Clone(results)
	without[i].Withdrawal = "left out"
	with[i].Withdrawal = ""
	h := results[i].Hypothesis
	c := Change{Experiment: results[i].Experiment, Hypothesis: h, Before: Standings(without)[h], After: Standings(with)[h]}
	before := places(session.Rank(Apply(entries, without)))
	for to, e := range session.Rank(Apply(entries, with)) {
		if from := before[e.ID]; from != to+1 {
			c.Moves = append(c.Moves, Move{e.ID, from, to + 1})
		}
	}
	slices.SortFunc(c.Moves, func(a, b Move) int { return cmp.Compare(a.To, b.To) })
	return c
}

func places(ranked []session.Entry) map[string]int {
	m := make(map[string]int, len(ranked))
	for i, e := range ranked {
		m[e.ID] = i + 1
	}
	return m
}
