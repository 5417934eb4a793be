package simulator

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/cosci-dev/cosci/internal/research"
)

// The simulated lab: what a lab's experiment on a simulated hypothesis finds. A
// hypothesis' hidden quality (research.Hypothesis.Latent) sets the true effect of the
// experiment that tests its prediction, blurred by the lab's own noise, since a good idea
// can still fail in one system:
//
//	true effect (standardized, Cohen's d) = LabSlope × quality + N(0, LabNoise²)
//
// so a hypothesis of quality 0 has no effect on average, one of quality 1 an effect of
// half a standard deviation, and one below 0 an effect against its prediction. The data
// are then drawn around that true effect, as measurements are.

const (
	LabSlope = 0.5
	LabNoise = 0.25
)

// LabDesign is the experiment the lab runs: two groups (control and treated, N samples
// each, a response measured in each) or N pairs (a dose and a response).
type LabDesign struct {
	Pairs bool
	N     int
}

// LabResult is what the lab exports: the CSV table, and the true effect the simulator
// drew (the truth a test checks an analysis against; no lab knows it).
type LabResult struct {
	CSV []byte
	// Effect is the true standardized effect: Cohen's d between the groups, or for pairs
	// the d the correlation stands for (r = d / sqrt(d² + 4)).
	Effect float64
}

// Lab runs a simulated experiment on a hypothesis of hidden quality latent. The same
// latent, seed and design give the same table byte for byte.
func Lab(latent float64, seed uint64, d LabDesign) LabResult {
	rng := rand.New(rand.NewPCG(seed, hash("lab")))
	effect := LabSlope*latent + LabNoise*rng.NormFloat64()
	n := max(d.N, 3)
	var b bytes.Buffer
	if d.Pairs {
		writePairs(&b, rng, effect, n)
	} else {
		writeGroups(&b, rng, effect, n)
	}
	return LabResult{CSV: b.Bytes(), Effect: effect}
}

// writeGroups writes a two-group table as a plate reader's export: a sample id, the arm,
// the batch, and the response in µg/L with its unit in the header, CRLF line ends. The
// response is N(50, 10²) in the control arm, shifted by 10 × effect in the treated one.
func writeGroups(b *bytes.Buffer, rng *rand.Rand, effect float64, n int) {
	b.WriteString("sample_id,arm,batch,response (ug/L)\r\n")
	for i := range 2 * n {
		arm, shift := "control", 0.0
		if i%2 == 1 {
			arm, shift = "treated", 10*effect
		}
		v := 50 + shift + 10*rng.NormFloat64()
		fmt.Fprintf(b, "S%03d,%s,%d,%.2f\r\n", i+1, arm, 1+i%3, v)
	}
}

// writePairs writes a dose-response table: subject, dose in mg, response; the standardized
// response correlates with the dose by r = effect / sqrt(effect² + 4).
func writePairs(b *bytes.Buffer, rng *rand.Rand, effect float64, n int) {
	r := effect / math.Sqrt(effect*effect+4)
	b.WriteString("subject,dose (mg),response\r\n")
	for i := range n {
		dose := 10 * rng.Float64()
		z := (dose - 5) / math.Sqrt(100.0/12) // the dose, standardized
		y := 20 + 4*(r*z+math.Sqrt(1-r*r)*rng.NormFloat64())
		fmt.Fprintf(b, "P%03d,%.2f,%.3f\r\n", i+1, dose, y)
	}
}

// GeneratedLatent draws a generated hypothesis' hidden quality as Generate does for
// strategy (see the package documentation), from rng: for a simulation of sessions
// without the agents' texts, such as the closed-loop benchmark.
func GeneratedLatent(rng *rand.Rand, strategy string, afterMetaReview bool) float64 {
	var c research.Context
	if afterMetaReview {
		c.MetaReview = &research.MetaReview{Critiques: []string{"a critique"}}
	}
	mean, sd := strategyLatent(strategy, c)
	return mean + sd*rng.NormFloat64()
}
