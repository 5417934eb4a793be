// The lab's tool offline (#46): when a generation by literature or a full review is
// offered cosci's lab tool (a tool named analyse that takes a query and a test), the
// simulator asks it once, at its first step beside its search, for an analysis of the
// tables its description lists, written as the offline analyst writes a plan (a Welch t
// of a response between two arms, or a Pearson correlation of two measures), and cites
// the analysis:<id> it got back in its answer. Nothing here draws from the turn's random
// numbers, so a turn's hidden quality is drawn as without the tool; the citation is added
// after the answer's own and is not a planted one (so the sources it cites, and what
// grounding adds to its quality, are as without it), and the answer's words are as
// without it (proximity reads them).

package simulator

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// isLabTool says whether a tool offered is cosci's lab tool, by its contract: named
// analyse, taking a query and a test.
func isLabTool(tool research.ToolSpec) bool {
	_, name, _ := strings.Cut(tool.Name, ".")
	return name == "analyse" && takes(tool, "query") && takes(tool, "test")
}

// labTableLine is a table as the lab tool's description lists it:
// "table NAME (file "F", FORMAT, N rows): col TYPE, col TYPE [unit], ...".
var labTableLine = regexp.MustCompile(`(?m)^table ([A-Za-z_][A-Za-z0-9_]*) \(file .*, (\d+) rows\): (.*)$`)

// labTables reads the tables the lab tool's description lists, their columns and types.
func labTables(desc string) []research.AnalysisDataset {
	var out []research.AnalysisDataset
	for _, m := range labTableLine.FindAllStringSubmatch(desc, -1) {
		rows, _ := strconv.Atoi(m[2])
		d := research.AnalysisDataset{Table: m[1], Schema: dataset.Schema{Rows: rows}}
		for _, col := range strings.Split(m[3], ", ") {
			f := strings.Fields(col)
			if len(f) >= 2 {
				d.Schema.Columns = append(d.Schema.Columns, dataset.Column{Name: f[0], Type: f[1]})
			}
		}
		out = append(out, d)
	}
	return out
}

// labArguments are the arguments of the analysis the simulator asks for: in the first
// table it can read, a text column that is not an identifier against the last numeric
// measure (Welch's t, the group that sorts last predicted greater: the simulated lab's
// treated arm after its control), else the last two numeric measures (Pearson,
// positive). None when no table has either.
func labArguments(tables []research.AnalysisDataset) (map[string]any, bool) {
	for _, d := range tables {
		numeric := numericColumns(d.Schema)
		group := slices.IndexFunc(d.Schema.Columns, func(c dataset.Column) bool {
			return (c.Type == dataset.VARCHAR || c.Type == dataset.BOOLEAN) && !identifier(c.Name)
		})
		if group >= 0 && len(numeric) > 0 {
			return map[string]any{
				"query": fmt.Sprintf("SELECT %s AS grp, %s AS value FROM %s", ident(d.Schema.Columns[group].Name), ident(numeric[len(numeric)-1]), ident(d.Table)),
				"test":  "welch-t", "columns": []string{"grp", "value"}, "direction": "greater",
				"prediction": "The arm that sorts last responds more than the other.",
			}, true
		}
		if len(numeric) >= 2 {
			x, y := numeric[len(numeric)-2], numeric[len(numeric)-1]
			return map[string]any{
				"query": fmt.Sprintf("SELECT %s AS x, %s AS y FROM %s", ident(x), ident(y), ident(d.Table)),
				"test":  "pearson", "columns": []string{"x", "y"}, "direction": "positive",
				"prediction": fmt.Sprintf("%s rises with %s.", y, x),
			}, true
		}
	}
	return nil, false
}

// withLab adds the lab call to a turn's first step when the tool is offered and a table
// can be analysed: one call a turn. calls are the step's other calls, numbered as next
// numbers them.
func (r reading) withLab(t research.Tooling, calls []research.ToolCall) []research.ToolCall {
	if r.lab == nil || t.Final || len(t.Steps) > 0 {
		return calls
	}
	args, ok := labArguments(labTables(r.lab.Description))
	if !ok {
		return calls
	}
	return append(calls, research.ToolCall{ID: fmt.Sprintf("call-1-%d", len(calls)+1), Name: r.lab.Name, Arguments: mustJSON(args)})
}

// labRef is the reference to the analysis the turn's lab call gave: its id as the result
// names it, the sentence of its record that states the effect (effectSentence), and a
// claim of the answer (its first of claims: the answer's own words stay as they are, as
// labcite.go's do); none when the call gave an error, no analysis or no effect.
func (r reading) labRef(claims []string) (prompt.ModelRef, bool) {
	if r.lab == nil || len(claims) == 0 {
		return prompt.ModelRef{}, false
	}
	for _, res := range r.results {
		if res.Name != r.lab.Name || res.IsError {
			continue
		}
		var src struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		if json.Unmarshal([]byte(res.Content), &src) != nil || !strings.HasPrefix(src.ID, "analysis:") {
			continue
		}
		if quote := effectSentence(src.Text); quote != "" {
			return prompt.ModelRef{ID: src.ID, Quote: quote, Claim: research.Shorten(claims[0], prompt.MaxClaimLength)}, true
		}
	}
	return prompt.ModelRef{}, false
}
