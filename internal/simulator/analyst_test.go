package simulator

import (
	"context"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/analysis"
	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

// labRequest is an analyst's request over a table of the simulated lab, read as the
// session reads it (dataset.Read) and previewed as the analyst sees it.
func labRequest(t *testing.T, d LabDesign) research.AnalysisRequest {
	t.Helper()
	table, err := dataset.Read(Lab(0.5, 3, d).CSV, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return research.AnalysisRequest{
		TurnID: "t-an", Seed: 7, Menu: analysis.Menu(), Conventions: analysis.Conventions,
		Hypothesis: research.Hypothesis{ID: "h-0001", Title: "Treatment raises response", Statement: "The treatment raises the response."},
		Datasets:   []research.AnalysisDataset{{Table: "result", Name: "lab.csv", Schema: table.Schema, Preview: table.Preview(prompt.AnalysisPreviewRows)}},
	}
}

// TestAnalyseLabTables: for the simulated lab's two designs the offline analyst writes
// the analysis that fits: a Welch t of the response between the arms (treated sorting
// after control, predicted greater), and a Pearson correlation of the response on the
// dose (predicted positive); both parse and name the table's own columns.
func TestAnalyseLabTables(t *testing.T) {
	cases := []struct {
		design          LabDesign
		test, direction string
		query           string
	}{
		{LabDesign{N: 12}, "welch-t", "greater", `SELECT "arm" AS grp, "response" AS value FROM "result"`},
		{LabDesign{Pairs: true, N: 12}, "pearson", "positive", `SELECT "dose" AS x, "response" AS y FROM "result"`},
	}
	for _, c := range cases {
		ans, u, err := (&Offline{}).Analyse(context.Background(), labRequest(t, c.design))
		if err != nil {
			t.Fatal(err)
		}
		if ans.Test != c.test || ans.Direction != c.direction || ans.Query != c.query || len(ans.Columns) != 2 || u.Requests != 1 {
			t.Errorf("pairs %v: answer %+v", c.design.Pairs, ans)
		}
		if !strings.HasPrefix(ans.Prediction, "If the hypothesis holds, the treatment raises") {
			t.Errorf("prediction %q", ans.Prediction)
		}
	}
	req := labRequest(t, LabDesign{N: 12})
	req.Prediction = "Treated wells respond more."
	if ans, _, err := (&Offline{}).Analyse(context.Background(), req); err != nil || ans.Prediction != req.Prediction {
		t.Errorf("the scientist's prediction: %+v, %v", ans, err)
	}
}
