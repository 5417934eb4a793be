package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/pgtest"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/store"
)

// TestReportFromEitherStore: a laptop with only the workers' store (a directory or a
// PostgreSQL database) prints the report, readable on a terminal, prints the HTML page,
// and fetches every artefact into a folder, the chart and the bibliography included.
func TestReportFromEitherStore(t *testing.T) {
	pg, err := pgtest.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	db, err := pg.CreateDatabase(t.Context(), "starter_report")
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{t.TempDir(), db} {
		name := map[bool]string{true: "postgres", false: "dir"}[store.IsDatabase(loc)]
		t.Run(name, func(t *testing.T) {
			st, err := store.Open(t.Context(), loc)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			want := map[string][]byte{}
			for _, a := range report.Artefacts {
				want[a] = []byte("the " + a + " of s-1\n")
			}
			want[report.MarkdownFile] = []byte("# Report\n\n![Elo over time](elo.svg)\n\nThe rest.\n")
			for name, data := range want {
				if name == report.MarkdownFile {
					continue
				}
				if _, err := st.PutFile(t.Context(), "s-1", name, data); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := st.PutReport(t.Context(), "s-1", want[report.MarkdownFile]); err != nil {
				t.Fatal(err)
			}

			out, errOut := quiet(t)
			if code := run([]string{"report", "s-1", "--store", loc}); code != 0 {
				t.Fatalf("report exited %d: %s", code, errOut)
			}
			if got := out.String(); strings.Contains(got, "](elo.svg)") || !strings.Contains(got, "starter report s-1 --out DIR") || !strings.Contains(got, "The rest.") {
				t.Errorf("the Markdown on a terminal:\n%s", got)
			}

			out, errOut = quiet(t)
			if code := run([]string{"report", "s-1", "--store", loc, "--html"}); code != 0 || out.String() != string(want[report.HTMLFile]) {
				t.Errorf("--html exited %d and printed %q (%s)", code, out, errOut)
			}

			dir := filepath.Join(t.TempDir(), "fetched")
			out, errOut = quiet(t)
			if code := run([]string{"report", "s-1", "--store", loc, "--out", dir}); code != 0 {
				t.Fatalf("--out exited %d: %s", code, errOut)
			}
			for name, data := range want {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || !bytes.Equal(got, data) {
					t.Errorf("%s: %q, %v; want %q", name, got, err, data)
				}
				if !strings.Contains(out.String(), filepath.Join(dir, name)) {
					t.Errorf("--out does not say it wrote %s:\n%s", name, out)
				}
			}
		})
	}
}
