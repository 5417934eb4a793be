package fulltext

import (
	"bytes"
	"io"
	"strings"

	"golang.org/x/net/html"
)

// HTML, as publishers' pages and saved web pages give a paper: headings (h1 to h4) that
// name a section open it, the text of paragraphs, list items, table rows, captions and
// quotes is read block by block, and what a page wraps around the paper (scripts,
// styles, navigation, headers and footers, forms) is left out, as are the references. A
// text without pages: ids by section (s3.2).

// blockElements end a block of text.
var blockElements = map[string]bool{
	"p": true, "li": true, "tr": true, "div": true, "section": true, "article": true, "blockquote": true,
	"figcaption": true, "caption": true, "dd": true, "dt": true, "pre": true, "table": true, "ul": true, "ol": true,
	"main": true, "br": true, "h5": true, "h6": true,
}

// leftOut are the elements whose text is not the paper's.
var leftOut = map[string]bool{
	"script": true, "style": true, "nav": true, "header": true, "footer": true, "aside": true, "noscript": true,
	"form": true, "button": true, "svg": true, "math": true, "head": true, "template": true, "iframe": true, "select": true,
}

func readHTML(data []byte, lim Limits) (Document, error) {
	z := html.NewTokenizer(bytes.NewReader(data))
	z.SetMaxBuf(1 << 20) // one token (a text run, a tag) of at most 1 MiB
	r := &structured{lim: lim, section: SectionFront}
	skip := 0 // depth inside an element left out
	depth := 0
	var heading *strings.Builder
	for n := 0; ; n++ {
		if n > maxTokens || depth > maxDepth {
			return Document{}, problem("not read: its HTML nests deeper than %d elements or holds over %d of them", maxDepth, maxTokens)
		}
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if z.Err() == io.EOF || len(r.blocks) > 0 || r.text.Len() > 0 {
				r.flush()
				return Document{Kind: KindHTML, Passages: passages(r.blocks, false)}, nil
			}
			return Document{}, problem("corrupt: not HTML that can be read (%s)", oneLine(z.Err().Error(), 200))
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if tt == html.StartTagToken && !voidElement(tag) {
				depth++
			}
			if skip > 0 {
				continue
			}
			switch {
			case leftOut[tag] && tt == html.StartTagToken:
				skip = depth
			case tag == "h1" || tag == "h2" || tag == "h3" || tag == "h4":
				r.flush()
				heading = &strings.Builder{}
			case blockElements[tag]:
				r.flush()
			case tag == "td" || tag == "th":
				r.text.WriteByte(' ')
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if voidElement(tag) {
				continue
			}
			if skip > 0 {
				if skip == depth {
					skip = 0
				}
				depth--
				continue
			}
			depth--
			switch {
			case heading != nil && (tag == "h1" || tag == "h2" || tag == "h3" || tag == "h4"):
				text := strings.Join(strings.Fields(heading.String()), " ")
				heading = nil
				if name, ok := headingOf(text); ok {
					r.heading(name, text)
				} else if tag != "h1" {
					r.text.WriteString(text) // a subheading: read with what it heads
					r.flush()
				}
			case blockElements[tag]:
				r.flush()
			case tag == "td" || tag == "th":
				r.text.WriteByte(' ')
			}
		case html.TextToken:
			if skip > 0 {
				continue
			}
			if heading != nil {
				heading.Write(z.Text())
				continue
			}
			if err := r.add(z.Text()); err != nil {
				return Document{}, err
			}
		}
	}
}

func voidElement(tag string) bool {
	switch tag {
	case "br", "img", "hr", "meta", "link", "input", "wbr", "source", "area", "base", "col", "embed", "param", "track":
		return true
	}
	return false
}
