// Package provider holds the models cosci can talk to. Offline, the embedded default, is
// a simulator for demos, tests and benchmarks: it needs no network or credentials, and it
// answers every agent in the same JSON shapes a real model must, parsed by the same
// parsers, so a session run offline exercises everything but the model itself.
//
// Its answers are not science. Each simulated hypothesis carries a hidden quality
// (research.Hypothesis.Latent); reviews and matches are noisy functions of it, so a
// benchmark can measure how well a tournament recovers a truth that is known.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// ErrSimulated is the failure Offline injects at rate ErrorRate. It stands for a transient
// fault (a timeout, a rate limit): retrying the turn is the right response.
var ErrSimulated = errors.New("offline provider: simulated transient failure")

// Offline is the simulated model. Its answers depend only on each request's Seed and
// TurnID, so a replayed or retried turn gets the same answer byte for byte. The zero
// value answers at once and never fails.
type Offline struct {
	// Latency is the simulated time a turn takes; 0 means none. A turn whose context
	// ends while it waits returns the context's error.
	Latency time.Duration
	// ErrorRate is the probability in [0, 1] that a turn fails with ErrSimulated. Unlike
	// the answers it is random on every call, because it simulates a flaky service: a
	// retry of a failed turn may succeed.
	ErrorRate float64
}

// Generate proposes one hypothesis for req.Goal, addressing the newest of req.Focus.
func (o *Offline) Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentGeneration, req.TurnID); err != nil {
		return research.Hypothesis{}, research.Usage{}, err
	}
	rng := newRand(req.Seed, req.TurnID)
	latent := rng.NormFloat64()
	raw := mustJSON(writeHypothesis(rng, req))
	h, err := prompt.ParseHypothesis(raw)
	if err != nil {
		return research.Hypothesis{}, research.Usage{}, bug(err)
	}
	// A model writes only the content; the identity and provenance are the caller's.
	h.ID = req.HypothesisID
	h.Origin = "generation"
	h.Strategy = req.Strategy
	h.Goal = req.Goal
	h.Latent = &latent
	return h, usage(req.Prompt, raw), nil
}

// Review reviews req.Hypothesis. Its scores rise with the hypothesis' quality, blurred by
// noise, as a fallible human reviewer's would.
func (o *Offline) Review(ctx context.Context, req research.ReviewRequest) (research.Review, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentReflection, req.TurnID); err != nil {
		return research.Review{}, research.Usage{}, err
	}
	rng := newRand(req.Seed, req.TurnID)
	raw := mustJSON(writeReview(rng, req.Type, quality(req.Hypothesis)))
	r, err := prompt.ParseReview(raw)
	if err != nil {
		return research.Review{}, research.Usage{}, bug(err)
	}
	r.HypothesisID = req.Hypothesis.ID
	r.Type = req.Type
	return r, usage(req.Prompt, raw), nil
}

// Compare judges a match between req.A and req.B as a Bradley–Terry judge: A wins with
// probability winProbability(quality(A), quality(B)).
func (o *Offline) Compare(ctx context.Context, req research.CompareRequest) (research.Comparison, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentRanking, req.TurnID); err != nil {
		return research.Comparison{}, research.Usage{}, err
	}
	rng := newRand(req.Seed, req.TurnID)
	aWins := rng.Float64() < winProbability(quality(req.A), quality(req.B))
	raw := mustJSON(writeComparison(rng, req.A, req.B, aWins))
	label, reasoning, err := prompt.ParseComparison(raw)
	if err != nil {
		return research.Comparison{}, research.Usage{}, bug(err)
	}
	c := research.Comparison{A: req.A.ID, B: req.B.ID, Winner: req.A.ID, Reasoning: reasoning}
	if label == "B" {
		c.Winner = req.B.ID
	}
	return c, usage(req.Prompt, raw), nil
}

// turn simulates what happens before a model answers: the wait, and the odd failure.
func (o *Offline) turn(ctx context.Context, agent, turnID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("offline provider: %s turn %q: %w", agent, turnID, err)
	}
	if o.Latency > 0 {
		t := time.NewTimer(o.Latency)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return fmt.Errorf("offline provider: %s turn %q: %w", agent, turnID, ctx.Err())
		case <-t.C:
		}
	}
	// The global generator, not the turn's: failures must differ between retries.
	if o.ErrorRate > 0 && rand.Float64() < o.ErrorRate {
		return fmt.Errorf("%s turn %q: %w (ErrorRate is %g); retry the turn", agent, turnID, ErrSimulated, o.ErrorRate)
	}
	return nil
}

// newRand returns the generator for one turn. Seeding it with the turn id as well as the
// session seed gives every turn its own stream, and the same stream on every replay.
func newRand(seed int64, turnID string) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), hash(turnID)))
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// quality is a hypothesis' true quality on a standard normal scale: its Latent if the
// simulator generated it, or else (a scientist wrote it) a value derived from its
// statement, so the same text always has the same quality.
func quality(h research.Hypothesis) float64 {
	if h.Latent != nil {
		return *h.Latent
	}
	return rand.New(rand.NewPCG(hash(h.Statement), 0)).NormFloat64()
}

// winProbability is the Bradley–Terry probability that quality qa beats quality qb.
func winProbability(qa, qb float64) float64 {
	return 1 / (1 + math.Exp(-(qa - qb)))
}

// usage estimates a turn's tokens at four characters each, as a rule of thumb for English.
func usage(promptText string, answer []byte) research.Usage {
	return research.Usage{
		PromptTokens:     max(1, len(promptText)/4),
		CompletionTokens: max(1, len(answer)/4),
		Requests:         1,
	}
}

// mustJSON marshals an answer made only of strings, numbers and slices, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("offline provider: " + err.Error())
	}
	return b
}

// bug reports an answer the simulator wrote that its own parser refused. It can only mean
// the simulator and package prompt disagree about a schema.
func bug(err error) error {
	return fmt.Errorf("offline provider wrote an answer package prompt refuses (a bug in the simulator; please report it): %w", err)
}
