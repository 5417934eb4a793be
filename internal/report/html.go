package report

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// HTMLFile is the report as one self-contained page: no external asset, no script, the
// Elo chart inline, every hypothesis an anchor that the overview's themes, the ranking,
// the lineage and the clusters link to, and every source linked to its DOI.
const HTMLFile = "report.html"

// page is what the HTML template renders.
type page struct {
	Title, Goal                 string
	Summary                     [][2]string
	Refinements                 []session.Refinement
	Plan                        *research.Plan
	Overview                    *research.Overview
	Themes                      []pageTheme
	Chart                       template.HTML
	Ranked                      []pageRow
	Fitted                      bool
	Top                         []pageHypothesis
	Lab                         []labSection
	LabNote, LabIntro           string
	LabFamily                   []familyRow
	FamilyHeading               string
	Lineage                     []pageLineage
	Clusters                    []pageCluster
	Excluded                    []pageRow
	MetaReview                  *research.MetaReview
	Bibliography                []Source
	Invented                    int
	BibTeXFile, CSLFile, JSFile string
}

type pageLink struct{ ID, Anchor, Title string }

type pageTheme struct {
	Title, Note string
	Members     []pageLink
}

type pageRow struct {
	Rank                     int
	Link                     pageLink
	Rating, WL, Score        string
	Origin, Cluster, Excuse  string
	References, FlaggedCites int
}

type pageHypothesis struct {
	Rank                                       int
	Link                                       pageLink
	Rating, Origin, Score, Statement, Rational string
	Parents                                    []pageLink
	EvolvedBy                                  string
	Predictions                                []string
	Sources                                    []Source
	Reviews                                    []pageReview
	Missing                                    bool
}

type pageReview struct {
	Kind, Verdict, Marks, Critique string
	Assumptions                    []research.Assumption
}

type pageLineage struct {
	Child   pageLink
	Parents []pageLink
	Kind    string
}

type pageCluster struct {
	ID      int
	Members []pageLink
}

var anchorRE = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// anchor is a hypothesis' anchor in the page: its id, made safe for a fragment.
func anchor(id string) string { return "hyp-" + anchorRE.ReplaceAllString(id, "_") }

func (v *view) link(id string) pageLink {
	return pageLink{ID: id, Anchor: anchor(id), Title: oneLine(v.title(id))}
}

func (v *view) row(e session.Entry) pageRow {
	r := pageRow{Rank: v.rank[e.ID], Link: v.link(e.ID), Rating: rating(e), WL: fmt.Sprintf("%d-%d", e.Wins, e.Losses),
		Score: score(e), Origin: v.originShort(e.ID), Cluster: clusterCell(e.Cluster), Excuse: oneLine(e.Excluded)}
	for _, c := range v.citations(e.ID) {
		r.References++
		if flagged(c) {
			r.FlaggedCites++
		}
	}
	return r
}

// svgStart finds where the chart's <svg> element begins, after any XML declaration.
var svgStart = regexp.MustCompile(`(?s)^.*?(<svg\b)`)

