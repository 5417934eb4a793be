package simulator

// Grounded turns: the simulator reads the literature through the same tools and the same
// loop as a real model. It knows the contract of cosci's literature server (a tool named
// search that takes a query and lists results with ids, titles and snippets; a tool named
// fetch that takes an id and gives the whole reference with its abstract), on whatever
// server it is offered, and calls any other tool it is offered once with arguments made
// from the tool's schema, so servers nobody here wrote are exercised too.
//
// A grounded answer cites what it read: each reference is an id a tool returned, a
// passage of that result, and the sentence of the answer it supports. Offline.Fabricate
// makes a known share of them dishonest, in the ways of Offline.Plant (see plant.go),
// each of a kind it records in its own Truth (never in the answer), so the citation check
// and the reviews' support judgements can be measured against the truth.

import (
	"cmp"
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
	search          int // the index of the search result that listed it; -1 for none
	// passage and page are a passage of the source's full text that a search gave
	// (its id, "10.5555/x#p7.2"), "" for a hit or a fetched record.
	passage string
	page    int
}

// reading is what a turn has read so far and what it may still call.
type reading struct {
	search, fetch string                // the offered tools' names; "" when not offered
	others        []research.ToolSpec   // other tools offered
	lab           *research.ToolSpec    // cosci's lab tool, when offered (labtool.go)
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
		case isLabTool(tool) && r.lab == nil:
			r.lab = &tool
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
			if !res.IsError && (r.lab == nil || res.Name != r.lab.Name) { // an analysis is no literature source
				r.learn(res.Content, len(r.results)-1)
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

// learn adds the sources a result names: a search's hits, or a fetched reference. index
// is the result's place among the turn's results.
func (r *reading) learn(content string, index int) {
	var v struct {
		Results []struct {
			ID, Title, Snippet string
		} `json:"results"`
		Passages []struct {
			ID, Passage, Title, Text string
			Page                     int
		} `json:"passages"`
		ID       string `json:"id"`
		Title    string `json:"title"`
		Abstract string `json:"abstract"`
	}
	if json.Unmarshal([]byte(content), &v) != nil {
		return
	}
	for _, h := range v.Results {
		if h.ID != "" && !slices.ContainsFunc(r.sources, func(s source) bool { return s.id == h.ID && s.passage == "" }) {
			r.sources = append(r.sources, source{id: h.ID, title: h.Title, text: h.Snippet, search: index})
		}
	}
	for _, p := range v.Passages { // after the hits: the fetches go to the best hits
		if p.ID != "" && p.Passage != "" && !slices.ContainsFunc(r.sources, func(s source) bool { return s.passage == p.Passage }) {
			r.sources = append(r.sources, source{id: p.ID, title: p.Title, text: p.Text, search: index, passage: p.Passage, page: p.Page})
		}
	}
	if v.ID != "" && v.Abstract != "" {
		s := source{id: v.ID, title: v.Title, text: v.Abstract, fetched: true, search: -1}
		if i := slices.IndexFunc(r.sources, func(s source) bool { return s.id == v.ID && s.passage == "" }); i >= 0 {
			s.search = r.sources[i].search
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
	var hits []source
	for _, s := range r.sources {
		if s.passage == "" {
			hits = append(hits, s)
		}
	}
	for _, s := range hits[:min(fetches, len(hits))] {
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

// cite writes up to n references to what the turn read, fetched sources first, each
// with a passage of the source and the claim (one of claims, the citing text's
// sentences) it supports. A share fabricate of them is dishonest, of the dishonest kinds
// the simulator plants; the rest are of its honest kinds.
func (o *Offline) cite(rng *rand.Rand, r reading, n int, claims []string, fabricate float64) []plantedRef {
	// Fetched records first, then passages of full texts (a quote with its page), then
	// the other hits; one citation a source.
	srcs := slices.Clone(r.sources)
	order := func(s source) int {
		switch {
		case s.fetched:
			return 0
		case s.passage != "":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(srcs, func(a, b source) int { return order(a) - order(b) })
	honest, dishonest := o.kinds()
	var cs []plantedRef
	cited := map[string]bool{}
	for _, s := range srcs {
		if len(cited) == n {
			break
		}
		if cited[strings.ToLower(s.id)] {
			continue
		}
		cited[strings.ToLower(s.id)] = true
		// A dishonest kind that this source does not allow gives way to another, and at
		// last to an honest citation.
		var try []string
		if len(dishonest) > 0 && fabricate > 0 && rng.Float64() < fabricate {
			for _, i := range rng.Perm(len(dishonest)) {
				try = append(try, dishonest[i])
			}
			// A quote from a full text is put at the wrong page a quarter of the time: a
			// slip of its own, which would otherwise be one kind in thirty and too rare for
			// BenchmarkGrounding to measure the check at the page.
			if s.passage != "" && slices.Contains(dishonest, PlantedWrongPage) && rng.IntN(4) == 0 {
				try = append([]string{PlantedWrongPage}, try...)
			}
		}
		try = append(try, pick(rng, honest), PlantedVerbatim)
		for _, kind := range try {
			if c, ok := plant(rng, kind, s, r, claims); ok {
				cs = append(cs, c)
				break
			}
		}
	}
	return cs
}

// sentence is one sentence of a source's text, word for word.
func sentence(rng *rand.Rand, text string) string {
	ss := sentences(text)
	if len(ss) == 0 {
		return research.Shorten(text, 200)
	}
	return pick(rng, ss)
}

// cited are the references as the answer's JSON gives them.
func cited(cs []plantedRef) []prompt.ModelRef {
	out := make([]prompt.ModelRef, len(cs))
	for i, c := range cs {
		out[i] = c.ModelRef
	}
	return out
}

// grounded records each reference's hidden truth (the kind planted, in o's Truth, by
// the hypothesis' statement) and, for each source honestly cited, lifts the hypothesis'
// hidden quality a little: grounding helps, up to a point.
func (o *Offline) grounded(h research.Hypothesis, cs []plantedRef, latent float64) (float64, error) {
	if err := o.Planted().remember(h.Statement, h.References, cs); err != nil {
		return latent, err
	}
	real := 0
	for _, ref := range h.References {
		if c, ok := plantedFor(ref, cs); ok && Honest(c.kind) {
			real++
		}
	}
	return latent + 0.1*float64(min(real, 2)), nil
}

// plantedFor is the citation of cs that the parser read as ref: the one with its id.
func plantedFor(ref research.Reference, cs []plantedRef) (plantedRef, bool) {
	j := slices.IndexFunc(cs, func(c plantedRef) bool { return strings.EqualFold(c.ID, ref.ID) })
	if j < 0 {
		return plantedRef{}, false
	}
	return cs[j], true
}

// sourcesLine names what the turn read, for the rationale.
func sourcesLine(refs []plantedRef) string {
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
	if calls := r.withLab(req.Tooling, r.next(rng, req.Tooling, query(rng, req.Goal, topic), nil, 2)); len(calls) > 0 {
		return research.Step[research.Hypothesis]{Calls: calls}, usage(req.Prompt+toolText(req.Tooling), mustJSON(calls)), nil
	}
	mean, sd := strategyLatent(req.Strategy, req.Context)
	latent := mean + sd*rng.NormFloat64()
	a := writeHypothesis(rng, req)
	refs := o.cite(rng, r, 3, claimsOf(a.Statement, a.Rationale), o.Fabricate)
	lab := labRefs(req.Context, a)
	if ref, ok := r.labRef(claimsOf(a.Statement)); ok { // the analysis it asked for, after its own citations
		lab = append(lab, ref)
	}
	return o.groundedStep(a, refs, lab, latent, func(raw []byte) (research.Hypothesis, error) { return prompt.GenerateSpec.Parse(req, raw) }, req.Prompt+toolText(req.Tooling))
}

// EvolveStep is an evolution turn that may call tools: it searches for its first
// parent's subject and cites what it fetched, and the parents' sources it keeps.
func (o *Offline) EvolveStep(ctx context.Context, req research.EvolveRequest) (research.Step[research.Hypothesis], research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentEvolution, req.TurnID); err != nil {
		return research.Step[research.Hypothesis]{}, research.Usage{}, err
	}
	if len(req.Parents) == 0 {
		return research.Step[research.Hypothesis]{}, research.Usage{}, noParents(req)
	}
	rng := newRand(req.Seed, req.TurnID)
	r := read(req.Tooling)
	_ = pick(rng, topics(req.Goal)) // drawn as before, so that the rest of the turn is too
	if calls := r.next(rng, req.Tooling, query(rng, req.Goal, req.Parents[0].Title), nil, 1); len(calls) > 0 {
		return research.Step[research.Hypothesis]{Calls: calls}, usage(req.Prompt+toolText(req.Tooling), mustJSON(calls)), nil
	}
	latent := evolvedLatent(rng, req)
	a := writeEvolved(rng, req)
	claims := claimsOf(a.Statement, a.Rationale)
	refs := o.cite(rng, r, 2, claims, o.Fabricate)
	for _, p := range req.Parents { // a parent's honest sources carry over, cited for a claim of this text
		for _, pr := range p.References {
			kind, _ := o.Planted().Hypothesis(p, pr) // a citation the simulator did not plant counts as honest
			if len(refs) < 4 && Honest(kind) && !slices.ContainsFunc(refs, func(c plantedRef) bool { return strings.EqualFold(c.ID, pr.ID) }) {
				if len(claims) > 0 {
					refs = append(refs, plantedRef{ModelRef: prompt.ModelRef{ID: pr.ID, Quote: pr.Quote, Claim: claims[len(refs)%len(claims)]}, kind: cmp.Or(kind, PlantedVerbatim)})
				}
			}
		}
	}
	return o.groundedStep(a, refs, labRefs(req.Context, a), latent, func(raw []byte) (research.Hypothesis, error) { return prompt.EvolveSpec.Parse(req, raw) }, req.Prompt+toolText(req.Tooling))
}

// groundedStep is the answer of a generation or evolution turn that has read what it
// needs: the hypothesis a, its rationale naming the sources refs it cites, read back by
// parse (the agent's, which gives it what the request knows of it), and its quality latent
// adjusted for what it cites (see grounded). text is the turn's prompt, for its usage.
// lab are its citations of the lab's results (labcite.go), which are not planted and lift
// nothing.
func (o *Offline) groundedStep(a hypothesisAnswer, refs []plantedRef, lab []prompt.ModelRef, latent float64, parse func([]byte) (research.Hypothesis, error), text string) (research.Step[research.Hypothesis], research.Usage, error) {
	a.Rationale += sourcesLine(refs)
	raw := mustJSON(groundedAnswer{a, append(cited(refs), lab...)})
	h, err := parse(raw)
	if err != nil {
		return research.Step[research.Hypothesis]{}, research.Usage{}, bug(err)
	}
	if latent, err = o.grounded(h, refs, latent); err != nil {
		return research.Step[research.Hypothesis]{}, research.Usage{}, err
	}
	h.Latent = &latent
	return research.Step[research.Hypothesis]{Answer: h}, usage(text, raw), nil
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
	var refetch []string
	for _, ref := range req.Hypothesis.References {
		refetch = append(refetch, ref.ID)
	}
	calls := r.next(rng, req.Tooling, query(rng, req.Goal, req.Hypothesis.Title), refetch, 1)
	if req.Type == research.ReviewFull {
		calls = r.withLab(req.Tooling, calls)
	}
	if len(calls) > 0 {
		return research.Step[research.Review]{Calls: calls}, usage(req.Prompt+toolText(req.Tooling), mustJSON(calls)), nil
	}
	a := writeReview(rng, req)
	refs := o.cite(rng, r, 1, claimsOf(a.Critique), 0) // a reviewer cites what it read; fabrication is measured on hypotheses
	support := o.judgeSupport(rng, req.Type, req.Hypothesis)
	cites := cited(refs)
	if lab, ok := r.labRef(claimsOf(a.Critique)); ok {
		cites = append(cites, lab)
	}
	raw := mustJSON(groundedReview{a, cites, support})
	rv, err := prompt.ReviewSpec.Parse(req, raw)
	if err != nil {
		return research.Step[research.Review]{}, research.Usage{}, bug(err)
	}
	return research.Step[research.Review]{Answer: rv}, usage(req.Prompt+toolText(req.Tooling), raw), nil
}

// groundedAnswer and groundedReview are answers with the references a grounded turn's
// schema adds.
type groundedAnswer struct {
	hypothesisAnswer
	References []prompt.ModelRef `json:"references"`
}

type groundedReview struct {
	reviewAnswer
	References []prompt.ModelRef           `json:"references"`
	Support    []research.SupportJudgement `json:"citation_support,omitempty"`
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
