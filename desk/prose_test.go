package main

import (
	"strings"
	"testing"

	"github.com/cosci-dev/cosci/internal/citation"
	"github.com/cosci-dev/cosci/internal/research"
)

// TestAnswersAsProse: an answer's Markdown is shown as prose (paragraphs, lists, emphasis,
// code, http(s) links), its hypothesis ids and cited ids linked; nothing of it becomes a
// script, a handler, a frame or a link anywhere else.
func TestAnswersAsProse(t *testing.T) {
	cited := []Citation{{Cited: citation.Cited{Reference: research.Reference{ID: "10.1000/tau.01", DOI: "10.1000/tau.01"}}},
		{Cited: citation.Cited{Reference: research.Reference{ID: "kim2021", URL: "javascript:alert(1)"}}}}
	tests := []struct {
		name, markdown string
		want, not      []string
	}{
		{"paragraphs and a list", "First.\n\nThe leads:\n\n1. **h-0003**, *strongest*\n2. h-0012\n",
			[]string{"<p>First.</p>", "<ol>", `<strong><a href="/s/s-1/h/h-0003">h-0003</a></strong>`, "<em>strongest</em>", `<a href="/s/s-1/h/h-0012">h-0012</a>`}, nil},
		{"code keeps its ids", "Run `h-0003` as `x < y`.", []string{"<code>h-0003</code>", "<code>x &lt; y</code>"}, []string{`/h/h-0003"`}},
		{"a cited id links to its source", "As 10.1000/tau.01 shows.", []string{`<a href="https://doi.org/10.1000/tau.01" rel="nofollow noopener" target="_blank">10.1000/tau.01</a>`}, nil},
		{"a cited id with no address a page may follow", "As kim2021 shows.", []string{"As kim2021 shows."}, []string{"javascript", "<a "}},
		{"http links", "See [the review](https://example.org/r).", []string{`href="https://example.org/r"`, `rel="nofollow noopener"`}, nil},
		{"raw HTML", "Hi <script>alert(1)</script><img src=x onerror=alert(2)><iframe src=//evil>", []string{"Hi"}, []string{"<script", "<img", "onerror", "<iframe"}},
		{"other schemes", "[a](javascript:alert(1)) [b](data:text/html,x) [c](vbscript:x)", nil, []string{"javascript", "data:", "vbscript"}},
		{"a protocol-relative link", "[a](//evil.example/x)", nil, []string{"evil.example"}},
		{"headings and tables are text", "# Big\n\n| a | b |\n|---|---|\n| 1 | 2 |", []string{"Big"}, []string{"<h1", "<table"}},
		// goldmark renders these as HTML, which only the sanitiser takes out: an image of
		// another site (it would fetch it, with the page's address, whenever the page is
		// read), and a link of an autolink to a scheme a page may not follow.
		{"an image of another site", "![p](https://evil.example/p.png?session=s-1)", nil, []string{"<img", "evil.example"}},
		{"an autolink to another scheme", "<ftp://evil.example/a>", []string{"ftp://evil.example/a"}, []string{"<a ", "href"}},
	}
	for _, tt := range tests {
		got := string(prose("s-1", tt.markdown, cited))
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tt.name, got, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: %q has %q", tt.name, got, n)
			}
		}
	}
	t.Run("what the sanitiser keeps", testSanitiser)
}

// testSanitiser (a part of TestAnswersAsProse): what the sanitiser keeps of HTML a renderer could write, whatever
// goldmark and the transformer let through: no script, handler, style, frame or form, and
// links to http(s) and the desk's own pages only, javascript: in any case or spelling not.
func testSanitiser(t *testing.T) {
	tests := []struct {
		name, html string
		want, not  []string
	}{
		{"a javascript link", `<a href="javascript:alert(1)">x</a>`, []string{"x"}, []string{"javascript", "href"}},
		{"a javascript link in capitals", `<a href="JaVaScRiPt:alert(1)">x</a>`, nil, []string{"alert", "href"}},
		{"a javascript link behind spaces and entities", `<a href=" &#106;avascript:alert(1)">x</a>`, nil, []string{"alert", "href"}},
		{"a data link", `<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>`, nil, []string{"data:", "href"}},
		{"a vbscript link", `<a href="vbscript:msgbox(1)">x</a>`, nil, []string{"vbscript", "href"}},
		{"a handler on a link", `<a href="https://ok.example/" onclick="alert(1)">x</a>`, []string{`href="https://ok.example/"`, `rel="nofollow noopener"`}, []string{"onclick"}},
		{"a style", `<p style="background:url(javascript:alert(1))">x</p>`, []string{"<p>x</p>"}, []string{"style", "javascript"}},
		{"a script", `<p>x</p><script>alert(1)</script>`, []string{"<p>x</p>"}, []string{"<script", "alert"}},
		{"an image with a handler", `<img src="x" onerror="alert(1)">`, nil, []string{"<img", "onerror"}},
		{"a frame, a form, an svg", `<iframe src="https://evil.example"></iframe><form action="https://evil.example"><button>go</button></form><svg onload="alert(1)"></svg>`, nil, []string{"<iframe", "<form", "<svg", "onload", "evil.example"}},
		{"the desk's own page", `<a href="/s/s-1/h/h-0001">h-0001</a>`, []string{`<a href="/s/s-1/h/h-0001">h-0001</a>`}, nil},
	}
	for _, tt := range tests {
		got := string(sanitize([]byte(tt.html)))
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tt.name, got, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(strings.ToLower(got), strings.ToLower(n)) {
				t.Errorf("%s: %q has %q", tt.name, got, n)
			}
		}
	}
}

// TestOnlyAnswersAreProse: the scientist's own message is shown as written, its Markdown
// and markup escaped.
func TestOnlyAnswersAreProse(t *testing.T) {
	td, _ := newConversingDesk(t)
	_, body := td.do(t, "ada@lab", "GET", "/s/s-1", nil)
	if !strings.Contains(body, "Why &lt;script&gt;alert(1)&lt;/script&gt; tau?") {
		t.Error("the scientist's message is not shown escaped")
	}
	if !strings.Contains(body, `<div class="text prose"><p>Microglia clear tau &amp; more.</p>`) {
		t.Errorf("the answer is not shown as prose:\n%s", body)
	}
}