func (v *view) page(chart []byte) page {
	snap := v.snap
	p := page{
		Title: "Research report: " + research.Shorten(snap.Goal, titleLength), Goal: snap.Goal,
		Refinements: snap.Refinements, Plan: v.in.Plan, Overview: v.in.Overview, MetaReview: v.in.MetaReview,
		Fitted: snap.Rating == session.RatingFitted, BibTeXFile: BibTeXFile, CSLFile: CSLFile, JSFile: JSONFile,
	}
	pr := snap.Progress
	p.Summary = [][2]string{
		{"Session", snap.SessionID}, {"Scientist", snap.ScientistID}, {"State", string(snap.State)},
		{"Stop reason", snap.StopReason}, {"Started", snap.StartedAt}, {"Elapsed", elapsed(snap)},
		{"Provider", provider(snap.Config, oneLine)}, {"Hypotheses", hypothesesCount(v)},
		{"Reviews", strconv.Itoa(pr.ReviewsCompleted)}, {"Matches", strconv.Itoa(pr.MatchesPlayed)},
		{"Rounds", strconv.Itoa(pr.Rounds)}, {"Usage", usage(snap.Usage)},
	}
	if m := svgStart.FindSubmatchIndex(chart); m != nil && len(v.ranked) > 0 {
		// The chart is cosci's own drawing (gonum/plot), not input: it goes in as it is.
		p.Chart = template.HTML(chart[m[2]:])
	}
	p.Themes = v.themes()
	p.Lab, p.LabNote, p.LabFamily = v.labSections(), v.familyNote(), v.familyRows()
	p.LabIntro, p.FamilyHeading = labIntro, familyHeading
	for _, e := range v.ranked {
		p.Ranked = append(p.Ranked, v.row(e))
	}
	for i, e := range v.top() {
		p.Top = append(p.Top, v.hypothesis(i+1, e))
	}
	for _, e := range v.all() {
		if !v.evolved(e.ID) {
			continue
		}
		l := pageLineage{Child: v.link(e.ID), Kind: oneLine(v.strategy(e.ID))}
		for _, par := range v.parents(e.ID) {
			l.Parents = append(l.Parents, v.link(par))
		}
		p.Lineage = append(p.Lineage, l)
	}
	for _, c := range v.clusters {
		pc := pageCluster{ID: c.id}
		for _, id := range c.members {
			pc.Members = append(pc.Members, v.link(id))
		}
		p.Clusters = append(p.Clusters, pc)
	}
	for _, e := range v.excluded {
		p.Excluded = append(p.Excluded, v.row(e))
	}
	refs, invented := v.bibliography()
	for _, r := range refs {
		p.Bibliography = append(p.Bibliography, Show(citation.Cited{Reference: r}))
	}
	p.Invented = invented
	return p
}

// themes are the top hypotheses grouped: by the overview's themes, or by their clusters
// when there is no overview.
func (v *view) themes() []pageTheme {
	var themes []pageTheme
	if o := v.in.Overview; o != nil {
		for i, t := range o.Themes {
			th := pageTheme{Title: oneLine(t.Title), Note: t.Note}
			if th.Title == "" {
				th.Title = "Theme " + strconv.Itoa(i+1)
			}
			for _, id := range t.Hypotheses {
				th.Members = append(th.Members, v.link(id))
			}
			themes = append(themes, th)
		}
	} else {
		groups, loose := byCluster(v.top())
		for _, g := range groups {
			th := pageTheme{Title: fmt.Sprintf("Cluster %d", g.id)}
			for _, id := range g.members {
				th.Members = append(th.Members, v.link(id))
			}
			themes = append(themes, th)
		}
		if len(loose) > 0 {
			th := pageTheme{Title: "Not clustered"}
			for _, id := range loose {
				th.Members = append(th.Members, v.link(id))
			}
			themes = append(themes, th)
		}
	}
	return themes
}

// hypothesis is the top hypothesis e, at rank, in full: its text, its parents, its
// sources and its reviews.
func (v *view) hypothesis(rank int, e session.Entry) pageHypothesis {
	h, ok := v.text(e.ID)
	ph := pageHypothesis{Rank: rank, Link: v.link(e.ID), Rating: rating(e) + fmt.Sprintf(" (%d won, %d lost)", e.Wins, e.Losses),
		Origin: v.originLong(e.ID), Score: score(e) + " from " + count(e.Reviews, "review"),
		Statement: h.Statement, Rational: h.Rationale, Predictions: h.Predictions, Missing: !ok}
	if v.evolved(e.ID) {
		for _, par := range v.parents(e.ID) {
			ph.Parents = append(ph.Parents, v.link(par))
		}
		ph.EvolvedBy = oneLine(v.strategy(e.ID))
	}
	for _, c := range v.citations(e.ID) {
		ph.Sources = append(ph.Sources, Show(c))
	}
	for _, r := range v.in.Reviews[e.ID] {
		pr := pageReview{Kind: r.Type, Verdict: r.Verdict, Critique: r.Critique, Assumptions: r.Assumptions, Marks: "unscored"}
		if manual(r) {
			pr.Kind += ", by the scientist " + oneLine(r.Reviewer)
		}
		if s := r.Scores; s != (research.Scores{}) {
			pr.Marks = fmt.Sprintf("overall %s/10 (novelty %s, plausibility %s, testability %s, safety %s)",
				mark(s.Overall()), mark(s.Novelty), mark(s.Plausibility), mark(s.Testability), mark(s.Safety))
		}
		ph.Reviews = append(ph.Reviews, pr)
	}
	return ph
}

