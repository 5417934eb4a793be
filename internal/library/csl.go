package library

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CSL-JSON, as Zotero and Pandoc write it: an array of items with id, type, title,
// author [{family, given} or {literal}], issued {"date-parts": [[year, month, day]]},
// container-title, DOI, URL, abstract and keyword.

// ParseCSL reads the references of a CSL-JSON file within DefaultLimits.
func ParseCSL(data []byte, file string) ([]Reference, []Skipped) {
	return DefaultLimits().ParseCSL(data, file)
}

// ParseCSL reads the references of a CSL-JSON file: an array of items, or one item. An
// item without a title, or not an object, is skipped with its position and why. A file
// that is not JSON is skipped whole, with where it stops being JSON. Items are decoded
// one at a time, and an item's names past the Authors cap are counted, not kept.
func (l Limits) ParseCSL(data []byte, file string) ([]Reference, []Skipped) {
	l, data, big := l.begin(file, data)
	if big != nil {
		return nil, big
	}
	if !json.Valid(data) {
		var v any
		return nil, []Skipped{{File: file, Reason: "not a CSL-JSON array of items: " + jsonProblem(data, json.Unmarshal(data, &v))}}
	}
	var refs []Reference
	rep := newReport(file, l)
	item := func(i int, dec *json.Decoder) {
		it := cslItem{Author: cslNames{max: l.Authors}, Editor: cslNames{max: l.Authors}}
		if err := dec.Decode(&it); err != nil {
			rep.add(Skipped{Reason: fmt.Sprintf("item %d is not a CSL-JSON item: %v", i+1, err)})
			return
		}
		r := it.reference()
		why, cuts := r.finish(file, l)
		if why != "" {
			rep.add(Skipped{Key: r.Key, Reason: fmt.Sprintf("item %d: %s", i+1, why)})
			return
		}
		if names := it.names(); names.total > len(names.names) {
			cuts = append(cuts, fmt.Sprintf("authors cut to the first %d of %d names", len(names.names), names.total))
		}
		rep.kept(0, r, cuts)
		refs = append(refs, r)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		item(0, dec)
		return refs, rep.done()
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, []Skipped{{File: file, Reason: fmt.Sprintf("not a CSL-JSON array of items: the file holds %s", shorten(strings.TrimSpace(string(data)), 40))}}
	}
	for i := 0; dec.More(); i++ {
		item(i, dec)
	}
	return refs, rep.done()
}

// jsonProblem says where a JSON text goes wrong: the line of a syntax error.
func jsonProblem(data []byte, err error) string {
	if se, ok := err.(*json.SyntaxError); ok {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Sprintf("%v (line %d)", err, line)
	}
	return err.Error()
}

// cslItem is the part of a CSL-JSON item a reference needs. Fields that exporters write
// in more than one form (a number or a string, a string or a list) are read loosely.
type cslItem struct {
	ID        loose      `json:"id"`
	Type      string     `json:"type"`
	Title     loose      `json:"title"`
	Author    cslNames   `json:"author"`
	Editor    cslNames   `json:"editor"`
	Issued    cslDate    `json:"issued"`
	Container loose      `json:"container-title"`
	Volume    loose      `json:"volume"`
	Page      loose      `json:"page"`
	Publisher loose      `json:"publisher"`
	DOI       loose      `json:"DOI"`
	URL       loose      `json:"URL"`
	Abstract  loose      `json:"abstract"`
	Keyword   looseSlice `json:"keyword"`
}

// names are the item's authors, else its editors.
func (it cslItem) names() cslNames {
	if it.Author.total == 0 {
		return it.Editor
	}
	return it.Author
}

// cslNames is a list of names, of which the first max are decoded and the rest counted:
// a list of a million empty objects costs its bytes, not a million structs.
type cslNames struct {
	names []cslName
	total int
	max   int
}

func (n *cslNames) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return fmt.Errorf("%s is not a list of names", shorten(string(b), 40))
	}
	for ; dec.More(); n.total++ {
		if len(n.names) >= n.max {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		var c cslName
		if err := dec.Decode(&c); err != nil {
			return err
		}
		n.names = append(n.names, c)
	}
	return nil
}

type cslName struct {
	Family  string `json:"family"`
	Given   string `json:"given"`
	Literal string `json:"literal"`
}

func (n cslName) String() string {
	switch {
	case n.Family != "" && n.Given != "":
		return n.Family + ", " + n.Given
	case n.Family != "":
		return n.Family
	case n.Literal != "":
		return n.Literal
	}
	return n.Given
}

type cslDate struct {
	Parts firstPart `json:"date-parts"`
	Raw   string    `json:"raw"`
	Lit   string    `json:"literal"`
}

func (d cslDate) year() int {
	if y, err := strconv.Atoi(string(d.Parts)); err == nil {
		return y
	}
	return year(d.Raw + " " + d.Lit)
}

// firstPart is the first part of a CSL date's first date ([[2021, 6, 1]]: 2021), the
// year; the rest is read past, not kept: a list of a million parts costs no memory.
type firstPart loose

func (f *firstPart) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	for range 2 {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return nil // null, [], or not a list of dates: no year, as before
		}
	}
	switch tok, _ := dec.Token(); v := tok.(type) {
	case string:
		*f = firstPart(v)
	case json.Number:
		*f = firstPart(v.String())
	}
	return nil
}

func (it cslItem) reference() Reference {
	r := Reference{
		Key: string(it.ID), Type: it.Type, Title: string(it.Title), Venue: string(it.Container),
		Volume: string(it.Volume), Pages: string(it.Page), Publisher: string(it.Publisher),
		DOI: string(it.DOI), URL: string(it.URL), Abstract: stripTags(string(it.Abstract)),
		Year: it.Issued.year(),
	}
	for _, n := range it.names().names {
		r.Authors = append(r.Authors, n.String())
	}
	for _, k := range it.Keyword {
		for _, kw := range strings.FieldsFunc(k, func(r rune) bool { return r == ',' || r == ';' }) {
			r.Keywords = append(r.Keywords, kw)
		}
	}
	return r
}

// loose is a string that may be written as a JSON string, number or list of strings.
type loose string

func (l *loose) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = loose(s)
		return nil
	}
	var n json.Number
	if json.Unmarshal(b, &n) == nil {
		*l = loose(n.String())
		return nil
	}
	var ss []string
	if json.Unmarshal(b, &ss) == nil {
		*l = loose(strings.Join(ss, " "))
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	return fmt.Errorf("%s is not a string", shorten(string(b), 40))
}

// looseSlice is a list of strings that may be written as one string.
type looseSlice []string

func (l *looseSlice) UnmarshalJSON(b []byte) error {
	var ss []string
	if json.Unmarshal(b, &ss) == nil {
		*l = ss
		return nil
	}
	var s loose
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	if s != "" {
		*l = looseSlice{string(s)}
	}
	return nil
}

// tags are the markup some exporters leave in abstracts (<p>, <i>, <jats:sub>...).
var tags = regexp.MustCompile(`</?(?:p|i|b|em|strong|sub|sup|br|span|div|jats:[a-z-]+)(?:\s[^<>]*)?/?>`)

// stripTags removes that markup, and nothing else: "p < 0.05" stays.
func stripTags(s string) string { return tags.ReplaceAllString(s, " ") }

// shorten cuts s to n bytes and a "…", never inside a character.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
