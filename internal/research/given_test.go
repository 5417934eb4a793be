package research

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// parent is a configuration a continued or forked session starts from: every limit set.
var parent = Config{
	MaxHypotheses: 40, TimeLimit: Duration(2 * time.Hour), ReviewTypes: []string{ReviewInitial, ReviewFull},
	SafetyLevel: "strict", Provider: "openai", Model: "gpt-x", Seed: 7, TokenBudget: 500_000,
	ConvergenceRounds: 6, CheckpointInterval: Duration(5 * time.Minute), TopK: 5, DebateShare: 0.25,
	Tools: []string{"literature.*"}, ToolCallsPerTurn: 3, ToolCallsPerSession: 90,
	ApproveTools: []string{"literature.fetch"}, ApprovalTimeout: Duration(time.Hour), EmbeddingModel: "nomic-embed-text",
}

// overJSON decodes a request's config as the workflow does, and puts it over parent.
func overJSON(t *testing.T, config string) Config {
	t.Helper()
	var r Request
	if err := json.Unmarshal([]byte(`{"config": `+config+`}`), &r); err != nil {
		t.Fatalf("decode %s: %v", config, err)
	}
	return r.Config.Over(parent)
}

func TestOver(t *testing.T) {
	tests := []struct {
		name   string
		config string // the request's config, as JSON
		check  func(Config) bool
	}{
		{"nothing given keeps the parent's", `{}`, func(c Config) bool { return reflect.DeepEqual(c, parent) }},
		{"no config at all", `null`, func(c Config) bool { return reflect.DeepEqual(c, parent) }},
		{"a value over the parent's", `{"token_budget": 900000, "max_hypotheses": 60}`,
			func(c Config) bool {
				return c.TokenBudget == 900_000 && c.MaxHypotheses == 60 && c.TimeLimit == parent.TimeLimit
			}},
		{"token_budget 0: no cap", `{"token_budget": 0}`, func(c Config) bool { return c.TokenBudget == 0 && c.MaxHypotheses == 40 }},
		{`time_limit "0s": no limit`, `{"time_limit": "0s"}`, func(c Config) bool { return c.TimeLimit == 0 && c.TokenBudget == 500_000 }},
		{"debate_share 0: no debates", `{"debate_share": 0}`, func(c Config) bool { return c.DebateShare == 0 }},
		{"debate_share 0.0", `{"debate_share": 0.0}`, func(c Config) bool { return c.DebateShare == 0 }},
		{"seed 0", `{"seed": 0}`, func(c Config) bool { return c.Seed == 0 }},
		{"max_hypotheses 0: the default, not the parent's", `{"max_hypotheses": 0}`,
			func(c Config) bool {
				return (Request{Config: c}).WithDefaults().Config.MaxHypotheses == DefaultMaxHypotheses
			}},
		{"tools []: none", `{"tools": []}`, func(c Config) bool { return len(c.Tools) == 0 && len(c.ApproveTools) == 1 }},
		{`model "": the provider's default`, `{"model": ""}`, func(c Config) bool { return c.Model == "" && c.Provider == "openai" }},
		{"null is not a value", `{"token_budget": null, "time_limit": null}`,
			func(c Config) bool { return c.TokenBudget == 500_000 && c.TimeLimit == parent.TimeLimit }},
		{"keys match without regard to case, as encoding/json reads them", `{"Token_Budget": 0}`, func(c Config) bool { return c.TokenBudget == 0 }},
		{"several at once", `{"token_budget": 0, "time_limit": "0s", "debate_share": 0, "top_k": 8}`,
			func(c Config) bool {
				return c.TokenBudget == 0 && c.TimeLimit == 0 && c.DebateShare == 0 && c.TopK == 8 && c.Seed == 7
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := overJSON(t, tt.config); !tt.check(got) {
				t.Errorf("%s over the parent = %+v", tt.config, got)
			}
		})
	}
}

