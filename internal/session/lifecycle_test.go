package session

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/testcheck"
)

func ptr(n int) *int          { return &n }
func ptrf(f float64) *float64 { return &f }

// TestTable walks every (from, to) pair: exactly the moves in the table are allowed.
func TestTable(t *testing.T) {
	allowed := map[[2]State]bool{}
	for _, m := range [][2]State{
		{Initializing, Active}, {Initializing, Terminating}, {Initializing, Failed},
		{Active, Suspended}, {Active, Checkpointing}, {Active, Terminating}, {Active, Completed}, {Active, Failed},
		{Suspended, Active}, {Suspended, Checkpointing}, {Suspended, Terminating}, {Suspended, Failed},
		{Checkpointing, Active}, {Checkpointing, Suspended}, {Checkpointing, Terminating}, {Checkpointing, Failed},
		{Terminating, Checkpointing}, {Terminating, Completed}, {Terminating, Failed},
	} {
		allowed[m] = true
	}
	for _, from := range States {
		for _, to := range States {
			if got, want := CanMove(from, to), allowed[[2]State{from, to}]; got != want {
				t.Errorf("CanMove(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
	for _, s := range States {
		if got, want := s.Terminal(), s == Completed || s == Failed; got != want {
			t.Errorf("%s.Terminal() = %v, want %v", s, got, want)
		}
	}
}

func TestCommands(t *testing.T) {
	type step struct {
		name string
		do   func(*Lifecycle) error
	}
	var (
		start      = step{"start", (*Lifecycle).Start}
		suspend    = step{"suspend", (*Lifecycle).Suspend}
		resume     = step{"resume", (*Lifecycle).Resume}
		terminate  = step{"terminate", (*Lifecycle).Terminate}
		begin      = step{"begin checkpoint", (*Lifecycle).BeginCheckpoint}
		end        = step{"end checkpoint", (*Lifecycle).EndCheckpoint}
		complete   = step{"complete", (*Lifecycle).Complete}
		fail       = step{"fail", (*Lifecycle).Fail}
		checkSteer = step{"steer", func(l *Lifecycle) error { return l.CanSteer("refine-goal") }}
	)
	tests := []struct {
		name      string
		steps     []step
		wantErr   string // from the last step; "" means it succeeds
		wantState State
		wantAfter State
	}{
		{"start", []step{start}, "", Active, ""},
		{"suspend active", []step{start, suspend}, "", Suspended, ""},
		{"resume suspended", []step{start, suspend, resume}, "", Active, ""},
		{"resume active refused", []step{start, resume}, "cannot resume: session is active; it is already running", Active, ""},
		{"suspend twice refused", []step{start, suspend, suspend}, "cannot suspend: session is suspended; it is already suspended", Suspended, ""},
		{"suspend before start refused", []step{suspend}, "cannot suspend: session is initializing", Initializing, ""},
		{"terminate active", []step{start, terminate}, "", Terminating, ""},
		{"terminate suspended", []step{start, suspend, terminate}, "", Terminating, ""},
		{"terminate twice refused", []step{start, terminate, terminate}, "cannot terminate: session is terminating; it is already ending", Terminating, ""},
		{"suspend terminating refused", []step{start, terminate, suspend}, "cannot suspend: session is terminating", Terminating, ""},
		{"resume terminating refused", []step{start, terminate, resume}, "cannot resume: session is terminating", Terminating, ""},
		{"checkpoint returns to active", []step{start, begin, end}, "", Active, ""},
		{"checkpoint while suspended returns to suspended", []step{start, suspend, begin, end}, "", Suspended, ""},
		{"suspend during checkpoint", []step{start, begin, suspend}, "", Checkpointing, Suspended},
		{"suspend during checkpoint takes effect after", []step{start, begin, suspend, end}, "", Suspended, ""},
		{"resume during checkpoint of suspended", []step{start, suspend, begin, resume, end}, "", Active, ""},
		{"terminate during checkpoint", []step{start, begin, terminate, end}, "", Terminating, ""},
		{"terminate during final checkpoint refused", []step{start, terminate, begin, terminate}, "cannot terminate: session is terminating; it is already ending", Checkpointing, Terminating},
		{"suspend during checkpoint of suspended refused", []step{start, suspend, begin, suspend}, "cannot suspend: session is suspended; it is already suspended", Checkpointing, Suspended},
		{"resume during checkpoint of active refused", []step{start, begin, resume}, "cannot resume: session is active; it is already running", Checkpointing, Active},
		{"final checkpoint then complete", []step{start, terminate, begin, end, complete}, "", Completed, ""},
		{"end checkpoint without one refused", []step{start, end}, "cannot finish a checkpoint: session is active", Active, ""},
		{"complete is terminal", []step{start, complete, resume}, "cannot resume: session is completed", Completed, ""},
		{"nothing after failure", []step{start, fail, terminate}, "cannot terminate: session is failed", Failed, ""},
		{"steer active", []step{start, checkSteer}, "", Active, ""},
		{"steer suspended", []step{start, suspend, checkSteer}, "", Suspended, ""},
		{"steer terminating refused", []step{start, terminate, checkSteer}, "cannot refine-goal: session is terminating", Terminating, ""},
		{"steer initializing refused", []step{checkSteer}, "cannot refine-goal: session is initializing", Initializing, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New()
			var err error
			for i, s := range tt.steps {
				err = s.do(&l)
				if err != nil && i < len(tt.steps)-1 {
					t.Fatalf("step %d (%s): %v", i, s.name, err)
				}
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if l.State != tt.wantState || l.After != tt.wantAfter {
				t.Fatalf("lifecycle = %+v, want state %s after %q", l, tt.wantState, tt.wantAfter)
			}
		})
	}
}

func TestParseCommand(t *testing.T) {
	long := strings.Repeat("x", MaxReasonLength+1)
	tests := []struct {
		name, cmd, payload string
		want               Command
		wantErr            string
	}{
		{"no payload", "suspend", "", Command{Name: "suspend"}, ""},
		{"null", "resume", "null", Command{Name: "resume"}, ""},
		{"empty object", "checkpoint", "{}", Command{Name: "checkpoint"}, ""},
		{"reason", "suspend", `{"reason": " lunch "}`, Command{Name: "suspend", Reason: "lunch"}, ""},
		{"refine both", "refine-goal", `{"goal":"new goal","focus":"tau"}`, Command{Name: "refine-goal", Goal: "new goal", Focus: "tau"}, ""},
		{"refine focus only", "refine-goal", `{"focus":"tau"}`, Command{Name: "refine-goal", Focus: "tau"}, ""},
		{"refine nothing", "refine-goal", `{}`, Command{}, `refine-goal needs a new "goal", a "focus", a "token_budget", or several`},
		{"refine blank goal", "refine-goal", `{"goal":"   "}`, Command{}, `refine-goal needs a new "goal", a "focus", a "token_budget", or several`},
		{"refine oversized goal", "refine-goal", `{"goal":"` + strings.Repeat("g", 4001) + `"}`, Command{}, "refine-goal: research_goal: is 4001 characters"},
		{"not an object", "suspend", `"lunch"`, Command{}, `suspend takes a JSON object such as {"reason": "..."}, not "lunch"`},
		{"array", "terminate", `[1,2]`, Command{}, "terminate takes a JSON object"},
		{"broken JSON", "suspend", `{"reason":`, Command{}, "suspend takes a JSON object"},
		{"typo in field", "suspend", `{"reasn":"x"}`, Command{}, `suspend does not take "reasn"`},
		{"field on resume", "resume", `{"reason":"x"}`, Command{}, `resume does not take "reason"; it takes {}`},
		{"wrong type", "suspend", `{"reason": 5}`, Command{}, `suspend: "reason" must be a string`},
		{"reason too long", "terminate", `{"reason":"` + long + `"}`, Command{}, "terminate: reason is longer than 500 characters"},
		{"bad fields reported in a stable order", "suspend", `{"zz":1,"aa":2}`, Command{}, `suspend does not take "aa"`},
		{"unknown command", "dance", "", Command{}, `unknown command "dance"`},
		{"set-budget", "set-budget", `{"token_budget": 5000}`, Command{Name: "set-budget", TokenBudget: ptr(5000)}, ""},
		{"set-budget needs a budget", "set-budget", `{}`, Command{}, `set-budget needs "token_budget"`},
		{"set-budget negative", "set-budget", `{"token_budget": -1}`, Command{}, "set-budget: token_budget is -1"},
		{"set-budget not a number", "set-budget", `{"token_budget": "lots"}`, Command{}, `set-budget: "token_budget" must be a whole number of tokens`},
		{"refine budget only", "refine-goal", `{"token_budget": 9}`, Command{Name: "refine-goal", TokenBudget: ptr(9)}, ""},
		{"add-hypothesis", "add-hypothesis", `{"title":" T ","statement":"S","testable_predictions":["p1"," ",""]}`,
			Command{Name: "add-hypothesis", Title: "T", Statement: "S", Predictions: []string{"p1"}}, ""},
		{"add-hypothesis without predictions", "add-hypothesis", `{"title":"T","statement":"S"}`, Command{}, `add-hypothesis: hypothesis "T" has no testable predictions`},
		{"add-hypothesis predictions not a list", "add-hypothesis", `{"title":"T","statement":"S","testable_predictions":"p"}`, Command{}, `add-hypothesis: "testable_predictions" must be a list of strings`},
		{"review", "review", `{"hypothesis_id":"h-0001","score":7.5,"verdict":"accept"}`, Command{Name: "review", HypothesisID: "h-0001", Score: ptrf(7.5), Verdict: "accept"}, ""},
		{"review without id", "review", `{"score":7}`, Command{}, `review needs "hypothesis_id"`},
		{"review empty", "review", `{"hypothesis_id":"h-0001"}`, Command{}, `review needs a "score", a "verdict" or a "critique"`},
		{"review score out of range", "review", `{"hypothesis_id":"h-0001","score":11}`, Command{}, "review: score is 11; it goes from 0 to 10"},
		{"review bad verdict", "review", `{"hypothesis_id":"h-0001","verdict":"meh"}`, Command{}, `review: verdict "meh" is not one of`},
		{"feedback", "feedback", `{"toward":"in vivo models"}`, Command{Name: "feedback", Toward: "in vivo models"}, ""},
		{"feedback empty", "feedback", `{}`, Command{}, "feedback needs a direction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCommand(tt.cmd, []byte(tt.payload))
			if testcheck.ErrPrefix(t, err, tt.wantErr) {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
