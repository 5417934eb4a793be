package simulator

// Grounded turns: the simulator reads the literature through the same tools and the same
// loop as a real model. It knows the contract of cosci's literature server (a tool named
// search that takes a query and lists results with ids, titles and snippets; a tool named
// fetch that takes an id and gives the whole reference with its abstract), on whatever
// server it is offered, and calls any other tool it is offered once with arguments made
// from the tool's schema, so servers nobody here wrote are exercised too.
//
// A grounded answer cites what it read: each reference is an id a tool returned and a
// sentence copied from that result. Offline.Fabricate makes a known share of them up (an
// id no tool returned, or a quote the source does not hold), marked Fabricated, so the
// citation check can be measured against the truth.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// maxOtherTools is how many tools other than search and fetch a turn tries.
const maxOtherTools = 2

// source is a reference a tool result gave: a search hit (a snippet) or a fetched record
// (its abstract).
type source struct {
	id, title, text string
	fetched         bool
}

// reading is what a turn has read so far and what it may still call.
type reading struct {
	search, fetch string                // the offered tools' names; "" when not offered
	others        []research.ToolSpec   // other tools offered
	tried         map[string]bool       // tools called already
	sources       []source              // in the order found; a fetch replaces its search hit
	results       []research.ToolResult // every result, in order
}

// read goes through a turn's tooling: the tools it is offered and what they returned.
func read(t research.Tooling) reading {
	r := reading{tried: map[string]bool{}}
	for _, tool := range t.Tools {
		_, name, _ := strings.Cut(tool.Name, ".")
		switch {
		case name == "search" && r.search == "" && takes(tool, "query"):
			r.search = tool.Name
		case name == "fetch" && r.fetch == "" && takes(tool, "id"):
			r.fetch = tool.Name
		default:
			r.others = append(r.others, tool)
		}
	}
	for _, st := range t.Steps {
		for _, c := range st.Calls {
			r.tried[c.Name] = true
		}
		for _, res := range st.Results {
			r.results = append(r.results, res)
			if !res.IsError {
				r.learn(res.Content)
			}
		}
	}
	return r
}

// takes says whether a tool's input schema has the property.
func takes(tool research.ToolSpec, property string) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	return json.Unmarshal(tool.InputSchema, &s) == nil && s.Properties[property] != nil
}

// learn adds the sources a result names: a search's hits, or a fetched reference.
func (r *reading) learn(content string) {
	var v struct {
		Results []struct {
			ID, Title, Snippet string
		} `json:"results"`
		ID       string `json:"id"`
		Title    string `json:"title"`
		Abstract string `json:"abstract"`
	}
	if json.Unmarshal([]byte(content), &v) != nil {
		return
	}
	for _, h := range v.Results {
		if h.ID != "" && !slices.ContainsFunc(r.sources, func(s source) bool { return s.id == h.ID }) {
			r.sources = append(r.sources, source{id: h.ID, title: h.Title, text: h.Snippet})
		}
	}
	if v.ID != "" && v.Abstract != "" {
		s := source{id: v.ID, title: v.Title, text: v.Abstract, fetched: true}
		if i := slices.IndexFunc(r.sources, func(s source) bool { return s.id == v.ID }); i >= 0 {
			r.sources[i] = s
		} else {
			r.sources = append(r.sources, s)
		}
	}
}

// searched says whether a search has been made.
func (r reading) searched() bool { return r.search != "" && r.tried[r.search] }

// next is the calls a turn makes at this step, reading as a scientist would: search, then
// fetch the best hits, then answer (no calls). query is what to search for; refetch names
// sources to fetch first (a reviewer re-reading a hypothesis' citations).
func (r reading) next(rng *rand.Rand, t research.Tooling, query string, refetch []string, fetches int) []research.ToolCall {
	if t.Final || len(t.Tools) == 0 {
		return nil
	}
	n := len(t.Steps) + 1
	var calls []research.ToolCall
	call := func(name string, args any) {
		calls = append(calls, research.ToolCall{ID: fmt.Sprintf("call-%d-%d", n, len(calls)+1), Name: name, Arguments: mustJSON(args)})
	}
	if len(t.Steps) == 0 {
		if r.fetch != "" && len(refetch) > 0 {
			for _, id := range refetch[:min(3, len(refetch))] {
				call(r.fetch, map[string]string{"id": id})
			}
			return calls
		}
		if r.search != "" {
			call(r.search, map[string]any{"query": query, "limit": 5})
		}
		for _, tool := range r.others[:min(maxOtherTools, len(r.others))] {
			call(tool.Name, argumentsFor(tool, query))
		}
		return calls
	}
	if r.fetch == "" || !r.searched() || slices.ContainsFunc(r.sources, func(s source) bool { return s.fetched }) {
		return nil
	}
	for _, s := range r.sources[:min(fetches, len(r.sources))] {
		call(r.fetch, map[string]string{"id": s.id})
	}
	return calls
}

