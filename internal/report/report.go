// Package report renders a research session's report for the scientist: a Markdown
// research overview (what was asked, how the goal changed, the plan, the overview by
// theme, the hypotheses in the order the tournament ranked them with their reviews, how
// ideas evolved, which ones cluster together and which were excluded), an SVG chart of
// the top hypotheses' Elo ratings over time, and a machine-readable JSON export.
//
// The report is a pure function of its inputs. It iterates only over slices, never over
// maps, so the same session always renders to the same bytes.
//
// It never prints a hypothesis's Latent quality: that is the offline simulator's hidden
// truth, and showing it would leak the answer the tournament is meant to find.
package report

import (
	"fmt"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// Detailed is how many of the top-ranked hypotheses get a section of their own (and a
// line in the Elo chart); the rest appear in the ranking table only, so a long session
// still yields a readable report.
const Detailed = 10

// File names of the report's artefacts in the session's directory. The Markdown embeds
// the chart by ChartFile, so the two must be written side by side.
const (
	MarkdownFile = "report.md"
	JSONFile     = "report.json"
	ChartFile    = "elo.svg"
)

// Input is everything a report is made from; the Report activity loads it from the store.
type Input struct {
	Final      session.Snapshot   // the final checkpoint
	History    []session.Snapshot // every checkpoint in seq order (Elo over time); may be empty
	Hypotheses map[string]research.Hypothesis
	Reviews    map[string][]research.Review
	Plan       *research.Plan       // nil if none
	MetaReview *research.MetaReview // the latest, nil if none
	Overview   *research.Overview   // nil if none
	// Lab are the session's experiments (lab.go): those with a result, standing or
	// withdrawn, make the "Tested in the lab" section.
	Lab []LabTest
	// Analyses are every analysis the session ran (the store's records, in the order they
	// ran): those with a p-value are the family the report's q-values adjust over
	// (family.go).
	Analyses []Analysis
}

// Files are the report's artefacts.
type Files struct {
	Markdown []byte // report.md
	JSON     []byte // report.json: a machine-readable export (see the JSON schema in export.go)
	Chart    []byte // elo.svg: Elo over time of the final top 10
	HTML     []byte // report.html: the report as one self-contained page, the chart inline
	BibTeX   []byte // bibliography.bib: the sources the ranked hypotheses cite
	CSL      []byte // bibliography.json: the same, as CSL-JSON
}

// Named are the artefacts by their file names, in a fixed order, for writing them out.
func (f Files) Named() []Artefact {
	return []Artefact{{MarkdownFile, f.Markdown}, {JSONFile, f.JSON}, {ChartFile, f.Chart}, {HTMLFile, f.HTML}, {BibTeXFile, f.BibTeX}, {CSLFile, f.CSL}}
}

// Artefact is one file of a report.
type Artefact struct {
	Name string
	Data []byte
}

// Artefacts are the names of every file a report is made of.
var Artefacts = []string{MarkdownFile, JSONFile, ChartFile, HTMLFile, BibTeXFile, CSLFile}

// Render makes the report's three artefacts. Texts absent from the input's maps render
// as placeholders rather than failing, so a report can always be written; an error means
// the chart or the export could not be encoded.
func Render(in Input) (Files, error) {
	v := newView(in)
	chart, err := renderChart(v)
	if err != nil {
		return Files{}, fmt.Errorf("report: Elo chart: %w", err)
	}
	js, err := renderJSON(v)
	if err != nil {
		return Files{}, fmt.Errorf("report: JSON export: %w", err)
	}
	refs, _ := v.bibliography()
	csl, err := CSL(refs)
	if err != nil {
		return Files{}, fmt.Errorf("report: CSL-JSON bibliography: %w", err)
	}
	page, err := renderHTML(v, chart)
	if err != nil {
		return Files{}, fmt.Errorf("report: HTML: %w", err)
	}
	return Files{Markdown: renderMarkdown(v), JSON: js, Chart: chart, HTML: page, BibTeX: BibTeX(refs), CSL: csl}, nil
}

// view is the input indexed for rendering. Everything that orders output is a slice.
type view struct {
	in   Input
	snap session.Snapshot
	// ranked are the hypotheses still competing, in the snapshot's order: the ranking.
	// The snapshot's order is authoritative (ties are broken by the tournament): the
	// report never re-sorts.
	ranked []session.Entry
	// excluded are the hypotheses that no longer compete, in the snapshot's order.
	excluded []session.Entry
	entry    map[string]session.Entry
	rank     map[string]int // 1-based, competing hypotheses only
	// clusters are the proximity clusters with more than one member, each in report
	// order (ranked, then excluded), ordered by their best member.
	clusters []cluster
	// family is the session's analyses with a p-value, each with its q (family.go).
	family family
}

type cluster struct {
	id      int
	members []string
}

func newView(in Input) *view {
	v := &view{in: in, snap: in.Final, entry: map[string]session.Entry{}, rank: map[string]int{}, family: newFamily(in)}
	for _, e := range in.Final.Hypotheses {
		if _, dup := v.entry[e.ID]; dup {
			continue
		}
		v.entry[e.ID] = e
		if e.Excluded != "" {
			v.excluded = append(v.excluded, e)
			continue
		}
		v.ranked = append(v.ranked, e)
		v.rank[e.ID] = len(v.ranked)
	}
	all, _ := byCluster(v.all())
	for _, c := range all {
		if len(c.members) > 1 {
			v.clusters = append(v.clusters, c)
		}
	}
	return v
}

// byCluster groups entries by proximity cluster, clusters in the order of their first
// entry, entries in their order; loose are those in no cluster.
func byCluster(entries []session.Entry) (clusters []cluster, loose []string) {
	at := map[int]int{} // cluster id -> index in clusters
	for _, e := range entries {
		if e.Cluster == 0 {
			loose = append(loose, e.ID)
			continue
		}
		i, ok := at[e.Cluster]
		if !ok {
			i = len(clusters)
			at[e.Cluster] = i
			clusters = append(clusters, cluster{id: e.Cluster})
		}
		clusters[i].members = append(clusters[i].members, e.ID)
	}
	return clusters, loose
}

// all is every hypothesis in report order: the ranking, then the excluded.
func (v *view) all() []session.Entry {
	return append(append(make([]session.Entry, 0, len(v.ranked)+len(v.excluded)), v.ranked...), v.excluded...)
}

// top is the hypotheses that get a section and a line in the chart.
func (v *view) top() []session.Entry { return v.ranked[:min(len(v.ranked), Detailed)] }

// text is the stored text of a hypothesis, if the store had it.
func (v *view) text(id string) (research.Hypothesis, bool) {
	h, ok := v.in.Hypotheses[id]
	return h, ok
}

// title prefers the stored text's title and falls back on the snapshot's copy.
func (v *view) title(id string) string {
	if h, ok := v.text(id); ok && h.Title != "" {
		return h.Title
	}
	if e, ok := v.entry[id]; ok && e.Title != "" {
		return e.Title
	}
	return missing
}

// origin, strategy and parents are the supervisor's record (the snapshot), which holds
// them for every hypothesis; the stored text fills in what a snapshot lacks.
func (v *view) origin(id string) string {
	if o := v.entry[id].Origin; o != "" {
		return o
	}
	h, _ := v.text(id)
	return h.Origin
}

func (v *view) strategy(id string) string {
	if s := v.entry[id].Strategy; s != "" {
		return s
	}
	h, _ := v.text(id)
	return h.Strategy
}

func (v *view) parents(id string) []string {
	if ps := v.entry[id].Parents; len(ps) > 0 {
		return ps
	}
	h, _ := v.text(id)
	return h.Parents
}

// evolved says whether a hypothesis was made from others.
func (v *view) evolved(id string) bool { return len(v.parents(id)) > 0 }

// clusterOf is the multi-member cluster a hypothesis belongs to, if any.
func (v *view) clusterOf(id string) (cluster, bool) {
	e, ok := v.entry[id]
	if !ok || e.Cluster == 0 {
		return cluster{}, false
	}
	for _, c := range v.clusters {
		if c.id == e.Cluster {
			return c, true
		}
	}
	return cluster{}, false
}