// renderHTML writes report.html.
func renderHTML(v *view, chart []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, v.page(chart)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// anchored says whether the page has a section for the hypothesis, so a link to it works.
func (p page) Anchored(a string) bool {
	for _, h := range p.Top {
		if h.Link.Anchor == a {
			return true
		}
	}
	return false
}

var pageTmpl = template.Must(template.Must(template.New("report").Parse(SourceTemplate)).Funcs(template.FuncMap{
	"paras": func(s string) []string {
		var out []string
		for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
:root { --ink: #1d2430; --muted: #5b6573; --rule: #d9dee5; --accent: #1f5fa8; --ok: #1e7a3c; --warn: #a35d00; --bad: #b3261e; }
body { font: 16px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); max-width: 62rem; margin: 0 auto; padding: 1.5rem 1.25rem 4rem; }
h1 { font-size: 1.6rem; line-height: 1.25; } h2 { margin-top: 2.5rem; padding-top: .5rem; border-top: 1px solid var(--rule); } h3 { margin-top: 1.6rem; }
a { color: var(--accent); } code { font-size: .92em; background: #f2f4f7; padding: 0 .25em; border-radius: 3px; }
nav { font-size: .92rem; margin: 1rem 0 1.5rem; } nav a { margin-right: .9rem; white-space: nowrap; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; font-size: .95rem; }
dl.summary dt { color: var(--muted); } dl.summary dd { margin: 0; }
blockquote { margin: .5rem 0; padding: .25rem .9rem; border-left: 3px solid var(--rule); color: var(--muted); }
table { border-collapse: collapse; width: 100%; font-size: .92rem; } th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--rule); vertical-align: top; }
td.num, th.num { text-align: right; white-space: nowrap; }
.chart svg { width: 100%; height: auto; max-height: 30rem; }
.hyp { border: 1px solid var(--rule); border-radius: 6px; padding: .2rem 1.1rem 1rem; margin: 1.2rem 0; }
.meta { color: var(--muted); font-size: .93rem; }
.verdict { font-size: .85rem; font-weight: 600; padding: 0 .4em; border-radius: 3px; white-space: nowrap; }
.verified, .support-supports { color: var(--ok); background: #e8f4ec; } .altered, .overstated, .out-of-context, .unsupported, .support-irrelevant, .support-overstates { color: var(--warn); background: #fbf0e1; } .invented, .contradicted, .support-contradicts { color: var(--bad); background: #fbe9e8; } .unchecked { color: var(--muted); background: #f2f4f7; }
.claim { font-size: .9rem; margin-top: .25rem; }
ol.sources li, ul.reviews li { margin-bottom: .6rem; }
@media print { nav { display: none; } .hyp { break-inside: avoid; } a { color: inherit; } }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<dl class="summary">{{range .Summary}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>{{end}}</dl>
<nav><a href="#goal">Goal</a>{{if .Plan}}<a href="#plan">Plan</a>{{end}}<a href="#overview">Overview</a>{{if .Chart}}<a href="#chart">Elo over time</a>{{end}}<a href="#ranking">Ranking</a>{{if .Top}}<a href="#top">Top hypotheses</a>{{end}}{{if .Lineage}}<a href="#lineage">Lineage</a>{{end}}{{if .Clusters}}<a href="#clusters">Clusters</a>{{end}}{{if .Excluded}}<a href="#excluded">Excluded</a>{{end}}{{if .MetaReview}}<a href="#meta-review">Meta-review</a>{{end}}{{if or .Bibliography .Invented}}<a href="#references">References</a>{{end}}</nav>

<h2 id="goal">Research goal</h2>
<blockquote>{{.Goal}}</blockquote>
{{if .Refinements}}<h3>Refinements</h3><ol>{{range .Refinements}}<li>{{.Time}}{{if .Goal}} — new goal: {{.Goal}}{{end}}{{if .Focus}} — focus: {{.Focus}}{{end}}</li>{{end}}</ol>{{end}}

{{with .Plan}}<h2 id="plan">Research plan</h2>
<p>{{.Summary}}</p>
<h3>Preferences</h3><ul>{{range .Preferences}}<li>{{.}}</li>{{else}}<li>None stated.</li>{{end}}</ul>
<h3>Constraints</h3><ul>{{range .Constraints}}<li>{{.}}</li>{{else}}<li>None stated.</li>{{end}}</ul>
<h3>Evaluation criteria</h3><ul>{{range .Criteria}}<li>{{.}}</li>{{else}}<li>None stated.</li>{{end}}</ul>{{end}}

<h2 id="overview">Research overview</h2>
{{with .Overview}}{{range paras .Summary}}<p>{{.}}</p>{{end}}{{else}}<p class="meta">No overview was written for this session: the top hypotheses, grouped by proximity cluster.</p>{{end}}
{{range .Themes}}<h3>{{.Title}}</h3>{{if .Note}}<p>{{.Note}}</p>{{end}}<ul>{{range .Members}}<li>{{if $.Anchored .Anchor}}<a href="#{{.Anchor}}"><code>{{.ID}}</code></a>{{else}}<code>{{.ID}}</code>{{end}} {{.Title}}</li>{{end}}</ul>{{end}}
{{with .Overview}}{{if .OpenQuestions}}<h3>Open questions</h3><ul>{{range .OpenQuestions}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Experiments}}<h3>Suggested experiments</h3><ul>{{range .Experiments}}<li>{{.}}</li>{{end}}</ul>{{end}}{{end}}

{{if .Chart}}<h2 id="chart">Elo over time</h2>
<p class="meta">The rating of each of the top hypotheses at every checkpoint.</p>
<div class="chart">{{.Chart}}</div>{{end}}

<h2 id="ranking">Ranked hypotheses</h2>
{{if .Ranked}}<p class="meta">{{if .Fitted}}Ratings fitted to every match (Bradley–Terry strengths on the Elo scale, ± their standard error).{{else}}Elo ratings from the tournament.{{end}} W-L counts matches won and lost; sources counts the references a hypothesis cites, and how many the checks flagged.</p>
<table><thead><tr><th class="num">Rank</th><th>Hypothesis</th><th class="num">Rating</th><th class="num">W-L</th><th class="num">Review</th><th>Origin</th><th class="num">Cluster</th><th class="num">Sources</th></tr></thead><tbody>
{{range .Ranked}}<tr><td class="num">{{.Rank}}</td><td>{{if $.Anchored .Link.Anchor}}<a href="#{{.Link.Anchor}}"><code>{{.Link.ID}}</code></a>{{else}}<code>{{.Link.ID}}</code>{{end}} {{.Link.Title}}</td><td class="num">{{.Rating}}</td><td class="num">{{.WL}}</td><td class="num">{{.Score}}</td><td>{{.Origin}}</td><td class="num">{{.Cluster}}</td><td class="num">{{if .References}}{{.References}}{{if .FlaggedCites}} ({{.FlaggedCites}} flagged){{end}}{{else}}–{{end}}</td></tr>
{{end}}</tbody></table>{{else}}<p>No hypothesis is still competing.</p>{{end}}

{{if .Top}}<h2 id="top">Top hypotheses in detail</h2>
{{range .Top}}<section class="hyp" id="{{.Link.Anchor}}">
<h3>{{.Rank}}. {{.Link.Title}}</h3>
<p class="meta"><code>{{.Link.ID}}</code> · {{.Rating}} · {{.Origin}}{{if .Parents}} · evolved from {{range $i, $p := .Parents}}{{if $i}}, {{end}}{{if $.Anchored $p.Anchor}}<a href="#{{$p.Anchor}}"><code>{{$p.ID}}</code></a>{{else}}<code>{{$p.ID}}</code>{{end}}{{end}}{{if .EvolvedBy}} by {{.EvolvedBy}}{{end}}{{end}} · review score {{.Score}}</p>
{{if .Missing}}<p class="meta">The store does not hold this hypothesis' text.</p>{{else}}
<p><strong>Statement.</strong> {{.Statement}}</p>
<p><strong>Rationale.</strong> {{.Rational}}</p>
<p><strong>Testable predictions:</strong></p><ol>{{range .Predictions}}<li>{{.}}</li>{{end}}</ol>
{{if .Sources}}<p><strong>References:</strong></p><ol class="sources">{{range .Sources}}{{template "source" .}}{{end}}</ol>{{end}}{{end}}
<p><strong>Reviews:</strong></p><ul class="reviews">{{range .Reviews}}<li><em>{{.Kind}}</em>: {{.Verdict}}, {{.Marks}}{{range paras .Critique}}<br>{{.}}{{end}}{{if .Assumptions}}<ul>{{range .Assumptions}}<li><strong>{{.Verdict}}:</strong> {{.Text}}{{if .Note}} — {{.Note}}{{end}}</li>{{end}}</ul>{{end}}</li>{{else}}<li>None yet.</li>{{end}}</ul>
</section>
{{end}}{{end}}

{{if or .Lab .LabFamily}}<h2 id="lab">Tested in the lab</h2>
<p class="meta">{{.LabIntro}}</p>
{{if .LabNote}}<p class="meta">{{.LabNote}}</p>{{end}}
{{range .Lab}}<section class="lab"><h3>{{.Title}}</h3>
<ul>{{range .Fields}}<li><strong>{{.Name}}:</strong> {{if .Code}}<code>{{.Code}}</code> {{end}}{{.Text}}</li>{{end}}</ul>
</section>
{{end}}{{if .LabFamily}}<h3>{{.FamilyHeading}}</h3>
<table><thead><tr><th>Analysis</th><th>Kind</th><th>Hypothesis</th><th>Test</th><th class="num">p</th><th class="num">q</th></tr></thead><tbody>
{{range .LabFamily}}<tr><td><code>{{.ID}}</code></td><td>{{.Kind}}</td><td>{{.Hypothesis}}</td><td>{{.Test}}</td><td class="num">{{.P}}</td><td class="num">{{.Q}}</td></tr>
{{end}}</tbody></table>{{end}}{{end}}

{{if .Lineage}}<h2 id="lineage">Lineage</h2>
<p class="meta">Each evolved hypothesis and those it was evolved from.</p>
<ul>{{range .Lineage}}<li>{{if $.Anchored .Child.Anchor}}<a href="#{{.Child.Anchor}}"><code>{{.Child.ID}}</code></a>{{else}}<code>{{.Child.ID}}</code>{{end}} {{.Child.Title}} ← {{range $i, $p := .Parents}}{{if $i}}, {{end}}{{if $.Anchored $p.Anchor}}<a href="#{{$p.Anchor}}"><code>{{$p.ID}}</code></a>{{else}}<code>{{$p.ID}}</code>{{end}}{{end}}{{if .Kind}} by {{.Kind}}{{end}}</li>{{end}}</ul>{{end}}

{{if .Clusters}}<h2 id="clusters">Clusters</h2>
<p class="meta">Hypotheses the proximity graph found similar.</p>
<ul>{{range .Clusters}}<li>Cluster {{.ID}}: {{range $i, $m := .Members}}{{if $i}}, {{end}}{{if $.Anchored $m.Anchor}}<a href="#{{$m.Anchor}}"><code>{{$m.ID}}</code></a>{{else}}<code>{{$m.ID}}</code>{{end}}{{end}}</li>{{end}}</ul>{{end}}

{{if .Excluded}}<h2 id="excluded">Excluded</h2>
<ul>{{range .Excluded}}<li><code>{{.Link.ID}}</code> {{.Link.Title}} ({{.Rating}}): {{.Excuse}}</li>{{end}}</ul>{{end}}

{{with .MetaReview}}<h2 id="meta-review">Meta-review (round {{.Round}})</h2>
<h3>Recurring critiques</h3><ol>{{range .Critiques}}<li>{{.}}</li>{{else}}<li>None found.</li>{{end}}</ol>
<h3>Strengths</h3><ul>{{range .Strengths}}<li>{{.}}</li>{{else}}<li>None found.</li>{{end}}</ul>
{{if .Feedback}}<h3>Feedback to the agents</h3><p>{{.Feedback}}</p>{{end}}{{end}}

{{if or .Bibliography .Invented}}<h2 id="references">References</h2>
<p class="meta">Every source the ranked hypotheses and their reviews cite, as the tools returned it (also in <code>{{.BibTeXFile}}</code> and <code>{{.CSLFile}}</code>).</p>
<ol class="sources">{{range .Bibliography}}<li>{{.Line}}{{if .Link}} <a href="{{.Link}}">{{.Link}}</a>{{else if .Address}} <code>{{.Address}}</code>{{end}}</li>{{end}}</ol>
{{if .Invented}}<p class="meta">{{.Invented}} citation(s) were left out: no tool returned those sources to the turn that cited them.</p>{{end}}{{end}}
</body>
</html>
`))
