package simulator

// Planted citations: the ways a grounded answer cites what it read, honest and not, so
// that the citation check and the reviews' support judgements are measured against a
// truth that is known (the simulator's Truth). Honest citations copy a sentence
// word for word, or let its case, spacing, punctuation and hyphenation drift, or leave a
// marked middle out; dishonest ones are what real models do: an invented or near-miss id,
// a quote of another record, a passage with its negation, a number or a direction
// changed, two passages spliced, the citing text's own words, a true quote cited for a
// claim it does not support, or a true quote of a full text cited at another page.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	citecheck "github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/passage"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

var (
	// honestKinds and dishonestKinds are the kinds the simulator plants. An irrelevant
	// citation is dishonest: its quote is true, but it does not support its claim.
	honestKinds = []string{PlantedVerbatim, PlantedDrift, PlantedElided,
		PlantedSpelling, PlantedGreek, PlantedNumberWords, PlantedNotation,
		PlantedFragment}
	dishonestKinds = []string{
		PlantedInventedID, PlantedNearMissID, PlantedOtherRecord,
		PlantedNegated, PlantedNumber, PlantedDirection,
		PlantedSpliced, PlantedOwnText, PlantedIrrelevant, PlantedWrongPage,
		PlantedHedgeDropped, PlantedCausal, PlantedQuantifier, PlantedEntity,
		PlantedSpecies, PlantedUnit, PlantedSign, PlantedDecimal,
		PlantedContextDropped, PlantedElidedNegation, PlantedElidedDistant,
	}
	// easyKinds are what Offline plants when Plant is nil: quotes word for word, and
	// made-up ones any check catches (an id no tool returned, the citing text's own
	// words), as the simulator did before it knew the other kinds.
	easyKinds = []string{PlantedVerbatim, PlantedInventedID, PlantedOwnText}
)

// PlantKinds are every kind of citation the simulator can plant, honest ones first.
func PlantKinds() []string { return slices.Concat(honestKinds, dishonestKinds) }

// ParseKinds reads a comma-separated list of kinds of citation ("all" for every one).
func ParseKinds(s string) ([]string, error) {
	if strings.TrimSpace(s) == "all" {
		return PlantKinds(), nil
	}
	var kinds []string
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		switch {
		case k == "":
			continue
		case !slices.Contains(PlantKinds(), k):
			return nil, fmt.Errorf("unknown kind of citation %q; the kinds are all, or some of %s", k, strings.Join(PlantKinds(), ", "))
		case !slices.Contains(kinds, k):
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("no kinds of citation in %q; name some of %s, or all", s, strings.Join(PlantKinds(), ", "))
	}
	return kinds, nil
}

// plantedRef is a reference a grounded answer cites (with its claim), and its hidden
// truth.
type plantedRef struct {
	prompt.ModelRef
	kind string
}

// kinds are the honest and dishonest kinds Offline plants.
func (o *Offline) kinds() (honest, dishonest []string) {
	kinds := o.Plant
	if kinds == nil {
		kinds = easyKinds
	}
	for _, k := range kinds {
		switch {
		case slices.Contains(honestKinds, k):
			honest = append(honest, k)
		case slices.Contains(dishonestKinds, k):
			dishonest = append(dishonest, k)
		}
	}
	if len(honest) == 0 {
		honest = []string{PlantedVerbatim}
	}
	return honest, dishonest
}

