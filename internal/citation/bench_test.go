package citation_test

// The citation benchmark: labelled citations of real-shaped tool results, made by the
// ways models really get citations wrong (and the ways honest ones drift), each run
// through Check. Run it with
//
//	go test ./internal/citation -run TestCitationKinds -v
//
// and, to read what it makes, -citation.sample N prints N citations of each kind.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/prompt"
	"github.com/cosci-dev/cosci/internal/research"
)

var sample = flag.Int("citation.sample", 0, "print this many labelled citations of each kind")

// kindEmpty is the benchmark's own kind: an empty or very short quote, which the parser
// refuses before any check sees it.
const kindEmpty = "empty"

// benchKinds are the kinds the benchmark makes, honest ones first.
var benchKinds = []string{
	research.PlantedVerbatim, research.PlantedDrift, research.PlantedElided,
	research.PlantedIrrelevant,
	research.PlantedInventedID, research.PlantedNearMissID, research.PlantedOtherRecord,
	research.PlantedNegated, research.PlantedNumber, research.PlantedDirection,
	research.PlantedSpliced, research.PlantedOwnText, kindEmpty,
}

// perKind is how many citations of each kind the benchmark makes.
const perKind = 40

// Targets: the share of each kind the check flags.
const (
	minDishonestFlagged = 0.95
	maxHonestFlagged    = 0.02
)

// record is one source as a tool result gives it.
type record struct {
	file, topic string
	ids         []string // the ids the result gives it: its id first, then its DOI, key, PMID, PMCID
	title, body string   // the body is a search hit's snippet or a record's abstract
	sentences   []string // the body's, word for word
}

func (r record) text() string { return r.title + " " + r.body }

// passages are what may be quoted of it: the title and the body's sentences.
func (r record) passages() []string {
	var ps []string
	if words(r.title) >= 6 {
		ps = append(ps, r.title)
	}
	return append(ps, r.sentences...)
}

type fixture struct {
	files   map[string]string // name -> content
	digests map[string]string // name -> the digest the audit trail would give it
	records []record
	claims  map[string][]string // topic -> the sentences of its citing hypothesis
	topics  []string
}

// records is what Check reads: the audit trail's records by digest.
func (f *fixture) trail() map[string]string {
	m := map[string]string{}
	for name, content := range f.files {
		m[f.digests[name]] = content
	}
	return m
}

func loadFixture(tb testing.TB) *fixture {
	tb.Helper()
	dir := filepath.Join("testdata", "bench")
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) == 0 {
		tb.Fatalf("no fixture in %s: %v", dir, err)
	}
	f := &fixture{files: map[string]string{}, digests: map[string]string{}, claims: map[string][]string{}}
	for _, path := range names {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		name := filepath.Base(path)
		if name == "hypotheses.json" {
			var hs map[string]struct{ Statement, Rationale string }
			if err := json.Unmarshal(b, &hs); err != nil {
				tb.Fatalf("%s: %v", name, err)
			}
			for topic, h := range hs {
				f.claims[topic] = append(splitSentences(h.Statement), splitSentences(h.Rationale)...)
			}
			continue
		}
		sum := sha256.Sum256(b)
		f.files[name], f.digests[name] = string(b), hex.EncodeToString(sum[:])
		recs, err := parseResult(b)
		if err != nil || len(recs) == 0 {
			tb.Fatalf("%s: %v (%d records)", name, err, len(recs))
		}
		topic, _, _ := strings.Cut(name, "-")
		for _, r := range recs {
			r.file, r.topic, r.sentences = name, topic, splitSentences(r.body)
			f.records = append(f.records, r)
		}
	}
	for topic := range f.claims {
		f.topics = append(f.topics, topic)
	}
	slices.Sort(f.topics)
	slices.SortStableFunc(f.records, func(a, b record) int { return strings.Compare(a.file, b.file) })
	return f
}

