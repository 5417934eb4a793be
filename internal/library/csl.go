package library

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// CSL-JSON, as Zotero and Pandoc write it: an array of items with id, type, title,
// author [{family, given} or {literal}], issued {"date-parts": [[year, month, day]]},
// container-title, DOI, URL, abstract and keyword.

// ParseCSL reads the references of a CSL-JSON file: an array of items, or one item. An
// item without a title, or not an object, is skipped with its position and why. A file
// that is not JSON is skipped whole, with where it stops being JSON.
func ParseCSL(data []byte, file string) ([]Reference, []Skipped) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var items []json.RawMessage
	if !json.Valid(data) {
		var v any
		return nil, []Skipped{{File: file, Reason: "not a CSL-JSON array of items: " + jsonProblem(data, json.Unmarshal(data, &v))}}
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		items = []json.RawMessage{trimmed}
	} else if err := json.Unmarshal(data, &items); err != nil {
		return nil, []Skipped{{File: file, Reason: "not a CSL-JSON array of items: " + jsonProblem(data, err)}}
	}
	var refs []Reference
	var skipped []Skipped
	for i, raw := range items {
		var it cslItem
		if err := json.Unmarshal(raw, &it); err != nil {
			skipped = append(skipped, Skipped{File: file, Reason: fmt.Sprintf("item %d is not a CSL-JSON item: %v", i+1, err)})
			continue
		}
		r := it.reference()
		if why := r.finish(file); why != "" {
			skipped = append(skipped, Skipped{File: file, Key: r.Key, Reason: fmt.Sprintf("item %d: %s", i+1, why)})
			continue
		}
		refs = append(refs, r)
	}
	return refs, skipped
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
	Author    []cslName  `json:"author"`
	Editor    []cslName  `json:"editor"`
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
	Parts [][]loose `json:"date-parts"`
	Raw   string    `json:"raw"`
	Lit   string    `json:"literal"`
}

func (d cslDate) year() int {
	if len(d.Parts) > 0 && len(d.Parts[0]) > 0 {
		if y, err := strconv.Atoi(string(d.Parts[0][0])); err == nil {
			return y
		}
	}
	return year(d.Raw + " " + d.Lit)
}

func (it cslItem) reference() Reference {
	r := Reference{
		Key: string(it.ID), Type: it.Type, Title: string(it.Title), Venue: string(it.Container),
		Volume: string(it.Volume), Pages: string(it.Page), Publisher: string(it.Publisher),
		DOI: string(it.DOI), URL: string(it.URL), Abstract: stripTags(string(it.Abstract)),
		Year: it.Issued.year(),
	}
	names := it.Author
	if len(names) == 0 {
		names = it.Editor
	}
	for _, n := range names {
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

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
