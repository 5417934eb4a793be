package providertest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/provider/providertest"
)

// TestVoyageEmbeddings: the fake answers Voyage's request shape with Voyage's answer
// shape, refuses what Voyage refuses in Voyage's error shape, and keeps apart from
// OpenAI's /v1/embeddings on the same server.
func TestVoyageEmbeddings(t *testing.T) {
	f := providertest.Start(t, providertest.Options{})
	post := func(key, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, f.VoyageBaseURL()+"/v1/embeddings", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	status, out := post(f.VoyageKey(), `{"input":["tau seeds spread","exosomes carry tau"],"model":"voyage-3.5","input_type":"document"}`)
	data, _ := out["data"].([]any)
	if status != 200 || len(data) != 2 || out["model"] != "voyage-3.5" {
		t.Fatalf("%d %v", status, out)
	}
	second := data[1].(map[string]any)
	if second["index"] != 1.0 || len(second["embedding"].([]any)) == 0 {
		t.Errorf("second embedding %v", second)
	}
	want := providertest.Tokens("tau seeds spread") + providertest.Tokens("exosomes carry tau")
	if u := out["usage"].(map[string]any); u["total_tokens"] != float64(want) {
		t.Errorf("usage %v; want total_tokens %d", u, want)
	}
	for _, tc := range []struct {
		name, key, body string
		status          int
	}{
		{"wrong key", "pa-wrong", `{"input":["tau"],"model":"voyage-3.5"}`, 401},
		{"no model", f.VoyageKey(), `{"input":["tau"]}`, 400},
		{"empty input", f.VoyageKey(), `{"input":[],"model":"voyage-3.5"}`, 400},
		{"an empty text", f.VoyageKey(), `{"input":["tau",""],"model":"voyage-3.5"}`, 400},
		{"bad input type", f.VoyageKey(), `{"input":["tau"],"model":"voyage-3.5","input_type":"passage"}`, 400},
	} {
		status, out := post(tc.key, tc.body)
		if detail, _ := out["detail"].(string); status != tc.status || detail == "" {
			t.Errorf("%s: %d %v; want %d with a detail", tc.name, status, out, tc.status)
		}
	}
	st := f.Stats()
	if st.Requests["POST /voyage/v1/embeddings"] != 6 || st.Requests["POST /v1/embeddings"] != 0 || st.Unauthorized != 1 || st.Refused != 4 || st.VoyageInputTypes["document"] != 1 {
		t.Errorf("stats: requests %v, %d unauthorized, %d refused, input types %v", st.Requests, st.Unauthorized, st.Refused, st.VoyageInputTypes)
	}
}
