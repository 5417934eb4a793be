package main

// An analysis record at the desk (issue #46): what `analysis:<id>` cites, shown whole to
// those who may read the session: the query as registered, the test, the tables read by
// digest, when the plan was fixed and when it ran, whether it counts (pre-registered) or
// not (exploratory), the statistics, and the rows the record keeps (bounded by the
// analysis itself). The query and the rows came from a model and a lab: escaped.

import (
	"fmt"
	"net/http"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/stats"
	"github.com/cosci-dev/cosci/internal/store"
)

// analysisPage is one analysis record.
type analysisPage struct {
	frame
	ID string
	A  store.AnalysisRecord
}

// analysis shows an analysis record: GET /s/{id}/analysis/{aid}.
func (d *desk) analysis(w http.ResponseWriter, r *http.Request) {
	id, aid := r.PathValue("id"), r.PathValue("aid")
	if _, _, ok := d.allowed(w, r, id, access.ActRead); !ok {
		return
	}
	// The store escapes any id into a name of its own: "../x" names no record.
	a, found, err := d.st.FindAnalysis(r.Context(), id, aid)
	if err == nil && !found {
		err = errNoSession
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "analysis", &analysisPage{ID: id, A: a})
}

// effectText is an effect with its interval: "r 0.62, 95% CI [0.31, 0.81]".
func effectText(e stats.Effect) string {
	s := fmt.Sprintf("%s %.4g", e.Name, e.Value)
	if e.CI != nil {
		s += fmt.Sprintf(", %.0f%% CI [%.4g, %.4g]", e.CI.Level*100, e.CI.Low, e.CI.High)
	}
	return s
}
