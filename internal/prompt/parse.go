package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

// MalformedError reports a model answer that does not fit its agent's schema. Problem is
// written to be quoted back to the model in a repair turn, so it says what to change.
type MalformedError struct {
	Agent   string // AgentSupervisor, AgentGeneration, AgentReflection, ...
	Problem string
}

func (e *MalformedError) Error() string {
	return "malformed " + e.Agent + " answer: " + e.Problem
}

// ParseHypothesis reads a generation agent's answer. The result has only the fields a
// model writes (title, statement, rationale, predictions); the caller sets the rest.
func ParseHypothesis(raw []byte) (research.Hypothesis, error) {
	return parseHypothesis(AgentGeneration, raw)
}

// ParseEvolved reads an evolution agent's answer: a hypothesis, as ParseHypothesis reads
// it, whose errors name the evolution agent. The caller sets Origin, Strategy and Parents.
func ParseEvolved(raw []byte) (research.Hypothesis, error) {
	return parseHypothesis(AgentEvolution, raw)
}

func parseHypothesis(agent string, raw []byte) (research.Hypothesis, error) {
	var a struct {
		Title       string   `json:"title"`
		Statement   string   `json:"statement"`
		Rationale   string   `json:"rationale"`
		Predictions []string `json:"testable_predictions"`
		References  []Cited  `json:"references"`
	}
	if err := decode(agent, raw, &a); err != nil {
		return research.Hypothesis{}, err
	}
	refs, err := references(agent, a.References)
	if err != nil {
		return research.Hypothesis{}, err
	}
	h := research.Hypothesis{
		Title:      strings.TrimSpace(a.Title),
		Statement:  strings.TrimSpace(a.Statement),
		Rationale:  strings.TrimSpace(a.Rationale),
		References: refs,
	}
	for i, p := range a.Predictions {
		p = strings.TrimSpace(p)
		if p == "" {
			return research.Hypothesis{}, malformed(agent, "testable_predictions[%d] is empty; remove it or state a prediction", i)
		}
		h.Predictions = append(h.Predictions, p)
	}
	if err := h.Check(); err != nil {
		return research.Hypothesis{}, malformed(agent, "%v; give title, statement, rationale and at least one testable prediction", err)
	}
	if n := utf8.RuneCountInString(h.Title); n > MaxTitleLength {
		return research.Hypothesis{}, malformed(agent, "the title is %d characters; at most %d: shorten it and put the detail in the statement", n, MaxTitleLength)
	}
	return h, nil
}

// ParseReview reads a reflection agent's answer. The result has only the fields a model
// writes (scores, critique, verdict, and assumptions if it gave any); the caller sets
// HypothesisID and Type. Use ParseReviewOf when the review type is known.
func ParseReview(raw []byte) (research.Review, error) {
	// Pointers tell a missing score from a score of 0.
	var a struct {
		Scores *struct {
			Novelty      *float64 `json:"novelty"`
			Plausibility *float64 `json:"plausibility"`
			Testability  *float64 `json:"testability"`
			Safety       *float64 `json:"safety"`
		} `json:"scores"`
		Critique    string `json:"critique"`
		Verdict     string `json:"verdict"`
		Assumptions []struct {
			Text    string `json:"text"`
			Verdict string `json:"verdict"`
			Note    string `json:"note"`
		} `json:"assumptions"`
		References []Cited `json:"references"`
	}
	if err := decode(AgentReflection, raw, &a); err != nil {
		return research.Review{}, err
	}
	refs, err := references(AgentReflection, a.References)
	if err != nil {
		return research.Review{}, err
	}
	if a.Scores == nil {
		return research.Review{}, malformed(AgentReflection, `"scores" is missing; give novelty, plausibility, testability and safety, each from 0 to 10`)
	}
	var r research.Review
	for _, s := range []struct {
		name string
		v    *float64
		dst  *float64
	}{
		{"novelty", a.Scores.Novelty, &r.Scores.Novelty},
		{"plausibility", a.Scores.Plausibility, &r.Scores.Plausibility},
		{"testability", a.Scores.Testability, &r.Scores.Testability},
		{"safety", a.Scores.Safety, &r.Scores.Safety},
	} {
		switch {
		case s.v == nil:
			return research.Review{}, malformed(AgentReflection, "scores.%s is missing; give a number from 0 to 10", s.name)
		case *s.v < 0 || *s.v > 10:
			return research.Review{}, malformed(AgentReflection, "scores.%s is %g; it must be from 0 to 10", s.name, *s.v)
		}
		*s.dst = *s.v
	}
	r.Critique = strings.TrimSpace(a.Critique)
	if r.Critique == "" {
		return research.Review{}, malformed(AgentReflection, `"critique" is empty; say in a few sentences what is strong and what is weak`)
	}
	r.Verdict = strings.ToLower(strings.TrimSpace(a.Verdict))
	if !slices.Contains(research.Verdicts, r.Verdict) {
		return research.Review{}, malformed(AgentReflection, "verdict %q is not one of %s", a.Verdict, strings.Join(research.Verdicts, ", "))
	}
	for i, x := range a.Assumptions {
		as := research.Assumption{
			Text:    strings.TrimSpace(x.Text),
			Verdict: strings.ToLower(strings.TrimSpace(x.Verdict)),
			Note:    strings.TrimSpace(x.Note),
		}
		if as.Text == "" {
			return research.Review{}, malformed(AgentReflection, "assumptions[%d].text is empty; state the assumption or remove it", i)
		}
		if !slices.Contains(research.AssumptionVerdicts, as.Verdict) {
			return research.Review{}, malformed(AgentReflection, "assumptions[%d].verdict %q is not one of %s", i, x.Verdict, strings.Join(research.AssumptionVerdicts, ", "))
		}
		r.Assumptions = append(r.Assumptions, as)
	}
	r.References = refs
	return r, nil
}

