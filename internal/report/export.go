package report

import (
	"encoding/json"

	"github.com/cosci-dev/cosci/internal/research"
	"github.com/cosci-dev/cosci/internal/session"
)

// The JSON export (report.json) is for tools, not people. Its field names are part of the
// report's contract: add fields, never rename or remove them. Lists are always present
// ([] rather than null) except where noted; "plan", "overview" and "meta_review" are null
// when the session has none. Nothing in it carries the simulator's latent quality.
//
//	{
//	  "session": {
//	    "id", "scientist", "state", "stop_reason", "started_at",
//	    "time":            the final checkpoint's time,
//	    "seq":             the final checkpoint's sequence number,
//	    "elapsed", "elapsed_seconds",
//	    "provider", "model", "max_hypotheses",
//	    "hypotheses":      how many the final checkpoint holds, excluded ones included,
//	    "excluded", "reviews", "matches", "rounds", "checkpoints", "turns_failed",
//	    "usage": {"prompt_tokens", "completion_tokens", "total_tokens", "requests"}
//	  },
//	  "goal":        the goal as last refined,
//	  "refinements": [{"time", "goal", "focus"}],
//	  "plan":        {"summary", "preferences", "constraints", "evaluation_criteria"},
//	  "overview":    {"summary", "themes": [{"title", "note", "hypotheses": [ids]}],
//	                  "open_questions", "suggested_experiments"},
//	  "meta_review": {"round", "critiques", "strengths", "feedback"},
//	  "hypotheses": [   the ranking, best first, then the excluded ones
//	    {"rank":     1-based among those still competing; 0 for an excluded one,
//	     "id", "title", "statement", "rationale", "testable_predictions",
//	     "in_store": false when the store had no text (the text fields are then empty,
//	                 but for the title the snapshot keeps),
//	     "origin", "strategy", "parents", "round",
//	     "cluster":  proximity cluster, 0 for none,
//	     "excluded": why it no longer competes; "" while it does,
//	     "elo", "wins", "losses",
//	     "review_score": mean overall review score, null if never reviewed,
//	     "review_count",
//	     "reviews": [{"type", "reviewer", "manual", "verdict", "critique",
//	                  "scores": {"novelty", "plausibility", "testability", "safety", "overall"},
//	                  "assumptions": [{"text", "verdict", "note"}]}]}
//	  ],
//	  (each hypothesis also has "references": [{"id", "doi", "title", "authors", "year",
//	   "venue", "url", "claim", "quote", "verdict": verified | altered | contradicted |
//	   unsupported | invented | unchecked, "note", "passage", "support": supports |
//	   contradicts | irrelevant, "support_note"}], the sources it cites, each with the claim
//	   it is cited for and what the reviews' checks and support judgements found),
//	  "bibliography": [{"id", "doi", "title", "authors", "year", "venue", "url"}]   every
//	                        source the ranked hypotheses cite, without invented ones,
//	  "clusters": [[ids]]   every proximity cluster with more than one member, members in
//	                        the order of "hypotheses", clusters by their best member,
//	  "lineage":  [{"id", "parents", "kind"}]   every evolved hypothesis, in the order of
//	                        "hypotheses"; kind is the evolution kind,
//	  "lab": [   every experiment of the session, planned ones included (labexport.go)
//	    {"experiment", "hypothesis", "hypothesis_title", "state", "test", "plan_digest",
//	     "prediction":       {"text", "direction", "min_effect"},
//	     "pre_registration": {"update", "run", "event": in that run, "session_event", "time"},
//	                         null until the plan was confirmed,
//	     "called_off":       why the experiment was withdrawn; "" if it was not,
//	     "results": [   withdrawn ones first, the standing one last
//	       {"data": the result dataset's digest, "arrived", "arrived_event",
//	        "withdrawn": the reason; "" while it stands,
//	        "verdict": supported | refuted | inconclusive; "" when not analysed, "why",
//	        "outcome": {"test", "effect", "ci_low", "ci_high" (null: the test has no interval), "p", "q", "n"}, null when not
//	                   analysed; q is null when the analysis is not in the family,
//	        "analysis_id", "citation": "analysis:<id>", "ran": the run that counted,
//	        "exploratory": [{"analysis_id", "citation", "label": "exploratory", "why", "ran",
//	                         "p", "q"}]}]}
//	  ],
//	  "analyses": {"q_method": "Benjamini-Hochberg", "family_size",
//	     "family":  [{"id", "kind", "hypothesis", "experiment", "test", "ran", "p", "q"}]
//	                every analysis the session ran with a p-value, in the order they ran,
//	     "refused": [{"id", "kind", "refused"}]   those without one}
//	}
type export struct {
	Session     exportSession      `json:"session"`
	Goal        string             `json:"goal"`
	Refinements []exportRefinement `json:"refinements"`
	Plan        *exportPlan        `json:"plan"`
	Overview    *exportOverview    `json:"overview"`
	MetaReview  *exportMetaReview  `json:"meta_review"`
	Hypotheses  []exportHypothesis `json:"hypotheses"`
	Clusters    [][]string         `json:"clusters"`
	Lineage     []exportLineage    `json:"lineage"`
	// Bibliography is every source the ranked hypotheses and their reviews cite, once
	// each, without those no tool returned.
	Bibliography []exportReference `json:"bibliography"`
	// Lab is "Tested in the lab" as fields, Analyses the family q adjusts over.
	Lab      []exportLab    `json:"lab"`
	Analyses exportAnalyses `json:"analyses"`
}

