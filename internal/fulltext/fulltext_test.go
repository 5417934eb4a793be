package fulltext

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/fulltext/fixture"
)

// needPDFText skips nothing: make test installs poppler-utils (the Makefile's pdftotext
// target), so a machine without it is a broken set-up, said so.
func needPDFText(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatal("pdftotext is not installed: run make test, which installs Debian's poppler-utils, or apt-get install poppler-utils")
	}
}

func writePDF(t *testing.T, p fixture.Paper) (string, fixture.Layout) {
	t.Helper()
	data, lay, err := fixture.PDF(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "paper.pdf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, lay
}

// found is where a placed paragraph is in a document's passages: the passage it starts in,
// and whether the passages from there hold it whole, word for word.
func found(doc Document, text string) (Passage, bool) {
	unhyphen := func(s string) string { return strings.ReplaceAll(s, "-", "") }
	head := unhyphen(text[:min(len(text), 60)])
	for i, p := range doc.Passages {
		if !strings.Contains(unhyphen(p.Text), head) {
			continue
		}
		var run strings.Builder
		for _, q := range doc.Passages[i:min(i+4, len(doc.Passages))] {
			run.WriteString(q.Text + " ")
		}
		return p, strings.Contains(run.String(), text)
	}
	return Passage{}, false
}

// TestPDFPassages reads the fixture's papers through pdftotext and checks each paragraph
// against where the layout put it: whole and word for word (hyphenated words joined
// again, ligatures unfolded), in its section, on its page; the references, running heads
// and page numbers nowhere; the scanned page named; the ids stable.
func TestPDFPassages(t *testing.T) {
	needPDFText(t)
	for _, tc := range []struct {
		name  string
		paper fixture.Paper
		// exact is the share of paragraphs that must be found word for word: all of the
		// hand-written papers; of synthetic ones, which set one word in 40 as a made-up
		// compound (far more than papers do) that the hyphen rule has nothing to go on
		// for when a line end breaks it, nine in ten.
		exact float64
	}{
		{"ito (two columns, a table, a scanned page)", fixture.Ito, 1},
		{"kim (a page written row by row)", fixture.Kim, 1},
		{"synthetic 10 pages", fixture.Synthetic(3, 10), 0.9},
		{"synthetic 12 pages", fixture.Synthetic(11, 12), 0.9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, lay := writePDF(t, tc.paper)
			doc, err := Reader{}.Read(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Pages != lay.Pages || !slices.Equal(doc.NoText, lay.Scanned) {
				t.Errorf("pages %d, no text on %v; the layout made %d, scanned %v", doc.Pages, doc.NoText, lay.Pages, lay.Scanned)
			}
			total, whole := 0, 0
			var last int = -1
			for _, pl := range lay.Paragraphs {
				if pl.Section == "references" {
					continue
				}
				total++
				p, ok := found(doc, pl.Text)
				if p.ID == "" {
					t.Errorf("%s paragraph %d (page %d) not found: %.80q", pl.Section, pl.Index, pl.Page, pl.Text)
					continue
				}
				if ok {
					whole++
				} else if tc.exact == 1 {
					t.Errorf("%s paragraph %d not word for word:\nwant %q\nin   %q", pl.Section, pl.Index, pl.Text, p.Text)
				}
				if p.Page != pl.Page || p.Section != pl.Section {
					t.Errorf("%.50q is in %s p. %d; want %s p. %d", pl.Text, p.Section, p.Page, pl.Section, pl.Page)
				}
				i := slices.IndexFunc(doc.Passages, func(q Passage) bool { return q.ID == p.ID })
				if i < last {
					t.Errorf("%.50q comes before the paragraph it follows", pl.Text)
				}
				last = i
			}
			if share := float64(whole) / float64(total); share < tc.exact {
				t.Errorf("%d of %d paragraphs word for word (%.1f%%); want %.0f%%", whole, total, 100*share, 100*tc.exact)
			}
			ids := map[string]bool{}
			idForm := regexp.MustCompile(`^p(\d+)\.(\d+)$`)
			for _, p := range doc.Passages {
				if !idForm.MatchString(p.ID) || ids[p.ID] {
					t.Errorf("passage id %q: want p<page>.<n>, once", p.ID)
				}
				ids[p.ID] = true
				if !strings.HasPrefix(p.ID, "p"+strconv.Itoa(p.Page)+".") {
					t.Errorf("passage %s says page %d", p.ID, p.Page)
				}
				for _, bad := range []string{"\ufb01", "\ufb02", tc.paper.Journal, tc.paper.Short} {
					if strings.Contains(p.Text, bad) {
						t.Errorf("passage %s holds %q: %q", p.ID, bad, p.Text)
					}
				}
				for _, ref := range tc.paper.References {
					if strings.Contains(p.Text, ref[:40]) {
						t.Errorf("passage %s holds a reference: %q", p.ID, p.Text)
					}
				}
			}
			again, err := Reader{}.Read(context.Background(), path)
			if err != nil || !reflect.DeepEqual(again.Passages, doc.Passages) {
				t.Errorf("a second read differs (%v)", err)
			}
		})
	}
}

// TestPDFDetails checks what a reader of Ito's paper needs beyond its paragraphs: the
// table's rows in order, a compound broken at its own hyphen kept, a word broken by the
// layout joined, the sections' headings.
func TestPDFDetails(t *testing.T) {
	needPDFText(t)
	path, lay := writePDF(t, fixture.Ito)
	doc, err := Reader{}.Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	all := ""
	for _, p := range doc.Passages {
		all += p.Text + "\n"
	}
	for _, want := range []string{
		"Table 1. Seeding activity in the dentate gyrus by treatment (percent of vehicle). Treatment Seeding n Vehicle 100 ± 14 12 PLX3397 51 ± 11 12 GW4869 54 ± 13 11 Both 50 ± 12 10",
		"microglia-derived exosomes", "fluorescence resonance energy transfer", "interleukin-1β",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no passage holds %q", want)
		}
	}
	if len(lay.Hyphenated) < 10 {
		t.Fatalf("the layout hyphenated only %d words: the fixture no longer tests joining them", len(lay.Hyphenated))
	}
	for _, w := range lay.Hyphenated {
		if strings.Contains(all, w) {
			t.Errorf("%q is still hyphenated", w)
		}
	}
	sections := map[string]bool{}
	for _, p := range doc.Passages {
		sections[p.Section] = true
		if p.Section == SectionMethods && p.Heading != "2 Materials and methods" {
			t.Errorf("methods passage %s has heading %q", p.ID, p.Heading)
		}
	}
	for _, s := range []string{SectionAbstract, SectionIntroduction, SectionMethods, SectionResults, SectionDiscussion} {
		if !sections[s] {
			t.Errorf("no passage in %s", s)
		}
	}
}

