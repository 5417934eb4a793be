package library

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// macroBomb is a BibTeX file of a few hundred bytes whose last macro, expanded, is
// 10^(levels+1) bytes: m0 is ten bytes, and each level is ten of the one before.
func macroBomb(levels int) string {
	var b strings.Builder
	b.WriteString(`@string{m0 = "xxxxxxxxxx"}` + "\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "@string{m%d = %sm%d}\n", i, strings.Repeat(fmt.Sprintf("m%d # ", i-1), 9), i-1)
	}
	fmt.Fprintf(&b, "@article{bomb, title = m%d, abstract = m%[1]d # m%[1]d, author = m%[1]d}\n", levels)
	b.WriteString("@article{after, title = {Read after the bomb}}\n")
	return b.String()
}

// outputBytes is what a parse returns, in bytes of text.
func outputBytes(refs []Reference, skipped []Skipped) int {
	n := 0
	for _, r := range refs {
		n += len(r.ID) + len(r.DOI) + len(r.Key) + len(r.Type) + len(r.Title) + len(r.Venue) + len(r.Volume) +
			len(r.Pages) + len(r.Publisher) + len(r.URL) + len(r.Abstract)
		for _, s := range slices.Concat(r.Authors, r.Keywords, r.Files) {
			n += len(s)
		}
	}
	for _, s := range skipped {
		n += len(s.String())
	}
	return n
}

func reasons(skipped []Skipped) string {
	var out []string
	for _, s := range skipped {
		out = append(out, s.String())
	}
	return strings.Join(out, "\n")
}

func keys(refs []Reference) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Key)
	}
	return out
}

// TestBibTeXMacroBomb: seven levels of ten-fold macros (10^8 bytes once expanded, in a
// file of some 600 bytes) read as a few skipped macros and one skipped entry, within a
// few MB of memory, and the entry after the bomb is read; ten levels cost no more.
func TestBibTeXMacroBomb(t *testing.T) {
	for _, levels := range []int{7, 10} {
		src := macroBomb(levels)
		if levels == 7 && len(src) > 700 {
			t.Fatalf("the bomb is %d bytes, want about 700 at most", len(src))
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		refs, skipped := ParseBibTeX([]byte(src), "bomb.bib")
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("%d levels: the parse allocated %d bytes, want at most 8 MiB", levels, alloc)
		}
		if !slices.Equal(keys(refs), []string{"after"}) {
			t.Errorf("%d levels: read %q, want only the entry after the bomb", levels, keys(refs))
		}
		got := reasons(skipped)
		for _, want := range []string{
			"bomb.bib:6: @string m5: it would be over 256 KiB once its macros are expanded",
			"bomb.bib:7: @string m6: it uses macro m5, which was skipped",
			fmt.Sprintf("@string m%d: it uses macro m%d, which was skipped", levels, levels-1),
			fmt.Sprintf("(bomb): field title: it uses macro m%d, which was skipped", levels),
		} {
			if !strings.Contains(got, want) {
				t.Errorf("%d levels: skipped lacks %q:\n%s", levels, want, got)
			}
		}
		if n := outputBytes(refs, skipped); n > 2000 {
			t.Errorf("%d levels: %d bytes of output, want under 2,000:\n%s", levels, n, got)
		}
	}
}

