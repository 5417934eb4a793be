package citation_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The benchmark's fixture: real-shaped tool results (testdata) and the records they hold.

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
