package research

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzRequest: a session request as a client sends it (JSON) either decodes and, with its
// defaults, passes validation, or is refused with a *FieldError naming the field; it never
// panics.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"research_goal":"Find druggable mechanisms that slow tau propagation","config":{"max_hypotheses":30,"review_types":["initial","full"],"top_k":5,"debate_share":0.25}}`,
		`{"research_goal":""}`, `{"research_goal":"g","config":{"time_limit":"2h","checkpoint_interval":"30s"}}`,
		`{"research_goal":"g","config":{"safety_level":"lax","review_types":["initial","initial"]}}`,
		`{"research_goal":"g","config":{"max_hypotheses":-1,"top_k":1000,"debate_share":2}}`,
		`{"research_goal":"enhance the transmissibility of a pathogen"}`, `null`, `[]`, `{"config":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r Request
		if err := json.Unmarshal(raw, &r); err != nil {
			return // refused by the decoder, with its own error
		}
		err := r.WithDefaults().Validate()
		var fe *FieldError
		if err != nil && (!errors.As(err, &fe) || fe.Field == "" || fe.Problem == "") {
			t.Fatalf("request %s: error %v (%T); want a *FieldError naming the field", raw, err, err)
		}
	})
}
