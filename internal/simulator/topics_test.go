package simulator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

func TestTopics(t *testing.T) {
	tests := []struct {
		goal string
		want []string
	}{
		{"Why does tau pathology spread between connected brain regions?", []string{"the spread of tau pathology", "connected brain regions"}},
		{"Identify drug repurposing candidates for acute myeloid leukaemia.", []string{"drug repurposing candidates", "acute myeloid leukaemia"}},
		{"Explain antimicrobial resistance (AMR) in soil", []string{"antimicrobial resistance", "AMR", "soil"}},
		{"Why Alzheimer's disease, and why Alzheimer’s disease?", []string{"Alzheimer disease"}},
		{"Why is it so?", []string{"the system under study"}},
		{"", []string{"the system under study"}},
		// The demo's goal (scripts/demo.sh): an adjective with no noun after it ("druggable
		// mechanisms", the noun a stopword) is no topic, and "slow" after "that" is a verb.
		// A generic noun ("mechanisms") heads the adjective before it, never a topic alone.
		{"Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease",
			[]string{"druggable mechanisms", "tau protein propagation", "early Alzheimer disease"}},
		{"Explain the mechanisms of ageing", []string{"ageing"}},
		// A long run gives its last three words, and the three before them.
		{"Find druggable targets for early Alzheimer disease tau protein propagation",
			[]string{"druggable targets", "early Alzheimer disease", "tau protein propagation"}},
		// A question's verb joins its subject and object into one phrase.
		{"Why do naked mole-rats resist cancer?", []string{"cancer resistance in naked mole-rats"}},
		{"Explain why some tardigrades survive desiccation", []string{"desiccation survival in tardigrades"}},
		{"Why do bats tolerate viruses?", []string{"tolerance to viruses in bats"}},
		{"Why do neurons die in Parkinson's disease?", []string{"the death of neurons", "Parkinson disease"}},
		// A verb with no noun form only splits its clause.
		{"Why do gut microbes influence mood?", []string{"gut microbes", "mood"}},
		{"Find what sets the lifespan of naked mole-rats", []string{"lifespan", "naked mole-rats"}},
		{"Find metabolic vulnerabilities of glioblastoma stem cells", []string{"metabolic vulnerabilities", "glioblastoma stem cells"}},
		{"Identify mechanisms of antibiotic tolerance in Pseudomonas aeruginosa biofilms", []string{"antibiotic tolerance", "Pseudomonas aeruginosa biofilms"}},
		// Adjectives that end a phrase are dropped; a noun that looks like one is not.
		{"Why are some tumours resistant?", []string{"tumours"}},
		{"Find a confounding variable", []string{"confounding variable"}},
		// "spread" is a noun here: no "do" or "that" asks for a verb.
		{"Explain tau spread in mice", []string{"tau spread", "mice"}},
	}
	for _, tt := range tests {
		if got := topics(tt.goal); !slices.Equal(got, tt.want) {
			t.Errorf("topics(%q) = %q, want %q", tt.goal, got, tt.want)
		}
	}
}

// TestTitlesReadAsScience checks the titles of a seeded session's first hypotheses: each
// names the goal's subject with one of its topics, and none carries a dangling adjective
// ("triggers druggable during ...") or a clause ("drives mole-rats resist cancer").
func TestTitlesReadAsScience(t *testing.T) {
	goals := []string{
		"Identify druggable mechanisms that slow tau protein propagation in early Alzheimer's disease",
		"Find druggable targets for early Alzheimer disease tau protein propagation",
		"Why do naked mole-rats resist cancer?",
		"Find metabolic vulnerabilities of glioblastoma stem cells",
		"Explain why some tardigrades survive desiccation",
		"Identify mechanisms of antibiotic tolerance in Pseudomonas aeruginosa biofilms",
		goal,
	}
	// Words no title should have: the goal's question and instruction words, its verbs.
	banned := set("why do does find identify explain resist resists survive survives slow")
	var o Offline
	for _, g := range goals {
		ts := topics(g)
		for i := range 20 {
			req := research.GenerateRequest{TurnID: fmt.Sprint("gen-", i), Goal: g, Strategy: research.StrategyLiterature, Seed: 42}
			h, _, err := o.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			topic, ok := titleTopic(h.Title, ts)
			if !ok {
				t.Errorf("goal %q: title %q does not name one of the topics %q", g, h.Title, ts)
				continue
			}
			words := strings.Fields(topic)
			if last := words[len(words)-1]; isAdjective(last) {
				t.Errorf("goal %q: title %q: its topic ends with the adjective %q", g, h.Title, last)
			}
			for _, w := range strings.Fields(strings.ToLower(h.Title)) {
				if _, verb := verbs[w]; banned[w] || verb {
					t.Errorf("goal %q: title %q has the word %q", g, h.Title, w)
				}
			}
		}
	}
}

// titleTopic returns the topic of ts a title names, whole or shortened as a writer would
// (topicForms); the longest it names.
func titleTopic(title string, ts []string) (string, bool) {
	lower, best := strings.ToLower(title), ""
	for _, topic := range ts {
		for _, f := range topicForms(topic) {
			if strings.Contains(lower, strings.ToLower(f)) && len(f) > len(best) {
				best = f
			}
		}
	}
	return best, best != ""
}
