package library

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cosci-dev/cosci/internal/fulltext"
	papers "github.com/cosci-dev/cosci/internal/fulltext/fixture"
)

func needPDFText(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatal("pdftotext is not installed: run make test, which installs Debian's poppler-utils, or apt-get install poppler-utils")
	}
}

func skippedText(l *Library) string {
	var out []string
	for _, s := range l.Skipped() {
		out = append(out, s.String())
	}
	return strings.Join(out, "\n")
}

// TestFixtureFullTexts: the test library's full texts are found through the exports'
// file fields (BibTeX and RIS) and a folder named by a DOI, searched by passage, and the
// encrypted one named and skipped.
func TestFixtureFullTexts(t *testing.T) {
	needPDFText(t)
	l := open(t, fixture(t), t.TempDir())
	if n := l.Texts(); n != 3 {
		t.Errorf("%d references with a full text, want 3 (Ito's and Kim's PDFs, Ruan's JATS)", n)
	}
	for id, want := range map[string]string{
		"10.5555/cosci.tau.001": "files/12/Ito et al. - 2021 - Microglia carry tau between synapses in exosomes.pdf",
		"10.5555/cosci.tau.011": "files/14/Kim and Santos - 2021 - BIN1 regulates tau propagation.pdf",
		"10.5555/cosci.tau.017": "fulltext/10.5555_cosci.tau.017/PMC9000017.nxml",
	} {
		_, tx, doc, ok := l.FullText(id)
		if !ok || tx.Name != want || len(doc.Passages) == 0 {
			t.Errorf("%s: full text %q (%d passages), want %s", id, tx.Name, len(doc.Passages), want)
		}
	}
	if s := skippedText(l); !strings.Contains(s, "files/13/Rauch et al. - 2020 - LRP1 is a master regulator of tau uptake and spread.pdf: encrypted: it needs a password to open") {
		t.Errorf("the encrypted PDF is not named:\n%s", s)
	}
	res, err := l.Search(context.Background(), Query{Text: "exosome inhibition GW4869 seeding dentate gyrus"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Passages) == 0 {
		t.Fatal("no passages found")
	}
	best := res.Passages[0]
	if best.ID != "10.5555/cosci.tau.001" || best.PassageID.String() != "10.5555/cosci.tau.001#p1.13" || best.Passage.Page != 1 || best.Passage.Section != fulltext.SectionResults ||
		!strings.Contains(best.Passage.Text, "Exosome inhibition lowered seeding activity in the dentate gyrus by 46%") || best.Title == "" {
		t.Errorf("best passage: %+v", best)
	}
	per := map[string]int{}
	for _, p := range res.Passages {
		if per[p.ID]++; per[p.ID] > perSource {
			t.Errorf("%d passages of %s", per[p.ID], p.ID)
		}
	}
	// A word no passage holds does not empty the results: the passages holding every word
	// come first, then those holding some.
	res, err = l.Search(context.Background(), Query{Text: "exosome inhibition seeding dentate gyrus quokka"})
	if err != nil || len(res.Passages) == 0 || res.Passages[0].PassageID.String() != "10.5555/cosci.tau.001#p1.13" {
		t.Errorf("a query with a word no passage holds: %+v, %v", res.Passages, err)
	}
	// Years bound passages as they bound references.
	res, err = l.Search(context.Background(), Query{Text: "exosome inhibition GW4869", YearTo: 2020})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Passages {
		if p.Year > 2020 {
			t.Errorf("a passage of %d for year_to 2020: %s", p.Year, p.PassageID)
		}
	}
}

// countingPDFText is a pdftotext that notes each run in a file: how the tests see which
// files the library read again.
func countingPDFText(t testing.TB) (string, func() int) {
	t.Helper()
	real, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "runs")
	script := filepath.Join(dir, "pdftotext")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho run >> '"+log+"'\nexec '"+real+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "run")
	}
}

