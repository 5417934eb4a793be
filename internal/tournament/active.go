package tournament

import (
	"cmp"
	"hash/fnv"
	"math"
	"slices"
)

// Active pairing for the top: spend each match where it most likely changes which
// hypotheses make the top K (LUCB, after Kalyanakrishnan et al., 2012, on fitted
// Bradley–Terry strengths). Each pick takes the current top K; matches the member whose
// lower confidence bound is weakest against the outsider whose upper bound is strongest;
// then shrinks both players' variances as if the match had been played, so the next pick
// goes to the next most uncertain pair. The caller plays the batch, refits (Fit) and asks
// again. Newcomers first play a few placement games against hypotheses of similar
// strength, so that their bounds mean something before they compete on them.

// Contender is what Active needs to know about a hypothesis: its fitted rating and how
// often the judge has seen it first.
type Contender struct {
	ID string
	Rating
	// Lead is how many more times it was shown first than second: the next match shows
	// first whichever of the two has the smaller lead, to cancel the judge's position bias.
	Lead int
}

// Batch is how many model calls one batch of Active's matches spends before the ratings
// are fitted again: the workflow's and the ranking benchmark's.
const Batch = 20

// ActiveOptions tune Active. The zero value means the defaults.
type ActiveOptions struct {
	// TopK is the size of the top to get right. 0 means 10.
	TopK int
	// Placement is how many games a newcomer plays against hypotheses of its own strength
	// before it competes on its bounds; Active schedules at most one of them per batch, so
	// each is placed by the fit of the one before. 0 means 1: in the ranking benchmark
	// (BENCHMARKS.md) a second placement game lowered the top-10 precision at 4n calls from
	// 0.61 to 0.55, since it spends calls on the middle of the pool, and none at all gave
	// about the same precision but a coarser ranking below the top.
	Placement int
	// Confidence is the half-width of the bounds in standard errors. 0 means 2.5: in the
	// benchmark, 2 and 2.5 do as well up to 8n calls, and 2.5 better at 16n (0.84 against
	// 0.78), where there are results enough to explore more; 3 did no better.
	Confidence float64
	// DebateShare is the share of the boundary matches (not placements) played as
	// multi-turn debates. 0 means none: in the benchmark a debate's 3 to 5 calls teach
	// less than as many single comparisons, and a share of 0.1 already costs precision.
	DebateShare float64
	// Seed breaks position ties: the same seed gives the same batch.
	Seed uint64
}

func (o ActiveOptions) withDefaults() ActiveOptions {
	if o.TopK <= 0 {
		o.TopK = 10
	}
	if o.Placement <= 0 {
		o.Placement = 1
	}
	if o.Confidence <= 0 {
		o.Confidence = 2.5
	}
	o.DebateShare = min(max(o.DebateShare, 0), 1)
	return o
}

// similarEnough: among opponents that would each give at least this share of the best
// one's information, the most similar is chosen (the paper pairs like with like when it
// costs nothing).
const similarEnough = 0.9

// Active chooses a batch of matches costing at most budget model calls (a debate costs
// its turns). similarity may be nil. Players are ranked by strength, ties by id; a pair
// may meet again, even within a batch, when it is still the most informative. The batch
// is deterministic for given contenders, similarities, budget and options.
func Active(contenders []Contender, similarity func(a, b string) float64, budget int, opts ActiveOptions) []Match {
	opts = opts.withDefaults()
	cs := firstOfEach(contenders, func(c Contender) string { return c.ID })
	n := len(cs)
	if budget <= 0 || n < 2 {
		return nil
	}
	slices.SortFunc(cs, func(x, y Contender) int { return strongerFirst(x.Strength, y.Strength, x.ID, y.ID) })
	k := min(opts.TopK, n-1)
	b := batch{cs: cs, info: make([]float64, n), lead: make([]int, n), sim: similarity, seed: opts.Seed}
	for i, c := range cs {
		b.info[i] = 1 / (c.SE * c.SE)
		b.lead[i] = c.Lead
	}
	calls := 0

	// Placements: each newcomer's next placement game, fewest games first, against the
	// established hypothesis whose strength is nearest its own.
	var fresh []int
	for i, c := range cs {
		if c.Games < opts.Placement {
			fresh = append(fresh, i)
		}
	}
	slices.SortStableFunc(fresh, func(x, y int) int { return cmp.Compare(cs[x].Games, cs[y].Games) })
	for _, i := range fresh {
		if calls >= budget {
			break
		}
		var opps []int
		for j, c := range cs {
			if j != i && c.Games >= opts.Placement {
				opps = append(opps, j)
			}
		}
		if len(opps) == 0 { // no one is placed yet: newcomers place each other
			for _, j := range fresh {
				if j != i {
					opps = append(opps, j)
				}
			}
		}
		j := b.bestOpponent(i, opps)
		b.play(i, j, 1)
		calls++
	}

	// The boundary of the top k.
	var debates, boundary int
	for calls < budget {
		h, l := -1, -1
		for i := range n {
			if b.taken(i, opts.Placement) {
				continue
			}
			sd := opts.Confidence / math.Sqrt(b.info[i])
			if i < k {
				if h < 0 || cs[i].Strength-sd < b.lower(h, opts.Confidence) {
					h = i
				}
			} else if l < 0 || cs[i].Strength+sd > b.upper(l, opts.Confidence) {
				l = i
			}
		}
		if h < 0 || l < 0 {
			break
		}
		turns := 1
		if opts.DebateShare > 0 && float64(debates) < opts.DebateShare*float64(boundary+1) {
			turns = debateTurns(math.Abs(cs[h].Strength-cs[l].Strength) * eloPerUnit)
		}
		if calls+turns > budget {
			turns = 1
		}
		if turns > 1 {
			debates++
		}
		boundary++
		b.play(h, l, turns)
		calls += turns
	}
	return b.matches
}

