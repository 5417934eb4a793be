package library

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/fulltext"
)

// Limits bound what the library reads of an export, so that no file, however it is
// written, costs more memory or time than a large honest one: a few hundred bytes of
// nested BibTeX macros must not expand to gigabytes, nor one line of a million authors
// fill the index. What a cap skips or cuts is named in the file's report, as a malformed
// entry is. A zero field means its default (DefaultLimits).
type Limits struct {
	// FileBytes is the largest export file read; a larger one is skipped whole, named.
	FileBytes int64

	// ValueBytes is the longest a BibTeX field or @string value may grow by expanding
	// macros (the entry or macro that would is skipped), and the longest a RIS value may
	// grow by wrapped lines (the rest is dropped).
	ValueBytes int
	// ExpandBytes is what all the macro expansions of one BibTeX file may add up to: an
	// entry or macro that would spend more is skipped.
	ExpandBytes int
	// MacroDepth is how many levels of macros a BibTeX @string may be defined through
	// (a = "x", b = a # a: b is of depth 2); a deeper one is skipped.
	MacroDepth int

	// Field caps, in every format. A longer title, abstract or other text (venue,
	// publisher, volume, pages, type, each name and keyword) is cut at a word and marked
	// "…"; a longer URL is dropped; a longer citation key or DOI skips the reference,
	// since an id cut short would name another work.
	TitleBytes, AbstractBytes, TextBytes, IDBytes int
	// Authors and Keywords are how many names and keywords a reference keeps: the first
	// ones, in the export's order.
	Authors, Keywords int

	// Reports is how many skipped or cut entries one file names; the rest are counted
	// in one last line.
	Reports int

	// TextTimeout and TextMemory cap reading one full text: the time, and the address
	// space of the PDF extractor (fulltext.Limits; zero: its defaults). FileBytes caps
	// a full text's size as it caps an export's.
	TextTimeout time.Duration
	TextMemory  int64
}

// DefaultLimits are generous for honest exports. An export of 64 MiB holds some 35,000
// references with full abstracts (BenchmarkLibrary's run 1.8 KB each) and costs the
// parser a few hundred MB to read; a larger library can be split over several exports,
// or the cap raised (the literature server's --max-file-mb). No real title runs to
// 2,000 bytes nor abstract to 32 KiB; papers with thousands of authors exist (physics
// collaborations), and keep their first thousand.
func DefaultLimits() Limits {
	return Limits{
		FileBytes:     64 << 20,
		ValueBytes:    256 << 10,
		ExpandBytes:   16 << 20,
		MacroDepth:    8,
		TitleBytes:    2000,
		AbstractBytes: 32 << 10,
		TextBytes:     1000,
		IDBytes:       2000,
		Authors:       1000,
		Keywords:      200,
		Reports:       1000,
	}
}

