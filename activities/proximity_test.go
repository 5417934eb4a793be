package activities

import (
	"context"
	"fmt"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/internal/provider"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/simulator"
	"github.com/cosci-dev/cosci/internal/store"
)

func TestProximity(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	a := &Activities{Store: st}
	env.RegisterActivity(a)

	texts := map[string]string{
		"h-0001": "Microglial exosomes carry misfolded tau between connected brain regions",
		"h-0002": "Microglial exosomes carry misfolded tau between distant brain regions", // close to h-0001
		"h-0003": "Astrocytes clear misfolded tau from synapses during sleep",             // shares "misfolded tau"
		"h-0004": "Mycorrhizal fungi ration nitrogen to seedlings in drought",             // unrelated
	}
	var all []string
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("h-%04d", i)
		h := research.Hypothesis{ID: id, Title: texts[id], Statement: texts[id], Predictions: []string{"It should show."}}
		if err := st.PutHypothesis(t.Context(), "s-1", h); err != nil {
			t.Fatal(err)
		}
		all = append(all, id)
	}

	run := func(in ProximityInput) ProximityResult {
		t.Helper()
		v, err := env.ExecuteActivity(a.Proximity, in)
		if err != nil {
			t.Fatal(err)
		}
		var out ProximityResult
		if err := v.Get(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	out := run(ProximityInput{SessionID: "s-1", New: []string{"h-0002", "h-0001"}, All: all})
	// h-0001 and h-0002 pick each other: one edge. Each also neighbours h-0003, above the
	// floor; h-0004 shares nothing.
	if len(out.Edges) != 3 {
		t.Fatalf("edges %+v, want 3", out.Edges)
	}
	first := out.Edges[0]
	if first.A != "h-0001" || first.B != "h-0002" || first.Sim < 0.5 || first.Sim >= 1 {
		t.Errorf("first edge %+v, want h-0001 to h-0002 with a high similarity", first)
	}
	for _, e := range out.Edges {
		if e.A == e.B || e.B == "h-0004" || e.A == "h-0004" || e.Sim <= ProximityFloor {
			t.Errorf("unexpected edge %+v", e)
		}
	}

	// A missing hypothesis is left out, not an error.
	out = run(ProximityInput{SessionID: "s-1", New: []string{"h-0003", "h-0009"}, All: append(all, "h-0009")})
	if len(out.Edges) != 2 || out.Edges[0].A != "h-0003" {
		t.Errorf("edges %+v, want h-0003's two neighbours", out.Edges)
	}
}

// TestThemesOfASimulatedTop: the overview of a top 10 the offline simulator wrote for the
// demo's goal groups into a handful of themes, several with more than one hypothesis, as
// a reader would group them; not ten themes of one.
func TestThemesOfASimulatedTop(t *testing.T) {
	o := &simulator.Offline{}
	goal := "Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease"
	var top []research.Hypothesis
	for i := range 7 {
		h, _, err := o.Generate(t.Context(), research.GenerateRequest{TurnID: fmt.Sprint("g", i), HypothesisID: fmt.Sprintf("h-%04d", i+1), Goal: goal,
			Strategy: research.Strategies[i%3], Seed: 11})
		must(t, err)
		top = append(top, h)
	}
	for i := range 3 {
		h, _, err := o.Evolve(t.Context(), research.EvolveRequest{TurnID: fmt.Sprint("e", i), HypothesisID: fmt.Sprintf("h-%04d", i+8), Goal: goal,
			Kind: research.EvolutionKinds[i], Parents: []research.Hypothesis{top[i]}, Seed: 11})
		must(t, err)
		top = append(top, h)
	}
	a := &Activities{}
	themes, err := a.themesOf(t.Context(), "s-1", "offline", "", top)
	must(t, err)
	multi := 0
	for _, th := range themes {
		if len(th) > 1 {
			multi++
		}
	}
	if len(themes) > proximity.MaxThemes || multi < 2 {
		t.Errorf("themes %v: want at most %d, two or more of them with several hypotheses", themes, proximity.MaxThemes)
	}
}

// standIn is an embedder that counts the texts it embeds.
type standIn struct{ texts int }

func (s *standIn) Embed(_ context.Context, texts []string) ([][]float32, research.Usage, error) {
	s.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, x := range texts {
		out[i] = simulator.Embed(x)
	}
	return out, research.Usage{PromptTokens: 10 * len(texts), Requests: 1}, nil
}

// embeddingProvider is a provider registry whose "openai" offers embeddings.
type embeddingProvider struct {
	Resolver
	e *standIn
}

func (p embeddingProvider) Embedder(name, model string) (provider.Embedder, error) {
	if name != "openai" {
		return nil, nil
	}
	return p.e, nil
}

// TestProximityByEmbeddings: with a provider that offers embeddings, each hypothesis is
// embedded once, cached in the store, and compared by cosine, with the model's thresholds.
func TestProximityByEmbeddings(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &standIn{}
	a := &Activities{Store: st, Providers: embeddingProvider{e: e}, Thresholds: map[string]proximity.Measure{"m": {Duplicate: 0.6, Cluster: 0.3, Theme: 0.3}}}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	var ids []string
	for i := range 4 {
		id := fmt.Sprintf("h-%04d", i+1)
		ids = append(ids, id)
		must(t, st.PutHypothesis(t.Context(), "s-1", research.Hypothesis{ID: id, Title: fmt.Sprint("Microglia carry tau ", i), Statement: "s", Predictions: []string{"p"}}))
	}
	var out ProximityResult
	must(t, run(t, env, a.Proximity, ProximityInput{SessionID: "s-1", New: ids[:3], All: ids[:3], Provider: "openai", EmbeddingModel: "m"}, &out))
	if e.texts != 3 || out.Measure != "embedding:m" || out.Duplicate != 0.6 || out.Cluster != 0.3 || len(out.Edges) == 0 || out.Usage.Requests != 1 {
		t.Fatalf("first call: %d texts embedded, result %+v", e.texts, out)
	}
	must(t, run(t, env, a.Proximity, ProximityInput{SessionID: "s-1", New: ids[3:], All: ids, Provider: "openai", EmbeddingModel: "m"}, &out))
	if e.texts != 4 {
		t.Errorf("%d texts embedded after the second call; want 4: each hypothesis once", e.texts)
	}
	cached, err := st.Embeddings(t.Context(), "s-1", "m", ids)
	if err != nil || len(cached) != 4 || len(cached["h-0004"]) != simulator.EmbedDims {
		t.Errorf("cached embeddings %d, %v", len(cached), err)
	}
	// Without embeddings (another provider), words.
	must(t, run(t, env, a.Proximity, ProximityInput{SessionID: "s-1", New: ids[3:], All: ids, Provider: "anthropic"}, &out))
	if out.Measure != "lexical" || out.Duplicate != proximity.Lexical.Duplicate {
		t.Errorf("lexical: %+v", out)
	}
	// A Claude session that names an embedding provider of its own compares embeddings.
	must(t, run(t, env, a.Proximity, ProximityInput{SessionID: "s-1", New: ids[3:], All: ids, Provider: "anthropic", EmbeddingProvider: "openai", EmbeddingModel: "m"}, &out))
	if out.Measure != "embedding:m" || e.texts != 4 {
		t.Errorf("anthropic with openai embeddings: %+v, %d texts embedded; want the cached embeddings compared", out, e.texts)
	}
}