// plant cites source s as the kind says, for one of the claims (sentences of the citing
// text); false when s does not allow that kind (no sentence with a number to change, no
// other record to quote, ...).
func plant(rng *rand.Rand, kind string, s source, r reading, claims []string) (plantedRef, bool) {
	c := plantedRef{ModelRef: prompt.ModelRef{ID: s.id, Passage: s.passage}, kind: kind}
	if len(claims) == 0 {
		return c, false // the parser refuses a reference without its claim
	}
	c.Claim = pick(rng, claims)
	ss := sentences(s.text)
	switch kind {
	case PlantedVerbatim, PlantedIrrelevant:
		c.Quote = sentence(rng, s.text)
	case PlantedDrift:
		c.Quote = drift(rng, sentence(rng, s.text))
	case PlantedElided:
		c.Quote = elide(rng, ss)
	case PlantedInventedID:
		c.ID, c.Quote, c.Passage = fmt.Sprintf("10.5555/cosci.%08x", rng.Uint32()), sentence(rng, s.text), ""
	case PlantedNearMissID:
		c.ID, c.Quote, c.Passage = nearMiss(rng, s.id), sentence(rng, s.text), ""
		if c.ID == "" || slices.ContainsFunc(r.sources, func(o source) bool { return citecheck.MatchID(o.id, c.ID) }) {
			return c, false
		}
	case PlantedOtherRecord:
		var others []source
		for _, o := range r.sources {
			if o.id != s.id && s.search >= 0 && o.search == s.search && len(sentences(o.text)) > 0 {
				others = append(others, o)
			}
		}
		if len(others) == 0 {
			return c, false
		}
		c.Quote = sentence(rng, others[rng.IntN(len(others))].text)
		if holds(s.text, c.Quote) {
			return c, false
		}
	case PlantedNegated:
		c.Quote = changeOne(rng, ss, negate)
	case PlantedNumber:
		c.Quote = changeOne(rng, ss, func(s string) string { return renumber(rng, s) })
	case PlantedDirection:
		c.Quote = changeOne(rng, ss, flip)
	case PlantedSpliced:
		c.Quote = splice(rng, ss)
	case PlantedOwnText:
		c.Quote = c.Claim
		if holds(s.text, c.Quote) {
			return c, false
		}
	case PlantedWrongPage:
		// A true quote of one passage, cited at another page of the same paper: a passage
		// of it the turn read on another page, or else the next page's first passage,
		// which the turn did not read (a page number slipped).
		if s.passage == "" || s.page == 0 {
			return c, false
		}
		var others []source
		for _, o := range r.sources {
			if o.id == s.id && o.passage != "" && o.page != s.page {
				others = append(others, o)
			}
		}
		c.Quote = sentence(rng, s.text)
		if len(others) == 0 {
			c.Passage = passage.At(s.id, s.page+1, 1).String()
			break
		}
		c.Passage = others[rng.IntN(len(others))].passage
		for _, o := range others {
			if o.passage == c.Passage && holds(o.text, c.Quote) {
				return c, false
			}
		}
	case PlantedFragment:
		c.Quote = fragment(rng, ss)
	case PlantedContextDropped:
		c.Quote = contextDropped(rng, ss)
	case PlantedElidedNegation:
		c.Quote = elideNegation(rng, ss)
	case PlantedElidedDistant:
		c.Quote = distant(rng, ss)
	default:
		change, ok := rewrites[kind]
		if !ok {
			return c, false
		}
		c.Quote = changeOne(rng, ss, change)
	}
	n := utf8.RuneCountInString(c.Quote)
	return c, n >= minQuote && n <= prompt.MaxQuoteLength && len(wordsOf(c.Quote)) >= prompt.MinQuoteWords
}

// minQuote is the shortest quote the simulator writes: a passage, not a word.
const minQuote = 30

// sentences are a text's sentences a quote may be: long enough to say something, short
// enough for the parser.
func sentences(text string) []string {
	var ss []string
	for _, s := range strings.SplitAfter(strings.Join(strings.Fields(text), " "), ". ") {
		if s = strings.TrimSpace(s); len(s) >= minQuote && len(s) <= prompt.MaxQuoteLength {
			ss = append(ss, s)
		}
	}
	return ss
}

// holds says whether a text holds a quote's words in a row, in any case and punctuation.
func holds(text, quote string) bool {
	q := strings.Join(wordsOf(quote), " ")
	return q != "" && strings.Contains(" "+strings.Join(wordsOf(text), " ")+" ", " "+q+" ")
}

