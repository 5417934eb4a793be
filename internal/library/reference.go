// Package library reads a lab's references as reference managers export them (BibTeX, RIS,
// CSL-JSON: Zotero, Mendeley, JabRef, EndNote), merges the duplicates across files, and
// keeps a full-text index of them on disk that follows the files as they change. It is
// what cosci's literature server (the literature command) searches; it has no Temporal
// import.
package library

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
)

// Reference is one work of the library.
type Reference struct {
	// ID is the reference's stable id: its DOI (lower case, without a resolver prefix)
	// where it has one, else its citation key.
	ID        string   `json:"id"`
	DOI       string   `json:"doi,omitempty"`
	Key       string   `json:"key,omitempty"`  // the citation key in the export (BibTeX key, RIS ID, CSL id)
	Type      string   `json:"type,omitempty"` // article, book, inproceedings, thesis, ...
	Title     string   `json:"title"`
	Authors   []string `json:"authors,omitempty"` // "Family, Given", or an organisation's name
	Year      int      `json:"year,omitempty"`
	Venue     string   `json:"venue,omitempty"` // journal, book or proceedings
	Volume    string   `json:"volume,omitempty"`
	Pages     string   `json:"pages,omitempty"`
	Publisher string   `json:"publisher,omitempty"`
	URL       string   `json:"url,omitempty"`
	Abstract  string   `json:"abstract,omitempty"`
	Keywords  []string `json:"keywords,omitempty"`
	Files     []string `json:"files,omitempty"` // the export files it was read from
	// Attachments are the files the exports attach to it (their file fields), resolved
	// against the export's folder: where its full text may be. Never shown: a path of
	// the lab's machine says nothing of the work.
	Attachments []string `json:"-"`
}

// Skipped is an entry of an export that could not be used, or a file that could not be read.
type Skipped struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"` // where the entry starts (0: the whole file)
	Key    string `json:"key,omitempty"`
	Reason string `json:"reason"`
}

func (s Skipped) String() string {
	where := s.File
	if s.Line > 0 {
		where += fmt.Sprintf(":%d", s.Line)
	}
	if s.Key != "" {
		where += " (" + s.Key + ")"
	}
	return where + ": " + s.Reason
}

// finish completes a reference read from file (as the library names it): tidy text, its
// id, and a check that it can be used, within the field caps of lim. It returns why it
// cannot be used, or "", and what of it was cut to the caps.
func (r *Reference) finish(file string, lim Limits) (string, []string) {
	r.Title = clean(r.Title)
	r.Abstract = clean(r.Abstract)
	r.Venue = clean(r.Venue)
	r.Publisher = clean(r.Publisher)
	r.Volume = clean(r.Volume)
	r.Pages = strings.ReplaceAll(clean(r.Pages), "--", "–")
	r.URL = strings.TrimSpace(r.URL)
	r.Key = strings.TrimSpace(r.Key)
	r.Type = strings.ToLower(strings.TrimSpace(r.Type))
	var cuts []string
	// Names and keywords past the caps are counted, not cleaned: a list of millions
	// costs no more than its length, and keywords are deduplicated only up to the cap.
	var authors []string
	for i, a := range r.Authors {
		if len(authors) == lim.Authors {
			cuts = append(cuts, fmt.Sprintf("authors cut to the first %d of %d names", lim.Authors, len(authors)+len(r.Authors)-i))
			break
		}
		if a = clean(a); a != "" {
			authors = append(authors, a)
		}
	}
	r.Authors = authors
	var kws []string
	for i, k := range r.Keywords {
		if len(kws) == lim.Keywords {
			cuts = append(cuts, fmt.Sprintf("keywords cut to the first %d of %d", lim.Keywords, len(kws)+len(r.Keywords)-i))
			break
		}
		if k = clean(k); k != "" && !slices.Contains(kws, k) {
			kws = append(kws, k)
		}
	}
	r.Keywords = kws
	if r.DOI = citation.NormalDOI(r.DOI); r.DOI == "" {
		r.DOI = citation.NormalDOI(r.URL) // a doi.org link is a DOI
	}
	if r.Title == "" {
		return "it has no title", nil
	}
	why, capped := r.capFields(lim)
	if why != "" {
		return why, nil
	}
	cuts = append(cuts, capped...)
	if r.Key == "" {
		r.Key = generatedKey(*r)
		r.Key = r.Key[:min(len(r.Key), lim.IDBytes)] // ASCII: cut anywhere
	}
	r.ID = r.DOI
	if r.ID == "" {
		r.ID = r.Key
	}
	r.Files = []string{file}
	r.Attachments = slices.DeleteFunc(r.Attachments, func(a string) bool { return len(a) > lim.IDBytes })
	if len(r.Attachments) > maxAttachments {
		cuts = append(cuts, fmt.Sprintf("attached files cut to the first %d of %d", maxAttachments, len(r.Attachments)))
		r.Attachments = r.Attachments[:maxAttachments]
	}
	return "", cuts
}