// batch is a batch being chosen: the contenders by strength and what the batch's matches
// will have taught, as if they had been played.
type batch struct {
	cs      []Contender
	info    []float64 // Fisher information, growing with the batch's matches
	lead    []int
	played  map[int]bool // newcomers given their placement game in this batch
	sim     func(a, b string) float64
	seed    uint64
	matches []Match
}

func (b *batch) lower(i int, c float64) float64 { return b.cs[i].Strength - c/math.Sqrt(b.info[i]) }
func (b *batch) upper(i int, c float64) float64 { return b.cs[i].Strength + c/math.Sqrt(b.info[i]) }

// taken says a newcomer already has its placement game in this batch: its bounds wait for
// the fit of that game.
func (b *batch) taken(i, placement int) bool {
	return b.cs[i].Games < placement && b.played[i]
}

// gain is the information a match between i and j gives each of them: p(1−p).
func (b *batch) gain(i, j int) float64 {
	p := sigmoid(b.cs[i].Strength - b.cs[j].Strength)
	return p * (1 - p)
}

// bestOpponent is the most informative of opps for i, the most similar among those
// nearly as informative, then the nearest in strength, then by id.
func (b *batch) bestOpponent(i int, opps []int) int {
	best := 0.0
	for _, j := range opps {
		best = max(best, b.gain(i, j))
	}
	pick, pickSim := -1, 0.0
	for _, j := range opps {
		if b.gain(i, j) < similarEnough*best {
			continue
		}
		s := 0.0
		if b.sim != nil {
			s = b.sim(b.cs[i].ID, b.cs[j].ID)
		}
		if pick < 0 || s > pickSim || (s == pickSim && b.gain(i, j) > b.gain(i, pick)) {
			pick, pickSim = j, s
		}
	}
	return pick
}

// play adds the match between i and j to the batch and counts what it will teach.
func (b *batch) play(i, j, turns int) {
	g := b.gain(i, j)
	b.info[i] += g
	b.info[j] += g
	if b.played == nil {
		b.played = map[int]bool{}
	}
	b.played[i], b.played[j] = true, true
	first, second := i, j
	if b.lead[j] < b.lead[i] || (b.lead[j] == b.lead[i] && b.coin(i, j)) {
		first, second = j, i
	}
	b.lead[first]++
	b.lead[second]--
	m := Match{A: b.cs[first].ID, B: b.cs[second].ID, Turns: turns, Debate: turns > 1}
	b.matches = append(b.matches, m)
}

// coin is a fair coin for the pair's next meeting, from the seed: who goes first when
// both have been first as often.
func (b *batch) coin(i, j int) bool {
	x, y := b.cs[i].ID, b.cs[j].ID
	if x > y {
		x, y = y, x
	}
	h := fnv.New64a()
	var s [8]byte
	for n := range 8 {
		s[n] = byte(b.seed >> (8 * n))
	}
	h.Write(s[:])
	h.Write([]byte(x + "|" + y))
	h.Write([]byte{byte(len(b.matches))})
	return h.Sum64()&1 == 1
}

// Contenders are ids with their ratings from r and their leads from results: what Active
// needs of a session.
func Contenders(ids []string, r Ratings, results []Result) []Contender {
	lead := map[string]int{}
	for _, x := range results {
		lead[x.A]++
		lead[x.B]--
	}
	cs := make([]Contender, len(ids))
	for i, id := range ids {
		cs[i] = Contender{ID: id, Rating: r.By[id], Lead: lead[id]}
	}
	return cs
}

// BoundarySE is how unsure the boundary of the top k of ids is: the mean standard error,
// in Elo points, of the k-th and the (k+1)-th strongest. The supervisor calls the top
// settled when its members stay the same and this stops shrinking.
func (r Ratings) BoundarySE(ids []string, k int) float64 {
	if k <= 0 || len(ids) <= k {
		return 0
	}
	ranked := r.Ranked(ids)
	return round(eloPerUnit * (r.By[ranked[k-1]].SE + r.By[ranked[k]].SE) / 2)
}