// parseResult reads the records of one tool result, in the shapes the fixture holds.
func parseResult(b []byte) ([]record, error) {
	var v struct {
		// cosci's search
		Results []struct{ ID, DOI, Key, Title, Snippet string } `json:"results"`
		// cosci's fetch
		ID, DOI, Key, Title, Abstract string
		// Europe PMC
		ResultList *struct {
			Result []struct {
				ID, PMID, PMCID, DOI, Title, AbstractText string
			} `json:"result"`
		} `json:"resultList"`
		// PubMed esummary
		Header *struct{ Type string } `json:"header"`
		Result json.RawMessage        `json:"result"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	var out []record
	switch {
	case v.Results != nil:
		for _, h := range v.Results {
			out = append(out, record{ids: ids(h.ID, h.DOI, h.Key), title: h.Title, body: h.Snippet})
		}
	case v.ResultList != nil:
		for _, h := range v.ResultList.Result {
			out = append(out, record{ids: ids(h.ID, h.PMID, h.PMCID, h.DOI), title: h.Title, body: h.AbstractText})
		}
	case v.Header != nil && v.Header.Type == "esummary":
		var res map[string]json.RawMessage
		if err := json.Unmarshal(v.Result, &res); err != nil {
			return nil, err
		}
		var uids []string
		if err := json.Unmarshal(res["uids"], &uids); err != nil {
			return nil, err
		}
		for _, uid := range uids {
			var s struct {
				Title      string
				ArticleIDs []struct{ IDType, Value string } `json:"articleids"`
			}
			if err := json.Unmarshal(res[uid], &s); err != nil {
				return nil, err
			}
			r := record{ids: []string{uid}, title: s.Title}
			for _, a := range s.ArticleIDs {
				r.ids = ids(append(r.ids, a.Value)...)
			}
			out = append(out, r)
		}
	case v.ID != "" && v.Abstract != "":
		out = append(out, record{ids: ids(v.ID, v.DOI, v.Key), title: v.Title, body: v.Abstract})
	default:
		return nil, fmt.Errorf("not a tool result shape the benchmark knows")
	}
	return out, nil
}

// ids are the distinct non-empty ids, in order.
func ids(list ...string) []string {
	var out []string
	for _, id := range list {
		if id != "" && !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, id) }) {
			out = append(out, id)
		}
	}
	return out
}

// splitSentences splits a text after each full stop followed by a space and a capital.
func splitSentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i+2 < len(text); i++ {
		if text[i] == '.' && text[i+1] == ' ' {
			if r, _ := utf8.DecodeRuneInString(text[i+2:]); unicode.IsUpper(r) {
				out = append(out, text[start:i+1])
				start = i + 2
			}
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// Labels are checked by construction with a normalisation of this file's own, apart
// from the package's: NFKC, lower case, a line-break hyphen joined, then letters and
// digits only.

var lineBreakHyphen = regexp.MustCompile(`(\pL)-\s+(\pL)`)

// folded are a text's words as this benchmark compares them.
func folded(s string) []string {
	s = strings.ReplaceAll(norm.NFKC.String(s), "\u00ad", "")
	s = lineBreakHyphen.ReplaceAllString(s, "$1$2")
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func words(s string) int { return len(folded(s)) }

// within says whether a quote's words run in the text, in order and together.
func within(text, quote string) bool {
	q := folded(quote)
	return len(q) > 0 && strings.Contains(" "+strings.Join(folded(text), " ")+" ", " "+strings.Join(q, " ")+" ")
}

// nowhere says the quote's letters and digits are not in the text in a row, whatever
// the spacing: the stronger test a dishonest quote must pass.
func nowhere(text, quote string) bool {
	return !strings.Contains(strings.Join(folded(text), ""), strings.Join(folded(quote), ""))
}

var ellipsis = regexp.MustCompile(`\s*(\[\.\.\.\]|\[…\]|\.\.\.|…)\s*`)

// elidedWithin says whether each piece of a quote with elisions runs in the text, in order.
func elidedWithin(text, quote string) bool {
	t := " " + strings.Join(folded(text), " ") + " "
	at, pieces := 0, 0
	for _, p := range ellipsis.Split(quote, -1) {
		if len(folded(p)) == 0 {
			continue
		}
		i := strings.Index(t[at:], " "+strings.Join(folded(p), " ")+" ")
		if i < 0 {
			return false
		}
		at += i + 1
		pieces++
	}
	return pieces > 0
}

// labelled is one citation of the benchmark: what the model wrote and what it is.
type labelled struct {
	kind  string
	id    string // as the model cites it
	quote string // as the model writes it, before the parser
	claim string
	file  string // the tool result the turn read it from; "" for none
	how   string // how it was made, for the sample
}

// maker makes one citation of a kind, or false when the draw does not allow it.
type maker func(g *generator) (labelled, bool)

type generator struct {
	f   *fixture
	rng *rand.Rand
}

func (g *generator) pick(n int) int { return g.rng.IntN(n) }

func pickOf[T any](g *generator, xs []T) T { return xs[g.pick(len(xs))] }

// record is a record of the fixture with at least that many sentences in its body.
func (g *generator) record(minSentences int) record {
	for {
		r := pickOf(g, g.f.records)
		if len(r.sentences) >= minSentences {
			return r
		}
	}
}

// citeAs is an id of the record as a model would write it: mostly its id, sometimes its
// other ids, and a DOI or PMID in the forms people write them.
func (g *generator) citeAs(r record) string {
	id := r.ids[0]
	if g.pick(4) == 0 {
		id = pickOf(g, r.ids)
	}
	switch {
	case strings.HasPrefix(id, "10.") && g.pick(3) == 0:
		return pickOf(g, []string{"https://doi.org/" + id, "doi:" + id, strings.ToUpper(id)})
	case isDigits(id) && g.pick(3) == 0:
		return "PMID:" + id
	}
	return id
}

func isDigits(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// claim is a sentence of the topic's citing hypothesis.
func (g *generator) claim(topic string) string { return pickOf(g, g.f.claims[topic]) }

// claimFor is the sentence of the topic's citing hypothesis that shares most words with
// the quote: what a model would cite it for.
func (g *generator) claimFor(topic, quote string) string {
	best, most := []string{}, -1
	for _, c := range g.f.claims[topic] {
		switch n := overlap(c, quote); {
		case n > most:
			best, most = []string{c}, n
		case n == most:
			best = append(best, c)
		}
	}
	return pickOf(g, best)
}

// unrelatedClaim is the sentence of another topic's hypothesis that shares fewest words
// with the quote: a claim the quote cannot support.
func (g *generator) unrelatedClaim(topic, quote string) string {
	var best []string
	fewest := 1 << 30
	for _, t := range g.f.topics {
		if t == topic {
			continue
		}
		for _, c := range g.f.claims[t] {
			switch n := overlap(c, quote); {
			case n < fewest:
				best, fewest = []string{c}, n
			case n == fewest:
				best = append(best, c)
			}
		}
	}
	return pickOf(g, best)
}

// overlap counts the words of four letters or more two texts share.
func overlap(a, b string) int {
	in := map[string]bool{}
	for _, w := range folded(a) {
		if utf8.RuneCountInString(w) >= 4 {
			in[w] = true
		}
	}
	n := 0
	for _, w := range slices.Compact(slices.Sorted(slices.Values(folded(b)))) {
		if in[w] {
			n++
		}
	}
	return n
}

// tokens are a passage split at its spaces (not its non-breaking ones), so that joining a
// run of them gives the passage's own text.
func tokens(s string) []string { return strings.Split(s, " ") }

// verbatimOf is a passage of the record word for word: a sentence, a clause of one, two
// sentences in a row, or the title.
func (g *generator) verbatimOf(r record) (string, string) {
	ps := r.passages()
	switch n := g.pick(10); {
	case n < 5 || len(r.sentences) == 0:
		return pickOf(g, ps), "a sentence"
	case n < 8:
		s := tokens(pickOf(g, r.sentences))
		if len(s) < 8 {
			return strings.Join(s, " "), "a sentence"
		}
		k := 6 + g.pick(len(s)-6)
		at := g.pick(len(s) - k + 1)
		run := s[at : at+k]
		if last := run[len(run)-1]; strings.Count(last, "(") > strings.Count(last, ")") {
			run = run[:len(run)-1] // not "… by 51.5% (n"
		}
		return strings.Join(run, " "), "a clause"
	case len(r.sentences) >= 2:
		i := g.pick(len(r.sentences) - 1)
		return r.sentences[i] + " " + r.sentences[i+1], "two sentences in a row"
	}
	return r.title, "the title"
}

func (g *generator) makers() map[string]maker {
	return map[string]maker{
		research.PlantedVerbatim: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q, how := g.verbatimOf(r)
			return labelled{id: g.citeAs(r), quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: how}, true
		},
		research.PlantedDrift: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q, how := g.verbatimOf(r)
			d, ops := g.drift(q)
			return labelled{id: g.citeAs(r), quote: d, claim: g.claimFor(r.topic, q), file: r.file, how: how + ", " + ops}, d != q
		},
		research.PlantedElided: (*generator).elided,
		research.PlantedIrrelevant: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q, how := g.verbatimOf(r)
			return labelled{id: g.citeAs(r), quote: q, claim: g.unrelatedClaim(r.topic, q), file: r.file, how: how + ", for a claim of another topic"}, true
		},
		research.PlantedInventedID:  (*generator).inventedID,
		research.PlantedNearMissID:  (*generator).nearMissID,
		research.PlantedOtherRecord: (*generator).otherRecord,
		research.PlantedNegated:     func(g *generator) (labelled, bool) { return g.changed(negate, "negated") },
		research.PlantedNumber:      func(g *generator) (labelled, bool) { return g.changed(g.renumber, "a number changed") },
		research.PlantedDirection:   func(g *generator) (labelled, bool) { return g.changed(flipDirection, "a direction flipped") },
		research.PlantedSpliced:     (*generator).spliced,
		research.PlantedOwnText: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q := g.claim(r.topic)
			c := q
			if g.pick(2) == 0 {
				c = g.claim(r.topic)
			}
			return labelled{id: g.citeAs(r), quote: q, claim: c, file: r.file, how: "a sentence of the citing hypothesis"}, true
		},
		kindEmpty: func(g *generator) (labelled, bool) {
			r := g.record(1)
			q := pickOf(g, []string{"", " ", "\t", "…", "...", "[1]", "ibid.", "Fig. 2B", "n = 14", "p < 0.05", "42%", "tau", "TREM2", "BIN1", "see text"})
			if g.pick(3) == 0 {
				// a word or two of the source
				s := tokens(pickOf(g, r.passages()))
				at := g.pick(len(s))
				q = strings.Join(s[at:min(len(s), at+1+g.pick(2))], " ")
			}
			return labelled{id: g.citeAs(r), quote: q, claim: g.claim(r.topic), file: r.file, how: "empty or very short"}, utf8.RuneCountInString(q) <= 10
		},
	}
}

// drift changes a quote's case, spacing, punctuation, Unicode forms or hyphenation, and
// none of its words.
func (g *generator) drift(q string) (string, string) {
	type op struct {
		name string
		do   func(string) string
	}
	ops := []op{
		{"lower case", strings.ToLower},
		{"first letter lower case", func(s string) string {
			r, n := utf8.DecodeRuneInString(s)
			return string(unicode.ToLower(r)) + s[n:]
		}},
		{"a word in capitals", func(s string) string {
			t := tokens(s)
			i := g.pick(len(t))
			t[i] = strings.ToUpper(t[i])
			return strings.Join(t, " ")
		}},
		{"spaces doubled", func(s string) string { return strings.ReplaceAll(s, " ", "  ") }},
		{"a line break", func(s string) string {
			t := tokens(s)
			if len(t) < 3 {
				return s
			}
			i := 1 + g.pick(len(t)-2)
			return strings.Join(t[:i], " ") + "\n" + strings.Join(t[i:], " ")
		}},
		{"non-breaking spaces plain", func(s string) string { return strings.ReplaceAll(s, "\u00a0", " ") }},
		{"commas dropped", func(s string) string { return strings.ReplaceAll(s, ",", "") }},
		{"final stop dropped", func(s string) string { return strings.TrimSuffix(s, ".") }},
		{"a space before the stop", func(s string) string {
			if strings.HasSuffix(s, ".") {
				return strings.TrimSuffix(s, ".") + " ."
			}
			return s
		}},
		{"parentheses dropped", strings.NewReplacer("(", "", ")", "").Replace},
		{"dashes as hyphens", strings.NewReplacer("–", "-", "—", "-", "−", "-", "\u2011", "-").Replace},
		{"hyphens as spaces", func(s string) string { return compoundHyphen.ReplaceAllString(s, "$1 $2") }},
		{"straight quotes", strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`).Replace},
		{"curly quotes", strings.NewReplacer("'", "’").Replace},
		{"quoted in curly quotes", func(s string) string { return "“" + s + "”" }},
		{"micro sign as mu", strings.NewReplacer("µ", "μ").Replace},
		{"mu as micro sign", strings.NewReplacer("μ", "µ").Replace},
		{"ligatures", strings.NewReplacer("fi", "ﬁ", "fl", "ﬂ").Replace},
		{"decomposed", norm.NFD.String},
		{"hyphenated at a line break", func(s string) string { return g.hyphenate(s, "-\n") }},
		{"a soft hyphen", func(s string) string { return g.hyphenate(s, "\u00ad") }},
	}
	var names []string
	d := q
	for range 1 + g.pick(3) {
		o := pickOf(g, ops)
		if e := o.do(d); e != d {
			d = e
			names = append(names, o.name)
		}
	}
	return d, strings.Join(names, ", ")
}