// Cited is a reference as a model cites it: an id a tool gave, a quote of that source,
// and the claim of the answer the quote supports.
type Cited struct {
	ID    string `json:"id"`
	Quote string `json:"quote"`
	Claim string `json:"claim"`
}

// references reads the sources an answer cites: each needs an id, a quote of at least
// MinQuoteWords words and a claim; the same id is cited once (the first quote kept), and
// at most MaxReferences are.
func references(agent string, cited []Cited) ([]research.Reference, error) {
	var refs []research.Reference
	for i, c := range cited {
		id := strings.TrimSpace(c.ID)
		if id == "" {
			return nil, malformed(agent, "references[%d].id is empty; cite a source by the id a tool result gave it, or leave it out", i)
		}
		if slices.ContainsFunc(refs, func(r research.Reference) bool { return strings.EqualFold(r.ID, id) }) {
			continue
		}
		if len(refs) == MaxReferences {
			return nil, malformed(agent, "more than %d references; keep the %d that matter most", MaxReferences, MaxReferences)
		}
		quote := oneLine(c.Quote)
		if n := utf8.RuneCountInString(quote); n > MaxQuoteLength {
			return nil, malformed(agent, "references[%d].quote is %d characters; at most %d: quote the passage you rely on, not the whole source", i, n, MaxQuoteLength)
		}
		if n := quoteWords(quote); n < MinQuoteWords {
			return nil, malformed(agent, "references[%d].quote has %d words; quote at least %d words of %s, copied word for word from the tool result, so the quote can be checked", i, n, MinQuoteWords, id)
		}
		claim := oneLine(c.Claim)
		switch n := utf8.RuneCountInString(claim); {
		case n == 0:
			return nil, malformed(agent, "references[%d].claim is empty; give the sentence of your answer that %s supports", i, id)
		case n > MaxClaimLength:
			return nil, malformed(agent, "references[%d].claim is %d characters; at most %d: give the one sentence the source supports", i, n, MaxClaimLength)
		}
		refs = append(refs, research.Reference{ID: id, Quote: quote, Claim: claim})
	}
	return refs, nil
}

