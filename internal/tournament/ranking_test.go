package tournament

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The ranking benchmark (issue #12): how well each way of choosing matches and rating
// hypotheses finds the true top 10 for a number of model calls.
//
// A seed draws its hypotheses as the pairing benchmark's do (newWorld): rankPlayers of
// them, each with a hidden quality from N(0, 1) and a topic (the similarity between two is
// 0.6 within a topic, 0 across; it says nothing about quality).
// The judge is the offline simulator's: a single comparison prefers a over b with
// probability σ(qa − qb + bias) when a is shown first, a debate with σ(1.5(qa − qb) + bias)
// for its turns' worth of calls. bias is the first-position bias, 0 unless a table says.
//
// Two settings:
//   - static: all hypotheses are there from the start; the ranking is scored after n, 2n,
//     4n, 8n and 16n calls (n = rankPlayers), one run per seed going through them all.
//   - incremental, as a session runs: rankRounds rounds each bring rankPlayers/rankRounds
//     new hypotheses, the budget is spread evenly over the rounds, and the ranking is
//     scored after the last round. Each budget is a run of its own.
//
// Each strategy spends exactly the budget, a debate costing its turns. Scores are the mean
// over seeds and its standard error.

const (
	rankPlayers = simPlayers
	rankRounds  = 10
	rankTopK    = 10
)

var (
	rankMultiples = []int{1, 2, 4, 8, 16}
	benchSeeds    = flag.Int("bench.seeds", 40, "BenchmarkRanking: seeds per cell")
)

// arena is one strategy's run on one seed: the hypotheses entered so far, the judge, and
// every result.
type arena struct {
	w       simWorld
	judge   *rand.Rand
	bias    float64
	pool    []string
	calls   int
	results []Result
}

// play judges a match, shown A first, and records it.
func (a *arena) play(m Match) Result {
	sharp := 1.0
	if m.Debate {
		sharp = 1.5
	}
	p := sigmoid(sharp*(a.w.quality[m.A]-a.w.quality[m.B]) + a.bias)
	r := Result{A: m.A, B: m.B, AWon: a.judge.Float64() < p, Debate: m.Debate}
	a.results = append(a.results, r)
	a.calls += max(1, m.Turns)
	return r
}

// A ranker is a strategy: it hears of new hypotheses, spends calls on matches and ranks.
type ranker interface {
	enter(ids []string)
	spend(a *arena, calls int) // exactly calls model calls
	ranking(a *arena) []string // best first
}

// rankStrategies are the strategies, by the name the tables use.
var rankStrategies = []struct {
	name string
	make func(seed uint64) ranker
}{
	{"cosci Elo (current)", func(uint64) ranker { return &scheduleElo{} }},
	{"cosci BT + active top-K (new)", func(seed uint64) ranker { return &activeBT{seed: seed, withBias: true} }},
	{"random + Elo", func(seed uint64) ranker { return &randomElo{rng: rand.New(rand.NewPCG(seed, 1))} }},
	{"round-robin + Elo", func(seed uint64) ranker { return &roundRobinElo{rng: rand.New(rand.NewPCG(seed, 2))} }},
	{"buckets + Elo (open co-scientist)", func(seed uint64) ranker { return &bucketsElo{rng: rand.New(rand.NewPCG(seed, 3))} }},
	{"Swiss + BT", func(uint64) ranker { return &swissBT{} }},
}

// elo is the Elo bookkeeping the Elo strategies share.
type elo struct {
	rating  map[string]float64
	matches map[string]int
	k       func(matches int) float64
}

func (e *elo) enter(ids []string) {
	if e.rating == nil {
		e.rating, e.matches = map[string]float64{}, map[string]int{}
	}
	for _, id := range ids {
		e.rating[id] = InitialElo
	}
}

func (e *elo) update(r Result) {
	k := e.k
	if k == nil {
		k = K
	}
	a, b := e.rating[r.A], e.rating[r.B]
	e.rating[r.A], e.rating[r.B] = Update(a, b, r.AWon, k(e.matches[r.A]), k(e.matches[r.B]))
	e.matches[r.A]++
	e.matches[r.B]++
}

func (e *elo) players(pool []string) []Player {
	ps := make([]Player, len(pool))
	for i, id := range pool {
		ps[i] = Player{ID: id, Elo: e.rating[id], Matches: e.matches[id], New: e.matches[id] == 0}
	}
	return ps
}

func (e *elo) ranking(a *arena) []string { return Ranking(e.players(a.pool)) }

// scheduleElo is cosci's scheduler before this issue: Schedule in rounds of 50 matches,
// no pair twice, Elo updated after each round; the better rated is shown first.
type scheduleElo struct {
	elo
	played map[string]bool
}

func (s *scheduleElo) spend(a *arena, calls int) {
	if s.played == nil {
		s.played = map[string]bool{}
	}
	end := a.calls + calls
	for a.calls < end {
		round := Schedule(s.players(a.pool), a.w.similarity, min(simRound, end-a.calls),
			func(x, y string) bool { return s.played[pairKey(x, y)] }, Options{})
		if len(round) == 0 {
			s.played = map[string]bool{} // everyone has met everyone: meet again
			continue
		}
		var rs []Result
		for _, m := range round {
			if a.calls+m.Turns > end {
				m.Debate, m.Turns = false, 1
			}
			if a.calls >= end {
				break
			}
			rs = append(rs, a.play(m))
			s.played[pairKey(m.A, m.B)] = true
		}
		for _, r := range rs {
			s.update(r)
		}
	}
}

func pairKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + "|" + b
}