// compoundHyphen is the hyphen of a compound such as "co-cultured".
var compoundHyphen = regexp.MustCompile(`(\pL)-(\pL)`)

// hyphenate breaks a long word of the quote in two with the mark.
func (g *generator) hyphenate(s, mark string) string {
	t := tokens(s)
	var long []int
	for i, w := range t {
		if utf8.RuneCountInString(w) >= 9 && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
			long = append(long, i)
		}
	}
	if len(long) == 0 {
		return s
	}
	i := pickOf(g, long)
	r := []rune(t[i])
	at := 3 + g.pick(len(r)-5)
	t[i] = string(r[:at]) + mark + string(r[at:])
	return strings.Join(t, " ")
}

var elisionMarks = []string{" ... ", " … ", "…", " [...] ", " […] ", "... "}

// elided leaves a middle out of a passage, marking it: within a sentence, between two
// sentences, or at either end.
func (g *generator) elided() (labelled, bool) {
	r := g.record(1)
	mark := pickOf(g, elisionMarks)
	var q, how string
	switch n := g.pick(10); {
	case n < 5:
		s := tokens(pickOf(g, r.sentences))
		if len(s) < 12 {
			return labelled{}, false
		}
		head := 4 + g.pick(len(s)-11)
		skip := 2 + g.pick(len(s)-head-5)
		q, how = strings.Join(s[:head], " ")+mark+strings.Join(s[head+skip:], " "), "a middle of a sentence left out"
	case n < 8:
		if len(r.sentences) < 3 {
			return labelled{}, false
		}
		i := g.pick(len(r.sentences) - 2)
		j := i + 2 + g.pick(len(r.sentences)-i-2)
		q, how = r.sentences[i]+mark+r.sentences[j], "the sentences between two left out"
	default:
		s := tokens(pickOf(g, r.sentences))
		if len(s) < 9 {
			return labelled{}, false
		}
		k := 6 + g.pick(len(s)-8)
		if g.pick(2) == 0 {
			q, how = strings.TrimSpace(mark)+" "+strings.Join(s[len(s)-k:], " "), "the start of a sentence left out"
		} else {
			q, how = strings.Join(s[:k], " ")+" "+strings.TrimSpace(mark), "the end of a sentence left out"
		}
	}
	return labelled{id: g.citeAs(r), quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: how + fmt.Sprintf(" (%q)", strings.TrimSpace(mark))}, true
}