// exportReference is a cited source; on a hypothesis, with how it was used and checked.
type exportReference struct {
	ID      string   `json:"id"`
	DOI     string   `json:"doi,omitempty"`
	Title   string   `json:"title"`
	Authors []string `json:"authors"`
	Year    int      `json:"year,omitempty"`
	Venue   string   `json:"venue,omitempty"`
	URL     string   `json:"url,omitempty"` // the DOI's resolver, else the source's own URL
	Claim   string   `json:"claim,omitempty"`
	Quote   string   `json:"quote,omitempty"`
	// Where the quote is in the source's full text: its passage's id, page and section.
	QuotedPassage string `json:"quoted_passage,omitempty"`
	Page          int    `json:"page,omitempty"`
	Section       string `json:"section,omitempty"`
	// Verdict is what the reviews' checks found of the citation (a research.Citation*
	// verdict, or "unchecked"); Note says why it was flagged, and Passage is the source's
	// own words closest to an altered or contradicted quote.
	Verdict string `json:"verdict,omitempty"`
	Note    string `json:"note,omitempty"`
	Passage string `json:"passage,omitempty"`
	// Support is what a review judged of the quote against the claim.
	Support     string `json:"support,omitempty"`
	SupportNote string `json:"support_note,omitempty"`
}

func exportReferenceOf(r research.Reference) exportReference {
	return exportReference{ID: r.ID, DOI: r.DOI, Title: r.Title, Authors: strs(r.Authors), Year: r.Year, Venue: r.Venue, URL: link(r), Claim: r.Claim, Quote: r.Quote,
		QuotedPassage: r.Passage, Page: r.Page, Section: r.Section}
}

type exportSession struct {
	ID             string      `json:"id"`
	Scientist      string      `json:"scientist"`
	State          string      `json:"state"`
	StopReason     string      `json:"stop_reason"`
	StartedAt      string      `json:"started_at"`
	Time           string      `json:"time"`
	Seq            int         `json:"seq"`
	Elapsed        string      `json:"elapsed"`
	ElapsedSeconds float64     `json:"elapsed_seconds"`
	Provider       string      `json:"provider"`
	Model          string      `json:"model"`
	MaxHypotheses  int         `json:"max_hypotheses"`
	Hypotheses     int         `json:"hypotheses"`
	Excluded       int         `json:"excluded"`
	Reviews        int         `json:"reviews"`
	Matches        int         `json:"matches"`
	Rounds         int         `json:"rounds"`
	Checkpoints    int         `json:"checkpoints"`
	TurnsFailed    int         `json:"turns_failed"`
	Usage          exportUsage `json:"usage"`
}

type exportUsage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TotalTokens      int     `json:"total_tokens"`
	Requests         int     `json:"requests"`
	CachedTokens     int     `json:"cached_tokens"`      // of the prompt tokens, served from the provider's cache
	CacheWriteTokens int     `json:"cache_write_tokens"` // of the prompt tokens, written into it
	CostUSD          float64 `json:"cost_usd"`           // an estimate from the worker's price table
}

