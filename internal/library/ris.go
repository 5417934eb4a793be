package library

import (
	"regexp"
	"strings"
)

// RIS, as Zotero, EndNote and the publishers' sites export it: a record is lines of
// "XX  - value" from "TY  - " to "ER  - ". Some exporters wrap long values: a line that is
// not a tag continues the value above it.

var risTag = regexp.MustCompile(`^([A-Z][A-Z0-9])  -( (.*))?$`)

// risTypes names RIS record types as the other formats do.
var risTypes = map[string]string{
	"JOUR": "article", "JFULL": "article", "MGZN": "article", "NEWS": "article", "BOOK": "book", "EBOOK": "book",
	"CHAP": "incollection", "ECHAP": "incollection", "CONF": "inproceedings", "CPAPER": "inproceedings",
	"THES": "thesis", "RPRT": "report", "ELEC": "online", "WEB": "online", "GEN": "misc", "PREPRINT": "preprint",
}

// ParseRIS reads the references of a RIS file. A record without a title, or one that is
// cut off (no ER and no title), is skipped with its line and why.
func ParseRIS(data []byte, file string) ([]Reference, []Skipped) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	var refs []Reference
	var skipped []Skipped
	var (
		cur   map[string][]string
		start int
		last  string // the tag the next continuation line belongs to
	)
	flush := func(closed bool) {
		if cur == nil {
			return
		}
		r := risReference(cur)
		switch why := r.finish(file); {
		case why != "" && !closed:
			skipped = append(skipped, Skipped{File: file, Line: start, Key: r.Key, Reason: "the record is cut off (no ER line) and " + why})
		case why != "":
			skipped = append(skipped, Skipped{File: file, Line: start, Key: r.Key, Reason: why})
		default:
			refs = append(refs, r)
		}
		cur, last = nil, ""
	}
	for i, line := range strings.Split(text, "\n") {
		m := risTag.FindStringSubmatch(strings.TrimRight(line, " \t"))
		if m == nil {
			// A wrapped value goes on; anything else between records is not ours.
			if cur != nil && last != "" && strings.TrimSpace(line) != "" {
				vs := cur[last]
				vs[len(vs)-1] += " " + strings.TrimSpace(line)
			}
			continue
		}
		tag, value := m[1], strings.TrimSpace(m[3])
		switch {
		case tag == "TY":
			flush(false)
			cur, start = map[string][]string{"TY": {value}}, i+1
			last = "TY"
		case tag == "ER":
			flush(true)
		case cur != nil:
			cur[tag] = append(cur[tag], value)
			last = tag
		}
	}
	flush(false)
	return refs, skipped
}

// risReference makes a reference of a record's tags.
func risReference(t map[string][]string) Reference {
	first := func(tags ...string) string {
		for _, tag := range tags {
			for _, v := range t[tag] {
				if v = strings.TrimSpace(v); v != "" {
					return v
				}
			}
		}
		return ""
	}
	r := Reference{
		Key:       first("ID"),
		Type:      risTypes[first("TY")],
		Title:     first("TI", "T1", "CT", "BT"),
		Venue:     first("T2", "JF", "JO", "JA", "J2", "BT"),
		Volume:    first("VL"),
		Publisher: first("PB"),
		URL:       first("UR", "L2"),
		Abstract:  first("AB", "N2"),
		DOI:       first("DO", "M3"),
	}
	if r.Type == "" {
		r.Type = strings.ToLower(first("TY"))
	}
	if r.Venue == r.Title { // BT is the title of a whole book
		r.Venue = first("T2", "JF", "JO", "JA", "J2")
	}
	r.Year = year(first("PY", "Y1", "DA", "Y2"))
	if sp, ep := first("SP"), first("EP"); sp != "" && ep != "" {
		r.Pages = sp + "–" + ep
	} else {
		r.Pages = sp
	}
	for _, tag := range []string{"AU", "A1", "A3", "A4"} {
		r.Authors = append(r.Authors, t[tag]...)
	}
	for _, k := range t["KW"] {
		for _, kw := range strings.FieldsFunc(k, func(r rune) bool { return r == ';' }) {
			r.Keywords = append(r.Keywords, kw)
		}
	}
	return r
}