// Invented ids: in the fixture's DOI prefix, in real journals' DOI forms, PMIDs, PMCIDs
// and citation keys, none of which any tool result holds.
var (
	surnames = []string{"zhang", "garcia", "müller", "nguyen", "kowalczyk", "okafor", "tanaka", "smith", "kim", "lee"}
	keyWords = []string{"microglia", "tau", "synuclein", "apoe", "astro", "exosome", "trem2", ""}
)

func (g *generator) inventedID() (labelled, bool) {
	var id string
	switch g.pick(6) {
	case 0:
		id = fmt.Sprintf("10.5555/cosci.%s.%03d", pickOf(g, g.f.topics), 200+g.pick(800))
	case 1:
		id = fmt.Sprintf("10.1038/s41593-0%d-0%04d-%c", 19+g.pick(5), g.pick(10000), 'a'+rune(g.pick(26)))
	case 2:
		id = fmt.Sprintf("10.1016/j.neuron.20%d.%02d.%03d", 18+g.pick(6), 1+g.pick(12), g.pick(1000))
	case 3:
		id = fmt.Sprintf("%d", 30000000+g.pick(9000000))
	case 4:
		id = fmt.Sprintf("PMC%d", 8000000+g.pick(2000000))
	default:
		id = fmt.Sprintf("%s%d%s", pickOf(g, surnames), 2015+g.pick(10), pickOf(g, keyWords))
	}
	for _, content := range g.f.files {
		if strings.Contains(strings.ToLower(content), strings.ToLower(id)) {
			return labelled{}, false
		}
	}
	r := g.record(1)
	q, how := g.verbatimOf(r)
	how = "a passage of " + r.ids[0] + " (" + how + ")"
	if g.pick(5) < 2 {
		q, how = g.claim(r.topic), "a sentence of the citing hypothesis"
	}
	l := labelled{id: id, quote: q, claim: g.claimFor(r.topic, q), how: how}
	if g.pick(2) == 0 {
		l.file = r.file // the turn read that result, which does not name the id
	}
	return l, true
}

