// The meta-review agent's last turn: the research overview the scientist reads.

package prompt

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"text/template"

	"github.com/cosci-dev/cosci/internal/research"
)

// MaxOverviewItems is how many open questions or experiments an overview may list.
const MaxOverviewItems = 5

// OverviewSchema is the JSON schema of the research overview.
var OverviewSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string", "description": "one paragraph: what the session found"},
    "themes": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "title": {"type": "string", "description": "what the cluster's hypotheses have in common"},
          "hypotheses": {"type": "array", "minItems": 1, "items": {"type": "string"}, "description": "their ids"},
          "note": {"type": "string", "description": "what the theme suggests"}
        },
        "required": ["title", "hypotheses", "note"],
        "additionalProperties": false
      }
    },
    "open_questions": {"type": "array", "minItems": 1, "maxItems": 5, "items": {"type": "string"}},
    "suggested_experiments": {"type": "array", "minItems": 1, "maxItems": 5, "items": {"type": "string"}}
  },
  "required": ["summary", "themes", "open_questions", "suggested_experiments"],
  "additionalProperties": false
}`)

var (
	overviewTask = template.Must(template.New("overview").Parse(`
You are the meta-review agent. The session is over: write the research overview the scientist will read. Write a summary paragraph of what the session found. Write one theme per cluster, in the clusters' order: a title saying what its hypotheses share, their ids, and a note on what the theme suggests. Then 3 to 5 open questions and 3 to 5 suggested experiments, drawn from the top hypotheses' predictions. Answer with one JSON object that matches the answer schema, and nothing else.
`))
	overviewOwn = template.Must(template.New("overview-own").Parse(`
Top hypotheses, best first:
{{range .Top}}
{{.}}{{end}}
Clusters of related hypotheses:
{{range .Clusters}}- {{.}}
{{else}}(none)
{{end}}{{if .Critiques}}
Recurring critique from the last round: {{.Critiques}}
{{end}}`))
)

// Overview renders the meta-review agent's last prompt: the research overview. The latest
// meta-review is in the shared prefix (req.Context); req.MetaReview stands in for it when
// the context has none, and its critique is then named with the clusters.
func Overview(req research.OverviewRequest) Text {
	top := make([]string, len(req.Top))
	for i, h := range req.Top {
		top[i] = hypothesisText(fmt.Sprintf("%d. Hypothesis %s", i+1, h.ID), h)
	}
	clusters := make([]string, len(req.Clusters))
	for i, c := range req.Clusters {
		clusters[i] = fmt.Sprintf("cluster %d: %s", i+1, strings.Join(c, ", "))
	}
	var critiques string
	if m := req.MetaReview; m != nil && req.Context.MetaReview == nil && len(m.Critiques) > 0 {
		critiques = strings.Join(m.Critiques, "; ") + "."
	}
	own := render(overviewOwn, map[string]any{"Top": top, "Clusters": clusters, "Critiques": critiques})
	return compose(shared(req.Goal, req.Context), render(overviewTask, nil), own)
}

// ParseOverview reads the research overview.
func ParseOverview(raw []byte) (research.Overview, error) {
	var a struct {
		Summary string `json:"summary"`
		Themes  *[]struct {
			Title      string   `json:"title"`
			Hypotheses []string `json:"hypotheses"`
			Note       string   `json:"note"`
		} `json:"themes"`
		OpenQuestions []string `json:"open_questions"`
		Experiments   []string `json:"suggested_experiments"`
	}
	if err := decode(AgentMetaReview, raw, &a); err != nil {
		return research.Overview{}, err
	}
	o := research.Overview{Summary: strings.TrimSpace(a.Summary)}
	if o.Summary == "" {
		return research.Overview{}, malformed(AgentMetaReview, `"summary" is empty; say in a paragraph what the session found`)
	}
	if a.Themes == nil {
		return research.Overview{}, malformed(AgentMetaReview, `"themes" is missing; give one theme per cluster, or an empty list if there are none`)
	}
	o.Themes = []research.OverviewTheme{}
	for i, t := range *a.Themes {
		th := research.OverviewTheme{Title: strings.TrimSpace(t.Title), Note: strings.TrimSpace(t.Note)}
		if th.Title == "" {
			return research.Overview{}, malformed(AgentMetaReview, "themes[%d].title is empty; say what its hypotheses share", i)
		}
		var err error
		if th.Hypotheses, err = list(AgentMetaReview, fmt.Sprintf("themes[%d].hypotheses", i), t.Hypotheses, 1, math.MaxInt); err != nil {
			return research.Overview{}, err
		}
		o.Themes = append(o.Themes, th)
	}
	var err error
	if o.OpenQuestions, err = list(AgentMetaReview, "open_questions", a.OpenQuestions, 1, MaxOverviewItems); err != nil {
		return research.Overview{}, err
	}
	if o.Experiments, err = list(AgentMetaReview, "suggested_experiments", a.Experiments, 1, MaxOverviewItems); err != nil {
		return research.Overview{}, err
	}
	return o, nil
}

// OverviewSpec is the meta-review agent's model call for the research overview.
var OverviewSpec = Spec[research.OverviewRequest, research.Overview]{
	Agent: AgentMetaReview, Schema: fixed[research.OverviewRequest]("research_overview", OverviewSchema), Parse: parsed[research.OverviewRequest](ParseOverview),
}
