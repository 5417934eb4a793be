package tournament

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
)

// Options tune Schedule. The zero value means the defaults.
type Options struct {
	// DebateTopK: a match between two players both ranked in the top DebateTopK is a
	// multi-turn debate. 0 means 10; negative means no debates.
	DebateTopK int
	// FocusTopK is the size of the top the schedule tries to get right: players whose
	// rating may place them on either side of its boundary are contenders. 0 means 10.
	FocusTopK int
	// MaxPerPlayer caps one player's matches in one round. 0 means 3.
	MaxPerPlayer int
	// Window is how many neighbours in the Elo order, on each side, each player may be
	// paired with (newcomers may also meet anyone similar). 0 means 16.
	Window int
}

func (o Options) withDefaults() Options {
	if o.DebateTopK == 0 {
		o.DebateTopK = 10
	}
	if o.FocusTopK <= 0 {
		o.FocusTopK = 10
	}
	if o.MaxPerPlayer <= 0 {
		o.MaxPerPlayer = 3
	}
	if o.Window <= 0 {
		o.Window = 16
	}
	return o
}

// Debate lengths: MinTurns for players far apart in Elo, MaxDebateTurns for the closest;
// the paper's debates run 3 to 5 turns and never more than TurnLimit.
const (
	MinTurns       = 3
	MaxDebateTurns = 5
	TurnLimit      = 10
)

// The weights of Schedule's pair score. A candidate pair (a, b) scores
//
//	  wNew   · (need(a) + need(b))                       newcomers first
//	+ wTop   · contend(a) · contend(b) · close(a, b)     close pairs at the top's boundary
//	+ wClose · close(a, b)                               any close pair
//	+ wSim   · similarity(a, b)                          like against like
//
// where, for a player with m matches (counting those already picked this round; a New
// player's earlier matches do not count):
//
//	need(p)    = max(0, settled - m) / settled: 1, 2/3, 1/3, then 0 after 3 matches.
//	contend(p) = exp(-|Elo(p) - boundary| · sqrt(m+1) / spread): 1 on the boundary of the
//	             top FocusTopK (the midpoint between the ratings of the FocusTopK-th and the
//	             next player), falling off the further a player is from it compared with its
//	             rating's uncertainty, which shrinks as 1/sqrt(m+1). A player 100 points
//	             from the boundary after 3 matches scores 0.61; after 15, 0.37; 300 points
//	             away after 15 matches, 0.05. So the top ranks and the uncertain near them
//	             contend; the settled middle and bottom do not.
//	close(a,b) = 4 E (1-E) with E = Expected(Elo(a), Elo(b)): 1 for equal ratings, 0.92
//	             100 points apart, 0.64 at 240: the least predictable, so most informative,
//	             matches.
//
// With wNew = 4 a match between two fresh newcomers (8) outranks anything else (at most
// 2 + 0.25 + 0.5): every newcomer gets a first rating before the top is refined. A
// newcomer's third match (need 1/3, 1.33 and up) competes with the contenders' close pairs
// (up to 2.75), so once newcomers have two matches the budget goes mostly to the top.
// wClose lets settled players still meet close rivals when the contenders have reached
// MaxPerPlayer. wSim (0.5, against similarities mostly 0.1 to 0.6) breaks near-ties
// towards pairs the proximity graph links; it is small because similarity says nothing
// about which is better. Scores are recomputed as matches are picked, so a player's second
// match in a round scores lower than its first, and a round spreads over players.
//
// The weights were chosen on TestPairingAccuracy (200 hypotheses, 800 to 3200 matches):
// settled = 3 against 1, 2, 4, 5; wTop 1 to 4; wClose 0.25 to 1; wSim 0 to 0.5; spread
// 200 to 800. Within those ranges the top-10 precision moves by a few hundredths at most.
const (
	wNew    = 4.0
	wTop    = 2.0
	wClose  = 0.25
	wSim    = 0.5
	settled = 3.0
	spread  = 400.0
)