// nearMissID cites a record by its id cut short or off by a character. When that is
// another record's id, the quote must not be that record's.
func (g *generator) nearMissID() (labelled, bool) {
	r := g.record(1)
	id := pickOf(g, r.ids)
	rs := []rune(id)
	var miss, how string
	switch n := g.pick(10); {
	case n < 2 && yearKey.MatchString(id):
		miss, how = yearKey.FindStringSubmatch(id)[1], "cut to its author and year"
	case n < 4 && len(rs) > 6:
		miss, how = string(rs[:len(rs)-1-g.pick(min(3, len(rs)-6))]), "cut short"
	case n < 6:
		i := g.pick(len(rs))
		c := rs[i]
		switch {
		case c >= '0' && c <= '9':
			c = '0' + (c-'0'+1+rune(g.pick(8)))%10
		case c >= 'a' && c <= 'z':
			c = 'a' + (c-'a'+1+rune(g.pick(24)))%26
		default:
			return labelled{}, false
		}
		rs[i] = c
		miss, how = string(rs), "a character changed"
	case n < 8 && len(rs) > 6:
		i := len(rs)/2 + g.pick(len(rs)/2)
		miss, how = string(slices.Delete(rs, i, i+1)), "a character dropped"
	default:
		i := len(rs)/2 + g.pick(len(rs)/2-1)
		if rs[i] == rs[i+1] {
			return labelled{}, false
		}
		rs[i], rs[i+1] = rs[i+1], rs[i]
		miss, how = string(rs), "two characters swapped"
	}
	q, qhow := g.verbatimOf(r)
	for _, o := range g.f.records {
		if !slices.ContainsFunc(o.ids, func(x string) bool { return sameID(x, miss) }) {
			continue
		}
		if o.text() == r.text() || !nowhere(o.text(), q) {
			return labelled{}, false // the miss names the same source, or one that holds the quote
		}
		if note := ", which is " + o.ids[0] + "'s id"; !strings.Contains(how, note) {
			how += note
		}
	}
	return labelled{id: miss, quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: fmt.Sprintf("%s %s; %s of it", id, how, qhow)}, true
}

// yearKey is a citation key with something after its year: kim2021bin1, smith2020a.
var yearKey = regexp.MustCompile(`^([a-z]+(?:19|20)\d\d)[a-z]\w*$`)

// sameID compares ids as the benchmark's labels do: whole, in any case, a DOI without
// its resolver.
func sameID(a, b string) bool {
	strip := func(s string) string {
		s = strings.ToLower(s)
		for _, p := range []string{"https://doi.org/", "doi:", "pmid:"} {
			s = strings.TrimPrefix(s, p)
		}
		return s
	}
	return strip(a) == strip(b)
}

// otherRecord quotes another record of the same search result under this one's id.
func (g *generator) otherRecord() (labelled, bool) {
	a := g.record(0)
	var others []record
	for _, o := range g.f.records {
		if o.file == a.file && o.ids[0] != a.ids[0] && len(o.sentences) > 0 {
			others = append(others, o)
		}
	}
	if len(others) == 0 {
		return labelled{}, false
	}
	b := pickOf(g, others)
	q, how := g.verbatimOf(b)
	return labelled{id: g.citeAs(a), quote: q, claim: g.claimFor(a.topic, q), file: a.file, how: how + " of " + b.ids[0]}, true
}

// changed quotes a passage with one change that reverses or falsifies it.
func (g *generator) changed(change func(string) (string, string, bool), what string) (labelled, bool) {
	r := g.record(1)
	var fits []string
	for _, s := range r.passages() {
		if _, _, ok := change(s); ok {
			fits = append(fits, s)
		}
	}
	if len(fits) == 0 {
		return labelled{}, false
	}
	s := pickOf(g, fits)
	q, how, _ := change(s)
	return labelled{id: g.citeAs(r), quote: q, claim: g.claimFor(r.topic, s), file: r.file, how: what + ": " + how}, true
}

// wordRE is a word, hyphenated compounds whole.
var wordRE = regexp.MustCompile(`[\pL\pN]+(?:-[\pL\pN]+)*`)

// negate adds a "not" or takes one away.
func negate(s string) (string, string, bool) {
	for _, r := range []struct{ from, to string }{
		{" did not ", " did "}, {" does not ", " does "}, {" do not ", " do "}, {" was not ", " was "}, {" were not ", " were "},
		{" is not ", " is "}, {" are not ", " are "}, {" has not ", " has "}, {" not significantly ", " significantly "},
		{" but not ", " and "}, {" no significant ", " a significant "}, {" showed no ", " showed "}, {" in none of ", " in all of "},
		{"No significant ", "A significant "}, {" had no ", " had an "}, {" without ", " with "},
	} {
		if strings.Contains(s, r.from) {
			return strings.Replace(s, r.from, r.to, 1), fmt.Sprintf("%q → %q", strings.TrimSpace(r.from), strings.TrimSpace(r.to)), true
		}
	}
	for _, aux := range []string{" may ", " could ", " is ", " are ", " was ", " were ", " can "} {
		if strings.Contains(s, aux) {
			return strings.Replace(s, aux, aux+"not ", 1), fmt.Sprintf("%q → %q", strings.TrimSpace(aux), strings.TrimSpace(aux)+" not"), true
		}
	}
	for _, m := range wordRE.FindAllStringIndex(s, -1) {
		w := s[m[0]:m[1]]
		if base, ok := pastToBase[w]; ok {
			return s[:m[0]] + "did not " + base + s[m[1]:], fmt.Sprintf("%q → %q", w, "did not "+base), true
		}
	}
	return s, "", false
}