// TestFullTextsIncremental: a file is read again only when it changed: not when the
// library is opened again, nor when a file is touched or renamed without changing; a
// changed file is read and its passages indexed again; a file gone takes its passages.
func TestFullTextsIncremental(t *testing.T) {
	needPDFText(t)
	dir, index := t.TempDir(), t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pdf := func(p papers.Paper) []byte {
		b, _, err := papers.PDF(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write("refs.bib", []byte(`@article{ito, title = {Microglia carry tau}, year = 2021, doi = {10.5555/cosci.tau.001}, file = {:papers/ito.pdf:PDF}}
@article{kim, title = {BIN1 regulates tau}, year = 2021}
@article{s3, title = {A synthetic paper}, year = 2020, doi = {10.5555/bench.3}}
`))
	write("papers/ito.pdf", pdf(papers.Ito))
	write("kim.pdf", pdf(papers.Kim))                                // named by the key
	write("10.5555%2Fbench.3/main.pdf", pdf(papers.Synthetic(3, 4))) // a folder named by the DOI
	tool, runs := countingPDFText(t)
	openLib := func() *Library {
		t.Helper()
		l, err := OpenWith(dir, index, nil, Options{PDFText: tool})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := openLib()
	if l.Texts() != 3 || runs() != 3 {
		t.Fatalf("%d full texts, %d reads; want 3 and 3\n%s", l.Texts(), runs(), skippedText(l))
	}
	l.Close()

	// Opened again, as the next server process would: nothing is read, nothing indexed.
	t0 := time.Now()
	l = openLib()
	defer func() { l.Close() }()
	if runs() != 3 || l.Texts() != 3 {
		t.Errorf("opening again read %d files", runs()-3)
	}
	// Nor is any file's digest taken: its size and time say it is unchanged (the stored
	// texts, found by digest, would hide a file read again to its extractions).
	if d := l.digests.Load(); d != 0 {
		t.Errorf("opening again took the digests of %d unchanged files", d)
	}
	ch, err := l.Refresh()
	if err != nil || ch.Any() || l.digests.Load() != 0 {
		t.Errorf("a refresh with nothing changed: %+v, %v, %d digests", ch, err, l.digests.Load())
	}
	t.Logf("opened again in %s", time.Since(t0).Round(time.Millisecond))

	// Touched (a new time, the same bytes): its digest says it is the same.
	future := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "kim.pdf"), future, future)
	if ch, err := l.Refresh(); err != nil || runs() != 3 || ch.TextsIndexed != 0 || len(ch.Texts) != 0 || l.digests.Load() != 1 {
		t.Errorf("a touched file was read again: %d reads, %d digests, %+v, %v", runs()-3, l.digests.Load(), ch, err)
	}
	// Renamed: the same text, stored by its digest, is not read again.
	if err := os.Rename(filepath.Join(dir, "kim.pdf"), filepath.Join(dir, "KIM.pdf")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Refresh(); err != nil || runs() != 3 || l.Texts() != 3 {
		t.Errorf("a renamed file was read again (%d reads) or lost (%d texts): %v", runs()-3, l.Texts(), err)
	}
	// Changed: read and indexed again.
	changed := papers.Kim
	changed.Abstract = []string{"The risk gene BIN1 controls how many extracellular vesicles microglia release, and loss of BIN1 slows the spread of tau between regions."}
	write("KIM.pdf", pdf(changed))
	ch, err = l.Refresh()
	if err != nil || runs() != 4 || ch.TextsIndexed != 1 {
		t.Errorf("a changed file: %d reads, %+v, %v", runs()-3, ch, err)
	}
	res, err := l.Search(context.Background(), Query{Text: "how many extracellular vesicles microglia release"})
	if err != nil || len(res.Passages) == 0 || res.Passages[0].PassageID.String() != "kim#p1.2" {
		t.Errorf("the changed text is not searched: %+v, %v", res.Passages, err)
	}
	// Gone: its passages with it.
	os.Remove(filepath.Join(dir, "KIM.pdf"))
	if ch, err := l.Refresh(); err != nil || ch.TextsRemoved != 1 || l.Texts() != 2 {
		t.Errorf("a file removed: %+v, %v", ch, err)
	}
	res, _ = l.Search(context.Background(), Query{Text: "how many extracellular vesicles microglia release"})
	for _, p := range res.Passages {
		if p.ID == "kim" {
			t.Errorf("a removed text's passage is found: %s", p.PassageID)
		}
	}
}

// TestFullTextsNamed: which file is whose, and what is named when nobody's.
func TestFullTextsNamed(t *testing.T) {
	needPDFText(t)
	dir, texts := t.TempDir(), t.TempDir()
	jats := papers.JATS(papers.Ruan)
	files := map[string][]byte{
		"refs.bib": []byte(`@article{ruan2021, title = {Vesicles carry seed-competent tau}, year = 2021, doi = {10.5555/cosci.tau.017}}
@article{att, title = {Attached}, year = 2020, file = {Full Text PDF:files/9/missing.pdf:application/pdf}}
@article{two, title = {Two files}, year = 2020, doi = {10.5555/two}}
`),
		"orphan.xml":                 jats, // nobody's
		"two/page.html":              []byte("<html><body><h2>Results</h2><p>An HTML copy of the paper, which the PDF beside it outranks.</p></body></html>"),
		"10.5555_cosci.tau.017.nxml": jats, // a DOI with "_" for its slash
	}
	for name, b := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	ito, _, err := papers.PDF(papers.Ito)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(texts, "10.5555", "two"), 0o755)
	os.WriteFile(filepath.Join(texts, "10.5555", "two", "paper.pdf"), ito, 0o644) // a --fulltext folder, the DOI as folders
	l, err := OpenWith(dir, t.TempDir(), nil, Options{Texts: []string{texts}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for id, want := range map[string]string{"10.5555/cosci.tau.017": "10.5555_cosci.tau.017.nxml", "10.5555/two": filepath.Join(texts, "10.5555", "two", "paper.pdf")} {
		if _, tx, _, ok := l.FullText(id); !ok || tx.Name != want {
			t.Errorf("%s: full text %q, want %q", id, tx.Name, want)
		}
	}
	s := skippedText(l)
	for _, want := range []string{
		"orphan.xml: a full text no reference claims",
		"files/9/missing.pdf (att): its export's file field attaches this full text, which is not there",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("skipped lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "page.html") {
		t.Errorf("the HTML the PDF outranks was named:\n%s", s)
	}
}

// TestFullTextsBadFiles: a library whose full texts are bad still opens, with each bad
// file named and skipped, why, and the good ones read.
func TestFullTextsBadFiles(t *testing.T) {
	needPDFText(t)
	dir := t.TempDir()
	write := func(name string, b []byte) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var bib strings.Builder
	good, _, _ := papers.PDF(papers.Kim)
	enc := papers.Kim
	enc.Protect = "x"
	encrypted, _, _ := papers.PDF(enc)
	scan, _ := papers.Scan(2)
	for key, b := range map[string][]byte{
		"good": good, "encrypted": encrypted, "corrupt": good[:len(good)/2], "scan": scan, "bomb": papers.Bomb(64 << 20),
	} {
		write(key+".pdf", b)
		bib.WriteString("@article{" + key + ", title = {Paper " + key + "}, year = 2020}\n")
	}
	bib.WriteString("@article{huge, title = {Paper huge}, year = 2020}\n")
	f, _ := os.Create(filepath.Join(dir, "huge.pdf"))
	f.Write(good)
	f.Truncate(500 << 20)
	f.Close()
	write("refs.bib", []byte(bib.String()))
	l, err := OpenWith(dir, t.TempDir(), nil, Options{Limits: Limits{TextTimeout: 500 * time.Millisecond}})
	if err != nil {
		t.Fatalf("bad full texts stopped the library: %v", err)
	}
	defer l.Close()
	if l.Texts() != 1 || l.Len() != 6 {
		t.Errorf("%d full texts of %d references; want the good one of 6", l.Texts(), l.Len())
	}
	s := skippedText(l)
	for _, want := range []string{
		"encrypted.pdf: encrypted: it needs a password",
		"corrupt.pdf: corrupt: not a PDF that can be read",
		"scan.pdf: no text layer on any of its 2 pages",
		"huge.pdf: not read: it is 500 MiB, over the cap of 64 MiB on one file (literature --max-file-mb)",
		"bomb.pdf: not read: reading it took over the cap of 500ms on one file",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("skipped lacks %q:\n%s", want, s)
		}
	}
}

// TestFetchFullText: the fetch tool reads a page, a section and a passage, and says what
// is wrong with a page, section or passage the text lacks.
func TestFetchFullText(t *testing.T) {
	needPDFText(t)
	cs := connect(t, false)
	var out FetchOutput
	get := func(args map[string]any) (string, bool) {
		t.Helper()
		text, isErr := call(t, cs, "fetch", args)
		out = FetchOutput{}
		if !isErr {
			if err := json.Unmarshal([]byte(text), &out); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
		}
		return text, isErr
	}
	get(map[string]any{"id": "ito2021microglia"})
	if out.Fulltext == nil || out.Fulltext.Pages != 3 || !slices.Equal(out.Fulltext.NoText, []int{3}) || out.Fulltext.Sections["results"] == 0 || len(out.Passages) != 0 {
		t.Errorf("fetch by id: %+v", out.Fulltext)
	}
	get(map[string]any{"id": "10.5555/cosci.tau.001", "page": 2})
	if len(out.Passages) == 0 {
		t.Fatal("page 2: no passages")
	}
	for _, p := range out.Passages {
		// Every passage with a sentence on page 2: one that runs onto it from page 1 too.
		if p.Page > 2 || max(p.Page, p.LastPage) < 2 || !strings.HasPrefix(p.Passage, fmt.Sprintf("10.5555/cosci.tau.001#p%d.", p.Page)) {
			t.Errorf("page 2 gave %+v", p)
		}
	}
	get(map[string]any{"id": "10.5555/cosci.tau.001", "section": "Materials and methods"})
	if len(out.Passages) == 0 || out.Passages[0].Section != "methods" {
		t.Errorf("the methods: %+v", out.Passages)
	}
	get(map[string]any{"id": "10.5555/cosci.tau.001#p1.13"})
	if len(out.Passages) != 1 || !strings.HasPrefix(out.Passages[0].Text, "GW4869 reduced propagation to the same degree as depletion.") || out.Title == "" {
		t.Errorf("passage p1.13: %+v", out)
	}
	get(map[string]any{"id": "10.5555/cosci.tau.017", "section": "results"})
	if len(out.Passages) == 0 || out.Passages[0].Page != 0 || !strings.HasPrefix(out.Passages[0].Passage, "10.5555/cosci.tau.017#s4.") {
		t.Errorf("the JATS text's results: %+v", out.Passages)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"id": "10.5555/cosci.tau.001", "page": 3}, "page 3 of 10.5555/cosci.tau.001 has no text layer"},
		{map[string]any{"id": "10.5555/cosci.tau.001", "page": 9}, "page 9 is out of range: the full text of 10.5555/cosci.tau.001 has 3 pages"},
		{map[string]any{"id": "10.5555/cosci.tau.001", "section": "conclusions"}, "has no conclusions section; it has abstract, discussion"},
		{map[string]any{"id": "10.5555/cosci.tau.001#p9.1"}, `has no passage "p9.1"`},
		{map[string]any{"id": "10.5555/cosci.tau.001#P9.1"}, `has no passage "p9.1"`},
		{map[string]any{"id": "10.5555/cosci.tau.001#p9"}, `names no passage: a passage's id is "<source>#p<page>.<index>"`},
		{map[string]any{"id": "p1.13"}, "is a passage's place without its source"},
		{map[string]any{"id": "10.5555/cosci.tau.017", "page": 1}, "has no pages (a jats text): fetch a section instead"},
		{map[string]any{"id": "garcia2019activity", "page": 1}, "garcia2019activity has no full text in the library"},
	} {
		text, isErr := get(tc.args)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%v: %q (error %v); want an error saying %q", tc.args, text, isErr, tc.want)
		}
	}
}