// TestEveryFieldTakesAGivenZero: for each of Config's fields, numbers, booleans,
// durations, strings and lists alike, a zero given over a parent's value wins (from JSON
// and from Give), a field not given keeps the parent's, and Plain forgets the zeros, as
// sessions started before zeros could be given merge. A field added to Config is checked
// here without a word.
func TestEveryFieldTakesAGivenZero(t *testing.T) {
	for i, f := range configFields {
		t.Run(f.name, func(t *testing.T) {
			base := Config{}
			setSample(t, base.value(i))
			if base.value(i).IsZero() {
				t.Fatalf("no sample value for %s", f.name)
			}
			var byJSON Config
			if err := json.Unmarshal([]byte(`{"`+f.name+`": `+zeroJSON(base.value(i))+`}`), &byJSON); err != nil {
				t.Fatal(err)
			}
			var byGive Config
			if err := byGive.Give(f.name); err != nil {
				t.Fatal(err)
			}
			for how, c := range map[string]Config{"JSON": byJSON, "Give": byGive} {
				if !c.Given(f.name) {
					t.Errorf("%s: %s given as zero is not given", how, f.name)
				}
				if got := c.Over(base); !got.value(i).IsZero() {
					t.Errorf("%s: a zero %s over %v left %v", how, f.name, base.value(i), got.value(i))
				}
				if got := c.Plain().Over(base); got.value(i).IsZero() {
					t.Errorf("%s: Plain still clears %s", how, f.name)
				}
			}
			if got := (Config{}).Over(base); !reflect.DeepEqual(got.value(i).Interface(), base.value(i).Interface()) {
				t.Errorf("%s not given: %v, want the parent's %v", f.name, got.value(i), base.value(i))
			}
		})
	}
	if len(configFields) > 64 {
		t.Fatalf("Config has %d fields; a fieldSet holds 64", len(configFields))
	}
}

// setSample puts a value other than zero in v, by its kind.
func setSample(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), reflect.ValueOf("x").Convert(v.Type().Elem())))
	default:
		t.Fatalf("no sample for a %s: teach setSample this kind", v.Kind())
	}
}

// zeroJSON is how a scientist writes a zero of v's type in JSON.
func zeroJSON(v reflect.Value) string {
	switch {
	case v.Type() == reflect.TypeFor[Duration]():
		return `"0s"`
	case v.Kind() == reflect.String:
		return `""`
	case v.Kind() == reflect.Bool:
		return `false`
	case v.Kind() == reflect.Slice:
		return `[]`
	}
	return `0`
}

// TestGivenZerosTravel: the zeros given reach the workflow, which decodes the request the
// client encoded; a config without them encodes exactly as before, so old inputs mean what
// they meant.
func TestGivenZerosTravel(t *testing.T) {
	c := Config{MaxHypotheses: 20}
	for _, f := range []string{"token_budget", "time_limit", "debate_share", "tools"} {
		if err := c.Give(f); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(Request{ResearchGoal: "g", Config: c})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"research_goal":"g","scientist_id":"","config":{"max_hypotheses":20,"time_limit":"0s","token_budget":0,"debate_share":0,"tools":[]}}`
	if string(b) != want {
		t.Errorf("encoded %s\n want %s", b, want)
	}
	var back Request
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Config, c) {
		t.Errorf("decoded %+v, want %+v", back.Config, c)
	}
	// Only zeros: the object has no field before the first.
	var z Config
	_ = z.Give("token_budget")
	if b, _ := json.Marshal(z); string(b) != `{"token_budget":0}` {
		t.Errorf("encoded %s", b)
	}
	// Without given zeros, the encoding is the plain one.
	plain, _ := json.Marshal(plainConfig(parent))
	if b, _ := json.Marshal(parent); string(b) != string(plain) {
		t.Errorf("encoded %s\n want %s", b, plain)
	}
	// A default filled in is a value: no zero is written for it.
	r := Request{ResearchGoal: "g", Config: Config{}}
	_ = r.Config.Give("max_hypotheses")
	if b, _ := json.Marshal(r.WithDefaults().Config); strings.Contains(string(b), `"max_hypotheses":0`) {
		t.Errorf("encoded %s", b)
	}
	if err := c.Give("budget"); err == nil || !strings.Contains(err.Error(), "token_budget") {
		t.Errorf("Give of an unknown field: %v", err)
	}
}

// TestOverCopiesLists: the merged config shares no list with the request.
func TestOverCopiesLists(t *testing.T) {
	c := Config{Tools: []string{"a.b"}}
	got := c.Over(parent)
	got.Tools[0] = "changed"
	if c.Tools[0] != "a.b" {
		t.Error("Over shares the request's list")
	}
}
