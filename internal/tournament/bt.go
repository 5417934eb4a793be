package tournament

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Bradley–Terry ratings. Elo moves two ratings a fixed step per match and forgets the
// order of events only slowly, so its noise never falls below what one step makes (about
// ±40 Elo points with K 16, the size of the gaps around rank 10 of 200). Fit instead finds
// the strengths that best explain every result of the session at once, so each new result
// sharpens all of them.
//
// The model: the hypothesis shown first, a, beats b with probability
//
//	σ(θa − θb + β)    σ(x) = 1/(1+e^−x)
//
// where θ is a hypothesis' strength (the natural log of its Bradley–Terry strength) and β
// is the judge's bias towards the first position, fitted with the strengths. The prior
// θ ~ N(0, τ²) keeps sparse results from giving extreme strengths (a hypothesis that won
// its only match would otherwise be infinitely strong). Its scale τ is fitted from the data
// too (empirical Bayes): a pool of very unequal hypotheses earns a wide prior, a pool of
// similar ones a narrow one.

// Result is one judged match, as the session records it: A was shown to the judge first.
// In JSON it is one short sentence, since a session keeps every result: "h-0001 beat
// h-0002" or "h-0001 lost to h-0002", A first, and " in a debate" after a debate's.
type Result struct {
	A      string
	B      string
	AWon   bool
	Debate bool
}

// The words of a result's sentence.
const (
	beat     = " beat "
	lostTo   = " lost to "
	inDebate = " in a debate"
)

func (r Result) String() string {
	verdict, debate := lostTo, ""
	if r.AWon {
		verdict = beat
	}
	if r.Debate {
		debate = inDebate
	}
	return r.A + verdict + r.B + debate
}

func (r Result) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

func (r *Result) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("a match result is a string like \"h-0001 beat h-0002\": %w", err)
	}
	body, debate := strings.CutSuffix(s, inDebate)
	for _, verdict := range []string{beat, lostTo} {
		if a, b, ok := strings.Cut(body, verdict); ok && a != "" && b != "" {
			*r = Result{A: a, B: b, AWon: verdict == beat, Debate: debate}
			return nil
		}
	}
	return fmt.Errorf("match result %q: want the first shown, \"beat\" or \"lost to\", and the second, like \"h-0001 beat h-0002\"", s)
}

// Rating is one hypothesis' fitted strength θ and its standard error.
type Rating struct {
	Strength float64 // θ: 0 is the pool's prior mean; +1 wins e (2.7) times as often
	SE       float64 // from the Fisher information at the fit
	Games    int     // results it appears in
}

// Elo is the strength on the Elo scale, 1200 + 400·log10(e^θ), which reads as the
// ratings did before they were fitted: 400 points are odds of 10 to 1.
func (r Rating) Elo() float64 { return round(InitialElo + eloPerUnit*r.Strength) }

// EloSE is the standard error on the Elo scale.
func (r Rating) EloSE() float64 { return round(eloPerUnit * r.SE) }

// RatingOf is the rating a record shows as elo ± se on the Elo scale.
func RatingOf(elo, se float64) Rating {
	return Rating{Strength: (elo - InitialElo) / eloPerUnit, SE: se / eloPerUnit}
}

// eloPerUnit converts strengths to Elo points: 400/ln 10.
const eloPerUnit = 400 / math.Ln10

// Ratings is a fit: every hypothesis' rating, the prior's fitted scale and the judge's
// fitted first-position bias.
type Ratings struct {
	By        map[string]Rating
	Scale     float64 // τ, the prior's standard deviation of θ
	FirstBias float64 // β, in the same units as θ
	Sweeps    int     // passes over the results it took to converge
}

// Fit tolerances: the fit stops when a pass moves no strength, the bias or the prior's
// scale by more than fitTolerance (a ten-thousandth of an Elo point), or after fitMaxSweeps
// passes.
const (
	fitTolerance = 1e-6
	fitMaxSweeps = 2000
	// biasPrior is the standard deviation of the prior on β: weak, since a judge's
	// position bias can be large, but enough to keep a first handful of results from
	// calling the judge wholly biased.
	biasPrior = 1.0
	// The prior's scale τ is kept within [scaleMin, scaleMax]; at the start it is
	// scaleStart, the spread the offline simulator draws its qualities from.
	scaleMin   = 0.05
	scaleMax   = 10.0
	scaleStart = 1.0
	// scaleWeight steadies the fitted scale: its estimate counts scaleWeight more
	// hypotheses at scaleStart. Most of a session's hypotheses have played once or twice
	// and say next to nothing about the scale, so the estimate rests on the few that
	// played often and swung by 5 to 10% from one batch to the next, moving every rating
	// with it; 20 such hypotheses weigh little once hundreds have played.
	scaleWeight = 20.0
)

