package fulltext

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
)

// JATS (NLM) XML, as PubMed Central gives its open-access texts: the abstract (a
// structured one's parts all under "abstract"), the body's top-level sections by their
// sec-type or title, their paragraphs, figures' and tables' captions with a table's rows,
// and the back's acknowledgements and appendices; the references (ref-list), formulas'
// markup and the citation marks in the text (xref to a bibliography entry) are left out.
// A text without pages: its passages' ids are by section (s3.2).

// secTypes are JATS's sec-type values, by the section they name.
var secTypes = map[string]string{
	"intro": SectionIntroduction, "introduction": SectionIntroduction, "background": SectionIntroduction,
	"methods": SectionMethods, "materials|methods": SectionMethods, "materials": SectionMethods, "methods|materials": SectionMethods,
	"subjects": SectionMethods, "cases": SectionMethods, "results": SectionResults, "results|discussion": SectionResults,
	"discussion": SectionDiscussion, "conclusions": SectionConclusions, "conclusion": SectionConclusions,
	"discussion|conclusions": SectionDiscussion, "supplementary-material": SectionOther,
}

// Bounds on what is read of one XML or HTML file besides its size: the nesting of
// elements, and the tokens read.
const (
	maxDepth  = 256
	maxTokens = 4_000_000
)

func readJATS(data []byte, lim Limits) (Document, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	dec.AutoClose = xml.HTMLAutoClose
	r := &structured{lim: lim}
	var stack []string // element names, innermost last
	skip := 0          // depth inside an element left out
	capture := 0       // depth inside a figure or table: read as one block
	topSec := 0        // depth of the body's or back's top-level section, or 0
	inAbstract, inBody, inBack := 0, false, false
	var title *strings.Builder
	for n := 0; ; n++ {
		if n > maxTokens || len(stack) > maxDepth {
			return Document{}, problem("not read: its XML nests deeper than %d elements or holds over %d of them", maxDepth, maxTokens)
		}
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(r.blocks) == 0 {
				return Document{}, problem("corrupt: not XML that can be read (%s)", oneLine(err.Error(), 200))
			}
			break // cut short: keep what was read
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			stack = append(stack, name)
			depth := len(stack)
			if skip > 0 {
				continue
			}
			switch name {
			case "ref-list", "inline-formula", "disp-formula", "sub-article", "response", "trans-abstract", "journal-meta", "object-id", "alt-text":
				skip = depth
				continue
			case "xref":
				if attrOf(t, "ref-type") == "bibr" {
					skip = depth
					continue
				}
			case "front":
				continue
			case "body":
				inBody = true
			case "back":
				inBack, inBody = true, false
			case "abstract":
				if inAbstract == 0 && !inBody && !inBack {
					inAbstract = depth
					r.heading(SectionAbstract, "Abstract")
				}
			case "article-meta":
			case "sec", "ack", "app":
				if (inBody || inBack) && topSec == 0 && inAbstract == 0 {
					r.flush()
					topSec = depth
					r.pendingType = strings.ToLower(attrOf(t, "sec-type"))
					r.pendingName = name
				}
			case "title":
				switch {
				case inAbstract > 0 && capture == 0:
					skip = depth // "Abstract", or a structured abstract's part
				case topSec == depth-1 && capture == 0:
					title = &strings.Builder{}
				}
			case "fig", "table-wrap", "boxed-text":
				if capture == 0 && (inBody || inBack || inAbstract > 0) {
					capture = depth
				}
			}
		case xml.EndElement:
			depth := len(stack)
			if depth == 0 {
				continue
			}
			name := stack[depth-1]
			stack = stack[:depth-1]
			switch {
			case skip == depth:
				skip = 0
				continue
			case skip > 0:
				continue
			}
			switch name {
			case "title":
				if title != nil {
					r.openSection(strings.TrimSpace(title.String()))
					title = nil
					continue
				}
				if capture == 0 {
					r.flush() // a subsection's title: read with the paragraph it heads
				} else {
					r.text.WriteByte(' ')
				}
			case "p", "list-item", "def", "term", "verse-line", "disp-quote", "label", "caption", "td", "th", "tr", "preformat", "statement":
				if capture == 0 {
					if name == "p" || name == "preformat" || name == "verse-line" || name == "term" || name == "def" {
						r.flush()
					}
				} else {
					r.text.WriteByte(' ')
				}
			case "fig", "table-wrap", "boxed-text":
				if capture == depth {
					capture = 0
					r.flush()
				}
			case "sec", "ack", "app":
				if topSec == depth {
					r.flush()
					r.pendingType, r.pendingName = "", ""
					topSec = 0
				}
			case "abstract":
				if inAbstract == depth {
					r.flush()
					inAbstract = 0
				}
			}
		case xml.CharData:
			if skip > 0 {
				continue
			}
			if title != nil {
				title.Write(t)
				continue
			}
			if inAbstract > 0 || inBody || inBack {
				if err := r.add(t); err != nil {
					return Document{}, err
				}
			}
		}
	}
	r.flush()
	return Document{Kind: KindJATS, Passages: passages(r.blocks, false)}, nil
}

func attrOf(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// structured collects the blocks of a text whose structure names its sections (JATS,
// HTML).
type structured struct {
	lim                      Limits
	blocks                   []block
	text                     strings.Builder
	size                     int
	section                  string
	pendingType, pendingName string // a top-level section whose title is still to come
}

// heading opens a section.
func (r *structured) heading(section, heading string) {
	r.flush()
	r.section = section
	if heading == "" {
		heading = section
	}
	r.blocks = append(r.blocks, block{section: section, heading: heading})
}

// openSection opens the pending top-level section, named by its sec-type, else its title.
func (r *structured) openSection(title string) {
	name := secTypes[r.pendingType]
	if name == "" {
		if s, ok := headingOf(title); ok {
			name = s
		}
	}
	if name == "" {
		name = SectionOther
	}
	if title == "" {
		title = map[string]string{"ack": "Acknowledgements", "app": "Appendix"}[r.pendingName]
	}
	r.pendingType, r.pendingName = "", ""
	r.section = name
	if title == "" {
		title = name
	}
	r.blocks = append(r.blocks, block{section: name, heading: title})
}

func (r *structured) add(t []byte) error {
	r.size += len(t)
	if r.size > r.lim.TextBytes {
		return problem("not read: its text runs over the cap of %s on one file", Size(int64(r.lim.TextBytes)))
	}
	r.text.Write(t)
	return nil
}

// flush ends the block being read, if it has text.
func (r *structured) flush() {
	text := strings.Join(strings.Fields(r.text.String()), " ")
	r.text.Reset()
	if text == "" {
		return
	}
	if r.pendingName != "" { // a section whose text came before any title
		r.openSection("")
	}
	if r.section == "" {
		return
	}
	if r.section == sectionReferences {
		return
	}
	r.blocks = append(r.blocks, block{section: r.section, lines: []string{text}})
}