// activeBT is the new way: Fit all results, Active picks a batch, play it, refit.
type activeBT struct {
	seed          uint64
	withBias      bool // fit the judge's position bias (false: hold it at 0)
	strongerFirst bool // show the stronger-rated first, as the Elo scheduler did, instead of alternating
	opts          ActiveOptions
	last          Ratings
}

func (s *activeBT) enter([]string) {}

// fit fits every result, starting from the last fit as a session does (FitFrom).
func (s *activeBT) fit(a *arena) Ratings {
	s.last = fit(a.pool, a.results, s.last.By, s.withBias)
	return s.last
}

func (s *activeBT) spend(a *arena, calls int) {
	end := a.calls + calls
	for a.calls < end {
		r := s.fit(a)
		cs := Contenders(a.pool, r, a.results)
		opts := s.opts
		opts.Seed = s.seed + uint64(a.calls)
		for _, m := range Active(cs, a.w.similarity, min(Batch, end-a.calls), opts) {
			if s.strongerFirst && r.By[m.B].Strength > r.By[m.A].Strength {
				m.A, m.B = m.B, m.A
			}
			a.play(m)
		}
	}
}

func (s *activeBT) ranking(a *arena) []string { return s.fit(a).Ranked(a.pool) }

// randomElo: each match a uniformly random pair, shown in random order.
type randomElo struct {
	elo
	rng *rand.Rand
}

func (s *randomElo) spend(a *arena, calls int) {
	for range calls {
		i := s.rng.IntN(len(a.pool))
		j := s.rng.IntN(len(a.pool) - 1)
		if j >= i {
			j++
		}
		s.update(a.play(Match{A: a.pool[i], B: a.pool[j], Turns: 1}))
	}
}

// roundRobinElo: every pair of the pool once in a shuffled order; the pairs of
// newcomers join the unplayed ones, which are shuffled again.
type roundRobinElo struct {
	elo
	rng    *rand.Rand
	queue  [][2]string
	played map[string]bool
}

func (s *roundRobinElo) enter(ids []string) {
	s.elo.enter(ids)
	s.queue = nil // rebuilt from the pool at the next spend
}

func (s *roundRobinElo) spend(a *arena, calls int) {
	if s.played == nil {
		s.played = map[string]bool{}
	}
	for range calls {
		if len(s.queue) == 0 {
			for i, x := range a.pool {
				for _, y := range a.pool[i+1:] {
					if !s.played[pairKey(x, y)] {
						s.queue = append(s.queue, [2]string{x, y})
					}
				}
			}
			if len(s.queue) == 0 {
				s.played = map[string]bool{}
				continue
			}
			s.rng.Shuffle(len(s.queue), func(i, j int) { s.queue[i], s.queue[j] = s.queue[j], s.queue[i] })
		}
		p := s.queue[0]
		s.queue = s.queue[1:]
		s.played[pairKey(p[0], p[1])] = true
		s.update(a.play(Match{A: p[0], B: p[1], Turns: 1}))
	}
}