// quoteWords counts a quote's words: runs of letters or digits, so that "..." and
// punctuation count for nothing.
func quoteWords(s string) int {
	return len(strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
}

// ParseReviewOf reads a reflection agent's review of the given type. A deep verification
// must decompose the hypothesis: without assumptions it is malformed. A review that
// judges citations' support (JudgesSupport) has its judgements read too.
func ParseReviewOf(reviewType string, raw []byte) (research.Review, error) {
	r, err := ParseReview(raw)
	if err != nil {
		return r, err
	}
	if reviewType == research.ReviewDeepVerification && len(r.Assumptions) == 0 {
		return research.Review{}, malformed(AgentReflection, `"assumptions" is missing or empty; a deep verification lists the hypothesis' assumptions, each with the verdict holds, doubtful or fails`)
	}
	if JudgesSupport(reviewType) {
		if r.Support, err = support(raw); err != nil {
			return research.Review{}, err
		}
	}
	return r, nil
}

// support reads a review's judgements of its hypothesis' citations: each names an id and
// one of research.SupportJudgements; an id judged twice keeps its first judgement.
func support(raw []byte) ([]research.SupportJudgement, error) {
	var a struct {
		Support []research.SupportJudgement `json:"citation_support"`
	}
	if err := decode(AgentReflection, raw, &a); err != nil {
		return nil, err
	}
	var out []research.SupportJudgement
	for i, j := range a.Support {
		j.ID, j.Note = strings.TrimSpace(j.ID), research.Shorten(oneLine(j.Note), 300)
		j.Judgement = strings.ToLower(strings.TrimSpace(j.Judgement))
		switch {
		case j.ID == "":
			return nil, malformed(AgentReflection, "citation_support[%d].id is empty; name the citation as it is listed", i)
		case !slices.Contains(research.SupportJudgements, j.Judgement):
			return nil, malformed(AgentReflection, "citation_support[%d].judgement %q is not one of %s", i, j.Judgement, strings.Join(research.SupportJudgements, ", "))
		case slices.ContainsFunc(out, func(o research.SupportJudgement) bool { return o.ID == j.ID }):
			continue // judged already: the first judgement stands
		case len(out) == MaxReferences:
			return nil, malformed(AgentReflection, "more than %d citation judgements; judge each listed citation once", MaxReferences)
		}
		out = append(out, j)
	}
	return out, nil
}

// ParseComparison reads a ranking agent's answer. winner is "A" or "B", whatever case the
// model wrote it in.
func ParseComparison(raw []byte) (winner, reasoning string, err error) {
	var a struct {
		Winner    string `json:"winner"`
		Reasoning string `json:"reasoning"`
	}
	if err := decode(AgentRanking, raw, &a); err != nil {
		return "", "", err
	}
	winner = strings.ToUpper(strings.TrimSpace(a.Winner))
	if winner != "A" && winner != "B" {
		return "", "", malformed(AgentRanking, `winner %q is neither "A" nor "B"; name the better hypothesis by its label`, a.Winner)
	}
	reasoning = strings.TrimSpace(a.Reasoning)
	if reasoning == "" {
		return "", "", malformed(AgentRanking, `"reasoning" is empty; say why the winner better serves the goal`)
	}
	return winner, reasoning, nil
}

// ParsePlan reads the supervisor's research plan.
func ParsePlan(raw []byte) (research.Plan, error) {
	var a struct {
		Preferences []string `json:"preferences"`
		Constraints []string `json:"constraints"`
		Criteria    []string `json:"evaluation_criteria"`
		Summary     string   `json:"summary"`
	}
	if err := decode(AgentSupervisor, raw, &a); err != nil {
		return research.Plan{}, err
	}
	var p research.Plan
	var err error
	if p.Preferences, err = list(AgentSupervisor, "preferences", a.Preferences, 1, MaxPlanItems); err != nil {
		return research.Plan{}, err
	}
	if p.Constraints, err = list(AgentSupervisor, "constraints", a.Constraints, 1, MaxPlanItems); err != nil {
		return research.Plan{}, err
	}
	if p.Criteria, err = list(AgentSupervisor, "evaluation_criteria", a.Criteria, 1, MaxPlanItems); err != nil {
		return research.Plan{}, err
	}
	p.Summary = strings.TrimSpace(a.Summary)
	switch n := utf8.RuneCountInString(p.Summary); {
	case n == 0:
		return research.Plan{}, malformed(AgentSupervisor, `"summary" is empty; state the plan in one sentence`)
	case n > MaxSummaryLength:
		return research.Plan{}, malformed(AgentSupervisor, `"summary" is %d characters; at most %d: one short sentence`, n, MaxSummaryLength)
	}
	return p, nil
}

// ParseAdvocate reads an advocate's turn in a debate: the argument.
func ParseAdvocate(raw []byte) (argument string, err error) {
	var a struct {
		Argument string `json:"argument"`
	}
	if err := decode(AgentRanking, raw, &a); err != nil {
		return "", err
	}
	if argument = strings.TrimSpace(a.Argument); argument == "" {
		return "", malformed(AgentRanking, `"argument" is empty; make the case for your hypothesis`)
	}
	return argument, nil
}

// ParseJudgement reads the judge's turn, the last of a debate. winner is "A" or "B",
// whatever case the model wrote it in.
func ParseJudgement(raw []byte) (argument, winner, reasoning string, err error) {
	var a struct {
		Argument  string `json:"argument"`
		Winner    string `json:"winner"`
		Reasoning string `json:"reasoning"`
	}
	if err := decode(AgentRanking, raw, &a); err != nil {
		return "", "", "", err
	}
	if argument = strings.TrimSpace(a.Argument); argument == "" {
		return "", "", "", malformed(AgentRanking, `"argument" is empty; sum the debate up`)
	}
	winner = strings.ToUpper(strings.TrimSpace(a.Winner))
	if winner != "A" && winner != "B" {
		return "", "", "", malformed(AgentRanking, `winner %q is neither "A" nor "B"; name the better hypothesis by its label`, a.Winner)
	}
	if reasoning = strings.TrimSpace(a.Reasoning); reasoning == "" {
		return "", "", "", malformed(AgentRanking, `"reasoning" is empty; say why the winner better serves the goal`)
	}
	return argument, winner, reasoning, nil
}

// ParseMetaReview reads the meta-review agent's answer. The caller sets Round.
//
// It keeps the well-formed delegations (see CheckDelegations) but cannot tell whether
// their hypotheses are the round's; ParseMetaReviewFor can, and a caller that has the
// request should use it.
func ParseMetaReview(raw []byte) (research.MetaReview, error) {
	return parseMetaReview(raw, nil)
}

// ParseMetaReviewFor reads the meta-review agent's answer to req, keeping only the
// delegations on hypotheses req names (see RoundHypotheses). The caller sets Round.
func ParseMetaReviewFor(req research.MetaReviewRequest, raw []byte) (research.MetaReview, error) {
	ids := RoundHypotheses(req)
	return parseMetaReview(raw, &ids)
}

// parseMetaReview reads a meta-review; known, when not nil, lists the hypotheses that
// delegations may name.
func parseMetaReview(raw []byte, known *[]string) (research.MetaReview, error) {
	var a struct {
		Critiques *[]string `json:"critiques"`
		Strengths *[]string `json:"strengths"`
		Feedback  string    `json:"feedback"`
		// Raw, so that a badly shaped delegation costs only itself (see delegations).
		Delegations json.RawMessage `json:"delegations"`
	}
	if err := decode(AgentMetaReview, raw, &a); err != nil {
		return research.MetaReview{}, err
	}
	var m research.MetaReview
	var err error
	for _, f := range []struct {
		name string
		v    *[]string
		dst  *[]string
	}{{"critiques", a.Critiques, &m.Critiques}, {"strengths", a.Strengths, &m.Strengths}} {
		if f.v == nil {
			return research.MetaReview{}, malformed(AgentMetaReview, "%q is missing; give a list, empty if nothing recurs", f.name)
		}
		if *f.dst, err = list(AgentMetaReview, f.name, *f.v, 0, MaxMetaItems); err != nil {
			return research.MetaReview{}, err
		}
	}
	if m.Feedback = strings.TrimSpace(a.Feedback); m.Feedback == "" {
		return research.MetaReview{}, malformed(AgentMetaReview, `"feedback" is empty; write a paragraph to the generation and reflection agents`)
	}
	m.Delegations = delegations(a.Delegations, known)
	return m, nil
}

// delegations reads a meta-review's "delegations" leniently: the critique is worth
// keeping whatever the recommendations look like, and a repair turn for a bad one would
// cost more than the subagent is worth. So a field that is missing or not an array means
// none, and an item that is not a delegation object is dropped, as CheckDelegations drops
// the rest of the bad ones.
func delegations(raw json.RawMessage, known *[]string) []research.Delegation {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var ds []research.Delegation
	for _, it := range items {
		var d research.Delegation
		if json.Unmarshal(it, &d) == nil {
			ds = append(ds, d)
		}
	}
	return checkDelegations(ds, known)
}

// CheckDelegations returns the delegations worth starting, tidied: it drops those with a
// task not in research.DelegationTasks, with an empty hypothesis id or one not among
// hypotheses, and repeats of an earlier one, and then keeps the first MaxDelegations. A
// blank reason is filled in, and a long one shortened to MaxReasonLength characters,
// since it becomes the subagent's intention. It returns nil when none is left.
func CheckDelegations(ds []research.Delegation, hypotheses []string) []research.Delegation {
	return checkDelegations(ds, &hypotheses)
}

// checkDelegations is CheckDelegations; a nil known skips the check of the ids.
func checkDelegations(ds []research.Delegation, known *[]string) []research.Delegation {
	var out []research.Delegation
	for _, d := range ds {
		d.Task = strings.ToLower(strings.TrimSpace(d.Task))
		d.Hypothesis = strings.TrimSpace(d.Hypothesis)
		d.Reason = oneLine(d.Reason)
		switch {
		case !slices.Contains(research.DelegationTasks, d.Task),
			d.Hypothesis == "",
			known != nil && !slices.Contains(*known, d.Hypothesis),
			slices.ContainsFunc(out, func(o research.Delegation) bool { return o.Task == d.Task && o.Hypothesis == d.Hypothesis }):
			continue
		}
		if d.Reason == "" {
			d.Reason = defaultReasons[d.Task] + d.Hypothesis
		}
		if utf8.RuneCountInString(d.Reason) > MaxReasonLength {
			d.Reason = string([]rune(d.Reason)[:MaxReasonLength-1]) + "…"
		}
		if out = append(out, d); len(out) == MaxDelegations {
			break
		}
	}
	return out
}

// defaultReasons stand in for a reason the model left blank, followed by the hypothesis id.
var defaultReasons = map[string]string{
	research.DelegateVerify: "The meta-review asks for a deep verification of the assumptions of ",
	research.DelegateEvolve: "The meta-review asks for an evolution line of its own from ",
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

// list trims the items of a list field and checks that none is blank and that there are
// from least to most of them.
func list(agent, field string, items []string, least, most int) ([]string, error) {
	out := make([]string, 0, len(items))
	for i, it := range items {
		if it = strings.TrimSpace(it); it == "" {
			return nil, malformed(agent, "%s[%d] is empty; remove it or write it out", field, i)
		}
		out = append(out, it)
	}
	switch {
	case len(out) < least:
		return nil, malformed(agent, "%q has %d items; give at least %d", field, len(out), least)
	case len(out) > most:
		return nil, malformed(agent, "%q has %d items; at most %d: keep the most important", field, len(out), most)
	}
	return out, nil
}

func malformed(agent, format string, args ...any) *MalformedError {
	return &MalformedError{Agent: agent, Problem: fmt.Sprintf(format, args...)}
}

// decode finds the JSON object in a model's answer and unmarshals it into v.
//
// Models often wrap the object in a ```json fence or a sentence of prose. Rather than
// strip fences by pattern, decode tries each '{' in turn and takes the first complete
// JSON value that starts there; whatever follows it is ignored. If the value starting at
// a '{' runs off the end of the answer, the answer was cut short: every later '{' lies
// inside that unfinished object, so decode stops and reports the truncation instead of
// mistaking a nested object for the answer.
func decode(agent string, raw []byte, v any) error {
	var first error
	for i := 0; i < len(raw); i++ {
		j := bytes.IndexByte(raw[i:], '{')
		if j < 0 {
			break
		}
		i += j
		var obj json.RawMessage
		err := json.NewDecoder(bytes.NewReader(raw[i:])).Decode(&obj)
		if err == nil {
			return unmarshal(agent, obj, v)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return malformed(agent, "the JSON object is truncated after %d bytes; answer again with the complete object", len(raw)-i)
		}
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return malformed(agent, "no valid JSON object found (%v); answer with one JSON object and nothing else", first)
	}
	return malformed(agent, "the answer contains no JSON object; answer with one JSON object and nothing else")
}

// unmarshal decodes obj into v, turning a type mismatch into a message that names the field.
func unmarshal(agent string, obj json.RawMessage, v any) error {
	err := json.Unmarshal(obj, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return malformed(agent, "%q is a JSON %s; the schema wants %s", te.Field, te.Value, jsonKind(te.Type))
	default:
		return malformed(agent, "%v; answer with one JSON object matching the schema", err)
	}
}

// jsonKind names a Go type the way the schema does, since the message is for a model.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	default:
		return "an object"
	}
}