// query is what a turn searches for: a topic of the goal, and its own subject (a topic,
// or a hypothesis' title) in a few words, as a scientist types into a search box.
func query(rng *rand.Rand, goal, subject string) string {
	var words []string
	for _, w := range strings.Fields(subject) {
		// An evolved title's label ("Feasible:") and a shortened title's ellipsis are not
		// what anyone searches for.
		if w = strings.Trim(w, ".…"); w != "" && !strings.HasSuffix(w, ":") {
			words = append(words, w)
		}
	}
	q := strings.Join(words[:min(4, len(words))], " ")
	if t := pick(rng, topics(goal)); !strings.Contains(strings.ToLower(q), strings.ToLower(t)) {
		q = t + " " + q
	}
	return q
}

// argumentsFor makes arguments a tool's schema accepts: the query for every required
// string, 1 for a number, false for a flag.
func argumentsFor(tool research.ToolSpec, query string) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(tool.InputSchema, &s)
	args := map[string]any{}
	for _, name := range s.Required {
		switch s.Properties[name].Type {
		case "number", "integer":
			args[name] = 1
		case "boolean":
			args[name] = false
		case "array":
			args[name] = []string{query}
		case "object":
			args[name] = map[string]any{}
		default:
			args[name] = query
		}
	}
	return args
}

// cite writes up to n references to what the turn read, fetched sources first, each with
// a sentence of the source as its quote; a share fabricate of them is made up.
func cite(rng *rand.Rand, r reading, n int, topic string, fabricate float64) (refs []prompt.Cited, fabricated []bool) {
	srcs := slices.Clone(r.sources)
	slices.SortStableFunc(srcs, func(a, b source) int {
		switch {
		case a.fetched == b.fetched:
			return 0
		case a.fetched:
			return -1
		}
		return 1
	})
	for _, s := range srcs[:min(n, len(srcs))] {
		ref := prompt.Cited{ID: s.id, Quote: sentence(rng, s.text)}
		fake := fabricate > 0 && rng.Float64() < fabricate
		if fake {
			if rng.IntN(2) == 0 {
				// An invented source: an id no tool returned.
				ref.ID = fmt.Sprintf("10.5555/cosci.%08x", rng.Uint32())
			}
			// And a claim no source makes.
			ref.Quote = fmt.Sprintf("%s was shown to be fully reversed by %s in every model tested.", capitalise(topic), pick(rng, mechanisms))
		}
		if ref.Quote == "" {
			continue
		}
		refs = append(refs, ref)
		fabricated = append(fabricated, fake)
	}
	return refs, fabricated
}

// sentence is one sentence of a source's text, word for word.
func sentence(rng *rand.Rand, text string) string {
	var ss []string
	for _, s := range strings.SplitAfter(strings.Join(strings.Fields(text), " "), ". ") {
		if s = strings.TrimSpace(s); len(s) >= 30 && len(s) <= prompt.MaxQuoteLength {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		return research.Shorten(text, 200)
	}
	return pick(rng, ss)
}

// grounded marks which references were made up and, for each source really read, lifts
// the hypothesis' hidden quality a little: grounding helps, up to a point.
func grounded(h *research.Hypothesis, fabricated []bool, latent float64) float64 {
	real := 0
	for i := range h.References {
		if i < len(fabricated) && fabricated[i] {
			h.References[i].Fabricated = true
		} else {
			real++
		}
	}
	return latent + 0.1*float64(min(real, 2))
}

// sourcesLine names what the turn read, for the rationale.
func sourcesLine(refs []prompt.Cited) string {
	var ids []string
	for _, r := range refs {
		ids = append(ids, r.ID)
	}
	if len(ids) == 0 {
		return ""
	}
	return " It builds on " + strings.Join(ids, ", ") + "."
}

// GenerateStep is a generation turn that may call tools: by literature exploration it
// searches for the goal's topics, fetches the best hits and cites them.
func (o *Offline) GenerateStep(ctx context.Context, req research.GenerateRequest) (research.Step[research.Hypothesis], research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentGeneration, req.TurnID); err != nil {
		return research.Step[research.Hypothesis]{}, research.Usage{}, err
	}
	rng := newRand(req.Seed, req.TurnID)
	r := read(req.Tooling)
	topic := pick(rng, topics(req.Goal))
	if calls := r.next(rng, req.Tooling, query(rng, req.Goal, topic), nil, 2); len(calls) > 0 {
		return research.Step[research.Hypothesis]{Calls: calls}, usage(req.Prompt+toolText(req.Tooling), mustJSON(calls)), nil
	}
	mean, sd := strategyLatent(req.Strategy, req.Context)
	latent := mean + sd*rng.NormFloat64()
	a := writeHypothesis(rng, req)
	refs, fabricated := cite(rng, r, 3, topic, o.Fabricate)
	a.Rationale += sourcesLine(refs)
	raw := mustJSON(groundedAnswer{a, refs})
	h, err := prompt.ParseHypothesis(raw)
	if err != nil {
		return research.Step[research.Hypothesis]{}, research.Usage{}, bug(err)
	}
	h.ID, h.Origin, h.Strategy, h.Goal = req.HypothesisID, "generation", req.Strategy, req.Goal
	latent = grounded(&h, fabricated, latent)
	h.Latent = &latent
	return research.Step[research.Hypothesis]{Answer: h}, usage(req.Prompt+toolText(req.Tooling), raw), nil
}

