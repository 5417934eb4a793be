package library

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/testcheck"
)

// fixture copies the test library (testdata/library) to a folder the test may change.
// fixture is a copy of the test library (testdata/library): its exports and full texts.
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "testdata", "library"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

func open(t *testing.T, dir, index string) *Library {
	t.Helper()
	l, err := Open(dir, index, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func ids(res Results) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.ID)
	}
	return out
}

// TestFixtureLibrary: the test library reads whole, with what it skipped and why.
func TestFixtureLibrary(t *testing.T) {
	l := open(t, fixture(t), t.TempDir())
	if l.Len() != 28 {
		t.Errorf("%d references, want 28", l.Len())
	}
	var reasons []string
	for _, s := range l.Skipped() {
		reasons = append(reasons, s.String())
	}
	for _, want := range []string{"lab.bib:150 (broken2020): it has no title", "export.json (notitle): item 8: it has no title",
		"zotero.ris (kim2021): a duplicate of 10.5555/cosci.tau.011 (in lab.bib); merged"} {
		if !strings.Contains(strings.Join(reasons, "\n"), want) {
			t.Errorf("skipped lacks %q:\n%s", want, strings.Join(reasons, "\n"))
		}
	}
	r, ok := l.Get("10.5555/cosci.tau.011")
	if !ok || r.Volume != "15" || len(r.Authors) != 2 || r.Abstract == "" || len(r.Files) != 2 {
		t.Errorf("the merged duplicate: %+v", r)
	}
}

func TestSearch(t *testing.T) {
	l := open(t, fixture(t), t.TempDir())
	ctx := context.Background()
	tests := []struct {
		name  string
		q     Query
		first string
		err   string
	}{
		{name: "title words", q: Query{Text: "microglia exosomes"}, first: "10.5555/cosci.tau.001"},
		{name: "a keyword", q: Query{Text: "OGA inhibitor"}, first: "10.5555/cosci.tau.004"},
		{name: "an author", q: Query{Text: "Holtzman"}, first: "10.5555/cosci.tau.010"},
		{name: "stemming", q: Query{Text: "persister dormant bacterium"}, first: "10.5555/cosci.bact.001"},
		{name: "query syntax is words", q: Query{Text: `title:"LRP1" +uptake -(tau`}, first: "10.5555/cosci.tau.002"},
		{name: "years", q: Query{Text: "sleep tau spread", YearFrom: 2024, YearTo: 2024}, first: "10.5555/cosci.tau.010"},
		{name: "empty", q: Query{Text: "  "}, err: "the query is empty"},
		{name: "limit", q: Query{Text: "tau", Limit: 51}, err: "limit 51 is out of range: give 1 to 50"},
		{name: "negative limit", q: Query{Text: "tau", Limit: -1}, err: "limit -1 is out of range"},
		{name: "years reversed", q: Query{Text: "tau", YearFrom: 2022, YearTo: 2020}, err: "year_from 2022 is after year_to 2020"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := l.Search(ctx, tt.q)
			if testcheck.Err(t, err, tt.err) {
				return
			}
			if len(res.Hits) == 0 || res.Hits[0].ID != tt.first {
				t.Fatalf("hits %v, want %s first", ids(res), tt.first)
			}
			for _, h := range res.Hits {
				if h.Snippet == "" || !strings.Contains(h.Abstract+h.Title, h.Snippet) || len(h.Snippet) > snippetMax {
					t.Errorf("%s: snippet %q is not a passage of its abstract", h.ID, h.Snippet)
				}
				if (tt.q.YearFrom > 0 && h.Year < tt.q.YearFrom) || (tt.q.YearTo > 0 && h.Year > tt.q.YearTo) {
					t.Errorf("%s of %d is outside %d-%d", h.ID, h.Year, tt.q.YearFrom, tt.q.YearTo)
				}
			}
		})
	}
	res, _ := l.Search(ctx, Query{Text: "tau", Limit: 3})
	if len(res.Hits) != 3 || res.Total <= 3 {
		t.Errorf("limit 3: %d hits of %d", len(res.Hits), res.Total)
	}
	// The snippet is the sentence that matches the query best.
	res, _ = l.Search(ctx, Query{Text: "GW4869 exosome synthesis"})
	if len(res.Hits) == 0 || !strings.HasPrefix(res.Hits[0].Snippet, "Inhibiting exosome synthesis with GW4869") {
		t.Errorf("snippet %q", res.Hits[0].Snippet)
	}
}

func TestGet(t *testing.T) {
	l := open(t, fixture(t), t.TempDir())
	for _, id := range []string{"10.5555/cosci.tau.002", "10.5555/COSCI.TAU.002", "https://doi.org/10.5555/cosci.tau.002", "doi:10.5555/cosci.tau.002", "rauch2020lrp1", "RAUCH2020LRP1"} {
		if r, ok := l.Get(id); !ok || r.ID != "10.5555/cosci.tau.002" {
			t.Errorf("Get(%q) = %v, %v", id, r.ID, ok)
		}
	}
	if r, ok := l.Get("garcia2019activity"); !ok || r.ID != "garcia2019activity" || r.DOI != "" {
		t.Errorf("a reference without a DOI: %+v %v", r, ok)
	}
	if _, ok := l.Get("10.5555/cosci.nope"); ok {
		t.Error("Get found an id the library lacks")
	}
}

