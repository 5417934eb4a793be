package citation_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The benchmark's fixture: tool results in the shapes of the services labs use
// (testdata/bench), and the records they hold, read here by the benchmark's own parsers
// of each shape, apart from the package's reader.

// record is one source as a tool result gives it.
type record struct {
	file, topic string
	ids         []string // the ids the result gives it: its id first
	title, body string   // the body is a search hit's snippet or a record's abstract
	sentences   []string // the body's, word for word
	// mixed marks a result in prose that names several sources in one text: its
	// sentences are no one source's.
	mixed bool
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
	// notation are the notation fixture's records (benchnotation_test.go), which only
	// the notation kinds draw from
	notation []record
}

// trail is what Check reads: the audit trail's records by digest.
func (f *fixture) trail() map[string]string {
	m := map[string]string{}
	for name, content := range f.files {
		m[f.digests[name]] = content
	}
	return m
}

// single are the records of one source each: what honest and most dishonest citations
// are made from.
func (f *fixture) single() []record {
	return slices.DeleteFunc(slices.Clone(f.records), func(r record) bool { return r.mixed })
}

func loadFixture(tb interface {
	Helper()
	Fatalf(string, ...any)
	Fatal(...any)
}) *fixture {
	tb.Helper()
	dir := filepath.Join("testdata", "bench")
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(names) == 0 {
		tb.Fatalf("no fixture in %s: %v", dir, err)
	}
	f := &fixture{files: map[string]string{}, digests: map[string]string{}, claims: map[string][]string{}}
	for _, path := range names {
		name := filepath.Base(path)
		if name == "README.md" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
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
		recs, err := parseResult(name, b)
		if err != nil || len(recs) == 0 {
			tb.Fatalf("%s: %v (%d records)", name, err, len(recs))
		}
		topic, _, _ := strings.Cut(name, "-")
		for _, r := range recs {
			r.file, r.topic = name, topic
			r.title, r.body = oneLine(r.title), oneLine(r.body)
			r.sentences = splitSentences(r.body)
			f.records = append(f.records, r)
		}
	}
	for topic := range f.claims {
		f.topics = append(f.topics, topic)
	}
	slices.Sort(f.topics)
	slices.SortStableFunc(f.records, func(a, b record) int { return strings.Compare(a.file, b.file) })
	f.loadNotation(tb)
	return f
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// parseResult reads the records of one tool result, in the shapes the fixture holds.
func parseResult(name string, b []byte) ([]record, error) {
	switch filepath.Ext(name) {
	case ".xml":
		return parseXML(b)
	case ".txt":
		return parseText(string(b))
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, err
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("meta") && has("results"): // OpenAlex works
		return parseOpenAlex(b)
	case has("results"): // cosci's search
		var v struct {
			Results []struct{ ID, DOI, Key, Title, Snippet string } `json:"results"`
		}
		err := json.Unmarshal(b, &v)
		var out []record
		for _, h := range v.Results {
			out = append(out, record{ids: ids(h.ID, h.DOI, h.Key), title: h.Title, body: h.Snippet})
		}
		return out, err
	case has("Results"): // a service that capitalises its keys
		var v struct {
			Results []struct{ ID, DOI, Title, Abstract string } `json:"Results"`
		}
		err := json.Unmarshal(b, &v)
		var out []record
		for _, h := range v.Results {
			out = append(out, record{ids: ids(h.DOI, h.ID), title: h.Title, body: h.Abstract})
		}
		return out, err
	case has("resultList"): // Europe PMC
		var v struct {
			ResultList struct {
				Result []struct{ ID, PMID, PMCID, DOI, Title, AbstractText string } `json:"result"`
			} `json:"resultList"`
		}
		err := json.Unmarshal(b, &v)
		var out []record
		for _, h := range v.ResultList.Result {
			out = append(out, record{ids: ids(h.ID, h.PMID, h.PMCID, h.DOI), title: h.Title, body: h.AbstractText})
		}
		return out, err
	case has("header"): // PubMed esummary
		return parseESummary(keys["result"])
	case has("message"): // Crossref works
		var v struct {
			Message struct {
				Items []struct {
					DOI      string   `json:"DOI"`
					Title    []string `json:"title"`
					Abstract string   `json:"abstract"`
				} `json:"items"`
			} `json:"message"`
		}
		err := json.Unmarshal(b, &v)
		var out []record
		for _, it := range v.Message.Items {
			out = append(out, record{ids: ids(it.DOI), title: strings.Join(it.Title, " "), body: jatsText(it.Abstract)})
		}
		return out, err
	case has("abstract"): // cosci's fetch
		var v struct{ ID, DOI, Key, Title, Abstract string }
		err := json.Unmarshal(b, &v)
		return []record{{ids: ids(v.ID, v.DOI, v.Key), title: v.Title, body: v.Abstract}}, err
	}
	return nil, fmt.Errorf("not a tool result shape the benchmark knows")
}

func parseESummary(raw json.RawMessage) ([]record, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	var uids []string
	if err := json.Unmarshal(res["uids"], &uids); err != nil {
		return nil, err
	}
	var out []record
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
	return out, nil
}

// parseOpenAlex rebuilds each work's abstract from its index of word positions.
func parseOpenAlex(b []byte) ([]record, error) {
	var v struct {
		Results []struct {
			ID, DOI, Title string
			Index          map[string][]int `json:"abstract_inverted_index"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	var out []record
	for _, w := range v.Results {
		n := 0
		for _, ps := range w.Index {
			for _, p := range ps {
				n = max(n, p+1)
			}
		}
		words := make([]string, n)
		for word, ps := range w.Index {
			for _, p := range ps {
				words[p] = word
			}
		}
		out = append(out, record{ids: ids(strings.TrimPrefix(w.DOI, "https://doi.org/"), strings.TrimPrefix(w.ID, "https://openalex.org/")),
			title: w.Title, body: strings.Join(words, " ")})
	}
	return out, nil
}

// parseXML reads PubMed's efetch articles and arXiv's Atom entries.
func parseXML(b []byte) ([]record, error) {
	var v struct {
		Articles []struct {
			PMID     string `xml:"MedlineCitation>PMID"`
			Title    string `xml:"MedlineCitation>Article>ArticleTitle"`
			Sections []struct {
				Label string `xml:"Label,attr"`
				Text  string `xml:",chardata"`
			} `xml:"MedlineCitation>Article>Abstract>AbstractText"`
			IDs []struct {
				Type  string `xml:"IdType,attr"`
				Value string `xml:",chardata"`
			} `xml:"PubmedData>ArticleIdList>ArticleId"`
		} `xml:"PubmedArticle"`
		Entries []struct {
			ID, Title, Summary string
		} `xml:"entry"`
	}
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	dec.Strict = false
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out []record
	for _, a := range v.Articles {
		r := record{ids: []string{a.PMID}, title: a.Title}
		for _, id := range a.IDs {
			r.ids = ids(append(r.ids, id.Value)...)
		}
		var parts []string
		for _, s := range a.Sections {
			parts = append(parts, s.Label+": "+s.Text)
		}
		r.body = strings.Join(parts, " ")
		out = append(out, r)
	}
	for _, e := range v.Entries {
		id := strings.TrimPrefix(e.ID, "http://arxiv.org/abs/")
		bare := regexp.MustCompile(`v\d+$`).ReplaceAllString(id, "")
		out = append(out, record{ids: ids(id, bare, "arXiv:"+bare), title: e.Title, body: e.Summary})
	}
	return out, nil
}

// parseText reads a plain-text result: blocks of "Label: value" lines, one source each,
// or prose that names several sources (mixed).
func parseText(s string) ([]record, error) {
	if !strings.Contains(s, "\nTitle: ") && !strings.HasPrefix(s, "Title: ") {
		var r record
		for _, m := range regexp.MustCompile(`(?:doi:|PMID )(10\.\d+/[^\s)]+|\d+)`).FindAllStringSubmatch(s, -1) {
			r.ids = append(r.ids, m[1])
		}
		r.body, r.mixed = s, len(r.ids) > 1
		if !r.mixed {
			return nil, fmt.Errorf("prose naming %d sources", len(r.ids))
		}
		return []record{r}, nil
	}
	var out []record
	for _, block := range strings.Split(s, "\nTitle: ")[1:] {
		var r record
		for i, line := range strings.Split("Title: "+block, "\n") {
			label, value, _ := strings.Cut(line, ": ")
			switch {
			case i == 0:
				r.title = value
			case label == "DOI" || label == "PubMed ID":
				r.ids = append(r.ids, value)
			case strings.HasPrefix(line, "PMC "):
				r.ids = append(r.ids, strings.ReplaceAll(line, " ", ""))
			case label == "Abstract":
				r.body = value
			}
		}
		out = append(out, r)
	}
	return out, nil
}

var jatsTag = regexp.MustCompile(`<jats:title>[^<]*</jats:title>|</?jats:[a-z]+>`)

// jatsText is a Crossref abstract's text.
func jatsText(s string) string { return html.UnescapeString(jatsTag.ReplaceAllString(s, " ")) }

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