// bucketsElo is the best open co-scientist's pairing: each match is, with probability
// 0.4, a least-played hypothesis against its nearest rating; 0.4, a pair of close ratings
// (one of the five nearest) chosen with weight 1 − similarity, so unlike pairs; 0.2, a
// random pair. Elo with K 32 for a hypothesis' first 10 matches, 16 after.
type bucketsElo struct {
	elo
	rng *rand.Rand
}

func (s *bucketsElo) spend(a *arena, calls int) {
	s.k = func(m int) float64 {
		if m < 10 {
			return 32
		}
		return 16
	}
	for range calls {
		pool := a.pool
		var x, y string
		switch u := s.rng.Float64(); {
		case u < 0.4:
			least := math.MaxInt
			var cands []string
			for _, id := range pool {
				switch m := s.matches[id]; {
				case m < least:
					least, cands = m, []string{id}
				case m == least:
					cands = append(cands, id)
				}
			}
			x = cands[s.rng.IntN(len(cands))]
			y = s.nearest(pool, x, 1)[0]
		case u < 0.8:
			x = pool[s.rng.IntN(len(pool))]
			near := s.nearest(pool, x, 5)
			total := 0.0
			for _, id := range near {
				total += 1 - a.w.similarity(x, id)
			}
			pick := s.rng.Float64() * total
			y = near[len(near)-1]
			for _, id := range near {
				if pick -= 1 - a.w.similarity(x, id); pick < 0 {
					y = id
					break
				}
			}
		default:
			i := s.rng.IntN(len(pool))
			j := s.rng.IntN(len(pool) - 1)
			if j >= i {
				j++
			}
			x, y = pool[i], pool[j]
		}
		s.update(a.play(Match{A: x, B: y, Turns: 1}))
	}
}

// nearest is the n hypotheses of pool nearest to x in rating, nearest first.
func (s *bucketsElo) nearest(pool []string, x string, n int) []string {
	others := slices.DeleteFunc(slices.Clone(pool), func(id string) bool { return id == x })
	slices.SortFunc(others, func(p, q string) int {
		if c := cmp.Compare(math.Abs(s.rating[p]-s.rating[x]), math.Abs(s.rating[q]-s.rating[x])); c != 0 {
			return c
		}
		return cmp.Compare(p, q)
	})
	return others[:min(n, len(others))]
}

// swissBT: Swiss rounds on fitted Bradley–Terry strengths: sort by strength, pair
// neighbours (the first with the next it has not met, if any), play the round, refit.
type swissBT struct {
	met map[string]bool
}

func (s *swissBT) enter([]string) {}

func (s *swissBT) spend(a *arena, calls int) {
	if s.met == nil {
		s.met = map[string]bool{}
	}
	end := a.calls + calls
	for a.calls < end {
		order := fit(a.pool, a.results, nil, true).Ranked(a.pool)
		for len(order) >= 2 && a.calls < end {
			x, j := order[0], 1
			for k := 1; k < len(order); k++ {
				if !s.met[pairKey(x, order[k])] {
					j = k
					break
				}
			}
			y := order[j]
			order = slices.Delete(order, j, j+1)[1:]
			s.met[pairKey(x, y)] = true
			a.play(Match{A: x, B: y, Turns: 1})
		}
	}
}

func (s *swissBT) ranking(a *arena) []string {
	return fit(a.pool, a.results, nil, true).Ranked(a.pool)
}

// rankScore is a ranking's accuracy.
type rankScore struct{ precision, regret, tau float64 }

