package session

import "testing"

func TestHypothesesText(t *testing.T) {
	tests := []struct {
		name string
		p    Progress
		want string
	}{
		{"every one counts", Progress{HypothesesGenerated: 20, MaxHypotheses: 20, Counted: 20}, "20/20"},
		{"nothing yet", Progress{MaxHypotheses: 12}, "0/12"},
		{"the scientist's do not count",
			Progress{HypothesesGenerated: 21, MaxHypotheses: 20, Counted: 20, Added: 1}, "21 (20/20 by the agents, 1 by the scientist)"},
		{"only the scientist's so far", Progress{HypothesesGenerated: 2, MaxHypotheses: 20, Added: 2}, "2 (0/20 by the agents, 2 by the scientist)"},
		{"a continued session's own limit",
			Progress{HypothesesGenerated: 32, MaxHypotheses: 20, Counted: 20, Inherited: 12}, "32 (12 from the parent session, 20/20 by the agents)"},
		{"a continued session just started", Progress{HypothesesGenerated: 12, MaxHypotheses: 8, Inherited: 12}, "12 (12 from the parent session, 0/8 by the agents)"},
		{"all three",
			Progress{HypothesesGenerated: 35, MaxHypotheses: 20, Counted: 20, Inherited: 12, Added: 3}, "35 (12 from the parent session, 20/20 by the agents, 3 by the scientist)"},
		{"written before counted was kept", Progress{HypothesesGenerated: 21, MaxHypotheses: 20, Added: 1}, "21 (20/20 by the agents, 1 by the scientist)"},
		{"written before, no scientist's", Progress{HypothesesGenerated: 12, MaxHypotheses: 12}, "12/12"},
		{"no limit known (a subagent)", Progress{HypothesesGenerated: 3, Counted: 3}, "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.HypothesesText(); got != tt.want {
				t.Errorf("HypothesesText() = %q, want %q", got, tt.want)
			}
		})
	}
}