// Schedule chooses up to budget matches for one round. It favours, in this order of
// weight (see the weights above): newcomers that have few matches, close pairs among the
// contenders for the top, close pairs in general, and similar hypotheses. No pair is
// scheduled twice in a round, nor a pair that has played before (played reports it; nil
// means none has); nobody plays more than Options.MaxPerPlayer matches in the round. A
// match between two players both in the top Options.DebateTopK is a debate of MinTurns to
// MaxDebateTurns turns, more the closer their ratings; the others are single comparisons
// (Turns 1).
//
// similarity may be nil (no proximity graph yet). It is called for the pairs within
// Options.Window places of each other in the Elo order and for every pair with a newcomer
// (New, or fewer matches than a settled player), so a round costs about
// len(players) × (Window + newcomers) calls. The result is deterministic: ties break by
// id, and matches come in the order chosen, A the better rated (ties by id).
func Schedule(players []Player, similarity func(a, b string) float64, budget int, played func(a, b string) bool, opts Options) []Match {
	opts = opts.withDefaults()
	if budget <= 0 || len(players) < 2 {
		return nil
	}
	ps := firstOfEach(players, func(p Player) string { return p.ID })
	slices.SortFunc(ps, byElo)
	n := len(ps)

	boundary := math.Inf(1) // everyone is in the top: nobody contends
	if k := opts.FocusTopK; k < n {
		boundary = (ps[k-1].Elo + ps[k].Elo) / 2
	}
	fresh := func(p Player) bool { return p.New || float64(p.Matches) < settled }
	count := make([]int, n) // matches scheduled this round, by rank
	score := func(i, j int, sim float64) float64 {
		a, b := ps[i], ps[j]
		ma, mb := matches(a, count[i]), matches(b, count[j])
		e := Expected(a.Elo, b.Elo)
		closeness := 4 * e * (1 - e)
		return wNew*(need(ma)+need(mb)) +
			wTop*contend(a.Elo, ma, boundary)*contend(b.Elo, mb, boundary)*closeness +
			wClose*closeness + wSim*sim
	}

	// Candidate pairs: each player with its Window neighbours in the Elo order, and each
	// newcomer with everyone similar to it further away. Each pair is considered once.
	h := &pairHeap{ps: ps}
	consider := func(i, j int, sim float64) {
		if i > j {
			i, j = j, i
		}
		if played != nil && played(ps[i].ID, ps[j].ID) {
			return
		}
		h.items = append(h.items, candidate{i: i, j: j, sim: sim, score: score(i, j, sim)})
	}
	for i := range n {
		for j := i + 1; j <= i+opts.Window && j < n; j++ {
			sim := 0.0
			if similarity != nil {
				sim = similarity(ps[i].ID, ps[j].ID)
			}
			consider(i, j, sim)
		}
	}
	if similarity != nil {
		for i := range n {
			if !fresh(ps[i]) {
				continue
			}
			for j := range n {
				if abs(i-j) <= opts.Window || (j < i && fresh(ps[j])) {
					continue // a window pair, or a pair of newcomers seen from the other side
				}
				if sim := similarity(ps[i].ID, ps[j].ID); sim > 0 {
					consider(i, j, sim)
				}
			}
		}
	}
	heap.Init(h)

	var matches []Match
	for h.Len() > 0 && len(matches) < budget {
		c := heap.Pop(h).(candidate)
		if count[c.i] >= opts.MaxPerPlayer || count[c.j] >= opts.MaxPerPlayer {
			continue
		}
		if s := score(c.i, c.j, c.sim); s < c.score {
			c.score = s // stale: the players have matches since; try again at its new score
			heap.Push(h, c)
			continue
		}
		count[c.i]++
		count[c.j]++
		matches = append(matches, match(ps[c.i], ps[c.j], c.i, c.j, opts.DebateTopK))
	}
	return matches
}

// matches is how many matches count for a player with extra more scheduled this round: a
// New player's earlier ones do not (it should not have any).
func matches(p Player, extra int) float64 {
	if p.New {
		return float64(extra)
	}
	return float64(p.Matches + extra)
}

func abs(x int) int { return max(x, -x) }

// need is how much a player with m matches still needs its first ones, from 1 to 0.
func need(m float64) float64 { return max(0, settled-m) / settled }

// contend is how much a player rated elo after m matches contends for the top: 1 on the
// top's boundary, less the further it is compared with its rating's uncertainty.
func contend(elo, m, boundary float64) float64 {
	return math.Exp(-math.Abs(elo-boundary) * math.Sqrt(m+1) / spread)
}

// match makes the match between players of ranks i < j.
func match(a, b Player, i, j, debateTopK int) Match {
	m := Match{A: a.ID, B: b.ID, Turns: 1}
	if i < debateTopK && j < debateTopK {
		m.Debate, m.Turns = true, debateTurns(math.Abs(a.Elo-b.Elo))
	}
	return m
}

// debateTurns is a debate's length for players gap Elo points apart: MaxDebateTurns when
// they are within 25 points, one fewer within 75, MinTurns beyond; never above TurnLimit.
func debateTurns(gap float64) int {
	t := MinTurns
	switch {
	case gap <= 25:
		t = MaxDebateTurns
	case gap <= 75:
		t = MaxDebateTurns - 1
	}
	return min(max(t, MinTurns), TurnLimit)
}

type candidate struct {
	i, j  int // ranks, i < j
	sim   float64
	score float64
}

// pairHeap is a max-heap of candidates by score, ties by the players' ids.
type pairHeap struct {
	ps    []Player
	items []candidate
}

func (h *pairHeap) Len() int { return len(h.items) }
func (h *pairHeap) Less(x, y int) bool {
	a, b := h.items[x], h.items[y]
	if a.score != b.score {
		return a.score > b.score
	}
	if c := cmp.Compare(h.ps[a.i].ID, h.ps[b.i].ID); c != 0 {
		return c < 0
	}
	return h.ps[a.j].ID < h.ps[b.j].ID
}
func (h *pairHeap) Swap(x, y int) { h.items[x], h.items[y] = h.items[y], h.items[x] }
func (h *pairHeap) Push(x any)    { h.items = append(h.items, x.(candidate)) }
func (h *pairHeap) Pop() any {
	c := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return c
}
