package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestStartEstimate: `starter start --estimate` prints the session's cost range and exits
// 0 without starting it: no Temporal server answers here (an address nothing listens
// on), so a start would fail, and no session ID is printed. A request start refuses,
// --estimate refuses the same way.
func TestStartEstimate(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	reRange := regexp.MustCompile(`\$(\d+\.\d\d) to \$(\d+\.\d\d), about \$(\d+\.\d\d)`)
	tests := []struct {
		name string
		args []string
		code int
		want []string // in stdout
		rng  bool     // a dollar range
	}{
		{"batched on gpt-6-sol", []string{"--provider", "openai", "--model", "gpt-6-sol", "--max-hypotheses", "200", "--review-types", "initial,full", "--batch"}, 0,
			[]string{"200 hypotheses on gpt-6-sol (openai), cache+batch", "1,538 requests (1,486 batched)", "comparison", "assumes:", "nothing was started"}, true},
		{"cached on the provider's default model", []string{"--provider", "anthropic", "--max-hypotheses", "30"}, 0,
			[]string{"(anthropic), cache:", "taken to carry the tokens claude-sonnet-5-5's do", "nothing was started"}, true},
		{"a model without a price", []string{"--provider", "openai", "--model", "gpt-9-nova"}, 0,
			[]string{"cost unknown: gpt-9-nova has no built-in price", "requests"}, false},
		{"offline", []string{"--max-hypotheses", "30"}, 0, []string{"forecast: $0", "nothing was started"}, false},
		{"refused as start refuses it", []string{"--provider", "openai", "--max-hypotheses", "-3"}, 2, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut := quiet(t)
			code := run(append([]string{"start", "--estimate", "--goal", "Find druggable mechanisms that slow tau propagation"}, tc.args...))
			if code != tc.code {
				t.Fatalf("exit %d; want %d (stdout %q, stderr %q)", code, tc.code, out, errOut)
			}
			text := out.String()
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("stdout lacks %q:\n%s", w, text)
				}
			}
			if strings.Contains(text, "find-druggable") {
				t.Errorf("printed a session ID, as a start does:\n%s", text)
			}
			m := reRange.FindStringSubmatch(text)
			if tc.rng != (m != nil) {
				t.Fatalf("range %q; want one: %v\n%s", m, tc.rng, text)
			}
			if m != nil {
				low, _ := strconv.ParseFloat(m[1], 64)
				high, _ := strconv.ParseFloat(m[2], 64)
				about, _ := strconv.ParseFloat(m[3], 64)
				if !(0 < low && low < about && about < high) {
					t.Errorf("range $%g to $%g about $%g", low, high, about)
				}
			}
		})
	}
}
