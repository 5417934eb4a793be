// The analyst's answers (#46): an analysis plan written from the datasets' schemas, as a
// careful analyst would for the tables a lab exports, so that a session offline runs an
// analysis with no model. It reads the schema and the preview rows only, as the model does.

package simulator

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// Analyse writes an analysis plan for req: see writeAnalysis.
func (o *Offline) Analyse(ctx context.Context, req research.AnalysisRequest) (research.AnalysisAnswer, research.Usage, error) {
	if err := o.turn(ctx, prompt.AgentAnalyst, req.TurnID); err != nil {
		return research.AnalysisAnswer{}, research.Usage{}, err
	}
	raw := mustJSON(writeAnalysis(req))
	p, err := prompt.AnalysisSpec.Parse(req, raw)
	if err != nil {
		return research.AnalysisAnswer{}, research.Usage{}, bug(err)
	}
	return p, usage(req.Prompt, raw), nil
}

// writeAnalysis picks, in the first dataset whose columns it knows, a group column (one
// whose preview shows at most two values, text or boolean, not an identifier) and a
// numeric response: a Welch t of the response between the groups, the group that sorts
// last predicted greater (the simulated lab's "treated" after "control"). Without a
// group, two numeric columns: a Pearson correlation of the second on the first,
// predicted positive (the lab's dose and response). Without either, a correlation of a
// table's first two columns, which the sandbox or the test will refuse with the reason.
func writeAnalysis(req research.AnalysisRequest) research.AnalysisAnswer {
	a := research.AnalysisAnswer{Prediction: req.Prediction, MinEffect: 0}
	if a.Prediction == "" {
		a.Prediction = "If the hypothesis holds, " + predictionOf(req.Hypothesis)
	}
	for _, d := range req.Datasets {
		numeric := numericColumns(d.Schema)
		if g := groupColumn(d); g != "" && len(numeric) > 0 {
			value := numeric[len(numeric)-1]
			a.Test, a.Direction, a.Columns = "welch-t", "greater", []string{"grp", "value"}
			a.Query = fmt.Sprintf("SELECT %s AS grp, %s AS value FROM %s", ident(g), ident(value), ident(d.Table))
			return a
		}
		if len(numeric) >= 2 {
			x, y := numeric[len(numeric)-2], numeric[len(numeric)-1]
			a.Test, a.Direction, a.Columns = "pearson", "positive", []string{"x", "y"}
			a.Query = fmt.Sprintf("SELECT %s AS x, %s AS y FROM %s", ident(x), ident(y), ident(d.Table))
			return a
		}
	}
	table := "data"
	if len(req.Datasets) > 0 {
		table = req.Datasets[0].Table
	}
	a.Test, a.Direction, a.Columns = "pearson", "positive", []string{"x", "y"}
	a.Query = "SELECT * FROM " + ident(table)
	return a
}

// predictionOf is a hypothesis's first testable prediction, or its statement.
func predictionOf(h research.Hypothesis) string {
	p := h.Statement
	if len(h.Predictions) > 0 && strings.TrimSpace(h.Predictions[0]) != "" {
		p = h.Predictions[0]
	}
	p = strings.TrimSpace(p)
	if p == "" {
		p = "the effect it names appears in the lab's data."
	}
	if len([]rune(p)) > prompt.MaxAnalysisPrediction-40 {
		p = string([]rune(p)[:prompt.MaxAnalysisPrediction-41]) + "…"
	}
	return strings.ToLower(p[:1]) + p[1:]
}

// numericColumns are a schema's numeric columns that are not identifiers, in order.
func numericColumns(s dataset.Schema) []string {
	var out []string
	for _, c := range s.Columns {
		if (c.Type == dataset.DOUBLE || c.Type == dataset.BIGINT) && !identifier(c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// groupColumn is the first text or boolean column whose preview shows exactly two
// values and that is not an identifier, or "".
func groupColumn(d research.AnalysisDataset) string {
	for i, c := range d.Schema.Columns {
		if c.Type != dataset.VARCHAR && c.Type != dataset.BOOLEAN || identifier(c.Name) {
			continue
		}
		var seen []string
		for _, row := range d.Preview {
			if i < len(row) && row[i] != "" && !slices.Contains(seen, row[i]) {
				seen = append(seen, row[i])
			}
		}
		if len(seen) == 2 {
			return c.Name
		}
	}
	return ""
}

// identifier says whether a column names its rows (an id, a sample, a subject) rather
// than measuring them.
func identifier(name string) bool {
	n := strings.ToLower(name)
	return n == "id" || strings.HasSuffix(n, "_id") || strings.HasPrefix(n, "id_") ||
		slices.Contains([]string{"sample", "subject", "row_names", "name", "batch", "plate", "well"}, n)
}

// ident quotes a name for DuckDB.
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
