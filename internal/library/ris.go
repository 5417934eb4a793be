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

// ParseRIS reads the references of a RIS file within DefaultLimits.
func ParseRIS(data []byte, file string) ([]Reference, []Skipped) {
	return DefaultLimits().ParseRIS(data, file)
}

// ParseRIS reads the references of a RIS file. A record without a title, or one that is
// cut off (no ER and no title), is skipped with its line and why. A value wrapped over
// more lines than ValueBytes holds keeps what fits.
func (l Limits) ParseRIS(data []byte, file string) ([]Reference, []Skipped) {
	l, data, big := l.begin(file, data)
	if big != nil {
		return nil, big
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	var refs []Reference
	rep := newReport(file, l)
	var (
		cur   map[string][]string
		start int
		last  string          // the tag the next continuation line belongs to
		wrap  strings.Builder // the continuation lines of last's value, joined at the next tag
	)
	// unwrap ends the value a continuation line would go on: a builder, not +=, so a
	// value of many short lines costs its length, not its length squared.
	unwrap := func() {
		if wrap.Len() > 0 {
			vs := cur[last]
			vs[len(vs)-1] += wrap.String()
			wrap.Reset()
		}
	}
	flush := func(closed bool) {
		if cur == nil {
			return
		}
		unwrap()
		r := risReference(cur)
		switch why, cuts := r.finish(file, l); {
		case why != "" && !closed:
			rep.add(Skipped{Line: start, Key: r.Key, Reason: "the record is cut off (no ER line) and " + why})
		case why != "":
			rep.add(Skipped{Line: start, Key: r.Key, Reason: why})
		default:
			rep.kept(start, r, cuts)
			refs = append(refs, r)
		}
		cur, last = nil, ""
	}
	i := 0
	for line := range strings.Lines(text) {
		i++
		line = strings.TrimSuffix(line, "\n")
		m := risTag.FindStringSubmatch(strings.TrimRight(line, " \t"))
		if m == nil {
			// A wrapped value goes on; anything else between records is not ours.
			if more := strings.TrimSpace(line); cur != nil && last != "" && more != "" {
				vs := cur[last]
				if len(vs[len(vs)-1])+wrap.Len()+1+len(more) <= l.ValueBytes {
					wrap.WriteByte(' ')
					wrap.WriteString(more)
				}
			}
			continue
		}
		unwrap()
		tag, value := m[1], strings.TrimSpace(m[3])
		switch {
		case tag == "TY":
			flush(false)
			cur, start = map[string][]string{"TY": {value}}, i
			last = "TY"
		case tag == "ER":
			flush(true)
		case cur != nil:
			cur[tag] = append(cur[tag], value)
			last = tag
		}
	}
	flush(false)
	return refs, rep.done()
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
	r.Attachments = risFiles(append(append([]string{}, t["L1"]...), t["L4"]...))
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