var pastToBase = map[string]string{
	"reduced": "reduce", "increased": "increase", "lowered": "lower", "prevented": "prevent", "promoted": "promote",
	"restored": "restore", "accelerated": "accelerate", "decreased": "decrease", "improved": "improve", "raised": "raise",
	"enlarged": "enlarge", "slowed": "slow", "displaced": "displace", "predicted": "predict", "protected": "protect",
	"explained": "explain", "accumulated": "accumulate", "degraded": "degrade",
}

// directions are words and their opposites.
var directions = map[string]string{
	"increase": "decrease", "increases": "decreases", "increased": "decreased", "decreased": "increased", "decrease": "increase",
	"reduce": "increase", "reduces": "increases", "reduced": "increased", "lowered": "raised", "raised": "lowered",
	"lower": "higher", "higher": "lower", "more": "less", "less": "more", "fewer": "more",
	"promote": "inhibit", "promotes": "inhibits", "promoted": "inhibited", "inhibits": "promotes", "inhibition": "activation",
	"up-regulated": "down-regulated", "down-regulated": "up-regulated", "accelerated": "slowed", "accelerates": "slows",
	"slowed": "accelerated", "slow": "accelerate", "slows": "accelerates", "faster": "slower", "improved": "impaired",
	"impaired": "improved", "impairs": "improves", "attenuated": "exacerbated", "prevented": "promoted", "restrict": "promote",
	"limit": "promote", "limits": "promotes", "larger": "smaller", "weaker": "stronger", "elevated": "reduced",
	"better": "worse", "protected": "sensitised", "rescued": "worsened", "drives": "prevents", "drive": "prevent",
	"loss": "gain", "Loss": "Gain", "Higher": "Lower", "activates": "inhibits",
}

// flipDirection turns one direction word into its opposite.
func flipDirection(s string) (string, string, bool) {
	for _, m := range wordRE.FindAllStringIndex(s, -1) {
		w := s[m[0]:m[1]]
		if to, ok := directions[w]; ok {
			return s[:m[0]] + to + s[m[1]:], fmt.Sprintf("%q → %q", w, to), true
		}
	}
	return s, "", false
}

// number is a standalone number: not part of a name such as P301S, 5xFAD or IL-6.
var number = regexp.MustCompile(`(^|[\s(±−=~])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)([\s%,;:)]|\.(?:\s|$)|-fold|-month|$)`)

