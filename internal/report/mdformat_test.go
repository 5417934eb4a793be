package report

import (
	"bytes"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// How the report writes titles, code spans, usage and spending.

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"two\nlines  here", 20, "two lines here"},
		{"the quick brown fox jumps", 12, "the quick…"},
		{"abcdefghijklmnop", 6, "abcde…"},
		{"ééééééé", 4, "ééé…"},
	}
	for _, tt := range tests {
		if got := research.Shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("research.Shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestCode(t *testing.T) {
	for in, want := range map[string]string{
		"gen/1": "`gen/1`",
		"a`b":   "``a`b``",
		"`x":    "`` `x ``",
		"":      "",
	} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUsageShowsEstimatedCost(t *testing.T) {
	for u, want := range map[research.Usage]string{
		{PromptTokens: 1200, CompletionTokens: 300, Requests: 4}:                                             "1,500 tokens (1,200 prompt, 300 completion) in 4 requests",
		{PromptTokens: 1000, CompletionTokens: 0, Requests: 1, CostUSD: 0.0125}:                              "1,000 tokens (1,000 prompt, 0 completion) in 1 requests; estimated cost $0.013 (from the worker's price table)",
		{PromptTokens: 8000, CompletionTokens: 500, Requests: 2, CachedTokens: 6000, CacheWriteTokens: 1000}: "8,500 tokens (8,000 prompt, 500 completion) in 2 requests; 6,000 prompt tokens (75%) served from the provider's cache, 1,000 written to it",
	} {
		if got := usage(u); got != want {
			t.Errorf("usage(%+v) = %q, want %q", u, got, want)
		}
	}
}

// TestSpentByAgent: the report says what each agent's calls cost, in the order a round
// runs the agents, and what was spent against the session's budgets.
func TestSpentByAgent(t *testing.T) {
	snap := session.Snapshot{
		Config: research.Config{BudgetUSD: 2, TokenBudget: 100000},
		Usage:  research.Usage{PromptTokens: 40000, CompletionTokens: 2000, CostUSD: 0.42},
		SpentBy: map[string]research.Usage{
			"ranking":    {Requests: 20, PromptTokens: 24000, CachedTokens: 12000, CompletionTokens: 1000, CostUSD: 0.2},
			"generation": {Requests: 4, PromptTokens: 16000, CompletionTokens: 1000, CostUSD: 0.22},
			"oracle":     {Requests: 1},
		},
	}
	var b bytes.Buffer
	spentBy(&b, snap)
	want := "| agent | requests | prompt tokens | from cache | completion tokens | cost |\n|---|---:|---:|---:|---:|---:|\n" +
		"| generation | 4 | 16,000 | 0 | 1,000 | $0.22 |\n" +
		"| ranking | 20 | 24,000 | 12,000 | 1,000 | $0.20 |\n" +
		"| oracle | 1 | 0 | 0 | 0 | $0.00 |\n\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if got := budget(snap.Usage, snap.Config); got != "$0.42 of $2.00; 42,000 of 100,000 tokens" {
		t.Errorf("budget = %q", got)
	}
	b.Reset()
	spentBy(&b, session.Snapshot{})
	if b.Len() != 0 {
		t.Errorf("a session that kept no usage by agent gets a table: %q", b.String())
	}
}
