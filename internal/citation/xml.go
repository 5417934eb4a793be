package citation

import (
	"encoding/xml"
	"io"
	"slices"
	"strings"
)

// XML results: the element tree they are read into, as far as they go, and which of
// their elements are records (PubMed's in pubmed.go, arXiv's Atom entries in arxiv.go).

// xnode is an XML element: its name, attributes and content (text and elements).
type xnode struct {
	name  string
	attrs []xml.Attr
	parts []xpart
}

type xpart struct {
	text string
	node *xnode
}

// decodeXML reads an XML text as far as it goes, bounded in depth and size; HTML's
// entities are read, and an element left open is closed.
func decodeXML(s string) (*xnode, bool) {
	dec := xml.NewDecoder(strings.NewReader(s))
	dec.Strict = false
	dec.AutoClose = xml.HTMLAutoClose
	dec.Entity = xml.HTMLEntity
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	root := &xnode{}
	stack := []*xnode{root}
	skipped := 0 // elements open beyond maxDepth
	for n := 0; n < maxValues; n++ {
		tok, err := dec.RawToken()
		if err != nil {
			break
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) > maxDepth || skipped > 0 {
				skipped++
				continue
			}
			e := &xnode{name: t.Name.Local, attrs: slices.Clone(t.Attr)}
			if t.Name.Space != "" {
				e.name = t.Name.Space + ":" + t.Name.Local
			}
			top.parts = append(top.parts, xpart{node: e})
			stack = append(stack, e)
		case xml.EndElement:
			if skipped > 0 {
				skipped--
				continue
			}
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			if skipped == 0 {
				top.parts = append(top.parts, xpart{text: string(t)})
			}
		}
	}
	return root, len(root.parts) > 0
}

// local is an element's name without its namespace prefix.
func (e *xnode) local() string {
	if i := strings.LastIndexByte(e.name, ':'); i >= 0 {
		return e.name[i+1:]
	}
	return e.name
}

func (e *xnode) attr(name string) string {
	for _, a := range e.attrs {
		if strings.EqualFold(a.Name.Local, name) {
			return a.Value
		}
	}
	return ""
}

// kids are the child elements named name ("" for all).
func (e *xnode) kids(name string) []*xnode {
	var out []*xnode
	if e == nil {
		return nil
	}
	for _, p := range e.parts {
		if p.node != nil && (name == "" || p.node.local() == name) {
			out = append(out, p.node)
		}
	}
	return out
}

// kid follows a path of child elements.
func (e *xnode) kid(path ...string) *xnode {
	for _, name := range path {
		k := e.kids(name)
		if len(k) == 0 {
			return nil
		}
		e = k[0]
	}
	return e
}

// text is the element's text, its elements' included.
func (e *xnode) text() string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*xnode, int)
	walk = func(e *xnode, depth int) {
		if depth > maxDepth {
			return
		}
		for _, p := range e.parts {
			if p.node != nil {
				walk(p.node, depth+1)
			} else {
				b.WriteString(p.text)
			}
		}
	}
	walk(e, 0)
	return strings.TrimSpace(b.String())
}

// all are the elements named name anywhere under e, not under another one of them.
func (e *xnode) all(name string) []*xnode {
	var out []*xnode
	var walk func(*xnode, int)
	walk = func(e *xnode, depth int) {
		if depth > maxDepth {
			return
		}
		for _, k := range e.kids("") {
			if k.local() == name {
				out = append(out, k)
			} else {
				walk(k, depth+1)
			}
		}
	}
	walk(e, 0)
	return out
}

// xmlRecords reads PubMed's efetch XML (articles and Bookshelf chapters), PubMed's
// esummary XML and arXiv's Atom feed.
func xmlRecords(root *xnode) []Record {
	var out []Record
	for _, name := range []string{"PubmedArticle", "PubmedBookArticle"} {
		for _, a := range root.all(name) {
			if r, ok := pubmedArticle(a); ok {
				out = append(out, r)
			}
		}
	}
	for _, s := range root.all("DocumentSummary") {
		if r, ok := esummaryXML(s); ok {
			out = append(out, r)
		}
	}
	for _, e := range root.all("entry") {
		if r, ok := atomEntry(e); ok {
			out = append(out, r)
		}
	}
	return out
}