// EvolveStep is an evolution turn that may call tools: it searches for its first
// parent's subject and cites what it fetched, and the parents' sources it keeps.
func (o *Offline) EvolveStep(ctx context.Context, req research.EvolveRequest) (research.Step[research.Hypothesis], research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentEvolution, req.TurnID); err != nil {
		return research.Step[research.Hypothesis]{}, research.Usage{}, err
	}
	if len(req.Parents) == 0 {
		return research.Step[research.Hypothesis]{}, research.Usage{}, fmt.Errorf("offline provider: evolution turn %q has no parents; name at least one hypothesis to evolve", req.TurnID)
	}
	rng := newRand(req.Seed, req.TurnID)
	r := read(req.Tooling)
	topic := pick(rng, topics(req.Goal))
	if calls := r.next(rng, req.Tooling, query(rng, req.Goal, req.Parents[0].Title), nil, 1); len(calls) > 0 {
		return research.Step[research.Hypothesis]{Calls: calls}, usage(req.Prompt+toolText(req.Tooling), mustJSON(calls)), nil
	}
	qs := make([]float64, len(req.Parents))
	ids := make([]string, len(req.Parents))
	for i, p := range req.Parents {
		qs[i], ids[i] = quality(p), p.ID
	}
	latent := evolvedLatent(rng, req.Kind, qs)
	a := writeEvolved(rng, req)
	refs, fabricated := cite(rng, r, 2, topic, o.Fabricate)
	for _, p := range req.Parents { // a parent's genuine sources carry over
		for _, pr := range p.References {
			if len(refs) < 4 && !pr.Fabricated && !slices.ContainsFunc(refs, func(c prompt.Cited) bool { return c.ID == pr.ID }) {
				refs, fabricated = append(refs, prompt.Cited{ID: pr.ID, Quote: pr.Quote}), append(fabricated, false)
			}
		}
	}
	a.Rationale += sourcesLine(refs)
	raw := mustJSON(groundedAnswer{a, refs})
	h, err := prompt.ParseEvolved(raw)
	if err != nil {
		return research.Step[research.Hypothesis]{}, research.Usage{}, bug(err)
	}
	h.ID, h.Origin, h.Strategy, h.Parents, h.Goal = req.HypothesisID, "evolution", req.Kind, ids, req.Goal
	latent = grounded(&h, fabricated, latent)
	h.Latent = &latent
	return research.Step[research.Hypothesis]{Answer: h}, usage(req.Prompt+toolText(req.Tooling), raw), nil
}

// ReviewStep is a review that may call tools: it first fetches the sources the
// hypothesis cites (a reviewer re-reads them), or searches for its subject, and cites
// what it read. Its marks are those of Review: the citation check is cosci's, not the
// model's.
func (o *Offline) ReviewStep(ctx context.Context, req research.ReviewRequest) (research.Step[research.Review], research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentReflection, req.TurnID); err != nil {
		return research.Step[research.Review]{}, research.Usage{}, err
	}
	rng := newRand(req.Seed, req.TurnID)
	r := read(req.Tooling)
	var cited []string
	for _, ref := range req.Hypothesis.References {
		cited = append(cited, ref.ID)
	}
	if calls := r.next(rng, req.Tooling, query(rng, req.Goal, req.Hypothesis.Title), cited, 1); len(calls) > 0 {
		return research.Step[research.Review]{Calls: calls}, usage(req.Prompt+toolText(req.Tooling), mustJSON(calls)), nil
	}
	a := writeReview(rng, req)
	refs, _ := cite(rng, r, 1, "", 0) // a reviewer cites what it read; fabrication is measured on hypotheses
	raw := mustJSON(groundedReview{a, refs})
	rv, err := prompt.ParseReviewOf(req.Type, raw)
	if err != nil {
		return research.Step[research.Review]{}, research.Usage{}, bug(err)
	}
	rv.HypothesisID, rv.Type = req.Hypothesis.ID, req.Type
	return research.Step[research.Review]{Answer: rv}, usage(req.Prompt+toolText(req.Tooling), raw), nil
}

// groundedAnswer and groundedReview are answers with the references a grounded turn's
// schema adds.
type groundedAnswer struct {
	hypothesisAnswer
	References []prompt.Cited `json:"references"`
}

type groundedReview struct {
	reviewAnswer
	References []prompt.Cited `json:"references"`
}

// toolText is the conversation after the prompt as a model would read it, for the usage
// estimate: a grounded turn reads its tool results.
func toolText(t research.Tooling) string {
	var b strings.Builder
	for _, st := range t.Steps {
		b.WriteString(st.Text)
		for _, c := range st.Calls {
			b.Write(c.Arguments)
		}
		for _, r := range st.Results {
			b.WriteString(r.Content)
		}
	}
	return b.String()
}