// TestJATS reads a text shaped like PMC's: sections by sec-type, the abstract, the table,
// the citation marks and references left out, ids by section.
func TestJATS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "PMC9000017.nxml")
	if err := os.WriteFile(path, fixture.JATS(fixture.Ruan), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := Reader{}.Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Kind != KindJATS || doc.Pages != 0 {
		t.Errorf("kind %s, %d pages", doc.Kind, doc.Pages)
	}
	for _, p := range doc.Passages {
		if p.Page != 0 || !regexp.MustCompile(`^s\d+\.\d+$`).MatchString(p.ID) {
			t.Errorf("passage %s (page %d): a text without pages has ids s<section>.<n>", p.ID, p.Page)
		}
		if strings.Contains(p.Text, "Wang Y") {
			t.Errorf("passage %s holds a reference", p.ID)
		}
	}
	want := []struct{ section, text string }{
		{SectionAbstract, fixture.Ruan.Abstract[0]},
		{SectionIntroduction, fixture.Ruan.Sections[0].Paragraphs[0]}, // without its citation mark "1"
		{SectionMethods, fixture.Ruan.Sections[1].Paragraphs[1]},
		{SectionResults, "Table 1 Donors of the brain tissue. Group Donors Braak stage Early Alzheimer's disease 14 III–IV Control 9 0–I"},
		{SectionDiscussion, fixture.Ruan.Sections[3].Paragraphs[0]},
		{SectionOther, "We thank the brain bank's donors and their families."},
	}
	for _, w := range want {
		p, ok := found(doc, w.text)
		if !ok || p.Section != w.section {
			t.Errorf("want %q in %s; found in %q (%s)", w.text, w.section, p.Text, p.Section)
		}
	}
	if strings.Contains(doc.Passages[1].Text, "neurons.1") {
		t.Errorf("the citation mark is in the text: %q", doc.Passages[1].Text)
	}
}

// TestHTML reads a publisher's page: the paper's sections, not its navigation, scripts,
// footer or references.
func TestHTML(t *testing.T) {
	page := `<!doctype html><html><head><title>Paper</title><script>var x = "Results";</script></head>
<body><nav><a href="/">Journal home</a> <a href="/login">Sign in</a></nav>
<header><h1>Tau spreads</h1></header>
<main><article><h1>Tau spreads through synapses</h1>
<section id="abstract"><h2>Abstract</h2><p>Tau seeds cross synapses in <i>vivo</i>, and blocking their release slows the spread of pathology by half.</p></section>
<section><h2>1. Introduction</h2><p>Tau pathology spreads along connected regions.<sup><a href="#r1">1</a></sup> Its route is debated.</p>
<h3>1.1 Scope</h3><p>We ask how seeds cross synapses.</p></section>
<section><h2>Results</h2><p>Blocking release with GW4869 reduced spread by 48&nbsp;% (p &lt; 0.01).</p>
<table><caption>Table 1. Spread by treatment.</caption><tr><th>Treatment</th><th>Spread</th></tr><tr><td>Vehicle</td><td>100</td></tr></table></section>
<section><h2>References</h2><ol><li id="r1">Clavaguera F. Transmission of tauopathy. 2009.</li></ol></section>
</article></main><footer>© Test Press. All rights reserved.</footer></body></html>`
	path := filepath.Join(t.TempDir(), "paper.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := Reader{}.Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, p := range doc.Passages {
		all = append(all, p.Section+": "+p.Text)
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{
		"abstract: Tau seeds cross synapses in vivo, and blocking their release slows the spread of pathology by half.",
		"introduction: Tau pathology spreads along connected regions.1 Its route is debated. 1.1 Scope We ask how seeds cross synapses.",
		"results: Blocking release with GW4869 reduced spread by 48 % (p < 0.01). Table 1. Spread by treatment. Treatment Spread Vehicle 100",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in\n%s", want, got)
		}
	}
	for _, bad := range []string{"Sign in", "var x", "Clavaguera", "rights reserved"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q read as the paper's text:\n%s", bad, got)
		}
	}
}