type exportRefinement struct {
	Time  string `json:"time"`
	Goal  string `json:"goal"`
	Focus string `json:"focus"`
}

type exportPlan struct {
	Summary     string   `json:"summary"`
	Preferences []string `json:"preferences"`
	Constraints []string `json:"constraints"`
	Criteria    []string `json:"evaluation_criteria"`
}

type exportOverview struct {
	Summary       string        `json:"summary"`
	Themes        []exportTheme `json:"themes"`
	OpenQuestions []string      `json:"open_questions"`
	Experiments   []string      `json:"suggested_experiments"`
}

type exportTheme struct {
	Title      string   `json:"title"`
	Note       string   `json:"note"`
	Hypotheses []string `json:"hypotheses"`
}

type exportMetaReview struct {
	Round     int      `json:"round"`
	Critiques []string `json:"critiques"`
	Strengths []string `json:"strengths"`
	Feedback  string   `json:"feedback"`
}

type exportHypothesis struct {
	Rank        int            `json:"rank"`
	ID          string         `json:"id"`
	Title       string         `json:"title"`
	Statement   string         `json:"statement"`
	Rationale   string         `json:"rationale"`
	Predictions []string       `json:"testable_predictions"`
	InStore     bool           `json:"in_store"`
	Origin      string         `json:"origin"`
	Strategy    string         `json:"strategy"`
	Parents     []string       `json:"parents"`
	Round       int            `json:"round"`
	Cluster     int            `json:"cluster"`
	Excluded    string         `json:"excluded"`
	Elo         float64        `json:"elo"`
	EloSE       float64        `json:"elo_se,omitempty"` // fitted ratings' standard error
	Wins        int            `json:"wins"`
	Losses      int            `json:"losses"`
	ReviewScore *float64       `json:"review_score"`
	ReviewCount int            `json:"review_count"`
	Reviews     []exportReview `json:"reviews"`
	// References are the sources it cites, each with its check's verdict.
	References []exportReference `json:"references"`
}

type exportReview struct {
	Type        string             `json:"type"`
	Reviewer    string             `json:"reviewer"`
	Manual      bool               `json:"manual"`
	Verdict     string             `json:"verdict"`
	Critique    string             `json:"critique"`
	Scores      exportScores       `json:"scores"`
	Assumptions []exportAssumption `json:"assumptions"`
}

type exportScores struct {
	Novelty      float64 `json:"novelty"`
	Plausibility float64 `json:"plausibility"`
	Testability  float64 `json:"testability"`
	Safety       float64 `json:"safety"`
	Overall      float64 `json:"overall"`
}

type exportAssumption struct {
	Text    string `json:"text"`
	Verdict string `json:"verdict"`
	Note    string `json:"note"`
}

type exportLineage struct {
	ID      string   `json:"id"`
	Parents []string `json:"parents"`
	Kind    string   `json:"kind"`
}

