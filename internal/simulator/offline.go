// Package simulator is cosci's offline model, the embedded default provider ("offline"):
// a simulator for demos, tests and benchmarks. It needs no network or credentials, and it
// answers every agent in the same JSON shapes a real model must, parsed by the same
// parsers, so a session run offline exercises everything but the model itself.
//
// Its answers are not science. Each simulated hypothesis carries a hidden quality
// (research.Hypothesis.Latent); reviews and matches are noisy functions of it, so a
// benchmark can measure how well a tournament recovers a truth that is known.
//
// The hidden quality is on a standard normal scale. Where it comes from:
//
//   - Generation, by strategy (see strategyLatent): literature exploration draws from
//     N(0, 1); a simulated debate from N(0.1, 0.9), since a panel weeds out the weakest
//     ideas and agrees on safer ones; iterative assumption identification from N(0.1, 1),
//     since it checks premises first; expansion from feedback from N(0.2, 1) once a
//     meta-review exists (it learns from the round's critique), and like literature
//     exploration before.
//   - Evolution, by kind (see evolvedLatent), from the parents' qualities: grounding and
//     feasibility improve the parents' mean by 0.15 ± 0.4; combination starts from the best
//     parent, + 0.1 ± 0.5; simplification keeps the mean ± 0.3; inspiration and
//     out-of-the-box thinking keep the mean ± 0.8, the risky kinds. So evolving the best
//     hypotheses tends to, but need not, beat them.
//   - A scientist's hypothesis has no Latent; its quality is derived from its statement.
//
// Judges see quality through noise: a single comparison prefers the better hypothesis
// with the Bradley–Terry probability 1/(1+exp(-(qa-qb))), a multi-turn debate with the
// sharper 1/(1+exp(-1.5(qa-qb))). Offline.FirstBias adds a bias towards the hypothesis
// shown first (A), as LLM judges have, in the same logits. About 3% of hypotheses (chosen by a hash of the
// session seed and the hypothesis id, so every review of one agrees) are unsafe: every
// review gives them a safety mark below 3 and names the concern.
package simulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// ErrSimulated is the failure Offline injects at rate ErrorRate. It stands for a transient
// fault (a timeout, a rate limit): retrying the turn is the right response.
var ErrSimulated = errors.New("offline provider: simulated transient failure")

// Offline is the simulated model. Its answers depend only on each request's Seed and
// TurnID, and on the kinds of citation it planted before (its Truth, which a review's
// support judgements and an evolution's inherited citations follow), so a replayed or
// retried turn gets the same answer byte for byte. The zero value answers at once and
// never fails.
type Offline struct {
	// Latency is the simulated time a turn takes; 0 means none. A turn whose context
	// ends while it waits returns the context's error.
	Latency time.Duration
	// ErrorRate is the probability in [0, 1] that a turn fails with ErrSimulated. Unlike
	// the answers it differs between calls, because it simulates a flaky service: a retry
	// of a failed turn may succeed.
	ErrorRate float64
	// ErrorSeed, if not 0, makes the failures reproducible: whether the n-th call of a
	// turn in this process fails depends only on ErrorSeed, the turn id and n. With 0 each
	// call draws from the global generator.
	ErrorSeed uint64

	mu    sync.Mutex
	calls map[string]uint64 // turn id -> calls so far, with ErrorSeed
	// FirstBias is the judges' bias towards the hypothesis shown first, in logits added to
	// its side: 0 is a fair judge, 0.5 makes an even match a 62% win for the first shown.
	FirstBias float64
	// Fabricate is the share in [0, 1] of a grounded hypothesis' references the simulator
	// makes dishonest, spread over the dishonest kinds of Plant, each of its kind recorded
	// in Truth, so the citation check and the reviews' support judgements can be measured.
	Fabricate float64
	// Truth is the simulator's record of the kinds it planted (see Planted); nil: one in
	// memory, made at the first citation. Give one kept in a file (OpenTruth) for workers
	// that take over each other's turns, or for a benchmark in another process.
	Truth *Truth
	// Plant are the kinds of citation the simulator makes (Planted*; see
	// PlantKinds): its honest ones for honest citations, its dishonest ones for the share
	// Fabricate. nil plants the easy kinds: quotes word for word, invented ids and the
	// citing text's own words.
	Plant []string
	// SupportError is the share in [0, 1] of citations whose support a simulated deep
	// verification or full review misjudges: 0 is a reviewer who always sees whether a
	// quote supports its claim.
	SupportError float64
	// JudgeNoise is the standard deviation of each hypothesis' persistent error in what
	// the tournament's judges see of its quality (see judgenoise.go): 0, the default, is a
	// judge who sees the truth and errs only match by match.
	JudgeNoise float64
}

