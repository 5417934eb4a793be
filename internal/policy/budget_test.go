package policy

import (
	"math"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

func TestBudgetRefuses(t *testing.T) {
	u := func(tokens int, usd float64) research.Usage {
		return research.Usage{PromptTokens: tokens, CostUSD: usd}
	}
	tests := []struct {
		name                  string
		b                     Budget
		spent, inFlight, next research.Usage
		want                  string // a part of the reason; "" when the call may start
	}{
		{"no budget", Budget{}, u(1e9, 1e6), u(0, 0), u(1000, 1), ""},
		{"tokens: fits exactly", Budget{Tokens: 1000}, u(600, 0), u(200, 0), u(200, 0), ""},
		{"tokens: one over", Budget{Tokens: 1000}, u(600, 0), u(200, 0), u(201, 0), "token budget reached: 600 of 1000 tokens used (and about 200 tokens in calls under way), and the next ranking call needs about 201"},
		{"tokens: spent, no estimate yet", Budget{Tokens: 1000}, u(1000, 0), u(0, 0), u(0, 0), "token budget reached"},
		{"tokens: first call", Budget{Tokens: 1000}, u(0, 0), u(0, 0), u(0, 0), ""},
		{"dollars: fits", Budget{USD: 0.5}, u(0, 0.30), u(0, 0.10), u(0, 0.10), ""},
		{"dollars: the calls in flight take the rest", Budget{USD: 0.5}, u(0, 0.30), u(0, 0.20), u(0, 0.001), "budget reached: $0.30 of $0.50 spent (and about $0.20 in calls under way)"},
		{"dollars: next call too dear", Budget{USD: 1}, u(0, 0.95), u(0, 0), u(0, 0.06), "the next ranking call costs about $0.060; raise it with set-budget"},
		{"dollars, unpriced model", Budget{USD: 1}, research.Usage{Unpriced: 3}, u(0, 0), u(0, 0), "3 model calls came back without a price"},
		{"tokens only, unpriced model", Budget{Tokens: 1000}, research.Usage{Unpriced: 3}, u(0, 0), u(0, 0), ""},
		{"both: tokens bind first", Budget{Tokens: 100, USD: 10}, u(90, 0), u(0, 0), u(20, 0.01), "token budget reached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.Refuses("ranking", tt.spent, tt.inFlight, tt.next)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("Refuses = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExpected(t *testing.T) {
	own := research.Usage{PromptTokens: 3001, CompletionTokens: 300, CostUSD: 0.03}
	others := []research.Usage{{PromptTokens: 1000, CompletionTokens: 900, CostUSD: 0.01}, {PromptTokens: 2000, CompletionTokens: 100, CostUSD: 0.05}}
	near := func(got research.Usage, prompt, completion int, usd float64) bool {
		return got.PromptTokens == prompt && got.CompletionTokens == completion && math.Abs(got.CostUSD-usd) < 1e-12
	}
	if got := Expected(own, others); !near(got, 4502, 450, 0.045) {
		t.Errorf("an agent with calls: its dearest with the margin, %+v", got)
	}
	if got := Expected(research.Usage{}, others); !near(got, 3000, 1350, 0.075) {
		t.Errorf("an agent without calls: the most of any, with the margin, %+v", got)
	}
	if got := Expected(research.Usage{}, nil); got != (research.Usage{}) {
		t.Errorf("before any call: %+v", got)
	}
}