// renderJSON writes report.json: indented, one trailing newline, the same bytes for the
// same input.
func renderJSON(v *view) ([]byte, error) {
	b, err := json.MarshalIndent(buildExport(v), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func buildExport(v *view) export {
	s := v.snap
	p := s.Progress
	x := export{
		Session: exportSession{
			ID: s.SessionID, Scientist: s.ScientistID, State: string(s.State), StopReason: s.StopReason,
			StartedAt: s.StartedAt, Time: s.Time, Seq: s.Seq,
			Elapsed: elapsed(s), ElapsedSeconds: p.ElapsedSeconds,
			Provider: s.Config.Provider, Model: s.Config.Model, MaxHypotheses: s.Config.MaxHypotheses,
			Hypotheses: len(v.ranked) + len(v.excluded), Excluded: len(v.excluded),
			Reviews: p.ReviewsCompleted, Matches: p.MatchesPlayed, Rounds: p.Rounds,
			Checkpoints: p.Checkpoints, TurnsFailed: p.TurnsFailed,
			Usage: exportUsage{
				PromptTokens: s.Usage.PromptTokens, CompletionTokens: s.Usage.CompletionTokens,
				TotalTokens: s.Usage.PromptTokens + s.Usage.CompletionTokens, Requests: s.Usage.Requests,
				CachedTokens: s.Usage.CachedTokens, CacheWriteTokens: s.Usage.CacheWriteTokens, CostUSD: s.Usage.CostUSD,
			},
		},
		Goal:        s.Goal,
		Refinements: []exportRefinement{},
		Hypotheses:  []exportHypothesis{},
		Clusters:    [][]string{},
		Lineage:     []exportLineage{},
		Lab:         v.exportLab(),
		Analyses:    v.exportAnalyses(),
	}
	refs, _ := v.bibliography()
	x.Bibliography = []exportReference{}
	for _, r := range refs {
		x.Bibliography = append(x.Bibliography, exportReferenceOf(r))
	}
	for _, r := range s.Refinements {
		x.Refinements = append(x.Refinements, exportRefinement{Time: r.Time, Goal: r.Goal, Focus: r.Focus})
	}
	if pl := v.in.Plan; pl != nil {
		x.Plan = &exportPlan{Summary: pl.Summary, Preferences: strs(pl.Preferences),
			Constraints: strs(pl.Constraints), Criteria: strs(pl.Criteria)}
	}
	if o := v.in.Overview; o != nil {
		eo := &exportOverview{Summary: o.Summary, Themes: []exportTheme{},
			OpenQuestions: strs(o.OpenQuestions), Experiments: strs(o.Experiments)}
		for _, t := range o.Themes {
			eo.Themes = append(eo.Themes, exportTheme{Title: t.Title, Note: t.Note, Hypotheses: strs(t.Hypotheses)})
		}
		x.Overview = eo
	}
	if m := v.in.MetaReview; m != nil {
		x.MetaReview = &exportMetaReview{Round: m.Round, Critiques: strs(m.Critiques),
			Strengths: strs(m.Strengths), Feedback: m.Feedback}
	}
	for _, e := range v.all() {
		x.Hypotheses = append(x.Hypotheses, v.exportHypothesis(e))
		if v.evolved(e.ID) {
			x.Lineage = append(x.Lineage, exportLineage{ID: e.ID, Parents: strs(v.parents(e.ID)), Kind: v.strategy(e.ID)})
		}
	}
	for _, c := range v.clusters {
		x.Clusters = append(x.Clusters, strs(c.members))
	}
	return x
}

func (v *view) exportHypothesis(e session.Entry) exportHypothesis {
	h, ok := v.text(e.ID)
	title := v.title(e.ID)
	if title == missing {
		title = ""
	}
	x := exportHypothesis{
		Rank: v.rank[e.ID], ID: e.ID, Title: title, InStore: ok,
		Statement: h.Statement, Rationale: h.Rationale, Predictions: strs(h.Predictions),
		Origin: v.origin(e.ID), Strategy: v.strategy(e.ID), Parents: strs(v.parents(e.ID)),
		Round: e.Round, Cluster: e.Cluster, Excluded: e.Excluded,
		Elo: e.Elo, EloSE: e.EloSE, Wins: e.Wins, Losses: e.Losses, ReviewCount: e.Reviews,
		Reviews: []exportReview{}, References: []exportReference{},
	}
	for _, c := range v.citations(e.ID) {
		r := exportReferenceOf(c.Reference)
		ch := c.Check
		r.Verdict, r.Note, r.Passage, r.Support, r.SupportNote = ch.Verdict, ch.Note, ch.Passage, ch.Support, ch.SupportNote
		x.References = append(x.References, r)
	}
	if e.Reviews > 0 {
		sc := e.Score
		x.ReviewScore = &sc
	}
	for _, r := range v.in.Reviews[e.ID] {
		x.Reviews = append(x.Reviews, exportReviewOf(r))
	}
	return x
}

func exportReviewOf(r research.Review) exportReview {
	s := r.Scores
	x := exportReview{
		Type: r.Type, Reviewer: r.Reviewer, Manual: manual(r), Verdict: r.Verdict, Critique: r.Critique,
		Scores: exportScores{Novelty: s.Novelty, Plausibility: s.Plausibility, Testability: s.Testability,
			Safety: s.Safety, Overall: s.Overall()},
		Assumptions: []exportAssumption{},
	}
	for _, a := range r.Assumptions {
		x.Assumptions = append(x.Assumptions, exportAssumption{Text: a.Text, Verdict: a.Verdict, Note: a.Note})
	}
	return x
}

// strs copies a list so the export never aliases the input, and never holds null.
func strs(s []string) []string { return append([]string{}, s...) }
