package report

import (
	"strings"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
)

// One render of a citation, for the report's page and the desk's: Citations makes each of
// a hypothesis' citations whole from what the store keeps apart, Show says it in the
// words both pages show, and SourceTemplate lays it out.

// Source is a citation as a page shows it.
type Source struct {
	// Link is an http(s) address the page links; Address one it shows as text only.
	Line, Link, Address, Claim, Quote, Passage, Verdict, Class, Note string
	At                                                               string // where the quote is: "p. 7, Results"
	// AtLink is where At links: the source's address in the report; on the desk, the
	// full text at its page when the desk serves it.
	AtLink                             string
	Support, SupportClass, SupportNote string
}

// SourceTemplate is the template "source": one Source as a list item. A page that shows
// citations parses it beside its own (html/template escapes every field).
const SourceTemplate = `{{define "source"}}<li>{{.Line}}{{if .Link}} <a href="{{.Link}}">{{.Link}}</a>{{else if .Address}} <code>{{.Address}}</code>{{end}} <span class="verdict {{.Class}}">{{.Verdict}}</span>{{if .Support}} <span class="verdict {{.SupportClass}}">{{.Support}}</span>{{end}}{{if .Claim}}<div class="claim">Claim: {{.Claim}}</div>{{end}}{{if .Quote}}<blockquote>{{.Quote}}{{if .At}} <cite class="at">{{if .AtLink}}<a href="{{.AtLink}}">{{.At}}</a>{{else}}{{.At}}{{end}}</cite>{{end}}</blockquote>{{end}}{{if .Passage}}<div class="meta">The source's words: <q>{{.Passage}}</q></div>{{end}}{{if and .Note (ne .Class "verified")}}<div class="meta">Check: {{.Note}}</div>{{end}}{{if .SupportNote}}<div class="meta">Support: {{.SupportNote}}</div>{{end}}</li>{{end}}`

// Citations are a hypothesis' citations as its reviews checked them: each reference with
// the worst verdict any review's check gave it (Verdict "unchecked" when none did) and
// the worst support judgement. Each review's checks meet the references by the one rule
// (citation.Join), so two quotes of one source keep their own verdicts.
func Citations(refs []research.Reference, reviews []research.Review) []citation.Cited {
	out := citation.Join(refs, nil)
	for i := range out {
		out[i].Check.Verdict = Unchecked
	}
	for _, rv := range reviews {
		for i, c := range citation.Join(refs, rv.Citations) {
			ch, worst := c.Check, &out[i].Check
			if !c.Checked() {
				continue
			}
			if verdicts.worse(ch.Verdict, worst.Verdict) {
				worst.ID, worst.Verdict, worst.Note, worst.Passage = ch.ID, ch.Verdict, ch.Note, ch.Passage
			}
			if supports.worse(ch.Support, worst.Support) {
				worst.Support, worst.SupportNote = ch.Support, ch.SupportNote
			}
		}
	}
	return out
}

// Show is a citation in the words a page shows it in: its source's line and address, its
// claim and quote, where the quote is, and what the checks and reviews found.
func Show(c citation.Cited) Source {
	ch := c.Check
	s := Source{Line: citationLine(c.Reference), Link: link(c.Reference), Claim: oneLine(c.Claim), Quote: oneLine(c.Quote),
		Note: oneLine(ch.Note), At: Location(c.Reference)}
	if ch.Verdict != research.CitationVerified {
		s.Passage = oneLine(ch.Passage) // a verified quote is the source's words
	}
	if s.Link == "" {
		s.Address = address(c.Reference)
	}
	switch {
	case ch.Verdict == research.CitationInvented || c.Source == "" && c.Title == "":
		s.Line, s.Link, s.Address = c.ID+" (no tool returned it)", "", "" // no link: it may lead nowhere
	case c.Title == "":
		s.Line = c.ID // a record without a title (prose, a bare id): the id names it
	}
	s.AtLink = s.Link
	if ch.Verdict != "" {
		s.Verdict, s.Class = verdicts.word(ch.Verdict), strings.ReplaceAll(ch.Verdict, " ", "-") // "out-of-context"
	}
	if ch.Support != "" {
		s.Support, s.SupportClass, s.SupportNote = supports.word(ch.Support), "support-"+ch.Support, oneLine(ch.SupportNote)
	}
	return s
}