// orDefaults is l with each zero (or negative) field at its default.
func (l Limits) orDefaults() Limits {
	d := DefaultLimits()
	if l.FileBytes <= 0 {
		l.FileBytes = d.FileBytes
	}
	for _, f := range []struct{ v, d *int }{
		{&l.ValueBytes, &d.ValueBytes}, {&l.ExpandBytes, &d.ExpandBytes}, {&l.MacroDepth, &d.MacroDepth},
		{&l.TitleBytes, &d.TitleBytes}, {&l.AbstractBytes, &d.AbstractBytes}, {&l.TextBytes, &d.TextBytes},
		{&l.IDBytes, &d.IDBytes}, {&l.Authors, &d.Authors}, {&l.Keywords, &d.Keywords}, {&l.Reports, &d.Reports},
	} {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	return l
}

// begin is how each format's parser starts: the limits with their defaults, a file over
// FileBytes refused whole (big), and the byte-order mark an export may start with dropped.
func (l Limits) begin(file string, data []byte) (_ Limits, text []byte, big []Skipped) {
	l = l.orDefaults()
	if big := l.tooLarge(file, int64(len(data))); big != nil {
		return l, nil, big
	}
	return l, bytes.TrimPrefix(data, []byte("\ufeff")), nil
}

// tooLarge is the report of a file over FileBytes, or nil.
func (l Limits) tooLarge(file string, size int64) []Skipped {
	if size <= l.FileBytes {
		return nil
	}
	is := bytesText(size)
	if !strings.HasSuffix(is, " bytes") {
		is += fmt.Sprintf(" (%d bytes)", size) // 1.0 MiB may be over a cap of 1 MiB
	}
	return []Skipped{{File: file, Reason: fmt.Sprintf("not read: it is %s, over the cap of %s on one export file; split the export, or raise the cap (literature --max-file-mb)",
		is, bytesText(l.FileBytes))}}
}

// bytesText writes a size as people read it: 64 MiB, 256 KiB, 177.2 MiB, 900 bytes.
func bytesText(n int64) string { return fulltext.Size(n) }

// cutText cuts s to at most max bytes, at a word where there is one in its second half,
// and marks the cut with "…".
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…"
	cut := max - len(mark)
	if cut <= 0 {
		return ""
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > cut/2 {
		cut = sp
	}
	return strings.TrimRight(s[:cut], " ") + mark
}

// report collects what a parser skipped or cut in one file, naming at most max entries
// and counting the rest.
type report struct {
	file string
	max  int
	list []Skipped
	more int
}

func newReport(file string, lim Limits) *report { return &report{file: file, max: lim.Reports} }

// add names an entry, its key cut short: a key of a malformed entry may run on for a line.
func (r *report) add(s Skipped) {
	if len(r.list) >= r.max {
		r.more++
		return
	}
	s.File = r.file
	s.Key = cutText(s.Key, 200)
	r.list = append(r.list, s)
}

// done is the report: the entries named, and a line for those that were not.
func (r *report) done() []Skipped {
	if r.more > 0 {
		r.list = append(r.list, Skipped{File: r.file, Reason: fmt.Sprintf("and %d more entries skipped or cut (a file's report names the first %d)", r.more, r.max)})
	}
	return r.list
}

// kept adds the note of a reference kept with fields cut to the caps, if any were.
func (r *report) kept(line int, ref Reference, cuts []string) {
	if len(cuts) > 0 {
		r.add(Skipped{Line: line, Key: ref.Key, Reason: "kept, cut to the library's caps: " + strings.Join(cuts, "; ")})
	}
}

// capFields holds a finished reference to the field caps. It returns why the reference
// must be skipped (an id over the cap), or what it cut.
func (r *Reference) capFields(lim Limits) (why string, cuts []string) {
	if len(r.Key) > lim.IDBytes {
		return fmt.Sprintf("its citation key is over %s", bytesText(int64(lim.IDBytes))), nil
	}
	if len(r.DOI) > lim.IDBytes {
		return fmt.Sprintf("its DOI is over %s", bytesText(int64(lim.IDBytes))), nil
	}
	if len(r.URL) > lim.IDBytes {
		r.URL = ""
		cuts = append(cuts, fmt.Sprintf("url dropped (over %s)", bytesText(int64(lim.IDBytes))))
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{
		{"title", &r.Title, lim.TitleBytes}, {"abstract", &r.Abstract, lim.AbstractBytes},
		{"venue", &r.Venue, lim.TextBytes}, {"publisher", &r.Publisher, lim.TextBytes},
		{"volume", &r.Volume, lim.TextBytes}, {"pages", &r.Pages, lim.TextBytes}, {"type", &r.Type, lim.TextBytes},
	} {
		if len(*f.v) > f.max {
			*f.v = cutText(*f.v, f.max)
			cuts = append(cuts, fmt.Sprintf("%s cut to %s", f.name, bytesText(int64(f.max))))
		}
	}
	for _, f := range []struct {
		what string
		list []string
	}{{"author names", r.Authors}, {"keywords", r.Keywords}} {
		if long := cutEach(f.list, lim.TextBytes); long > 0 {
			cuts = append(cuts, fmt.Sprintf("%d %s cut to %s", long, f.what, bytesText(int64(lim.TextBytes))))
		}
	}
	return "", cuts
}

// cutEach cuts each text of list longer than limit, in place, and says how many it cut.
func cutEach(list []string, limit int) int {
	long := 0
	for i, s := range list {
		if len(s) > limit {
			list[i] = cutText(s, limit)
			long++
		}
	}
	return long
}
