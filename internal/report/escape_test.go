package report

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"golang.org/x/net/html"

	"github.com/cosci-dev/cosci/internal/research"
)

// hostile is cites() with model, tool and person text that tries to be HTML or Markdown
// structure, and sources whose addresses are not http(s).
func hostile() Input {
	in := cites()
	in.Final.Goal = "Goal <iframe src=//evil.example></iframe> **bold** [g](javascript:alert(0))"
	in.Final.StopReason = "<b onmouseover=alert(9)>stopped</b>"
	h := in.Hypotheses["gen/00"]
	h.Title = `<script>alert(1)</script> [x](javascript:alert(1))`
	h.Statement = "First line\n# Not a heading\n<img src=x onerror=alert(2)>\n[ref]: javascript:alert(3)\n    not code\n- not a list\n&#106;avascript:alert(4) ![t](javascript:alert(5))"
	h.Rationale = `<a href="javascript:alert(6)">click</a> [y][ref] <javascript:alert(7)>`
	h.Predictions = []string{"</li><script>alert(8)</script>"}
	h.References = append(h.References,
		research.Reference{ID: "js", Title: "A javascript source", URL: "javascript:alert(1)", Source: "dddd"},
		research.Reference{ID: "rel", Title: "A protocol-relative source", URL: "//evil.example/x", Source: "eeee"},
		research.Reference{ID: "data", Title: "A data source", URL: "data:text/html,<script>alert(1)</script>", Source: "ffff"},
		research.Reference{ID: "user", Title: "A spoofing source", URL: "https://doi.org@evil.example/x", Source: "gggg"},
		research.Reference{ID: "10.1002/(SICI)1097-4636(199706)35:4<535::AID-JBM14>3.0.CO;2-W", Title: "A SICI DOI", Source: "hhhh"})
	in.Hypotheses["gen/00"] = h
	in.Reviews["gen/00"][0].Critique = "<details open ontoggle=alert(10)>x</details>\n> not a quote"
	in.Reviews["gen/00"][0].Verdict = "[accept](javascript:alert(11))"
	return in
}

// viewMarkdown is report.md as a viewer that does not sanitise shows it: CommonMark with
// GitHub's extensions (tables, autolinks, strikethrough), raw HTML passed through.
func viewMarkdown(t *testing.T, md []byte) *html.Node {
	t.Helper()
	var out bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := gm.Convert(md, &out); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// pageParts walks a parsed page: every element's name, every link's href, and the text.
func pageParts(doc *html.Node) (elements []string, hrefs []string, text string) {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.ElementNode:
			elements = append(elements, n.Data)
			for _, a := range n.Attr {
				if a.Key == "href" {
					hrefs = append(hrefs, a.Val)
				}
				if strings.HasPrefix(a.Key, "on") {
					elements = append(elements, n.Data+"["+a.Key+"]")
				}
			}
		case html.TextNode:
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return elements, hrefs, b.String()
}

// followable says whether an href is one the report may give: an in-page anchor or an
// http(s) address.
func followable(h string) bool {
	return strings.HasPrefix(h, "#") || strings.HasPrefix(h, "https://") || strings.HasPrefix(h, "http://")
}

// TestMarkdownShowsModelTextAsText: report.md, rendered by a viewer that passes HTML
// through, has only the elements cosci's own Markdown makes, links only http(s)
// addresses, and shows every hostile text as the characters it is. Before, the title's
// <script>, the statement's <img onerror> and the javascript: links came through.
func TestMarkdownShowsModelTextAsText(t *testing.T) {
	f := render(t, hostile())
	elements, hrefs, text := pageParts(viewMarkdown(t, f.Markdown))
	allowed := []string{"html", "head", "body", "h1", "h2", "h3", "p", "ul", "ol", "li", "strong", "em", "code", "blockquote",
		"table", "thead", "tbody", "tr", "th", "td", "a", "img"}
	for _, e := range elements {
		if !slices.Contains(allowed, e) {
			t.Errorf("report.md renders a <%s> element", e)
		}
	}
	for _, h := range hrefs {
		if !followable(h) {
			t.Errorf("report.md links %q", h)
		}
	}
	for _, want := range []string{
		`<script>alert(1)</script> [x](javascript:alert(1))`,
		"# Not a heading", "<img src=x onerror=alert(2)>", "[ref]: javascript:alert(3)", "- not a list",
		"&#106;avascript:alert(4) ![t](javascript:alert(5))",
		`<a href="javascript:alert(6)">click</a> [y][ref] <javascript:alert(7)>`,
		"</li><script>alert(8)</script>", "<details open ontoggle=alert(10)>x</details>", "> not a quote",
		"[accept](javascript:alert(11))", "<iframe src=//evil.example></iframe> **bold** [g](javascript:alert(0))",
		"<b onmouseover=alert(9)>stopped</b>",
		"javascript:alert(1)", "//evil.example/x", "data:text/html,<script>alert(1)</script>", "https://doi.org@evil.example/x",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report.md does not show %q as text", want)
		}
	}
	if !slices.Contains(hrefs, "https://doi.org/10.1002/(sici)1097-4636(199706)35:4%3C535::aid-jbm14%3E3.0.co;2-w") {
		t.Errorf("the SICI DOI is not linked, percent-encoded, at doi.org: %q", hrefs)
	}
	// The reader of the raw file sees text too: snake_case, ranges and R&D as written.
	in := fixture(1)
	in.Final.StopReason = "max_hypotheses reached; p < 0.05 for R&D"
	hasText(t, md(t, in), "the stop reason", "max_hypotheses reached; p &lt; 0.05 for R&D")
}