// TestAttachmentFields reads the file fields exports write.
func TestAttachmentFields(t *testing.T) {
	for _, tc := range []struct {
		field string
		want  []string
	}{
		{"Full Text PDF:files/12/Ito et al. - 2021 - Microglia.pdf:application/pdf", []string{"files/12/Ito et al. - 2021 - Microglia.pdf"}},
		{"Full Text PDF:files/1/a.pdf:application/pdf;Snapshot:files/2/b.html:text/html", []string{"files/1/a.pdf", "files/2/b.html"}},
		{`:C\:\\Users\\ada\\papers\\x.pdf:PDF`, []string{"C:/Users/ada/papers/x.pdf"}},
		{":home/ada/Mendeley/x.pdf:pdf", []string{"home/ada/Mendeley/x.pdf"}},
		{"/home/ada/Zotero/storage/AB12/x.pdf", []string{"/home/ada/Zotero/storage/AB12/x.pdf"}},
		{"Online:https\\://example.org/x.pdf:text/html", nil},
	} {
		if got := bibFiles(tc.field); !slices.Equal(got, tc.want) {
			t.Errorf("bibFiles(%q) = %q, want %q", tc.field, got, tc.want)
		}
	}
	if got := risFiles([]string{"file:///home/ada/My%20Papers/x.pdf", "files/3/y.pdf", "https://example.org/z.pdf"}); !slices.Equal(got, []string{"/home/ada/My Papers/x.pdf", "files/3/y.pdf"}) {
		t.Errorf("risFiles: %q", got)
	}
}