// TestBibTeXMacroCaps: each cap on macro expansion skips what would pass it, names it,
// and reads on; text written out is not expansion, and costs nothing. And a value left
// open ends at the next line that starts an entry, not at the end of the file (which,
// for each of many such entries in turn, took time in the square of the file's size).
func TestBibTeXMacroCaps(t *testing.T) {
	lim := Limits{ValueBytes: 100, ExpandBytes: 250, MacroDepth: 3}
	ten := `@string{a = "0123456789"}` + "\n"
	eleven := strings.Repeat("a # ", 10) + "a"
	fifty := `@string{f = "` + strings.Repeat("x", 50) + `"}` + "\n"
	tests := []struct {
		name    string
		src     string
		kept    []string
		skipped []string // what the reasons hold, in order
	}{
		{"a macro over the value cap, and what uses it",
			ten + "@string{b = " + eleven + "}\n@misc{k, title = b}\n@misc{ok, title = a # a}\n",
			[]string{"ok"}, []string{"t.bib:2: @string b: it would be over 100 bytes once its macros are expanded", "t.bib:3 (k): field title: it uses macro b, which was skipped"}},
		{"a field over the value cap",
			ten + "@misc{k, note = {n}, title = " + eleven + ", year = 2020}\n@misc{ok, title = a}\n",
			[]string{"ok"}, []string{"t.bib:2 (k): field title: it would be over 100 bytes once its macros are expanded"}},
		{"text written out is not capped",
			"@misc{k, title = {" + strings.Repeat("y", 150) + "} # { and more}}\n",
			[]string{"k"}, nil},
		{"the file's expansion budget",
			fifty + "@misc{e1, title = f}\n@misc{e2, title = f}\n@misc{e3, title = f}\n@misc{e4, title = f}\n@misc{e5, title = f}\n@misc{e6, title = f}\n@misc{e7, title = {Written out}}\n",
			[]string{"e1", "e2", "e3", "e4", "e5", "e7"}, []string{"t.bib:7 (e6): field title: its macros would take the file's expansion over its budget of 250 bytes"}},
		{"macros too deep",
			"@string{a = {x}}\n@string{b = a}\n@string{c = b}\n@string{d = c}\n@misc{k, title = c}\n@misc{deep, title = d}\n",
			[]string{"k"}, []string{"t.bib:4: @string d: it is defined through more than 3 levels of macros", "(deep): field title: it uses macro d, which was skipped"}},
		{"a refused macro defined again",
			ten + "@string{b = " + eleven + "}\n@string{b = {Defined again}}\n@misc{k, title = b}\n",
			[]string{"k"}, []string{"@string b: it would be over"}},
		{"a refused month is not the month",
			ten + "@string{jan = " + eleven + "}\n@misc{k, title = jan}\n@misc{feb, title = feb}\n",
			[]string{"feb"}, []string{"@string jan: it would be over", "(k): field title: it uses macro jan, which was skipped"}},
		{"an unclosed value ends at the next entry, which is read",
			"@misc{k1, title = {Never closed,\n@misc{k2, title = \"Never closed either,\n@misc{k3, title = {Read}}\n",
			[]string{"k3"}, []string{"t.bib:1 (k1): field title: its braces are not closed before the next entry starts", "t.bib:2 (k2): field title: its quotes are not closed before the next entry starts"}},
		{"on one line, what follows the refused is read",
			ten + "@string{b = " + eleven + "} @misc{k1, title = b # {x}, year = 2020} @misc{k2, title = {Same line}}\n",
			[]string{"k2"}, []string{"@string b: it would be over", "(k1): field title: it uses macro b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refs, skipped := lim.ParseBibTeX([]byte(tt.src), "t.bib")
			if !slices.Equal(keys(refs), tt.kept) {
				t.Errorf("read %q, want %q; skipped:\n%s", keys(refs), tt.kept, reasons(skipped))
			}
			if len(skipped) != len(tt.skipped) {
				t.Fatalf("skipped:\n%s\nwant %d", reasons(skipped), len(tt.skipped))
			}
			for i, want := range tt.skipped {
				if !strings.Contains(skipped[i].String(), want) {
					t.Errorf("skipped[%d] = %q, want it to hold %q", i, skipped[i], want)
				}
			}
		})
	}
	if refs, _ := lim.ParseBibTeX([]byte(ten+"@string{b = a # { and } # a}\n@misc{k, title = b}"), "t.bib"); len(refs) != 1 || refs[0].Title != "0123456789 and 0123456789" {
		t.Errorf("a macro under the caps: %+v", refs)
	}
}