// TestIndexPersistsAndFollows: a reopened index reindexes nothing; a file added,
// changed or removed is indexed again, and nothing else; an unreadable file is named.
func TestIndexPersistsAndFollows(t *testing.T) {
	dir, index := fixture(t), t.TempDir()
	l, err := Open(dir, index, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()

	l = open(t, dir, index)
	ch, err := l.Refresh()
	if err != nil || ch.Any() || l.Len() != 28 {
		t.Fatalf("reopened: %+v, %v, %d references", ch, err, l.Len())
	}
	if res, _ := l.Search(context.Background(), Query{Text: "glymphatic"}); len(res.Hits) != 1 {
		t.Errorf("search after reopening: %v", ids(res))
	}

	add := filepath.Join(dir, "sub", "new.bib")
	os.MkdirAll(filepath.Dir(add), 0o755)
	os.WriteFile(add, []byte(`@article{new1, title = {Choroid plexus clears tau}, year = 2025, abstract = {The choroid plexus clears tau.}}`), 0o644)
	ch, err = l.Refresh()
	if err != nil || ch.Added != 1 || ch.Updated+ch.Removed != 0 || l.Len() != 29 {
		t.Fatalf("added a file: %+v, %v", ch, err)
	}
	if res, _ := l.Search(context.Background(), Query{Text: "choroid plexus"}); len(ids(res)) != 1 || ids(res)[0] != "new1" {
		t.Errorf("the new reference is not found: %v", ids(res))
	}

	os.WriteFile(add, []byte(`@article{new1, title = {Choroid plexus clears tau seeds}, year = 2025}`), 0o644)
	ch, _ = l.Refresh()
	if ch.Updated != 1 || ch.Added+ch.Removed != 0 {
		t.Errorf("changed a file: %+v", ch)
	}

	os.Remove(filepath.Join(dir, "export.json"))
	ch, _ = l.Refresh()
	if ch.Removed != 7 || l.Len() != 22 {
		t.Errorf("removed a file of 7 references: %+v, %d left", ch, l.Len())
	}

	// A "file" that cannot be read is named, with the reason, and stops nothing.
	os.Mkdir(filepath.Join(dir, "folder.bib"), 0o755)
	os.WriteFile(filepath.Join(dir, "folder.bib", "inner.ris"), []byte("TY  - JOUR\nTI  - Inner\nER  - \n"), 0o644)
	os.WriteFile(filepath.Join(dir, "garbage.json"), []byte("{not json"), 0o644)
	ch, err = l.Refresh()
	if err != nil || l.Len() != 23 {
		t.Fatalf("%+v, %v, %d references", ch, err, l.Len())
	}
	var named bool
	for _, s := range l.Skipped() {
		named = named || (s.File == "garbage.json" && strings.Contains(s.Reason, "not a CSL-JSON array"))
	}
	if !named {
		t.Errorf("garbage.json is not named among %v", l.Skipped())
	}
}

// TestWatch: the watcher notices a file added to the folder.
func TestWatch(t *testing.T) {
	dir := fixture(t)
	l := open(t, dir, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan Changes, 1)
	go l.Watch(ctx, 10*time.Millisecond, func(ch Changes, err error) {
		if err == nil {
			select {
			case changes <- ch:
			default:
			}
		}
	})
	os.WriteFile(filepath.Join(dir, "watched.ris"), []byte("TY  - JOUR\nTI  - Watched\nPY  - 2025\nER  - \n"), 0o644)
	select {
	case ch := <-changes:
		if ch.Added != 1 {
			t.Errorf("changes %+v", ch)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not notice a new file within 30s")
	}
}

func TestOpenRefuses(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing"), t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing library: %v", err)
	}
	one := filepath.Join(t.TempDir(), "refs.txt")
	os.WriteFile(one, []byte("x"), 0o644)
	l := open(t, one, t.TempDir())
	if l.Len() != 0 || len(l.Skipped()) != 1 || !strings.Contains(l.Skipped()[0].Reason, "not a .bib, .ris or .json") {
		t.Errorf("a file of another kind: %d, %v", l.Len(), l.Skipped())
	}
}

// TestSnippetKeepsSentencesWhole: a snippet starts where its sentence starts, by the
// full-text reader's rule; "et al. (2019)" and "Fig. 2" are not sentence ends (the
// library's own splitter cut after "al. " and served "(2019) showed ..." as a sentence).
func TestSnippetKeepsSentencesWhole(t *testing.T) {
	words := func(s string) []string { return strings.Fields(strings.ToLower(s)) }
	r := Reference{Abstract: "Background on the field is long and dull and says nothing of note here at all. " +
		"Smith et al. (2019) showed that kinase binds ligand in mice, as Fig. 2 shows clearly. " +
		"A last sentence about something else entirely, which is long enough to stand alone."}
	got := snippet(r, []string{"binds"}, words)
	if !strings.HasPrefix(got, "Smith et al. (2019) showed") {
		t.Fatalf("snippet = %q, want it to start at its sentence's start", got)
	}
	if !strings.Contains(got, "as Fig. 2 shows clearly.") {
		t.Fatalf("snippet = %q, want the sentence whole past \"Fig. 2\"", got)
	}
}
