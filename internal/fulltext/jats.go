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

// readJATS reads a JATS article's abstract, body and back matter into passages, one
// top-level section at a time, leaving out the reference list, formulae and citations.
func readJATS(data []byte, lim Limits) (Document, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	dec.AutoClose = xml.HTMLAutoClose
	j := &jatsReader{r: &structured{lim: lim}}
	for n := 0; ; n++ {
		if n > maxTokens || len(j.stack) > maxDepth {
			return Document{}, problem("not read: its XML nests deeper than %d elements or holds over %d of them", maxDepth, maxTokens)
		}
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(j.r.blocks) == 0 {
				return Document{}, problem("corrupt: not XML that can be read (%s)", oneLine(err.Error(), 200))
			}
			break // cut short: keep what was read
		}
		switch t := tok.(type) {
		case xml.StartElement:
			j.start(t)
		case xml.EndElement:
			j.end()
		case xml.CharData:
			if err := j.text(t); err != nil {
				return Document{}, err
			}
		}
	}
	j.r.flush()
	return Document{Kind: KindJATS, Passages: passages(j.r.blocks, false)}, nil
}

// jatsReader is where readJATS is in the article: the elements open around it and the
// parts of the article it is inside, as depths into stack (0 when outside).
type jatsReader struct {
	r              *structured
	stack          []string // element names, innermost last
	skip           int      // depth inside an element left out
	capture        int      // depth inside a figure or table: read as one block
	topSec         int      // depth of the body's or back's top-level section, or 0
	inAbstract     int
	inBody, inBack bool
	title          *strings.Builder // a top-level section's title being read
}

// start opens an element: it may begin a part left out, a section, a title or a figure.
func (j *jatsReader) start(t xml.StartElement) {
	name := t.Name.Local
	j.stack = append(j.stack, name)
	depth := len(j.stack)
	if j.skip > 0 {
		return
	}
	switch name {
	case "ref-list", "inline-formula", "disp-formula", "sub-article", "response", "trans-abstract", "journal-meta", "object-id", "alt-text":
		j.skip = depth
	case "xref":
		if attrOf(t, "ref-type") == "bibr" {
			j.skip = depth
		}
	case "body":
		j.inBody = true
	case "back":
		j.inBack, j.inBody = true, false
	case "abstract":
		if j.inAbstract == 0 && !j.inBody && !j.inBack {
			j.inAbstract = depth
			j.r.heading(SectionAbstract, "Abstract")
		}
	case "sec", "ack", "app":
		if (j.inBody || j.inBack) && j.topSec == 0 && j.inAbstract == 0 {
			j.r.flush()
			j.topSec = depth
			j.r.pendingType = strings.ToLower(attrOf(t, "sec-type"))
			j.r.pendingName = name
		}
	case "title":
		switch {
		case j.inAbstract > 0 && j.capture == 0:
			j.skip = depth // "Abstract", or a structured abstract's part
		case j.topSec == depth-1 && j.capture == 0:
			j.title = &strings.Builder{}
		}
	case "fig", "table-wrap", "boxed-text":
		if j.capture == 0 && (j.inBody || j.inBack || j.inAbstract > 0) {
			j.capture = depth
		}
	}
}

// end closes the innermost element: it may end a part left out, a paragraph, a section's
// title, a figure, a section or the abstract.
func (j *jatsReader) end() {
	depth := len(j.stack)
	if depth == 0 {
		return
	}
	name := j.stack[depth-1]
	j.stack = j.stack[:depth-1]
	switch {
	case j.skip == depth:
		j.skip = 0
		return
	case j.skip > 0:
		return
	}
	switch name {
	case "title":
		j.endTitle()
	case "p", "list-item", "def", "term", "verse-line", "disp-quote", "label", "caption", "td", "th", "tr", "preformat", "statement":
		if j.capture == 0 {
			if name == "p" || name == "preformat" || name == "verse-line" || name == "term" || name == "def" {
				j.r.flush()
			}
		} else {
			j.r.text.WriteByte(' ')
		}
	case "fig", "table-wrap", "boxed-text":
		if j.capture == depth {
			j.capture = 0
			j.r.flush()
		}
	case "sec", "ack", "app":
		if j.topSec == depth {
			j.r.flush()
			j.r.pendingType, j.r.pendingName = "", ""
			j.topSec = 0
		}
	case "abstract":
		if j.inAbstract == depth {
			j.r.flush()
			j.inAbstract = 0
		}
	}
}

// endTitle closes a title: a top-level section's opens the section; a subsection's is
// read with the paragraph it heads; one inside a figure runs on into its caption.
func (j *jatsReader) endTitle() {
	switch {
	case j.title != nil:
		j.r.openSection(strings.TrimSpace(j.title.String()))
		j.title = nil
	case j.capture == 0:
		j.r.flush()
	default:
		j.r.text.WriteByte(' ')
	}
}

// text reads character data into the section's title or the passage being read, unless
// it is in a part left out or outside the abstract, body and back.
func (j *jatsReader) text(t xml.CharData) error {
	switch {
	case j.skip > 0:
		return nil
	case j.title != nil:
		j.title.Write(t)
		return nil
	case j.inAbstract > 0 || j.inBody || j.inBack:
		return j.r.add(t)
	}
	return nil
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
