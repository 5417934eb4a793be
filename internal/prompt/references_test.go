package prompt

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseReferences: a citation needs an id, a quote long enough to check and the claim
// it supports; anything less is sent back to the model with what to change.
func TestParseReferences(t *testing.T) {
	const base = `{"title": "T", "statement": "S.", "rationale": "R.", "testable_predictions": ["P"], "references": [%s]}`
	const quote = "Microglial depletion reduced tau propagation by 40% in PS19 mice"
	tests := []struct {
		name string
		ref  string
		want string // a fragment of the error; "" for no error
	}{
		{"whole", `{"id": "10.1/x", "quote": "` + quote + `", "claim": "Microglia spread tau."}`, ""},
		{"elided", `{"id": "10.1/x", "quote": "Microglial depletion ... by 40%", "claim": "Microglia spread tau."}`, "has 4 words"},
		{"empty quote", `{"id": "10.1/x", "quote": "", "claim": "Microglia spread tau."}`, "has 0 words"},
		{"punctuation only", `{"id": "10.1/x", "quote": " ... — ", "claim": "Microglia spread tau."}`, "has 0 words"},
		{"short quote", `{"id": "10.1/x", "quote": "tau was increased", "claim": "Microglia spread tau."}`, "quote at least 5 words"},
		{"no claim", `{"id": "10.1/x", "quote": "` + quote + `", "claim": " "}`, "references[0].claim is empty"},
		{"claim missing", `{"id": "10.1/x", "quote": "` + quote + `"}`, "references[0].claim is empty"},
		{"long claim", `{"id": "10.1/x", "quote": "` + quote + `", "claim": "` + strings.Repeat("a", MaxClaimLength+1) + `"}`, "at most 400"},
		{"no id", `{"id": "", "quote": "` + quote + `", "claim": "c"}`, "references[0].id is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHypothesis(fmt.Appendf(nil, base, tt.ref))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("ParseHypothesis: %v", err)
			case tt.want == "":
				if len(h.References) != 1 || h.References[0].Claim != "Microglia spread tau." || h.References[0].Quote != quote {
					t.Errorf("references = %+v", h.References)
				}
			case err == nil || !strings.Contains(err.Error(), tt.want):
				t.Errorf("error = %v, want one saying %q", err, tt.want)
			}
		})
	}
}