func wordsOf(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// drift changes a quote's case, punctuation or hyphenation, never its words, in ways
// that survive the parser (which folds spacing): "" when none changes it.
func drift(rng *rand.Rand, q string) string {
	ops := []func(string) string{
		func(s string) string {
			r, n := utf8.DecodeRuneInString(s)
			return string(unicode.ToLower(r)) + s[n:]
		},
		strings.ToLower,
		func(s string) string { return strings.ReplaceAll(s, ",", "") },
		strings.NewReplacer("'", "’").Replace,
		strings.NewReplacer("–", "-", "—", "-", "’", "'", "(", "", ")", "").Replace,
		func(s string) string { // a long word hyphenated at a line break
			ws := strings.Split(s, " ")
			for _, i := range rng.Perm(len(ws)) {
				if w := []rune(ws[i]); len(w) >= 9 && strings.IndexFunc(ws[i], func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
					at := 3 + rng.IntN(len(w)-5)
					ws[i] = string(w[:at]) + "-\n" + string(w[at:])
					break
				}
			}
			return strings.Join(ws, " ")
		},
	}
	d := q
	for range 1 + rng.IntN(2) {
		d = ops[rng.IntN(len(ops))](d)
	}
	for _, op := range ops {
		if d != q {
			break
		}
		d = op(q)
	}
	if d == q {
		return ""
	}
	return d
}

// elide leaves a middle out of a long sentence, marked, that governs nothing.
func elide(rng *rand.Rand, ss []string) string {
	mark := pick(rng, []string{" ... ", " … ", " [...] "})
	for _, i := range rng.Perm(len(ss)) {
		ws := strings.Split(ss[i], " ")
		if len(ws) >= 12 {
			head := 4 + rng.IntN(len(ws)-11)
			skip := 2 + rng.IntN(len(ws)-head-5)
			gap := ws[head : head+skip]
			if last := gap[len(gap)-1]; governing.MatchString(strings.Join(gap, " ")) || slices.ContainsFunc(gap, qualifying) ||
				last == "to" || last == "that" || last == "of" || last == "as" {
				continue
			}
			return strings.Join(ws[:head], " ") + mark + strings.Join(ws[head+skip:], " ")
		}
	}
	return "" // no sentence long enough to leave words out of
}

// qualifying says whether a word qualifies what it modifies ("partly", "modestly"): an
// honest elision does not leave one out.
func qualifying(w string) bool { return strings.HasSuffix(strings.TrimRight(w, ".,;:"), "ly") }

// nearMiss is an id cut short or with one character changed, as a careless model copies
// it: "…tau.01" for "…tau.010", "kim2021" for "kim2021bin1".
func nearMiss(rng *rand.Rand, id string) string {
	rs := []rune(id)
	if len(rs) < 6 {
		return ""
	}
	if rng.IntN(2) == 0 {
		return string(rs[:len(rs)-1-rng.IntN(2)])
	}
	for _, i := range rng.Perm(len(rs)) {
		switch c := rs[i]; {
		case c >= '0' && c <= '9':
			rs[i] = '0' + (c-'0'+1+rune(rng.IntN(8)))%10
			return string(rs)
		case c >= 'a' && c <= 'z':
			rs[i] = 'a' + (c-'a'+1+rune(rng.IntN(24)))%26
			return string(rs)
		}
	}
	return ""
}

// changeOne quotes one of the sentences with the change made, or "" if none allows it.
func changeOne(rng *rand.Rand, ss []string, change func(string) string) string {
	for _, i := range rng.Perm(len(ss)) {
		if c := change(ss[i]); c != ss[i] {
			return c
		}
	}
	return ""
}

// renumber changes one digit of a number that stands on its own (not part of a name such
// as P301S or IL-6).
func renumber(rng *rand.Rand, s string) string {
	rs := []rune(s)
	var at []int
	for i, r := range rs {
		if r < '0' || r > '9' {
			continue
		}
		j := i // the number's first rune
		for j > 0 && (unicode.IsDigit(rs[j-1]) || rs[j-1] == '.' || rs[j-1] == ',') {
			j--
		}
		if j > 0 && (unicode.IsLetter(rs[j-1]) || rs[j-1] == '-') {
			continue
		}
		k := i // after the number
		for k < len(rs) && (unicode.IsDigit(rs[k]) || (rs[k] == '.' || rs[k] == ',') && k+1 < len(rs) && unicode.IsDigit(rs[k+1])) {
			k++
		}
		if k < len(rs) && unicode.IsLetter(rs[k]) {
			continue
		}
		at = append(at, i)
	}
	if len(at) == 0 {
		return renumberWord(s)
	}
	i := at[rng.IntN(len(at))]
	rs[i] = '0' + (rs[i]-'0'+1+rune(rng.IntN(8)))%10
	return string(rs)
}

// numberWords are numbers as abstracts spell them, and others.
var numberWords = map[string]string{
	"two": "three", "three": "four", "four": "five", "five": "six", "six": "seven", "seven": "eight",
	"eight": "nine", "nine": "ten", "ten": "twelve", "twenty": "thirty", "thirty": "forty", "forty": "sixty",
	"fifty": "seventy", "sixty": "eighty", "half": "a third", "twice": "three times", "Two": "Three", "Three": "Four",
}

// renumberWord changes the first number a sentence spells out.
func renumberWord(s string) string { return replaceFirst(s, numberWords) }

// splice joins two passages that are not next to each other, with no mark between them.
func splice(rng *rand.Rand, ss []string) string {
	switch {
	case len(ss) >= 3:
		i := rng.IntN(len(ss) - 2)
		return ss[i] + " " + ss[i+2+rng.IntN(len(ss)-i-2)]
	case len(ss) == 2:
		a, b := strings.Split(ss[0], " "), strings.Split(ss[1], " ")
		if len(a) >= 8 && len(b) >= 8 {
			return strings.Join(a[:len(a)/2], " ") + " " + strings.Join(b[len(b)/2:], " ")
		}
	}
	for _, s := range ss {
		if ws := strings.Split(s, " "); len(ws) >= 13 {
			return strings.Join(ws[:5], " ") + " " + strings.Join(ws[9:], " ")
		}
	}
	return ""
}

// claimsOf are the sentences of a citing text, each a claim a reference may support; the
// text itself, shortened, if it has no sentence of a claim's length.
func claimsOf(texts ...string) []string {
	var cs []string
	for _, t := range texts {
		for _, s := range strings.SplitAfter(strings.Join(strings.Fields(t), " "), ". ") {
			if s = strings.TrimSpace(s); utf8.RuneCountInString(s) >= minQuote && utf8.RuneCountInString(s) <= prompt.MaxClaimLength {
				cs = append(cs, s)
			}
		}
	}
	if len(cs) == 0 && len(texts) > 0 && strings.TrimSpace(texts[0]) != "" {
		cs = append(cs, research.Shorten(strings.Join(strings.Fields(texts[0]), " "), prompt.MaxClaimLength))
	}
	return cs
}

// supportTruth is whether a reference's source supports its claim, as the simulator
// planted it: a true quote cited for another claim is irrelevant to it; a source whose
// negation, direction or sign the quote reversed says the opposite of the claim; one
// whose hedge, limitation or governing context the quote dropped supports only a weaker
// claim; every other quote was written to fit its claim.
func supportTruth(kind string) string {
	switch kind {
	case PlantedIrrelevant:
		return research.SupportIrrelevant
	case PlantedNegated, PlantedDirection, PlantedSign, PlantedElidedNegation:
		return research.SupportContradicts
	case PlantedHedgeDropped, PlantedCausal, PlantedQuantifier, PlantedContextDropped:
		return research.SupportOverstates
	}
	return research.SupportSupports
}

// supportNotes are what a reviewer says of each judgement.
var supportNotes = map[string]string{
	research.SupportSupports:    "the passage states what the claim rests on",
	research.SupportOverstates:  "the passage supports only a weaker claim: the quote drops what qualifies it",
	research.SupportContradicts: "the source says the opposite of what the claim needs",
	research.SupportIrrelevant:  "the passage is about something other than the claim",
}

// judgeSupport is a deep verification's or a full review's judgement of whether each of
// the hypothesis' references supports its claim: the truth the simulator planted (in its
// Truth), misjudged at rate o.SupportError (a supporting quote then seen as irrelevant or
// contradicting, any other as supporting). Other reviews judge nothing.
func (o *Offline) judgeSupport(rng *rand.Rand, reviewType string, h research.Hypothesis) []research.SupportJudgement {
	if reviewType != research.ReviewFull && reviewType != research.ReviewDeepVerification {
		return nil
	}
	var js []research.SupportJudgement
	for _, ref := range h.References {
		kind, _ := o.Planted().Hypothesis(h, ref)
		j := supportTruth(kind)
		if o.SupportError > 0 && rng.Float64() < o.SupportError {
			switch j {
			case research.SupportSupports:
				j = pick(rng, []string{research.SupportIrrelevant, research.SupportContradicts})
			default:
				j = research.SupportSupports
			}
		}
		js = append(js, research.SupportJudgement{ID: ref.ID, Judgement: j, Note: supportNotes[j]})
	}
	return js
}