// Fit finds the maximum a posteriori strengths of ids given results (results may also
// name hypotheses not in ids, such as excluded ones: they count as evidence and get a
// rating too). It is deterministic and does not depend on the order of ids or results:
// the same results give the same ratings bit for bit, so a retried activity, or a test,
// gets identical numbers.
//
// It alternates Newton steps, one hypothesis at a time, on the strengths; a Newton step on
// the bias; and the expectation–maximisation update of the prior's variance, τ² = mean of
// (θ² + SE²), until nothing moves.
func Fit(ids []string, results []Result) Ratings {
	return fit(ids, results, nil, true)
}

// FitFrom is Fit started from an earlier fit's ratings (a session's records hold them),
// which it reaches far sooner when a few results were added since: a cold fit of a session
// whose top has played each other hundreds of times creeps for hundreds of passes, since
// the top moves as a block. It converges to the same optimum to within the fit's
// tolerance, and, like Fit, gives the same ratings whenever it is given the same start and
// results. Hypotheses missing from from start at 0.
func FitFrom(from map[string]Rating, ids []string, results []Result) Ratings {
	return fit(ids, results, from, true)
}

// fit is Fit or FitFrom with the position bias fitted or held at 0 (to measure what
// fitting it buys).
func fit(ids []string, results []Result, from map[string]Rating, withBias bool) Ratings {
	f := newFitter(ids, results)
	f.startFrom(from)
	sweeps := 0
	for sweeps < fitMaxSweeps {
		sweeps++
		moved := f.sweepStrengths()
		if withBias && len(f.pairs) > 0 {
			moved = max(moved, f.stepBias())
		}
		if len(f.names) > 0 {
			moved = max(moved, f.stepScale(sweeps))
		}
		if moved < fitTolerance {
			break
		}
	}
	out := Ratings{By: make(map[string]Rating, len(f.names)), Scale: math.Sqrt(f.tau2), FirstBias: f.bias, Sweeps: sweeps}
	for i, id := range f.names {
		_, h := f.newton(i) // the information at the final strengths and scale
		out.By[id] = Rating{Strength: f.theta[i], SE: 1 / math.Sqrt(h), Games: len(f.games[i])}
	}
	return out
}

// game is one result as one of its hypotheses played it.
type game struct {
	opp   int32
	first bool // this hypothesis was shown first
	won   bool
}

// pair is one result between two different hypotheses, a shown first.
type pair struct {
	a, b int32
	aWon bool
}

// fitter is one fit's results, indexed by hypothesis, and where the fit has reached.
type fitter struct {
	names []string  // every hypothesis, sorted
	games [][]game  // each hypothesis' games
	pairs []pair    // every result
	theta []float64 // each hypothesis' strength
	info  []float64 // Fisher information of each strength, prior included
	bias  float64   // the advantage of being shown first
	tau2  float64   // the prior's variance of strengths

	history []float64 // the prior's last variances, for the acceleration
}

