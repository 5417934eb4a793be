package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// report.json: what it holds, and what it holds of an empty session.

// exported mirrors the documented JSON schema, field for field.
type exported struct {
	Session struct {
		ID          string `json:"id"`
		Scientist   string `json:"scientist"`
		State       string `json:"state"`
		StopReason  string `json:"stop_reason"`
		Seq         int    `json:"seq"`
		Hypotheses  int    `json:"hypotheses"`
		Excluded    int    `json:"excluded"`
		Rounds      int    `json:"rounds"`
		Checkpoints int    `json:"checkpoints"`
		Usage       struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
			TotalTokens      int `json:"total_tokens"`
			Requests         int `json:"requests"`
		} `json:"usage"`
	} `json:"session"`
	Goal        string                `json:"goal"`
	Refinements []session.Refinement  `json:"refinements"`
	Plan        *research.Plan        `json:"plan"`
	Overview    *research.Overview    `json:"overview"`
	MetaReview  *research.MetaReview  `json:"meta_review"`
	Hypotheses  []exportedHypothesis  `json:"hypotheses"`
	Clusters    [][]string            `json:"clusters"`
	Lineage     []exportedLineageItem `json:"lineage"`
}

type exportedHypothesis struct {
	Rank        int      `json:"rank"`
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Statement   string   `json:"statement"`
	Predictions []string `json:"testable_predictions"`
	InStore     bool     `json:"in_store"`
	Origin      string   `json:"origin"`
	Strategy    string   `json:"strategy"`
	Parents     []string `json:"parents"`
	Cluster     int      `json:"cluster"`
	Excluded    string   `json:"excluded"`
	Elo         float64  `json:"elo"`
	ReviewScore *float64 `json:"review_score"`
	Reviews     []struct {
		Type        string                `json:"type"`
		Reviewer    string                `json:"reviewer"`
		Manual      bool                  `json:"manual"`
		Scores      map[string]float64    `json:"scores"`
		Assumptions []research.Assumption `json:"assumptions"`
	} `json:"reviews"`
}

type exportedLineageItem struct {
	ID      string   `json:"id"`
	Parents []string `json:"parents"`
	Kind    string   `json:"kind"`
}

func TestJSON(t *testing.T) {
	in := rich()
	delete(in.Hypotheses, "gen/03")
	f := render(t, in)
	if !json.Valid(f.JSON) {
		t.Fatalf("report.json is not valid JSON\n%s", f.JSON)
	}
	var x exported // a partial mirror: the top level is checked key by key below
	if err := json.Unmarshal(f.JSON, &x); err != nil {
		t.Fatalf("report.json does not decode: %v", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(f.JSON, &top); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"analyses", "bibliography", "clusters", "goal", "hypotheses", "lab", "lineage", "meta_review", "overview", "plan", "refinements", "session"}; !slices.Equal(keys, want) {
		t.Errorf("top-level keys = %v, want %v", keys, want)
	}

	if x.Session.ID != "cosci-7f3a" || x.Session.StopReason != "max_hypotheses reached" || x.Session.Seq != 4 ||
		x.Session.Hypotheses != 8 || x.Session.Excluded != 2 || x.Session.Rounds != 3 ||
		x.Session.Usage.TotalTokens != 1323579 || x.Session.Usage.Requests != 345 {
		t.Errorf("session = %+v", x.Session)
	}
	if x.Goal != in.Final.Goal || len(x.Refinements) != 3 || x.Refinements[2].Focus != "toxin-antitoxin systems" {
		t.Errorf("goal %q, refinements %+v", x.Goal, x.Refinements)
	}
	if x.Plan == nil || x.Plan.Criteria[0] != "Testable within a month" {
		t.Errorf("plan = %+v", x.Plan)
	}
	if x.Overview == nil || len(x.Overview.Themes) != 2 || x.Overview.Experiments[0] != "Time-lapse microscopy of biofilms" {
		t.Errorf("overview = %+v", x.Overview)
	}
	if x.MetaReview == nil || x.MetaReview.Round != 3 || x.MetaReview.Feedback == "" {
		t.Errorf("meta_review = %+v", x.MetaReview)
	}

	var order []string
	for _, h := range x.Hypotheses {
		order = append(order, fmt.Sprintf("%d:%s", h.Rank, h.ID))
	}
	if want := []string{"1:evo/2", "2:gen/00", "3:evo/1", "4:gen/01", "5:gen/02", "6:gen/03", "0:gen/04", "0:gen/05"}; !slices.Equal(order, want) {
		t.Errorf("hypotheses = %v, want %v", order, want)
	}
	h := x.Hypotheses[0]
	if h.Title != "Grounded tolerance" || h.Statement != "Statement evo/2" || !h.InStore || h.Origin != "evolution" ||
		h.Strategy != "grounding" || !slices.Equal(h.Parents, []string{"evo/1", "gen/02"}) || h.Cluster != 2 ||
		h.ReviewScore == nil || *h.ReviewScore != 8.5 || len(h.Reviews) != 1 ||
		len(h.Reviews[0].Assumptions) != 2 || h.Reviews[0].Assumptions[1].Note != "contested since 2018" ||
		h.Reviews[0].Scores["overall"] != 8.5 {
		t.Errorf("hypotheses[0] = %+v", h)
	}
	if r := x.Hypotheses[1].Reviews; len(r) != 3 || !r[2].Manual || r[2].Reviewer != "ada" || r[0].Manual {
		t.Errorf("gen/00's reviews = %+v", r)
	}
	if g := x.Hypotheses[5]; g.InStore || g.Title != "Entry title gen/03" || g.Statement != "" || g.Predictions == nil || g.Parents == nil {
		t.Errorf("gen/03, not in store = %+v", g)
	}
	if g := x.Hypotheses[7]; g.Excluded != "near-duplicate of gen/00" || g.Cluster != 1 {
		t.Errorf("gen/05 = %+v", g)
	}
	if want := [][]string{{"evo/2", "evo/1", "gen/01"}, {"gen/00", "gen/03", "gen/05"}}; !slices.EqualFunc(x.Clusters, want, slices.Equal) {
		t.Errorf("clusters = %v, want %v", x.Clusters, want)
	}
	wantLineage := []exportedLineageItem{
		{"evo/2", []string{"evo/1", "gen/02"}, "grounding"},
		{"evo/1", []string{"gen/00", "gen/01"}, "combination"},
	}
	if !slices.EqualFunc(x.Lineage, wantLineage, func(a, b exportedLineageItem) bool {
		return a.ID == b.ID && a.Kind == b.Kind && slices.Equal(a.Parents, b.Parents)
	}) {
		t.Errorf("lineage = %+v, want %+v", x.Lineage, wantLineage)
	}
	if bytes.Contains(bytes.ToLower(f.JSON), []byte("latent")) {
		t.Error("report.json mentions latent")
	}
}

func TestJSONEmpty(t *testing.T) {
	f := render(t, fixture(0))
	var top map[string]any
	if err := json.Unmarshal(f.JSON, &top); err != nil {
		t.Fatalf("report.json does not decode: %v", err)
	}
	for _, k := range []string{"plan", "overview", "meta_review"} {
		if top[k] != nil {
			t.Errorf("%s = %v, want null", k, top[k])
		}
	}
	for _, k := range []string{"hypotheses", "clusters", "lineage"} {
		if l, ok := top[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %#v, want []", k, top[k])
		}
	}
}