// TestFileCap: a file over the cap is not parsed, and the report names it and the cap,
// in each format and in a library, which reads its other files.
func TestFileCap(t *testing.T) {
	lim := Limits{FileBytes: 100}
	big := []byte(strings.Repeat(" ", 101))
	for ext, parse := range Formats {
		refs, skipped := parse(lim, big, "big"+ext)
		if len(refs) != 0 || len(skipped) != 1 || skipped[0].String() != "big"+ext+": not read: it is 101 bytes, over the cap of 100 bytes on one export file; split the export, or raise the cap (literature --max-file-mb)" {
			t.Errorf("%s: %v, %v", ext, refs, skipped)
		}
		if refs, skipped := parse(lim, big[:100], "fits"+ext); len(refs) != 0 || strings.Contains(reasons(skipped), "cap") {
			t.Errorf("%s of 100 bytes: %v, %v", ext, refs, skipped)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "big.bib"), []byte("@misc{big, title = {Big}}"+strings.Repeat("\n", 300)), 0o644)
	os.WriteFile(filepath.Join(dir, "small.ris"), []byte("TY  - JOUR\nTI  - Small\nER  - \n"), 0o644)
	l, err := OpenWithLimits(dir, t.TempDir(), nil, Limits{FileBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Len() != 1 || !strings.Contains(reasons(l.Skipped()), "big.bib: not read: it is 325 bytes, over the cap of 200 bytes on one export file") {
		t.Errorf("%d references; skipped:\n%s", l.Len(), reasons(l.Skipped()))
	}
	if got := DefaultLimits().FileBytes; got != 64<<20 || bytesText(got) != "64 MiB" {
		t.Errorf("the default file cap is %s", bytesText(got))
	}
}

// work is a reference to write in each format.
type work struct {
	key, title, abstract, venue, url, doi string
	authors, keywords                     []string
}

func (w work) bibtex() string {
	return fmt.Sprintf("@article{%s,\n  title = {%s},\n  abstract = {%s},\n  journal = {%s},\n  url = {%s},\n  doi = {%s},\n  author = {%s},\n  keywords = {%s}\n}\n",
		w.key, w.title, w.abstract, w.venue, w.url, w.doi, strings.Join(w.authors, " and "), strings.Join(w.keywords, "; "))
}

func (w work) ris() string {
	var b strings.Builder
	fmt.Fprintf(&b, "TY  - JOUR\nID  - %s\nTI  - %s\nAB  - %s\nT2  - %s\nUR  - %s\nDO  - %s\n", w.key, w.title, w.abstract, w.venue, w.url, w.doi)
	for _, a := range w.authors {
		fmt.Fprintf(&b, "AU  - %s\n", a)
	}
	for _, k := range w.keywords {
		fmt.Fprintf(&b, "KW  - %s\n", k)
	}
	return b.String() + "ER  - \n"
}

func (w work) csl() string {
	var names []string
	for _, a := range w.authors {
		family, given, _ := strings.Cut(a, ", ")
		names = append(names, fmt.Sprintf(`{"family": %q, "given": %q}`, family, given))
	}
	return fmt.Sprintf(`[{"id": %q, "title": %q, "abstract": %q, "container-title": %q, "URL": %q, "DOI": %q, "author": [%s], "keyword": %q}]`,
		w.key, w.title, w.abstract, w.venue, w.url, w.doi, strings.Join(names, ", "), strings.Join(w.keywords, ", "))
}

// TestFieldCaps: in every format, a field over its cap is cut (an id: the reference is
// skipped, a URL dropped), and the report names the reference and what was cut.
func TestFieldCaps(t *testing.T) {
	lim := Limits{TitleBytes: 50, AbstractBytes: 100, TextBytes: 20, IDBytes: 40, Authors: 3, Keywords: 2}
	base := work{key: "k1", title: "A short title", abstract: "A short abstract.", venue: "J Tests", url: "https://x.org/1", doi: "10.5555/k1",
		authors: []string{"Ng, A", "Ruiz, B"}, keywords: []string{"tau", "microglia"}}
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }
	tests := []struct {
		name  string
		edit  func(*work)
		check func(Reference) bool
		note  string // what the report holds
	}{
		{"title", func(w *work) { w.title = words(30) }, func(r Reference) bool { return len(r.Title) <= 50 && strings.HasSuffix(r.Title, "word…") }, "title cut to 50 bytes"},
		{"abstract", func(w *work) { w.abstract = words(60) }, func(r Reference) bool { return len(r.Abstract) <= 100 && strings.HasPrefix(r.Abstract, "word word") }, "abstract cut to 100 bytes"},
		{"venue", func(w *work) { w.venue = words(10) }, func(r Reference) bool { return len(r.Venue) <= 20 }, "venue cut to 20 bytes"},
		{"authors", func(w *work) { w.authors = []string{"Ng, A", "Ruiz, B", "Ito, C", "Kim, D", "Lee, E"} },
			func(r Reference) bool { return slices.Equal(r.Authors, []string{"Ng, A", "Ruiz, B", "Ito, C"}) }, "authors cut to the first 3 of 5 names"},
		{"an author's name", func(w *work) { w.authors = []string{"Ng, A", "Averyveryverylongname, Ann"} },
			func(r Reference) bool { return len(r.Authors) == 2 && len(r.Authors[1]) <= 20 }, "1 author names cut to 20 bytes"},
		{"keywords", func(w *work) { w.keywords = []string{"k1", "k2", "k3", "k4"} }, func(r Reference) bool { return slices.Equal(r.Keywords, []string{"k1", "k2"}) }, "keywords cut to the first 2 of 4"},
		{"url", func(w *work) { w.url = "https://x.org/" + strings.Repeat("q", 40) }, func(r Reference) bool { return r.URL == "" && r.ID == "10.5555/k1" }, "url dropped (over 40 bytes)"},
		{"citation key", func(w *work) { w.key = strings.Repeat("k", 41) }, nil, "its citation key is over 40 bytes"},
		{"doi", func(w *work) { w.doi = "10.5555/" + strings.Repeat("d", 40) }, nil, "its DOI is over 40 bytes"},
	}
	formats := []struct {
		ext   string
		write func(work) string
		parse func(Limits, []byte, string) ([]Reference, []Skipped)
	}{
		{".bib", work.bibtex, Limits.ParseBibTeX}, {".ris", work.ris, Limits.ParseRIS}, {".json", work.csl, Limits.ParseCSL},
	}
	for _, f := range formats {
		if refs, skipped := f.parse(lim, []byte(f.write(base)), "f"+f.ext); len(refs) != 1 || len(skipped) != 0 {
			t.Fatalf("%s: a work within the caps: %+v, %v", f.ext, refs, skipped)
		}
		for _, tt := range tests {
			t.Run(f.ext+" "+tt.name, func(t *testing.T) {
				w := base
				tt.edit(&w)
				refs, skipped := f.parse(lim, []byte(f.write(w)), "f"+f.ext)
				if len(skipped) != 1 || !strings.Contains(skipped[0].String(), tt.note) || !strings.HasPrefix(skipped[0].String(), "f"+f.ext) {
					t.Errorf("skipped:\n%s\nwant one that says %q", reasons(skipped), tt.note)
				}
				switch {
				case tt.check == nil && len(refs) != 0:
					t.Errorf("read %+v, want it skipped", refs)
				case tt.check != nil && (len(refs) != 1 || !tt.check(refs[0])):
					t.Errorf("read %+v", refs)
				case tt.check != nil && !strings.HasPrefix(skipped[0].Reason, "kept, cut to the library's caps: "):
					t.Errorf("the note of a kept reference: %q", skipped[0].Reason)
				}
			})
		}
	}
}

// TestLongLists: a list of many names, keywords or wrapped lines costs its length, and
// keeps what the caps keep.
func TestLongLists(t *testing.T) {
	const n = 200000
	lim := Limits{ValueBytes: 1000, AbstractBytes: 5000, Authors: 3, Keywords: 2}
	bib := "@misc{k, title = {Many}, author = {" + strings.Repeat("A, B and ", n) + "C, D}, keywords = {" + strings.Repeat("x;", n) + "y}}"
	csl := `[{"id": "k", "title": "Many", "author": [` + strings.Repeat("{}, ", n) + `{"literal": "Z"}]}]`
	ris := "TY  - JOUR\nTI  - Many\nAB  - first\n" + strings.Repeat("  wrapped\n", n) + "ER  - \n"
	var kws strings.Builder // distinct keywords: deduplicating them all would take n² steps
	kws.WriteString("@misc{k, title = {Many}, keywords = {")
	for i := range n {
		fmt.Fprintf(&kws, "k%d;", i)
	}
	kws.WriteString("y}}")
	for _, tt := range []struct {
		name  string
		parse func(Limits, []byte, string) ([]Reference, []Skipped)
		src   string
		check func(Reference) bool
		note  string
	}{
		{"bibtex names", Limits.ParseBibTeX, bib, func(r Reference) bool { return slices.Equal(r.Authors, []string{"A, B", "A, B", "A, B"}) }, fmt.Sprintf("authors cut to the first 3 of %d names", n+1)},
		{"bibtex keywords", Limits.ParseBibTeX, kws.String(), func(r Reference) bool { return slices.Equal(r.Keywords, []string{"k0", "k1"}) }, fmt.Sprintf("keywords cut to the first 2 of %d", n+1)},
		{"csl names", Limits.ParseCSL, csl, func(r Reference) bool { return len(r.Authors) == 0 }, fmt.Sprintf("authors cut to the first 3 of %d names", n+1)},
		{"bibtex a name of many words", Limits.ParseBibTeX, "@misc{k, title = {Many}, author = {" + strings.Repeat("a ", n) + "Last}}",
			func(r Reference) bool { return len(r.Authors) == 1 && len(r.Authors[0]) <= DefaultLimits().TextBytes }, "1 author names cut to 1000 bytes"},
		{"csl a date of many parts", Limits.ParseCSL, `[{"id": "k", "title": "Many", "issued": {"date-parts": [[2021` + strings.Repeat(", 1", n) + `]]}}]`,
			func(r Reference) bool { return r.Year == 2021 }, ""},
		{"ris wrapped lines", Limits.ParseRIS, ris, func(r Reference) bool {
			return len(r.Abstract) <= 1000 && len(r.Abstract) > 990 && strings.HasPrefix(r.Abstract, "first wrapped wrapped")
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			refs, skipped := tt.parse(lim, []byte(tt.src), "f")
			if len(refs) != 1 || !tt.check(refs[0]) {
				t.Errorf("read %.300v", refs)
			}
			if got := reasons(skipped); (tt.note == "") != (got == "") || !strings.Contains(got, tt.note) {
				t.Errorf("skipped %q, want %q", got, tt.note)
			}
		})
	}
}

// TestReportCap: a file of many bad entries names the first Reports of them, and counts
// the rest, in each format.
func TestReportCap(t *testing.T) {
	lim := Limits{Reports: 10}
	for _, tt := range []struct {
		ext string
		src string
	}{
		{".bib", strings.Repeat("@misc{k}\n", 30)},
		{".ris", strings.Repeat("TY  - JOUR\nER  - \n", 30)},
		{".json", "[" + strings.Repeat("{}, ", 29) + "{}]"},
	} {
		refs, skipped := Formats[tt.ext](lim, []byte(tt.src), "f"+tt.ext)
		if len(refs) != 0 || len(skipped) != 11 || !strings.Contains(skipped[0].Reason, "no title") ||
			skipped[10].String() != "f"+tt.ext+": and 20 more entries skipped or cut (a file's report names the first 10)" {
			t.Errorf("%s: %d refs, skipped:\n%s", tt.ext, len(refs), reasons(skipped))
		}
	}
}

func TestCutText(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"three words here", 12, "three…"},
		{"unbrokenwordthatislong", 10, "unbroke…"},
		{"ééééé", 8, "éé…"}, // never inside a character
		{"abc", 2, ""},
	} {
		if got := cutText(tt.in, tt.max); got != tt.want || len(got) > tt.max {
			t.Errorf("cutText(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}
