package research

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/testcheck"
)

func TestValidate(t *testing.T) {
	ok := Request{ResearchGoal: "Find drug targets for Alzheimer's disease"}
	tests := []struct {
		name      string
		edit      func(*Request)
		wantField string // "" means valid
		wantText  string
	}{
		{"defaults are valid", func(*Request) {}, "", ""},
		{"every review type", func(r *Request) { r.Config.ReviewTypes = ReviewTypes }, "", ""},
		{"long time limit", func(r *Request) { r.Config.TimeLimit = Duration(72 * time.Hour) }, "", ""},
		{"empty goal", func(r *Request) { r.ResearchGoal = "" }, "research_goal", "must not be empty"},
		{"blank goal", func(r *Request) { r.ResearchGoal = " \n\t " }, "research_goal", "must not be empty"},
		{"oversized goal", func(r *Request) { r.ResearchGoal = strings.Repeat("a", MaxGoalLength+1) }, "research_goal", "at most 4000"},
		{"goal at the limit", func(r *Request) { r.ResearchGoal = strings.Repeat("é", MaxGoalLength) }, "", ""},
		{"invalid UTF-8", func(r *Request) { r.ResearchGoal = "goal \xff" }, "research_goal", "UTF-8"},
		{"negative max", func(r *Request) { r.Config.MaxHypotheses = -3 }, "config.max_hypotheses", "at least 1"},
		{"absurd max", func(r *Request) { r.Config.MaxHypotheses = 1_000_000 }, "config.max_hypotheses", "at most 10000"},
		{"negative time limit", func(r *Request) { r.Config.TimeLimit = Duration(-time.Minute) }, "config.time_limit", "must not be negative"},
		{"absurd time limit", func(r *Request) { r.Config.TimeLimit = Duration(365 * 24 * time.Hour) }, "config.time_limit", "at most 720h"},
		{"unknown review type", func(r *Request) { r.Config.ReviewTypes = []string{"initial", "vibes"} }, "config.review_types", `"vibes" is not a review type`},
		{"duplicate review type", func(r *Request) { r.Config.ReviewTypes = []string{"full", "full"} }, "config.review_types", "listed twice"},
		{"unknown safety level", func(r *Request) { r.Config.SafetyLevel = "yolo" }, "config.safety_level", `"yolo" is not one of`},
		{"unknown provider", func(r *Request) { r.Config.Provider = "oracle" }, "config.provider", `"oracle" is not one of`},
		{"negative convergence", func(r *Request) { r.Config.ConvergenceRounds = -1 }, "config.convergence_rounds", "from 1 to 1000"},
		{"absurd convergence", func(r *Request) { r.Config.ConvergenceRounds = 5000 }, "config.convergence_rounds", "from 1 to 1000"},
		{"negative top", func(r *Request) { r.Config.TopK = -3 }, "config.top_k", "from 1 to 100"},
		{"huge top", func(r *Request) { r.Config.TopK = 101 }, "config.top_k", "from 1 to 100"},
		{"negative debate share", func(r *Request) { r.Config.DebateShare = -0.1 }, "config.debate_share", "from 0"},
		{"debate share over 1", func(r *Request) { r.Config.DebateShare = 1.5 }, "config.debate_share", "from 0"},
		{"debate share NaN", func(r *Request) { r.Config.DebateShare = math.NaN() }, "config.debate_share", "from 0"},
		{"negative dollar budget", func(r *Request) { r.Config.BudgetUSD = -1 }, "config.budget_usd", "from 0"},
		{"dollar budget NaN", func(r *Request) { r.Config.BudgetUSD = math.NaN() }, "config.budget_usd", "from 0"},
		{"dollar budget infinite", func(r *Request) { r.Config.BudgetUSD = math.Inf(1) }, "config.budget_usd", "to 100000"},
		{"checkpoint interval too short", func(r *Request) { r.Config.CheckpointInterval = Duration(time.Second) }, "config.checkpoint_interval", "between 1m0s and 24h0m0s"},
		{"checkpoint interval too long", func(r *Request) { r.Config.CheckpointInterval = Duration(48 * time.Hour) }, "config.checkpoint_interval", "between"},
		{"long scientist id", func(r *Request) { r.ScientistID = strings.Repeat("s", 129) }, "scientist_id", "at most 128"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.edit(&r)
			err := r.WithDefaults().Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error = %v, want a FieldError on %s", err, tt.wantField)
			}
			if fe.Field != tt.wantField || !strings.Contains(fe.Error(), tt.wantText) {
				t.Fatalf("error = %q, want field %s mentioning %q", fe, tt.wantField, tt.wantText)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	r := Request{ResearchGoal: "  goal  ", Config: Config{MaxHypotheses: 3}}.WithDefaults()
	want := Request{ResearchGoal: "goal", ScientistID: DefaultScientistID, Config: Config{
		MaxHypotheses: 3, ReviewTypes: []string{ReviewInitial}, SafetyLevel: "standard", Provider: DefaultProvider,
		ConvergenceRounds:  DefaultConvergenceRounds,
		CheckpointInterval: Duration(DefaultCheckpointInterval),
		TopK:               DefaultTopK,
	}}
	got, _ := json.Marshal(r)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Fatalf("WithDefaults = %s, want %s", got, exp)
	}
}

func TestScreenGoal(t *testing.T) {
	tests := []struct {
		goal, level string
		refused     bool
	}{
		{"Find drug targets for tau propagation", "strict", false},
		{"Enhance the transmissibility of H5N1 in mammals", "relaxed", true},
		{"Design a bioweapon delivery system", "standard", true},
		{"Synthesis of sarin precursors at home", "standard", true},
		{"Synthesis of sarin precursors at home", "relaxed", false},
		{"Host response to pathogens in the gut", "standard", false},
		{"Host response to pathogens in the gut", "strict", true},
		{"Gain-of-function studies of coronaviruses", "relaxed", true},
		{"Weaponized drones", "relaxed", true},
	}
	for _, tt := range tests {
		err := ScreenGoal(tt.goal, tt.level)
		if (err != nil) != tt.refused {
			t.Errorf("ScreenGoal(%q, %s) = %v; refused want %v", tt.goal, tt.level, err, tt.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "research_goal: refused by the "+tt.level+" safety screen") {
			t.Errorf("message %q does not name the field and the level", err)
		}
	}
	if err := (Request{ResearchGoal: "Design a bioweapon"}).WithDefaults().Validate(); err == nil {
		t.Error("Validate let an unsafe goal through")
	}
}

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{`"90m"`, 90 * time.Minute, ""},
		{`"2h30m"`, 150 * time.Minute, ""},
		{`"soon"`, 0, `"soon" is not a duration`},
		{`3600`, 0, "a duration is a string"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var c Config
			err := json.Unmarshal([]byte(`{"time_limit":`+tt.in+`}`), &c)
			if testcheck.Err(t, err, tt.wantErr) {
				return
			}
			if time.Duration(c.TimeLimit) != tt.want {
				t.Errorf("got %v; want %v", c.TimeLimit, tt.want)
			}
		})
	}
	b, _ := json.Marshal(Config{TimeLimit: Duration(90 * time.Second)})
	if !strings.Contains(string(b), `"time_limit":"1m30s"`) {
		t.Errorf("marshal = %s", b)
	}
}