func score(w simWorld, pool, ranking []string) rankScore {
	truth := make(map[string]float64, len(pool))
	for _, id := range pool {
		truth[id] = w.quality[id]
	}
	best := slices.Clone(pool)
	slices.SortFunc(best, func(x, y string) int { return cmp.Compare(truth[y], truth[x]) })
	k := min(rankTopK, len(pool))
	regret := 0.0
	for i := range k {
		regret += (truth[best[i]] - truth[ranking[i]]) / float64(k)
	}
	return rankScore{precision: TopKPrecision(ranking, truth, k), regret: regret, tau: KendallTau(ranking, truth)}
}

// runStatic plays one strategy on one seed with everyone there from the start, and scores
// it after each budget of budgets (model calls, increasing).
func runStatic(seed uint64, newRanker func(uint64) ranker, bias float64, budgets []int) []rankScore {
	w := newWorld(seed)
	a := &arena{w: w, judge: rand.New(rand.NewPCG(seed, 0x1d6e)), bias: bias, pool: w.ids}
	r := newRanker(seed)
	r.enter(w.ids)
	var out []rankScore
	for _, b := range budgets {
		r.spend(a, b-a.calls)
		out = append(out, score(w, a.pool, r.ranking(a)))
	}
	return out
}

// runIncremental plays one strategy on one seed as a session would: rankRounds rounds,
// each bringing its newcomers and spending its share of budget.
func runIncremental(seed uint64, newRanker func(uint64) ranker, bias float64, budget int) rankScore {
	w := newWorld(seed)
	a := &arena{w: w, judge: rand.New(rand.NewPCG(seed, 0x1d6e)), bias: bias}
	r := newRanker(seed)
	per := rankPlayers / rankRounds
	for round := range rankRounds {
		fresh := w.ids[round*per : (round+1)*per]
		a.pool = append(a.pool, fresh...)
		r.enter(fresh)
		r.spend(a, budget*(round+1)/rankRounds-a.calls)
	}
	return score(w, a.pool, r.ranking(a))
}

// cell is a mean and its standard error over seeds.
type cell struct{ mean, se float64 }

func (c cell) String() string { return fmt.Sprintf("%.3f ± %.3f", c.mean, c.se) }

func summarize(xs []float64) cell {
	n := float64(len(xs))
	mean := 0.0
	for _, x := range xs {
		mean += x / n
	}
	v := 0.0
	for _, x := range xs {
		v += (x - mean) * (x - mean) / (n - 1)
	}
	return cell{mean, math.Sqrt(v / n)}
}

// parallel runs f(seed) for seeds 1..seeds on every core.
func parallelSeeds(seeds int, f func(seed uint64)) {
	var wg sync.WaitGroup
	work := make(chan uint64)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for seed := range work {
				f(seed)
			}
		})
	}
	for s := range seeds {
		work <- uint64(s + 1)
	}
	close(work)
	wg.Wait()
}

// incrementalTable scores each strategy of makes at each budget of budgets, incremental
// setting: table[strategy][budget] for precision, regret and tau.
func incrementalTable(seeds int, makes []func(uint64) ranker, bias float64, budgets []int) [][][3]cell {
	runs := newRuns(len(makes), len(budgets), seeds)
	parallelSeeds(seeds, func(seed uint64) {
		for s, mk := range makes {
			for b, budget := range budgets {
				runs[s][b][seed-1] = runIncremental(seed, mk, bias, budget)
			}
		}
	})
	return tabulate(runs)
}

// staticTable is incrementalTable's static counterpart.
func staticTable(seeds int, makes []func(uint64) ranker, bias float64, budgets []int) [][][3]cell {
	runs := newRuns(len(makes), len(budgets), seeds)
	parallelSeeds(seeds, func(seed uint64) {
		for s, mk := range makes {
			for b, sc := range runStatic(seed, mk, bias, budgets) {
				runs[s][b][seed-1] = sc
			}
		}
	})
	return tabulate(runs)
}

// newRuns holds the scores of every strategy, budget and seed: runs[strategy][budget][seed-1].
func newRuns(strategies, budgets, seeds int) [][][]rankScore {
	runs := make([][][]rankScore, strategies)
	for s := range runs {
		runs[s] = make([][]rankScore, budgets)
		for b := range runs[s] {
			runs[s][b] = make([]rankScore, seeds)
		}
	}
	return runs
}

