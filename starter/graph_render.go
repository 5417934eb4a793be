package main

// The graph's rendering: what the Web UI shows of a continued or forked session, and the
// lineage tree `starter tree` prints. The commands that build them are in graph.go and
// tree.go.

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/lineage"
	"github.com/cosci-dev/cosci/internal/research"
)

// branchDetails is the Markdown the Web UI shows for a continued or forked session.
func branchDetails(r research.Request, d lineage.Descriptor) string {
	var b strings.Builder
	verb := map[lineage.Relation]string{lineage.Continue: "Continues", lineage.Fork: "Forked from"}[d.Relation]
	fmt.Fprintf(&b, "**%s** %s", or(verb, "From"), d.Parent)
	if d.Checkpoint > 0 {
		fmt.Fprintf(&b, " (checkpoint %d)", d.Checkpoint)
	}
	fmt.Fprintf(&b, "; conversation %s, session %d\n\n", d.Conversation, d.Seq)
	fmt.Fprintf(&b, "**Research goal**\n\n%s\n\n", or(r.ResearchGoal, "the parent session's"))
	fmt.Fprintf(&b, "- **Scientist:** %s\n", or(r.ScientistID, "the parent session's"))
	fmt.Fprintf(&b, "- **Configuration:** the parent session's%s\n", overridesText(r.Config))
	return b.String()
}

// overridesText lists the configuration a continue or fork sets, as flags: "" for none.
func overridesText(c research.Config) string {
	var set []string
	add := func(ok bool, flag string, v any) {
		if s, isString := v.(string); isString && s == "" {
			v = `""`
		}
		if ok {
			set = append(set, fmt.Sprintf("--%s %v", flag, v))
		}
	}
	// A zero typed is a value given (research.Config.Given): --token-budget 0 is shown.
	add(c.Given("max_hypotheses"), "max-hypotheses", c.MaxHypotheses)
	add(c.Given("time_limit"), "time-limit", c.TimeLimit)
	add(c.Given("review_types"), "review-types", strings.Join(c.ReviewTypes, ","))
	add(c.Given("safety_level"), "safety-level", c.SafetyLevel)
	add(c.Given("provider"), "provider", c.Provider)
	add(c.Given("model"), "model", c.Model)
	add(c.Given("token_budget"), "token-budget", c.TokenBudget)
	add(c.Given("budget_usd"), "budget-usd", c.BudgetUSD)
	add(c.Given("batch"), "batch", c.Batch)
	add(c.Given("convergence_rounds"), "convergence-rounds", c.ConvergenceRounds)
	add(c.Given("top_k"), "top-k", c.TopK)
	add(c.Given("debate_share"), "debate-share", c.DebateShare)
	add(c.Given("tools"), "tools", strings.Join(c.Tools, ","))
	add(c.Given("seed"), "seed", c.Seed)
	if len(set) == 0 {
		return ""
	}
	return ", with " + strings.Join(set, " ")
}

// renderTree prints a lineage tree, one session a line, marking focus with "*".
func renderTree(w io.Writer, root *treeNode, focus string) error {
	var b strings.Builder
	var draw func(n *treeNode, prefix string)
	draw = func(n *treeNode, prefix string) {
		for i, k := range n.Children {
			branch, indent := "├─ ", "│  "
			if i == len(n.Children)-1 {
				branch, indent = "└─ ", "   "
			}
			b.WriteString(prefix + branch + treeLine(k, focus) + "\n")
			draw(k, prefix+indent)
		}
	}
	b.WriteString(treeLine(root, focus) + "\n")
	draw(root, "")
	_, err := io.WriteString(w, b.String())
	return err
}

// treeLine is one session of the tree: id, what it is, its state.
func treeLine(n *treeNode, focus string) string {
	kind := or(string(n.Type), string(lineage.User))
	if n.Relation != "" && string(n.Relation) != kind {
		kind += ", " + string(n.Relation)
	}
	if n.Checkpoint > 0 {
		kind += " from checkpoint " + strconv.Itoa(n.Checkpoint)
	}
	if n.Name != "" {
		kind += fmt.Sprintf(" %q", research.Shorten(n.Name, 60))
	}
	if n.Schedule != "" {
		kind += " (schedule " + n.Schedule + ")"
	}
	state := or(n.State, "-")
	if n.Archived {
		state += ", archived"
	}
	line := n.ID + "  " + kind + "  " + state
	if n.ID == focus {
		line += "  *"
	}
	return line
}