// Simulated are the simulator's answers, one method per agent (and per agent whose turns
// may call tools, one for a step): Offline's, or those of a model built on it, as tests'
// models embed Offline and change an agent's answers. A new agent adds its method (in this
// file), its line here and its case in Answer.
type Simulated interface {
	Plan(ctx context.Context, req research.PlanRequest) (research.Plan, research.Usage, error)
	Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error)
	GenerateStep(ctx context.Context, req research.GenerateRequest) (research.Step[research.Hypothesis], research.Usage, error)
	Review(ctx context.Context, req research.ReviewRequest) (research.Review, research.Usage, error)
	ReviewStep(ctx context.Context, req research.ReviewRequest) (research.Step[research.Review], research.Usage, error)
	Compare(ctx context.Context, req research.CompareRequest) (research.Comparison, research.Usage, error)
	Debate(ctx context.Context, req research.DebateRequest) (research.DebateAnswer, research.Usage, error)
	Evolve(ctx context.Context, req research.EvolveRequest) (research.Hypothesis, research.Usage, error)
	EvolveStep(ctx context.Context, req research.EvolveRequest) (research.Step[research.Hypothesis], research.Usage, error)
	MetaReview(ctx context.Context, req research.MetaReviewRequest) (research.MetaReview, research.Usage, error)
	Overview(ctx context.Context, req research.OverviewRequest) (research.Overview, research.Usage, error)
	Converse(ctx context.Context, req research.ConverseRequest) (research.ConverseAnswer, research.Usage, error)
	ConverseStep(ctx context.Context, req research.ConverseRequest) (research.Step[research.ConverseAnswer], research.Usage, error)
	Analyse(ctx context.Context, req research.AnalysisRequest) (research.AnalysisAnswer, research.Usage, error)
}

var _ Simulated = (*Offline)(nil)

// Planted is the record of the kinds of citation o planted: its Truth, made in memory if
// it has none yet.
func (o *Offline) Planted() *Truth {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.Truth == nil {
		o.Truth = &Truth{}
	}
	return o.Truth
}

// Answer answers q, as provider.Model does.
func (o *Offline) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {
	return Answer(ctx, o, q)
}

// Answer is m's answer to q: that of m's method for the agent whose request q carries
// (its Step method for a step of a turn that may call tools). A model built on Offline
// must answer with it, in an Answer method of its own (return simulator.Answer(ctx, m,
// q)): Offline's Answer calls Offline's methods, not those the model changed. Go cannot
// require it, so TestModelsOnOfflineAnswerThemselves fails on a model in this module
// that changes an answer without it.
func Answer(ctx context.Context, m Simulated, q prompt.Question) (research.Step[any], research.Usage, error) {
	switch req := q.Request.(type) {
	case research.PlanRequest:
		return answered(ctx, req, m.Plan)
	case research.GenerateRequest:
		return answeredOrStep(ctx, q, req, m.Generate, m.GenerateStep)
	case research.ReviewRequest:
		return answeredOrStep(ctx, q, req, m.Review, m.ReviewStep)
	case research.CompareRequest:
		return answered(ctx, req, m.Compare)
	case research.DebateRequest:
		return answered(ctx, req, m.Debate)
	case research.EvolveRequest:
		return answeredOrStep(ctx, q, req, m.Evolve, m.EvolveStep)
	case research.MetaReviewRequest:
		return answered(ctx, req, m.MetaReview)
	case research.OverviewRequest:
		return answered(ctx, req, m.Overview)
	case research.ConverseRequest:
		return answeredOrStep(ctx, q, req, m.Converse, m.ConverseStep)
	case research.AnalysisRequest:
		return answered(ctx, req, m.Analyse)
	}
	return research.Step[any]{}, research.Usage{}, fmt.Errorf("offline provider: no answer to a %s turn's %T", q.Agent, q.Request)
}