// TestPassagesAcrossPages: a passage that runs onto the next page (fulltext.Passage.Breaks)
// keeps its breaks in the stored text, and search and fetch give them with its last page;
// a fetch of that next page gives it, so that every sentence on the page is there. The
// reader's breaks are the fulltext tests'; here a stored text is given one.
func TestPassagesAcrossPages(t *testing.T) {
	needPDFText(t)
	l := open(t, fixture(t), t.TempDir())
	_, tx, doc, ok := l.FullText("10.5555/cosci.tau.001")
	i := slices.IndexFunc(doc.Passages, func(p fulltext.Passage) bool { return p.ID == "p1.13" })
	if !ok || i < 0 {
		t.Fatalf("no passage p1.13 in Ito's text: %v", ok)
	}
	second := strings.Index(doc.Passages[i].Text, ". ") + 2 // its second sentence starts page 2
	doc.Passages[i].Breaks = []int{second}
	if err := l.storeText(tx.Digest, doc); err != nil {
		t.Fatal(err)
	}
	clear(l.headers)
	srv := Server(l)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	crossing := fmt.Sprintf(`p1.13 at page 1, last_page 2, breaks [%d]`, second)
	// gives says whether a result's JSON (the text a client reads) gives the passage
	// crossing onto page 2 with its last page and breaks.
	gives := func(text string) bool {
		var out struct {
			Passages []struct {
				Passage  string
				Page     int
				LastPage int `json:"last_page"`
				Breaks   []int
			}
		}
		json.Unmarshal([]byte(text), &out)
		for _, p := range out.Passages {
			if p.Passage == "10.5555/cosci.tau.001#p1.13" {
				return p.Page == 1 && p.LastPage == 2 && slices.Equal(p.Breaks, []int{second})
			}
		}
		return false
	}

	text, isErr := call(t, cs, "search", map[string]any{"query": "exosome inhibition GW4869 seeding dentate gyrus"})
	if isErr || !gives(text) {
		t.Errorf("search does not give %s:\n%s", crossing, text)
	}
	for _, args := range []map[string]any{
		{"id": "10.5555/cosci.tau.001#p1.13"},
		{"id": "10.5555/cosci.tau.001", "page": 1},
		{"id": "10.5555/cosci.tau.001", "page": 2}, // its second sentence is on page 2
	} {
		text, isErr := call(t, cs, "fetch", args)
		var out FetchOutput
		if isErr || json.Unmarshal([]byte(text), &out) != nil || !gives(text) {
			t.Errorf("fetch %v does not give the passage that crosses onto page 2: %s:\n%s", args, crossing, text)
		}
		if page, ok := args["page"].(int); ok {
			for _, p := range out.Passages {
				if p.Page > page || max(p.Page, p.LastPage) < page {
					t.Errorf("fetch of page %d gives %s (pages %d to %d)", page, p.Passage, p.Page, p.LastPage)
				}
			}
		}
	}
	if text, _ := call(t, cs, "fetch", map[string]any{"id": "10.5555/cosci.tau.001", "page": 2}); !strings.Contains(text, "#p2.1") {
		t.Errorf("fetch of page 2 lacks the passages that start on it:\n%s", text)
	}
}