// generatedKey is a citation key for a reference that came without one: the first
// author's family name, the year and the title's first long word, as BibTeX tools make them.
func generatedKey(r Reference) string {
	var b strings.Builder
	if len(r.Authors) > 0 {
		family, _, _ := strings.Cut(r.Authors[0], ",")
		b.WriteString(keyWord(family))
	}
	if r.Year > 0 {
		fmt.Fprintf(&b, "%d", r.Year)
	}
	for _, w := range strings.Fields(r.Title) {
		if w = keyWord(w); utf8.RuneCountInString(w) > 3 {
			b.WriteString(w)
			break
		}
	}
	if b.Len() == 0 {
		return "ref"
	}
	return b.String()
}

// keyWord is a word in lower-case ASCII letters and digits.
func keyWord(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(research.Fold(s)) {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

var spaces = regexp.MustCompile(`\s+`)

// clean collapses whitespace and trims.
func clean(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

// completeness is how many of a reference's fields are filled: the merge of duplicates
// keeps the fuller one's.
func (r Reference) completeness() int {
	n := 0
	for _, s := range []string{r.DOI, r.Title, r.Venue, r.Volume, r.Pages, r.Publisher, r.URL, r.Abstract} {
		if s != "" {
			n++
		}
	}
	if len(r.Authors) > 0 {
		n++
	}
	if r.Year > 0 {
		n++
	}
	if len(r.Keywords) > 0 {
		n++
	}
	return n
}

// merge fills what r lacks from o: the same work, read from another file.
func (r *Reference) merge(o Reference) {
	if o.completeness() > r.completeness() {
		*r, o = o, *r
	}
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fill(&r.DOI, o.DOI)
	fill(&r.Type, o.Type)
	fill(&r.Venue, o.Venue)
	fill(&r.Volume, o.Volume)
	fill(&r.Pages, o.Pages)
	fill(&r.Publisher, o.Publisher)
	fill(&r.URL, o.URL)
	fill(&r.Abstract, o.Abstract)
	if len(r.Authors) == 0 {
		r.Authors = o.Authors
	}
	if r.Year == 0 {
		r.Year = o.Year
	}
	for _, k := range o.Keywords {
		if !slices.Contains(r.Keywords, k) {
			r.Keywords = append(r.Keywords, k)
		}
	}
	for _, a := range o.Attachments {
		if !slices.Contains(r.Attachments, a) && len(r.Attachments) < maxAttachments {
			r.Attachments = append(r.Attachments, a)
		}
	}
	for _, f := range o.Files {
		if !slices.Contains(r.Files, f) {
			r.Files = append(r.Files, f)
		}
	}
	slices.Sort(r.Files)
}

// sameWork is a key under which two exports of one work meet when only one has its DOI:
// the title's letters and digits, and the year.
func sameWork(r Reference) string {
	return fmt.Sprintf("%s|%d", keyWord(r.Title), r.Year)
}

// Merge merges the references of several files: two with the same id, or with the same
// title and year where one lacks a DOI, are one work. It returns them in id order, and a
// note for each duplicate it merged.
func Merge(refs []Reference) ([]Reference, []Skipped) {
	var out []Reference
	byID := map[string]int{}
	byWork := map[string]int{}
	var notes []Skipped
	for _, r := range refs {
		i, ok := byID[r.ID]
		if ok && r.DOI == "" && out[i].DOI == "" && sameWork(out[i]) != sameWork(r) {
			// One citation key for two different works (two files of two people): keep
			// both, the later under a key of its own.
			renamed := r.ID
			for n := 2; ; n++ {
				renamed = fmt.Sprintf("%s-%d", r.ID, n)
				if _, taken := byID[renamed]; !taken {
					break
				}
			}
			notes = append(notes, Skipped{File: strings.Join(r.Files, ","), Key: r.Key, Reason: fmt.Sprintf("key %s also names %q (in %s); kept as %s", r.ID, out[i].Title, strings.Join(out[i].Files, ", "), renamed)})
			r.ID, ok = renamed, false
		}
		if !ok {
			if j, seen := byWork[sameWork(r)]; seen && (r.DOI == "" || out[j].DOI == "") {
				i, ok = j, true
			}
		}
		if !ok {
			byID[r.ID] = len(out)
			byWork[sameWork(r)] = len(out)
			out = append(out, r)
			continue
		}
		notes = append(notes, Skipped{File: strings.Join(r.Files, ","), Key: r.Key, Reason: fmt.Sprintf("a duplicate of %s (in %s); merged", out[i].ID, strings.Join(out[i].Files, ", "))})
		before := out[i].ID
		out[i].merge(r)
		if out[i].DOI != "" {
			out[i].ID = out[i].DOI
		}
		if out[i].ID != before {
			delete(byID, before)
		}
		byID[out[i].ID] = i
		byID[r.ID] = i
	}
	slices.SortFunc(out, func(a, b Reference) int { return strings.Compare(a.ID, b.ID) })
	return out, notes
}
