package simulator

import (
	"math/rand/v2"

	"github.com/cosci-dev/cosci/internal/research"
)

// What the judges see. A simulated judge of a match or a debate decides with the
// Bradley–Terry probability of the qualities it perceives, so a tournament of many
// matches averages its per-match noise away and converges on the true order. Real model
// judges do not: they prefer some hypotheses for reasons that are not their truth (a
// fluent statement, a fashionable mechanism, a confident tone), and they prefer them in
// every match, so more matches only make the tournament surer of a wrong order. That is
// what a lab's result can correct and a tournament cannot, and what the closed-loop
// benchmark measures.
//
// Offline.JudgeNoise models it: each hypothesis has a persistent error JudgeNoise × z,
// with z ~ N(0, 1) drawn from the session's seed and the hypothesis' statement (so every
// match and debate of one session sees the same error, and a replayed turn the same
// answer), added to its quality wherever a judge compares it. The truth itself
// (research.Hypothesis.Latent), what generation and evolution draw, and what the
// simulated lab's effect follows, are unchanged. With JudgeNoise σ the quality a judge
// perceives correlates with the true one (standard deviation about 1) by 1/√(1+σ²): 0.71
// at σ = 1. 0 (the default) is a judge that errs only match by match.

// perceived is the quality the judges of session seed see in h: its true quality plus
// its persistent error, JudgeNoise × z.
func (o *Offline) perceived(seed int64, h research.Hypothesis) float64 {
	q := quality(h)
	if o.JudgeNoise == 0 {
		return q
	}
	z := rand.New(rand.NewPCG(uint64(seed), hash("judge\x00"+h.Statement))).NormFloat64()
	return q + o.JudgeNoise*z
}