// answered is answer's answer to req, as Answer returns it.
func answered[Req, Ans any](ctx context.Context, req Req, answer func(context.Context, Req) (Ans, research.Usage, error)) (research.Step[any], research.Usage, error) {
	ans, u, err := answer(ctx, req)
	if err != nil {
		return research.Step[any]{}, u, err
	}
	return research.Step[any]{Answer: ans}, u, nil
}

// answeredOrStep is, for an agent whose turns may call tools, step's answer to req (an
// answer or tool calls) on a step of a turn that may (q.Tools), else answer's.
func answeredOrStep[Req, Ans any](ctx context.Context, q prompt.Question, req Req, answer func(context.Context, Req) (Ans, research.Usage, error), step func(context.Context, Req) (research.Step[Ans], research.Usage, error)) (research.Step[any], research.Usage, error) {
	if !q.Tools {
		return answered(ctx, req, answer)
	}
	st, u, err := step(ctx, req)
	if err != nil || len(st.Calls) > 0 {
		return research.Step[any]{Text: st.Text, Calls: st.Calls, Reasoning: st.Reasoning}, u, err
	}
	return research.Step[any]{Answer: st.Answer}, u, nil
}

// Generate proposes one hypothesis for req.Goal, addressing the newest of req.Focus.
func (o *Offline) Generate(ctx context.Context, req research.GenerateRequest) (research.Hypothesis, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentGeneration, req.TurnID); err != nil {
		return research.Hypothesis{}, research.Usage{}, err
	}
	rng := newRand(req.Seed, req.TurnID)
	mean, sd := strategyLatent(req.Strategy, req.Context)
	latent := mean + sd*rng.NormFloat64()
	raw := mustJSON(citingLab(req.Context, writeHypothesis(rng, req)))
	// A model writes only the content; the identity and provenance are the request's,
	// which the agent's parser gives it.
	h, err := prompt.GenerateSpec.Parse(req, raw)
	if err != nil {
		return research.Hypothesis{}, research.Usage{}, bug(err)
	}
	h.Latent = &latent
	return h, usage(req.Prompt, raw), nil
}

// strategyLatent returns the mean and standard deviation of the hidden quality of a
// hypothesis generated by a strategy; see the package documentation.
func strategyLatent(strategy string, c research.Context) (mean, sd float64) {
	switch strategy {
	case research.StrategyDebate:
		return 0.1, 0.9
	case research.StrategyAssumptions:
		return 0.1, 1
	case research.StrategyFeedback:
		if c.MetaReview != nil && len(c.MetaReview.Critiques) > 0 {
			return 0.2, 1
		}
	}
	return 0, 1
}

// Review reviews req.Hypothesis. Its scores rise with the hypothesis' quality, blurred by
// noise, as a fallible human reviewer's would. A deep verification also checks the
// hypothesis' assumptions one by one; the worse the hypothesis, the more of them fail.
func (o *Offline) Review(ctx context.Context, req research.ReviewRequest) (research.Review, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentReflection, req.TurnID); err != nil {
		return research.Review{}, research.Usage{}, err
	}
	rng := newRand(req.Seed, req.TurnID)
	a := writeReview(rng, req)
	// A deep verification or full review judges whether each of the hypothesis' quotes
	// supports its claim, with or without tools to re-read the sources.
	raw := mustJSON(supportedReview{a, o.judgeSupport(rng, req.Type, req.Hypothesis)})
	r, err := prompt.ReviewSpec.Parse(req, raw)
	if err != nil {
		return research.Review{}, research.Usage{}, bug(err)
	}
	return r, usage(req.Prompt, raw), nil
}