// renumber changes one number of a passage.
func (g *generator) renumber(s string) (string, string, bool) {
	ms := number.FindAllStringSubmatchIndex(s, -1)
	if len(ms) == 0 {
		return s, "", false
	}
	m := ms[g.pick(len(ms))]
	old := s[m[4]:m[5]]
	digits := []rune(old)
	var at []int
	for i, r := range digits {
		if r >= '1' && r <= '9' || (r == '0' && i > 0) {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return s, "", false
	}
	i := at[g.pick(len(at))]
	d := digits[i] - '0'
	nd := (d + 1 + rune(g.pick(8))) % 10
	if i == 0 && nd == 0 {
		nd = d%9 + 1
	}
	digits[i] = '0' + nd
	to := string(digits)
	return s[:m[4]] + to + s[m[5]:], fmt.Sprintf("%s → %s", old, to), to != old
}

// spliced joins two passages that are not next to each other, with no elision mark.
func (g *generator) spliced() (labelled, bool) {
	r := g.record(3)
	ss := r.sentences
	var q, how string
	switch n := g.pick(10); {
	case n < 4:
		i := g.pick(len(ss) - 2)
		j := i + 2 + g.pick(len(ss)-i-2)
		q, how = ss[i]+" "+ss[j], fmt.Sprintf("sentences %d and %d", i+1, j+1)
	case n < 6:
		i := 1 + g.pick(len(ss)-1)
		j := g.pick(i)
		q, how = ss[i]+" "+ss[j], fmt.Sprintf("sentences %d and %d, in the wrong order", i+1, j+1)
	case n < 8:
		i := g.pick(len(ss) - 1)
		j := i + 1 + g.pick(len(ss)-i-1)
		a, b := tokens(ss[i]), tokens(ss[j])
		if len(a) < 8 || len(b) < 8 {
			return labelled{}, false
		}
		ha, tb := 5+g.pick(len(a)-7), 4+g.pick(len(b)-6)
		q, how = strings.Join(a[:ha], " ")+" "+strings.Join(b[len(b)-tb:], " "), fmt.Sprintf("the start of sentence %d and the end of %d", i+1, j+1)
	default:
		s := tokens(pickOf(g, ss))
		if len(s) < 13 {
			return labelled{}, false
		}
		head := 5 + g.pick(len(s)-12)
		skip := 3 + g.pick(len(s)-head-7)
		q, how = strings.Join(s[:head], " ")+" "+strings.Join(s[head+skip:], " "), "a sentence with its middle cut and no mark"
	}
	return labelled{id: g.citeAs(r), quote: q, claim: g.claimFor(r.topic, q), file: r.file, how: how}, true
}

// valid checks a labelled citation against what its kind promises, with this file's own
// normalisation: an honest quote is in its record; a dishonest one is not, in any spacing.
func (f *fixture) valid(l labelled) error {
	var rec *record
	for i := range f.records {
		r := &f.records[i]
		if r.file == l.file && slices.ContainsFunc(r.ids, func(x string) bool { return sameID(x, l.id) }) {
			rec = r
		}
	}
	q := l.quote
	if l.kind != kindEmpty && (utf8.RuneCountInString(strings.TrimSpace(q)) < 30 || words(q) < 5 || utf8.RuneCountInString(q) > prompt.MaxQuoteLength) {
		return fmt.Errorf("a quote of %d characters and %d words", utf8.RuneCountInString(q), words(q))
	}
	named := func() error {
		if rec == nil {
			return fmt.Errorf("%s names no record of %s", l.id, l.file)
		}
		return nil
	}
	switch l.kind {
	case research.PlantedVerbatim, research.PlantedIrrelevant:
		if err := named(); err != nil {
			return err
		}
		if !strings.Contains(rec.text(), q) {
			return fmt.Errorf("not word for word in its record")
		}
	case research.PlantedDrift:
		if err := named(); err != nil {
			return err
		}
		if !within(rec.text(), q) || strings.Contains(rec.text(), q) {
			return fmt.Errorf("not a drifted passage of its record")
		}
	case research.PlantedElided:
		if err := named(); err != nil {
			return err
		}
		if !ellipsis.MatchString(q) || !elidedWithin(rec.text(), q) {
			return fmt.Errorf("not an elided passage of its record")
		}
	case research.PlantedInventedID:
		for _, r := range f.records {
			if slices.ContainsFunc(r.ids, func(x string) bool { return sameID(x, l.id) }) {
				return fmt.Errorf("%s is %s's id", l.id, r.file)
			}
		}
	case research.PlantedNearMissID:
		if rec != nil && !nowhere(rec.text(), q) {
			return fmt.Errorf("%s names a record that holds the quote", l.id)
		}
	case research.PlantedOtherRecord, research.PlantedNegated, research.PlantedNumber, research.PlantedDirection, research.PlantedSpliced, research.PlantedOwnText:
		if err := named(); err != nil {
			return err
		}
		if !nowhere(rec.text(), q) {
			return fmt.Errorf("its record holds the quote")
		}
		if l.kind == research.PlantedOwnText {
			for _, r := range f.records {
				if !nowhere(r.text(), q) {
					return fmt.Errorf("%s holds the hypothesis' sentence", r.ids[0])
				}
			}
		}
		if l.kind == research.PlantedSpliced && ellipsis.MatchString(q) {
			return fmt.Errorf("a splice with an elision mark")
		}
	case kindEmpty:
		if utf8.RuneCountInString(q) > 10 {
			return fmt.Errorf("a quote of %d characters is not very short", utf8.RuneCountInString(q))
		}
	default:
		return fmt.Errorf("unknown kind")
	}
	return nil
}

// generate makes perKind citations of every kind, the same every run.
func generate(tb testing.TB, f *fixture) []labelled {
	tb.Helper()
	g := &generator{f: f, rng: rand.New(rand.NewPCG(27, 2026))}
	makers := g.makers()
	var out []labelled
	for _, kind := range benchKinds {
		n := 0
		for tries := 0; n < perKind && tries < 100*perKind; tries++ {
			l, ok := makers[kind](g)
			if !ok {
				continue
			}
			l.kind = kind
			if err := f.valid(l); err != nil {
				continue // the draw did not make what the kind promises; draw again
			}
			out = append(out, l)
			n++
		}
		if n < perKind {
			tb.Fatalf("made %d citations of kind %s; want %d", n, kind, perKind)
		}
	}
	return out
}

// parse reads a citation as the parser reads a model's answer: the reference as the
// session stores it, or the parser's refusal.
func parse(l labelled) (research.Reference, error) {
	raw, err := json.Marshal(map[string]any{
		"title": "A hypothesis", "statement": l.claim, "rationale": l.claim, "testable_predictions": []string{"a prediction"},
		"references": []map[string]string{{"id": l.id, "quote": l.quote, "claim": l.claim}},
	})
	if err != nil {
		return research.Reference{}, err
	}
	h, err := prompt.ParseHypothesis(raw)
	if err != nil {
		return research.Reference{}, err
	}
	if len(h.References) != 1 {
		return research.Reference{}, fmt.Errorf("the parser kept %d references", len(h.References))
	}
	return h.References[0], nil
}

// reference is the citation as reflection checks it: parsed, tied to the result the
// turn read, with its hidden truth.
func (f *fixture) reference(tb testing.TB, l labelled) research.Reference {
	tb.Helper()
	ref, err := parse(l)
	if err != nil {
		tb.Fatalf("the parser refused a %s citation (%s, %q): %v", l.kind, l.id, l.quote, err)
	}
	if ref.Claim == "" {
		ref.Claim = l.claim
	}
	if l.file != "" {
		ref.Source = f.digests[l.file]
	}
	ref.Planted, ref.Fabricated = l.kind, !research.PlantedHonest(l.kind) && l.kind != research.PlantedIrrelevant
	return ref
}

// The fixture's labels hold what their kinds promise (checked again here, apart from the
// generation), every kind has its citations, and the same seed makes the same ones.
func TestCitationFixture(t *testing.T) {
	f := loadFixture(t)
	if len(f.records) < 15 || len(f.topics) < 2 {
		t.Fatalf("%d records in %d topics", len(f.records), len(f.topics))
	}
	ls := generate(t, f)
	count := map[string]int{}
	for _, l := range ls {
		count[l.kind]++
		if err := f.valid(l); err != nil {
			t.Errorf("%s citation %s %q: %v", l.kind, l.id, l.quote, err)
		}
	}
	for _, kind := range benchKinds {
		if count[kind] < 30 {
			t.Errorf("%d citations of kind %s; want at least 30", count[kind], kind)
		}
	}
	if again := generate(t, f); !slices.Equal(again, ls) {
		t.Error("the same seed made other citations")
	}
	// A few labels by hand, so that the construction itself is checked.
	tau01 := f.records[slices.IndexFunc(f.records, func(r record) bool { return r.file == "tau-fetch-tau.01.json" })]
	for _, tt := range []struct {
		l    labelled
		want bool
	}{
		{labelled{kind: research.PlantedVerbatim, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 92%"}, true},
		{labelled{kind: research.PlantedDrift, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "depletion reduced microglial density by 92 %"}, true},
		{labelled{kind: research.PlantedDrift, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "depletion reduced micro- glial density by 92%"}, true},
		{labelled{kind: research.PlantedNumber, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 29%"}, true},
		{labelled{kind: research.PlantedNumber, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 92%"}, false},
		{labelled{kind: research.PlantedNegated, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "whereas it did alter tau uptake by microglia in culture"}, true},
		{labelled{kind: research.PlantedElided, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density … by 54%."}, true},
		{labelled{kind: research.PlantedElided, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density … by 45%."}, false},
		{labelled{kind: research.PlantedSpliced, id: "10.5555/cosci.tau.01", file: tau01.file, quote: "Depletion reduced microglial density by 54%."}, true},
		{labelled{kind: research.PlantedVerbatim, id: "10.5555/cosci.tau.010", file: tau01.file, quote: "Depletion reduced microglial density by 92%"}, false},
	} {
		if err := f.valid(tt.l); (err == nil) != tt.want {
			t.Errorf("%s %q: valid = %v, want %v", tt.l.kind, tt.l.quote, err, tt.want)
		}
	}
}

// TestCitationKinds runs every labelled citation through Check (an empty one through
// the parser) and holds each kind to its target.
func TestCitationKinds(t *testing.T) {
	f := loadFixture(t)
	ls := generate(t, f)
	trail := f.trail()
	type tally struct {
		n, flagged int
		verdicts   map[string]int
		misses     []string
	}
	tallies := map[string]*tally{}
	printed := map[string]int{}
	for _, l := range ls {
		tl := tallies[l.kind]
		if tl == nil {
			tl = &tally{verdicts: map[string]int{}}
			tallies[l.kind] = tl
		}
		tl.n++
		if *sample > printed[l.kind] {
			printed[l.kind]++
			t.Logf("sample %s (%s): id %q, from %q\n\tquote %q\n\tclaim %q", l.kind, l.how, l.id, l.file, l.quote, l.claim)
		}
		if l.kind == kindEmpty {
			_, err := parse(l)
			if err != nil {
				tl.flagged++
				tl.verdicts["refused"]++
			} else {
				tl.verdicts["accepted"]++
				tl.misses = append(tl.misses, fmt.Sprintf("the parser accepted %q", l.quote))
			}
			continue
		}
		ref := f.reference(t, l)
		c := citation.Check([]research.Reference{ref}, trail)[0]
		tl.verdicts[c.Verdict]++
		flagged := c.Verdict != research.CitationVerified
		if flagged {
			tl.flagged++
		}
		if flagged != dishonest(l.kind) {
			tl.misses = append(tl.misses, fmt.Sprintf("%s (%s): id %q from %s, quote %q: %s %s", c.Verdict, l.how, l.id, l.file, ref.Quote, c.Note, c.Passage))
		}
	}
	verdicts := []string{research.CitationVerified, research.CitationAltered, research.CitationContradicted, research.CitationUnsupported, research.CitationInvented}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| kind | n | flagged | target | %s |\n|---|---:|---:|---|%s\n", strings.Join(verdicts, " | "), strings.Repeat("---:|", len(verdicts)))
	for _, kind := range benchKinds {
		tl := tallies[kind]
		share := float64(tl.flagged) / float64(tl.n)
		target, ok := fmt.Sprintf("≤ %.0f%%", 100*maxHonestFlagged), share <= maxHonestFlagged
		if dishonest(kind) {
			target, ok = fmt.Sprintf("≥ %.0f%%", 100*minDishonestFlagged), share >= minDishonestFlagged
		}
		cells := make([]string, len(verdicts))
		for i, v := range verdicts {
			cells[i] = fmt.Sprint(tl.verdicts[v])
		}
		if kind == kindEmpty {
			cells = []string{fmt.Sprintf("refused by the parser: %d of %d", tl.verdicts["refused"], tl.n), "", "", "", ""}
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f%% | %s | %s |\n", kind, tl.n, 100*share, target, strings.Join(cells, " | "))
		if !ok {
			t.Errorf("%s: %d of %d flagged (%.0f%%); target %s. For example:\n\t%s", kind, tl.flagged, tl.n, 100*share, target, strings.Join(tl.misses[:min(3, len(tl.misses))], "\n\t"))
		}
	}
	t.Log(b.String())
}

// dishonest says whether the check (or, for an empty quote, the parser) must flag a kind.
// An irrelevant quote is verbatim: the check verifies it, and the review's support
// judgement is what catches it.
func dishonest(kind string) bool {
	return !research.PlantedHonest(kind) && kind != research.PlantedIrrelevant
}

// BenchmarkCheck measures Check per citation over the benchmark's citations.
func BenchmarkCheck(b *testing.B) {
	f := loadFixture(b)
	var refs []research.Reference
	for _, l := range generate(b, f) {
		if l.kind != kindEmpty {
			refs = append(refs, f.reference(b, l))
		}
	}
	trail := f.trail()
	for b.Loop() {
		citation.Check(refs, trail)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(refs)), "ns/citation")
}
