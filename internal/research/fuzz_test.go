package research

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzRequest: a session request as a client sends it (JSON) either decodes and, with its
// defaults, passes validation, or is refused with a *FieldError naming the field; it never
// panics. What it gives (a zero given included) is what it gives again once the workflow
// has encoded and decoded it (continue-as-new, a subagent's input).
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"research_goal":"Find druggable mechanisms that slow tau propagation","config":{"max_hypotheses":30,"review_types":["initial","full"],"top_k":5,"debate_share":0.25}}`,
		`{"research_goal":""}`, `{"research_goal":"g","config":{"time_limit":"2h","checkpoint_interval":"30s"}}`,
		`{"research_goal":"g","config":{"safety_level":"lax","review_types":["initial","initial"]}}`,
		`{"research_goal":"g","config":{"max_hypotheses":-1,"top_k":1000,"debate_share":2}}`,
		`{"research_goal":"enhance the transmissibility of a pathogen"}`, `null`, `[]`, `{"config":7}`,
		`{"config":{"token_budget":0,"time_limit":"0s","debate_share":0,"tools":[],"seed":null}}`, `{"config":{"TOP_K":0,"model":""}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r Request
		if err := json.Unmarshal(raw, &r); err != nil {
			return // refused by the decoder, with its own error
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("request %s decodes but does not encode: %v", raw, err)
		}
		var back Request
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("request %s encodes as %s, which does not decode: %v", raw, again, err)
		}
		for _, f := range ConfigFields() {
			if r.Config.Given(f) != back.Config.Given(f) {
				t.Fatalf("request %s gives %s: %v; encoded as %s: %v", raw, f, r.Config.Given(f), again, back.Config.Given(f))
			}
		}
		err = r.WithDefaults().Validate()
		var fe *FieldError
		if err != nil && (!errors.As(err, &fe) || fe.Field == "" || fe.Problem == "") {
			t.Fatalf("request %s: error %v (%T); want a *FieldError naming the field", raw, err, err)
		}
	})
}