// TestHTMLLinksOnlyHTTP: report.html links only http(s) sources; an address of another
// scheme, protocol-relative or with a user name in it is shown as text. Before,
// html/template let //evil.example/x through as a link.
func TestHTMLLinksOnlyHTTP(t *testing.T) {
	f := render(t, hostile())
	doc, err := html.Parse(bytes.NewReader(f.HTML))
	if err != nil {
		t.Fatal(err)
	}
	elements, hrefs, text := pageParts(doc)
	for _, e := range elements {
		if slices.Contains([]string{"script", "iframe", "img", "details"}, e) || strings.Contains(e, "[on") {
			t.Errorf("report.html has a <%s> element", e)
		}
	}
	for _, h := range hrefs {
		if !followable(h) || strings.Contains(h, "evil.example") {
			t.Errorf("report.html links %q", h)
		}
	}
	for _, want := range []string{"javascript:alert(1)", "//evil.example/x", "data:text/html,<script>alert(1)</script>", `<script>alert(1)</script> [x](javascript:alert(1))`} {
		if !strings.Contains(text, want) {
			t.Errorf("report.html does not show %q as text", want)
		}
	}
}

// TestMarkdownTextRoundTrips: any text of Markdown's punctuation, letters and white space,
// escaped by mdText (one line) or mdBlock (its lines kept), renders as paragraphs (one for
// mdText) whose text is the original (white space aside), with no element of its own: no
// emphasis, code, link, heading, list, quote, line break or HTML. Seeded, so a failure
// repeats.
func TestMarkdownTextRoundTrips(t *testing.T) {
	const chars = "ab1 \\`*_[]()<>!#&;|~-+=.:/@\"'\n\t{}$%^"
	r := rand.New(rand.NewPCG(3, 4))
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for range 3000 {
		b := make([]byte, 1+r.IntN(24))
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		s := string(b)
		if strings.TrimSpace(s) == "" {
			continue
		}
		for name, md := range map[string]string{"mdText": mdText(s), "mdBlock": mdBlock(s)} {
			elements, _, text := pageParts(viewMarkdown(t, []byte("x "+md+"\n")))
			paragraphs := len(elements) - 3 // mdBlock keeps a blank line's paragraphs
			if !slices.Equal(elements[:3], []string{"html", "head", "body"}) || slices.ContainsFunc(elements[3:], func(e string) bool { return e != "p" }) ||
				name == "mdText" && paragraphs != 1 || words(text) != words("x "+s) {
				t.Fatalf("%s(%q) = %q renders as %v holding %q", name, s, md, elements, text)
			}
		}
	}
}
