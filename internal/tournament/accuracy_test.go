package tournament

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// The pairing benchmark: how well the Elo ranking recovers the truth, as the number of
// matches grows, under three ways of choosing who meets whom.
//
// 200 hypotheses have a hidden true quality drawn from N(0, 1), as the offline simulator's
// Latent is. A single-turn judge prefers the better with the Bradley–Terry probability
// 1/(1+exp(-(qa-qb))), as the offline simulator's Compare does; a debate's judge is
// sharper, 1/(1+exp(-1.5(qa-qb))). Every strategy starts everyone at InitialElo, updates
// with Update and K, and gets the same budget of matches; a debate counts as one match.
//
//   - random: each match is a uniformly random pair.
//   - round-robin: all 19,900 pairs in one fixed shuffled order, each at most once.
//   - cosci: Schedule with the default Options in rounds of simRound matches, the ratings
//     updated after each round, no pair played twice; similarity is a topic model (20
//     topics, 0.6 within a topic), unrelated to quality. A player is New until its first
//     match.
//
// Scores are averaged over simSeeds seeds; each seed draws new qualities and topics.
const (
	simPlayers = 200
	simTopics  = 20
	simRound   = 50
	simSeeds   = 40
	simTopK    = 10
)

var simBudgets = []int{200, 400, 800, 1600, 3200}

var simStrategies = []string{"random", "round-robin", "cosci"}

// simScore is a strategy's accuracy after some number of matches.
type simScore struct {
	tau, precision float64
	debates        int
}

// simWorld is one seed's hypotheses.
type simWorld struct {
	ids     []string
	quality map[string]float64
	topic   map[string]int
}

func newWorld(seed uint64) simWorld {
	rng := rand.New(rand.NewPCG(seed, 0xc05c1))
	w := simWorld{quality: map[string]float64{}, topic: map[string]int{}}
	for i := range simPlayers {
		id := fmt.Sprintf("h-%04d", i)
		w.ids = append(w.ids, id)
		w.quality[id] = rng.NormFloat64()
		w.topic[id] = rng.IntN(simTopics)
	}
	return w
}

func (w simWorld) similarity(a, b string) float64 {
	if w.topic[a] == w.topic[b] {
		return 0.6
	}
	return 0
}

// simTournament is the ratings as the matches are played.
type simTournament struct {
	w       simWorld
	judge   *rand.Rand
	players map[string]*Player
	played  map[[2]string]bool
	matches int
	debates int
}

func newTournament(w simWorld, judgeSeed uint64) *simTournament {
	t := &simTournament{w: w, judge: rand.New(rand.NewPCG(judgeSeed, 0x1d6e)), players: map[string]*Player{}, played: map[[2]string]bool{}}
	for _, id := range w.ids {
		t.players[id] = &Player{ID: id, Elo: InitialElo}
	}
	return t
}

// play judges one match and updates the ratings.
func (t *simTournament) play(m Match) {
	sharpness := 1.0
	if m.Debate {
		sharpness = 1.5
		t.debates++
	}
	aWins := t.judge.Float64() < 1/(1+math.Exp(-sharpness*(t.w.quality[m.A]-t.w.quality[m.B])))
	a, b := t.players[m.A], t.players[m.B]
	a.Elo, b.Elo = Update(a.Elo, b.Elo, aWins, K(a.Matches), K(b.Matches))
	a.Matches++
	b.Matches++
	t.played[key(m.A, m.B)] = true
	t.matches++
}