// TestFetchUnread: a reference whose full text could not be read says which file and why,
// in the fetch of it and of its pages, as the server's log names it.
func TestFetchUnread(t *testing.T) {
	needPDFText(t)
	cs := connect(t, false)
	text, isErr := call(t, cs, "fetch", map[string]any{"id": "rauch2020lrp1"})
	want := "its full text was not read: files/13/Rauch et al. - 2020 - LRP1 is a master regulator of tau uptake and spread.pdf: encrypted: it needs a password to open"
	var out FetchOutput
	if isErr || json.Unmarshal([]byte(text), &out) != nil || !strings.HasPrefix(out.FulltextNote, want) || out.Fulltext != nil {
		t.Errorf("fetch of a reference whose full text is encrypted: %s; want a fulltext_note saying %q", text, want)
	}
	if text, isErr := call(t, cs, "fetch", map[string]any{"id": "rauch2020lrp1", "page": 1}); !isErr || !strings.Contains(text, want) {
		t.Errorf("fetch of a page of it: %q (error %v); want an error saying %q", text, isErr, want)
	}
	if text, _ := call(t, cs, "fetch", map[string]any{"id": "ito2021microglia"}); strings.Contains(text, "fulltext_note") {
		t.Errorf("a full text read whole has a note: %s", text)
	}
}