// supportedReview is a review with its judgements of the hypothesis' citations.
type supportedReview struct {
	reviewAnswer
	Support []research.SupportJudgement `json:"citation_support,omitempty"`
}

// Compare judges a match between req.A and req.B as a Bradley–Terry judge: A, shown
// first, wins with probability winProbability(quality(A) + FirstBias, quality(B)).
func (o *Offline) Compare(ctx context.Context, req research.CompareRequest) (research.Comparison, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentRanking, req.TurnID); err != nil {
		return research.Comparison{}, research.Usage{}, err
	}
	rng := newRand(req.Seed, req.TurnID)
	aWins := rng.Float64() < winProbability(o.perceived(req.Seed, req.A)+o.FirstBias, o.perceived(req.Seed, req.B))
	raw := mustJSON(writeComparison(rng, req.A, req.B, aWins))
	c, err := prompt.CompareSpec.Parse(req, raw)
	if err != nil {
		return research.Comparison{}, research.Usage{}, bug(err)
	}
	return c, usage(req.Prompt, raw), nil
}

// Plan writes the research plan for req.Goal, from the goal's own words.
func (o *Offline) Plan(ctx context.Context, req research.PlanRequest) (research.Plan, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentSupervisor, req.TurnID); err != nil {
		return research.Plan{}, research.Usage{}, err
	}
	raw := mustJSON(writePlan(newRand(req.Seed, req.TurnID), req.Goal))
	p, err := prompt.PlanSpec.Parse(req, raw)
	if err != nil {
		return research.Plan{}, research.Usage{}, bug(err)
	}
	return p, usage(req.Prompt, raw), nil
}

// Debate speaks one turn of a debate: an advocate's argument, or on the last turn the
// judge's verdict. The judge is sharper than a single comparison: A wins with probability
// debateWinProbability(quality(A), quality(B)).
func (o *Offline) Debate(ctx context.Context, req research.DebateRequest) (research.DebateAnswer, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentRanking, req.TurnID); err != nil {
		return research.DebateAnswer{}, research.Usage{}, err
	}
	if req.Turn < 1 || req.Turns < 1 {
		return research.DebateAnswer{}, research.Usage{}, fmt.Errorf("offline provider: debate turn %d of %d does not exist; number turns from 1", req.Turn, req.Turns)
	}
	rng := newRand(req.Seed, req.TurnID)
	speaker := prompt.DebateSpeaker(req.Turn, req.Turns)
	var raw []byte
	if speaker != "judge" {
		raw = mustJSON(writeAdvocacy(rng, req, speaker))
	} else {
		aWins := rng.Float64() < debateWinProbability(o.perceived(req.Seed, req.A)+o.FirstBias/1.5, o.perceived(req.Seed, req.B))
		raw = mustJSON(writeJudgement(rng, req, aWins))
	}
	ans, err := prompt.DebateSpec.Parse(req, raw)
	if err != nil {
		return research.DebateAnswer{}, research.Usage{}, bug(err)
	}
	return ans, usage(req.Prompt, raw), nil
}

// Evolve writes a new hypothesis from req.Parents, of kind req.Kind. Its quality follows
// from the parents' (see evolvedLatent).
func (o *Offline) Evolve(ctx context.Context, req research.EvolveRequest) (research.Hypothesis, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentEvolution, req.TurnID); err != nil {
		return research.Hypothesis{}, research.Usage{}, err
	}
	if len(req.Parents) == 0 {
		return research.Hypothesis{}, research.Usage{}, noParents(req)
	}
	rng := newRand(req.Seed, req.TurnID)
	latent := evolvedLatent(rng, req)
	raw := mustJSON(citingLab(req.Context, writeEvolved(rng, req)))
	h, err := prompt.EvolveSpec.Parse(req, raw)
	if err != nil {
		return research.Hypothesis{}, research.Usage{}, bug(err)
	}
	h.Latent = &latent
	return h, usage(req.Prompt, raw), nil
}

