package prompt

import (
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/research"
)

// TestConversePromptTools: a converse turn with tools is told when to search, to cite
// only what they returned, and that a call needing approval is not made; one without is
// told nothing of tools, and its agent part is the same as before tools existed.
func TestConversePromptTools(t *testing.T) {
	req := research.ConverseRequest{Goal: "g", Message: "What does the literature say about microglia?", State: "active"}
	plain := Converse(req)
	req.Tooling = research.Tooling{Tools: []research.ToolSpec{{Name: "literature.search"}, {Name: "literature.fetch"}}}
	tooled := Converse(req)
	for _, tt := range []struct {
		name  string
		text  Text
		want  []string
		never []string
	}{
		{"without tools", plain, []string{`Cite in "references" only sources the hypotheses below cite, by their ids, with a quote from what they quote.`}, []string{"You have tools", ConverseNoApproval, ToolDataRule}},
		{"with tools", tooled, []string{"You have tools (literature.search, literature.fetch): when the message asks about the literature", "or your tools returned in this conversation", ConverseNoApproval, ToolDataRule}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.text.Prompt, w) {
					t.Errorf("the prompt lacks %q", w)
				}
			}
			for _, n := range tt.never {
				if strings.Contains(tt.text.Prompt, n) {
					t.Errorf("the prompt has %q", n)
				}
			}
			// The tools are told in the agent's part, the cached prefix; the message after it.
			if i := strings.Index(tt.text.Prompt, "You have tools"); i >= 0 && i > tt.text.Prefix {
				t.Errorf("the tools are told after the prefix (%d > %d)", i, tt.text.Prefix)
			}
		})
	}
}
