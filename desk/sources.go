package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/access"
	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/report"
	"github.com/cosci-dev/cosci/internal/research"
)

// The sources a session cites, at the page: beside each quote from a full text, where it
// is ("p. 7, Results"), linked to the PDF at that page when the desk holds the lab's
// library (--library, the folder the literature server reads) and the person may read
// the session, else to the source's DOI.
//
// The file is found from the reference, which the session's store holds and the check
// filled in from the literature server's result (never from the model); the request
// names only where the reference is (a hypothesis or an answer, and its place), so a
// person reaches only the files the sessions they may read cite. The name is opened
// inside the library's folder (os.Root: no "..", no link out of it), only a PDF is
// served, and it is served sandboxed (a PDF may carry scripts), never as the desk's page.

// sourceLink is where a reference's location links: the file at its page, when the desk
// can serve it, else where the report links the source (its DOI, URL or registry page);
// "" for none.
func (d *desk) sourceLink(sessionID, where string, i int, r research.Reference) string {
	if d.library != nil && r.File != "" && isPDF(r.File) {
		u := fmt.Sprintf("/s/%s/%s/ref/%d", sessionID, where, i)
		if r.Page > 0 {
			u += fmt.Sprintf("#page=%d", r.Page)
		}
		return u
	}
	return report.SourceLink(r) // the report's link: a DOI's "#" or "?" escaped, only an address a page may follow
}

// linked is a citation as a page shows it, its place linked: to the full text at its page
// when the desk serves it (the i-th reference of where: "h/<id>" or "m/<id>"), else to the
// report's link for the source.
func (d *desk) linked(sessionID, where string, i int, c citation.Cited) report.Source {
	s := report.Show(c)
	if s.At != "" && (s.AtLink != "" || c.File != "") {
		s.AtLink = d.sourceLink(sessionID, where, i, c.Reference)
	}
	return s
}

// hypothesisSource serves the file of a hypothesis' i-th reference.
func (d *desk) hypothesisSource(w http.ResponseWriter, r *http.Request) {
	id, hid := r.PathValue("id"), r.PathValue("hid")
	if _, _, ok := d.allowed(w, r, id, access.ActRead); !ok {
		return
	}
	h, err := d.st.Hypothesis(r.Context(), id, hid)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.serveSource(w, r, h.References)
}

// answerSource serves the file of an answer's i-th reference.
func (d *desk) answerSource(w http.ResponseWriter, r *http.Request) {
	id, mid := r.PathValue("id"), r.PathValue("mid")
	if _, _, ok := d.allowed(w, r, id, access.ActRead); !ok {
		return
	}
	m, err := d.st.Message(r.Context(), id, mid)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.serveSource(w, r, m.References)
}

func (d *desk) serveSource(w http.ResponseWriter, r *http.Request, refs []research.Reference) {
	i, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || i < 0 || i >= len(refs) || d.library == nil || refs[i].File == "" {
		d.fail(w, r, fs.ErrNotExist)
		return
	}
	name := filepath.Clean(filepath.FromSlash(refs[i].File))
	if !isPDF(name) || filepath.IsAbs(name) {
		d.fail(w, r, fs.ErrNotExist)
		return
	}
	f, err := d.library.Open(name)
	if err != nil {
		d.log.Warn("desk: a cited full text cannot be opened", "file", refs[i].File, "error", err)
		d.fail(w, r, fs.ErrNotExist)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		d.fail(w, r, fs.ErrNotExist)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; frame-ancestors 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Disposition", fmt.Sprintf("inline; filename=%q", strings.Map(func(r rune) rune {
		if r < 0x20 || r == '"' || r == '\\' || r > 0x7e {
			return '_'
		}
		return r
	}, filepath.Base(name))))
	http.ServeContent(w, r, "", info.ModTime(), f)
}

// openLibrary opens the library's folder for serving cited files, or nil for none.
func openLibrary(dir string) (*os.Root, error) {
	if dir == "" {
		return nil, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("--library: %w", err)
	}
	return root, nil
}

// isPDF reports whether a cited file is a PDF by its name, as the literature server names
// the kinds it reads (fulltext.KindOf; TestIsPDF holds them together): the desk serves
// the file and reads none, so it does not import the readers' package.
func isPDF(name string) bool { return strings.ToLower(filepath.Ext(name)) == ".pdf" }