// noParents is the error of an evolution turn with nothing to evolve.
func noParents(req research.EvolveRequest) error {
	return fmt.Errorf("offline provider: evolution turn %q has no parents; name at least one hypothesis to evolve", req.TurnID)
}

// evolvedLatent draws an evolved hypothesis' quality from its parents' qualities (at
// least one parent); see the package documentation.
func evolvedLatent(rng *rand.Rand, req research.EvolveRequest) float64 {
	mean, best := 0.0, math.Inf(-1)
	for _, p := range req.Parents {
		q := quality(p)
		mean += q / float64(len(req.Parents))
		best = max(best, q)
	}
	n := rng.NormFloat64()
	switch req.Kind {
	case research.EvolveGrounding, research.EvolveFeasibility:
		return mean + 0.15 + 0.4*n
	case research.EvolveCombination:
		return best + 0.1 + 0.5*n
	case research.EvolveSimplification:
		return mean + 0.3*n
	case research.EvolveInspiration, research.EvolveOutOfBox:
		return mean + 0.8*n
	}
	return mean + 0.5*n
}

// MetaReview finds the recurring critique of a round: it groups the weaknesses and
// strengths its reviews and debates name, most frequent first. On every second round it
// recommends a deep verification of the best-scored hypothesis to a subagent, and on
// every third an evolution line of the runner-up (see writeDelegations).
func (o *Offline) MetaReview(ctx context.Context, req research.MetaReviewRequest) (research.MetaReview, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentMetaReview, req.TurnID); err != nil {
		return research.MetaReview{}, research.Usage{}, err
	}
	ans := writeMetaReview(req)
	ans.Feedback += labFeedback(req.Context)
	raw := mustJSON(ans)
	m, err := prompt.MetaReviewSpec.Parse(req, raw)
	if err != nil {
		return research.MetaReview{}, research.Usage{}, bug(err)
	}
	return m, usage(req.Prompt, raw), nil
}

// Overview writes the research overview from the top hypotheses and their clusters.
func (o *Offline) Overview(ctx context.Context, req research.OverviewRequest) (research.Overview, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentMetaReview, req.TurnID); err != nil {
		return research.Overview{}, research.Usage{}, err
	}
	if len(req.Top) == 0 {
		return research.Overview{}, research.Usage{}, fmt.Errorf("offline provider: overview turn %q has no hypotheses to write about", req.TurnID)
	}
	raw := mustJSON(writeOverview(newRand(req.Seed, req.TurnID), req))
	ov, err := prompt.OverviewSpec.Parse(req, raw)
	if err != nil {
		return research.Overview{}, research.Usage{}, bug(err)
	}
	return ov, usage(req.Prompt, raw), nil
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
	if o.ErrorRate > 0 && o.draw(turnID) < o.ErrorRate {
		return fmt.Errorf("%s turn %q: %w (ErrorRate is %g); retry the turn", agent, turnID, ErrSimulated, o.ErrorRate)
	}
	return nil
}

// draw is a number in [0, 1) for a call of a turn: not the turn's own stream, since
// failures must differ between retries of the turn.
func (o *Offline) draw(turnID string) float64 {
	if o.ErrorSeed == 0 {
		return rand.Float64()
	}
	o.mu.Lock()
	if o.calls == nil {
		o.calls = map[string]uint64{}
	}
	n := o.calls[turnID]
	o.calls[turnID]++
	o.mu.Unlock()
	return rand.New(rand.NewPCG(o.ErrorSeed^hash(turnID), n)).Float64()
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

// debateWinProbability is the probability that quality qa beats quality qb in a debate:
// Bradley–Terry with a sharper slope, since a judge who has heard both sides out errs less.
func debateWinProbability(qa, qb float64) float64 {
	return 1 / (1 + math.Exp(-1.5*(qa-qb)))
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