// newFitter indexes the results by hypothesis, each hypothesis' games and the results in
// a canonical order so that sums come out the same however the results were ordered.
func newFitter(ids []string, results []Result) *fitter {
	names := slices.Clone(ids)
	for _, r := range results {
		names = append(names, r.A, r.B)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	at := make(map[string]int, len(names))
	for i, id := range names {
		at[id] = i
	}
	games := make([][]game, len(names))
	ps := make([]pair, 0, len(results))
	for _, r := range results {
		a, b := int32(at[r.A]), int32(at[r.B])
		if a == b {
			continue // a hypothesis against itself says nothing
		}
		games[a] = append(games[a], game{opp: b, first: true, won: r.AWon})
		games[b] = append(games[b], game{opp: a, first: false, won: !r.AWon})
		ps = append(ps, pair{a, b, r.AWon})
	}
	for _, g := range games {
		slices.SortFunc(g, byGame)
	}
	slices.SortFunc(ps, byPair)
	n := len(names)
	return &fitter{
		names: names, games: games, pairs: ps,
		theta: make([]float64, n), info: make([]float64, n),
		tau2: scaleStart * scaleStart,
	}
}

// byGame orders one hypothesis' games by opponent, then shown first, then won.
func byGame(x, y game) int {
	if c := cmp.Compare(x.opp, y.opp); c != 0 {
		return c
	}
	if x.first != y.first {
		if x.first {
			return -1
		}
		return 1
	}
	if x.won != y.won {
		if x.won {
			return -1
		}
		return 1
	}
	return 0
}

// byPair orders results by the hypothesis shown first, then second, then wins first.
func byPair(x, y pair) int {
	if c := cmp.Compare(x.a, y.a); c != 0 {
		return c
	}
	if c := cmp.Compare(x.b, y.b); c != 0 {
		return c
	}
	if x.aWon == y.aWon {
		return 0
	}
	if x.aWon {
		return -1
	}
	return 1
}

// startFrom starts the fit from an earlier fit's strengths, and from the prior's
// variance they imply; with none, from 0 and the starting scale.
func (f *fitter) startFrom(from map[string]Rating) {
	if len(from) == 0 || len(f.names) == 0 {
		return
	}
	sum, known := 0.0, 0
	for i, id := range f.names {
		if r, ok := from[id]; ok {
			f.theta[i] = r.Strength
			sum += r.Strength*r.Strength + r.SE*r.SE
			known++
		}
	}
	if known > 0 {
		f.tau2 = min(max(sum/float64(known), scaleMin*scaleMin), scaleMax*scaleMax)
	}
}

// newton is the gradient of the log posterior in hypothesis i's strength, and its
// information (the negative second derivative), prior included.
func (f *fitter) newton(i int) (g, h float64) {
	g, h = -f.theta[i]/f.tau2, 1/f.tau2
	for _, gm := range f.games[i] {
		d := f.theta[i] - f.theta[gm.opp]
		if gm.first {
			d += f.bias
		} else {
			d -= f.bias
		}
		p := sigmoid(d)
		if gm.won {
			g += 1 - p
		} else {
			g -= p
		}
		h += p * (1 - p)
	}
	return g, h
}

// sweepStrengths takes one Newton step in each strength in turn, and says the largest.
func (f *fitter) sweepStrengths() (moved float64) {
	for i := range f.names {
		g, h := f.newton(i)
		step := g / h
		f.theta[i] += step
		f.info[i] = h
		moved = max(moved, math.Abs(step))
	}
	return moved
}

// stepBias takes one Newton step in the position bias, and says how far.
func (f *fitter) stepBias() float64 {
	g, h := -f.bias/(biasPrior*biasPrior), 1/(biasPrior*biasPrior)
	for _, p := range f.pairs {
		q := sigmoid(f.theta[p.a] - f.theta[p.b] + f.bias)
		if p.aWon {
			g += 1 - q
		} else {
			g -= q
		}
		h += q * (1 - q)
	}
	step := g / h
	f.bias += step
	return math.Abs(step)
}

// stepScale takes one EM step in the prior's variance on the sweepth pass, and says how
// far its scale moved.
func (f *fitter) stepScale(sweep int) float64 {
	sum := 0.0
	for i := range f.names {
		sum += f.theta[i]*f.theta[i] + 1/f.info[i]
	}
	next := (sum + scaleWeight*scaleStart*scaleStart) / (float64(len(f.names)) + scaleWeight)
	// The EM update creeps when results are few (hundreds of passes at one result
	// a hypothesis): every third pass, jump to where the last three were heading
	// (Aitken's delta-squared), if they head there steadily.
	f.history = append(f.history[max(0, len(f.history)-2):], next)
	if len(f.history) == 3 && sweep%3 == 0 {
		d1, d2 := f.history[1]-f.history[0], f.history[2]-f.history[1]
		if d1*d2 > 0 && math.Abs(d2) < math.Abs(d1) {
			next = f.history[2] - d2*d2/(d2-d1)
			f.history = f.history[:0]
		}
	}
	next = min(max(next, scaleMin*scaleMin), scaleMax*scaleMax)
	moved := math.Abs(math.Sqrt(next) - math.Sqrt(f.tau2))
	f.tau2 = next
	return moved
}

// Ranked orders ids by fitted strength, strongest first, ties by id.
func (r Ratings) Ranked(ids []string) []string {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(x, y string) int { return strongerFirst(r.By[x].Strength, r.By[y].Strength, x, y) })
	return out
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