func key(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

func (t *simTournament) list() []Player {
	ps := make([]Player, 0, len(t.w.ids))
	for _, id := range t.w.ids {
		ps = append(ps, *t.players[id])
	}
	return ps
}

func (t *simTournament) score() simScore {
	r := Ranking(t.list())
	return simScore{tau: KendallTau(r, t.w.quality), precision: TopKPrecision(r, t.w.quality, simTopK), debates: t.debates}
}

// simulate plays one strategy on one seed and scores it at each of simBudgets.
func simulate(seed uint64, strategy string) []simScore {
	w := newWorld(seed)
	t := newTournament(w, seed)
	rng := rand.New(rand.NewPCG(seed, 0xbeef))
	var order [][2]string // round-robin's
	if strategy == "round-robin" {
		for i, a := range w.ids {
			for _, b := range w.ids[i+1:] {
				order = append(order, [2]string{a, b})
			}
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	var scores []simScore
	for _, budget := range simBudgets {
		for t.matches < budget {
			switch strategy {
			case "random":
				i := rng.IntN(len(w.ids))
				j := rng.IntN(len(w.ids) - 1)
				if j >= i {
					j++
				}
				t.play(Match{A: w.ids[i], B: w.ids[j], Turns: 1})
			case "round-robin":
				p := order[t.matches]
				t.play(Match{A: p[0], B: p[1], Turns: 1})
			case "cosci":
				ps := t.list()
				for i := range ps {
					ps[i].New = ps[i].Matches == 0
				}
				round := Schedule(ps, w.similarity, min(simRound, budget-t.matches),
					func(a, b string) bool { return t.played[key(a, b)] }, Options{})
				if len(round) == 0 {
					panic("cosci scheduled no match")
				}
				for _, m := range round { // ratings move only after the whole round is scheduled
					t.play(m)
				}
			}
		}
		scores = append(scores, t.score())
	}
	return scores
}

// simTable runs every strategy on every seed, in parallel, and averages by budget:
// table[strategy][budget].
func simTable() [][]simScore {
	runs := make([][][]simScore, len(simStrategies))
	var wg sync.WaitGroup
	for s, strategy := range simStrategies {
		runs[s] = make([][]simScore, simSeeds)
		for seed := range simSeeds {
			wg.Go(func() { runs[s][seed] = simulate(uint64(seed+1), strategy) })
		}
	}
	wg.Wait()
	table := make([][]simScore, len(simStrategies))
	for s := range simStrategies {
		table[s] = make([]simScore, len(simBudgets))
		for b := range simBudgets {
			for _, run := range runs[s] {
				table[s][b].tau += run[b].tau / simSeeds
				table[s][b].precision += run[b].precision / simSeeds
				table[s][b].debates += run[b].debates
			}
			table[s][b].debates /= simSeeds
		}
	}
	return table
}

// TestPairingAccuracy is the benchmark's target: at every equal budget from 800 matches
// up, cosci's Schedule finds more of the true top 10 than random pairing and round-robin.
// With -v it logs the whole table.
func TestPairingAccuracy(t *testing.T) {
	table := simTable()
	var b strings.Builder
	fmt.Fprintf(&b, "%d hypotheses, quality ~ N(0,1), %d seeds; mean Kendall tau and top-%d precision of the Elo ranking\n\n", simPlayers, simSeeds, simTopK)
	fmt.Fprintf(&b, "| matches |")
	for _, s := range simStrategies {
		fmt.Fprintf(&b, " %s tau | %s top-%d |", s, s, simTopK)
	}
	fmt.Fprintf(&b, " cosci debates |\n|---:|")
	for range simStrategies {
		fmt.Fprintf(&b, "---:|---:|")
	}
	fmt.Fprintf(&b, "---:|\n")
	for i, budget := range simBudgets {
		fmt.Fprintf(&b, "| %d |", budget)
		for s := range simStrategies {
			fmt.Fprintf(&b, " %.3f | %.3f |", table[s][i].tau, table[s][i].precision)
		}
		fmt.Fprintf(&b, " %d |\n", table[2][i].debates)
	}
	t.Log("\n" + b.String())
	for i, budget := range simBudgets {
		if budget < 800 {
			continue
		}
		cosci := table[2][i].precision
		for s, name := range simStrategies[:2] {
			if cosci <= table[s][i].precision {
				t.Errorf("%d matches: cosci's top-%d precision %.3f does not beat %s's %.3f", budget, simTopK, cosci, name, table[s][i].precision)
			}
		}
	}
}

// BenchmarkSchedule times one round's scheduling for 1000 players, 50 of them new.
func BenchmarkSchedule(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	players := make([]Player, 1000)
	topic := map[string]int{}
	for i := range players {
		id := fmt.Sprintf("h-%04d", i)
		p := Player{ID: id, Elo: InitialElo, New: i >= 950}
		if !p.New {
			p.Elo += 150 * rng.NormFloat64()
			p.Matches = 3 + rng.IntN(20)
		}
		players[i] = p
		topic[id] = rng.IntN(50)
	}
	sim := func(a, c string) float64 {
		if topic[a] == topic[c] {
			return 0.6
		}
		return 0
	}
	never := func(a, c string) bool { return false }
	for b.Loop() {
		Schedule(players, sim, 50, never, Options{})
	}
}
