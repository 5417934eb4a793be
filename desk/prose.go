package main

// Answers as prose: the session's answers are Markdown written by a model, shown as a safe
// subset of it. goldmark turns it into HTML with raw HTML left out (its default: a model's
// <script> becomes a comment), a transformer links the hypothesis ids and cited ids it
// mentions, and bluemonday keeps of the result only paragraphs, lists, emphasis, code,
// quotes and links to http(s) or the desk's own pages. Everything else a model writes is
// escaped by html/template, as before.

import (
	"bytes"
	"cmp"
	"html/template"
	"regexp"
	"slices"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/cosci-dev/cosci/internal/report"
)

// proseLimit bounds the Markdown rendered (an answer is at most session.MaxAnswerLength
// characters; this bounds a stored one that is not).
const proseLimit = 64 << 10

// prosePolicy is what of the rendered HTML is kept.
var prosePolicy = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "ul", "ol", "li", "em", "strong", "code", "pre", "blockquote", "del")
	p.AllowAttrs("href").OnElements("a")
	p.AllowAttrs("start").Matching(regexp.MustCompile(`^\d{1,4}$`)).OnElements("ol")
	p.AllowURLSchemes("http", "https")
	p.AllowRelativeURLs(true)
	p.RequireParseableURLs(true)
	p.RequireNoFollowOnFullyQualifiedLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
}()

// hypothesisID is how an answer names a hypothesis.
var hypothesisID = regexp.MustCompile(`\bh-\d{4,}\b`)

// prose renders an answer of session id, linking the hypotheses it names to their pages
// and the sources it cites (by their ids) to where they are.
func prose(id, markdown string, cited []Citation) template.HTML {
	if len(markdown) > proseLimit {
		markdown = markdown[:proseLimit]
	}
	sources := map[string]string{}
	for _, c := range cited {
		if u := report.SourceLink(c.Reference); u != "" && len(c.Reference.ID) >= 4 {
			sources[c.Reference.ID] = u
		}
	}
	md := goldmark.New(goldmark.WithParserOptions(parser.WithASTTransformers(
		util.Prioritized(idLinks{session: id, sources: sources}, 100))))
	var out bytes.Buffer
	if err := md.Convert([]byte(markdown), &out); err != nil {
		return template.HTML(template.HTMLEscapeString(markdown))
	}
	return sanitize(out.Bytes())
}

// sanitize keeps of rendered HTML what prosePolicy allows. goldmark, the transformer and
// html/template already keep out raw HTML and links a page may not follow; this is the
// lock that holds when one of them changes (an option, a bug, an image of another site).
func sanitize(html []byte) template.HTML {
	return template.HTML(prosePolicy.SanitizeBytes(html)) // #nosec: sanitised just now
}

// idLinks makes links of the hypothesis ids and cited ids in an answer's text, outside
// code and outside the links it has.
type idLinks struct {
	session string
	sources map[string]string // a cited id -> where the source is
}

func (l idLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var texts []*ast.Text
	var elsewhere []*ast.Link
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			if !webLink(string(n.Destination)) {
				elsewhere = append(elsewhere, n)
			}
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink, *ast.CodeSpan, *ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock, *ast.RawHTML, *ast.Image:
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			texts = append(texts, n)
		}
		return ast.WalkContinue, nil
	})
	// A link of the model's that is not to a web page (a path, a protocol-relative
	// address, another scheme) is its text alone: the desk's own links are the ones made
	// here, after this.
	for _, a := range elsewhere {
		parent := a.Parent()
		for c := a.FirstChild(); c != nil; {
			next := c.NextSibling()
			parent.InsertBefore(parent, a, c)
			c = next
		}
		parent.RemoveChild(parent, a)
	}
	for _, t := range texts {
		l.link(t, src)
	}
}

// webLink says whether a model's link may be followed: an http(s) URL with a host.
func webLink(dest string) bool {
	return report.WebURL(dest) != ""
}

// span is a part of a text node to link, and where to.
type span struct {
	start, stop int
	to          string
}

// link replaces a text node by its pieces: text, and links where it names something.
func (l idLinks) link(t *ast.Text, src []byte) {
	seg := t.Segment
	value := string(seg.Value(src))
	var spans []span
	for _, m := range hypothesisID.FindAllStringIndex(value, -1) {
		spans = append(spans, span{m[0], m[1], "/s/" + l.session + "/h/" + value[m[0]:m[1]]})
	}
	for id, to := range l.sources {
		for from := 0; ; {
			i := strings.Index(value[from:], id)
			if i < 0 {
				break
			}
			spans = append(spans, span{from + i, from + i + len(id), to})
			from += i + len(id)
		}
	}
	if len(spans) == 0 {
		return
	}
	parent := t.Parent()
	at := seg.Start
	var last ast.Node = t
	insert := func(n ast.Node) {
		parent.InsertAfter(parent, last, n)
		last = n
	}
	for _, s := range ordered(spans) {
		if seg.Start+s.start < at {
			continue // overlaps a span linked already
		}
		if seg.Start+s.start > at {
			insert(ast.NewTextSegment(text.NewSegment(at, seg.Start+s.start)))
		}
		a := ast.NewLink()
		a.Destination = []byte(s.to)
		a.AppendChild(a, ast.NewTextSegment(text.NewSegment(seg.Start+s.start, seg.Start+s.stop)))
		insert(a)
		at = seg.Start + s.stop
	}
	rest := ast.NewTextSegment(text.NewSegment(at, seg.Stop))
	rest.SetSoftLineBreak(t.SoftLineBreak())
	rest.SetHardLineBreak(t.HardLineBreak())
	insert(rest)
	parent.RemoveChild(parent, t)
}

// ordered sorts spans by where they start, the longer first at the same place.
func ordered(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.stop, a.stop)) })
	return spans
}