func tabulate(runs [][][]rankScore) [][][3]cell {
	out := make([][][3]cell, len(runs))
	for s := range runs {
		out[s] = make([][3]cell, len(runs[s]))
		for b, rs := range runs[s] {
			var p, r, t []float64
			for _, x := range rs {
				p, r, t = append(p, x.precision), append(r, x.regret), append(t, x.tau)
			}
			out[s][b] = [3]cell{summarize(p), summarize(r), summarize(t)}
		}
	}
	return out
}

func budgetsOf(multiples []int) []int {
	var out []int
	for _, m := range multiples {
		out = append(out, m*rankPlayers)
	}
	return out
}

// markdown writes a table: a row per strategy and budget, precision, regret and tau.
func markdown(title string, names []string, budgets []int, t [][][3]cell) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n| strategy | calls | top-%d precision | quality regret | Kendall tau |\n|---|---:|---:|---:|---:|\n", title, rankTopK)
	for s, name := range names {
		for i, budget := range budgets {
			fmt.Fprintf(&b, "| %s | %dn | %s | %s | %s |\n", name, budget/rankPlayers, t[s][i][0], t[s][i][1], t[s][i][2])
		}
	}
	return b.String()
}

// BenchmarkRanking is the ranking benchmark: it logs the tables BENCHMARKS.md shows, for
// -bench.seeds seeds (40 by default). One iteration is the whole benchmark; run it with
// -benchtime 1x.
func BenchmarkRanking(b *testing.B) {
	seeds := *benchSeeds
	var names []string
	var makes []func(uint64) ranker
	for _, s := range rankStrategies {
		names = append(names, s.name)
		makes = append(makes, s.make)
	}
	budgets := budgetsOf(rankMultiples)
	eight := budgetsOf([]int{8})
	for b.Loop() {
		b.Logf("\n%s", markdown(fmt.Sprintf("Incremental: %d rounds of %d new hypotheses, the budget spread over them; %d seeds", rankRounds, rankPlayers/rankRounds, seeds),
			names, budgets, incrementalTable(seeds, makes, 0, budgets)))
		b.Logf("\n%s", markdown(fmt.Sprintf("Static: %d hypotheses from the start; %d seeds", rankPlayers, seeds),
			names, budgets, staticTable(seeds, makes, 0, budgets)))

		const bias = 0.5
		biased := []struct {
			name string
			make func(uint64) ranker
		}{
			{"cosci Elo (current): the stronger first", func(uint64) ranker { return &scheduleElo{} }},
			{"new: alternating, bias fitted", func(seed uint64) ranker { return &activeBT{seed: seed, withBias: true} }},
			{"new: alternating, bias not fitted", func(seed uint64) ranker { return &activeBT{seed: seed} }},
			{"new: the stronger first, bias fitted", func(seed uint64) ranker { return &activeBT{seed: seed, withBias: true, strongerFirst: true} }},
			{"new: the stronger first, bias not fitted", func(seed uint64) ranker { return &activeBT{seed: seed, strongerFirst: true} }},
		}
		names, makes = nil, nil
		for _, x := range biased {
			names = append(names, x.name)
			makes = append(makes, x.make)
		}
		b.Logf("\n%s", markdown(fmt.Sprintf("Position bias: the judge favours the first shown by %.1f logits; incremental, %d seeds", bias, seeds),
			names, eight, incrementalTable(seeds, makes, bias, eight)))

		names, makes = nil, nil
		for _, share := range []float64{0, 0.1, 0.25, 0.5, 1} {
			names = append(names, fmt.Sprintf("new, debate share %.2f", share))
			makes = append(makes, func(seed uint64) ranker {
				return &activeBT{seed: seed, withBias: true, opts: ActiveOptions{DebateShare: share}}
			})
		}
		b.Logf("\n%s", markdown(fmt.Sprintf("Debates: a share of the boundary matches as debates of 3 to 5 calls; incremental, %d seeds", seeds),
			names, budgetsOf([]int{4, 8, 16}), incrementalTable(seeds, makes, 0, budgetsOf([]int{4, 8, 16}))))
	}
}
