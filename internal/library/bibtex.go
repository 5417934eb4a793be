package library

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// BibTeX, as reference managers export it: entries @type{key, field = value, ...} (or
// with parentheses), values in braces, in quotes, numbers or @string macros, joined with
// #; @comment and @preamble skipped; anything outside an entry ignored, as BibTeX does.

// months are BibTeX's predefined month macros.
var months = map[string]string{"jan": "January", "feb": "February", "mar": "March", "apr": "April", "may": "May", "jun": "June",
	"jul": "July", "aug": "August", "sep": "September", "oct": "October", "nov": "November", "dec": "December"}

// ParseBibTeX reads the references of a BibTeX file (file names it in what is skipped)
// within DefaultLimits.
func ParseBibTeX(data []byte, file string) ([]Reference, []Skipped) {
	return DefaultLimits().ParseBibTeX(data, file)
}

// ParseBibTeX reads the references of a BibTeX file (file names it in what is skipped).
// An entry it cannot use (no title, not closed, malformed) is skipped with its line and
// why, and reading goes on with the next entry; a value left open ends at the next line
// that starts with @. Macros are expanded within the caps of
// l: a @string or entry whose value would grow past them is skipped, named, and so is
// every later one that uses a macro skipped.
func (l Limits) ParseBibTeX(data []byte, file string) ([]Reference, []Skipped) {
	l, data, big := l.begin(file, data)
	if big != nil {
		return nil, big
	}
	p := &bibParser{src: []rune(string(data)), file: file, line: 1, lim: l,
		macros: map[string]string{}, depth: map[string]int{}, refused: map[string]bool{}}
	var refs []Reference
	rep := newReport(file, l)
	for p.next() {
		start, at := p.line, p.pos
		kind := strings.ToLower(p.word())
		p.space()
		open := p.peek()
		if kind == "" || (open != '{' && open != '(') {
			continue // an @ in free text: not an entry
		}
		p.pos++
		close := '}'
		if open == '(' {
			close = ')'
		}
		switch kind {
		case "comment":
			p.skipBalanced(close, false)
			continue
		case "preamble":
			if !p.skipBalanced(close, false) {
				rep.add(Skipped{Line: start, Reason: "@preamble is not closed"})
			}
			continue
		case "string":
			name, value, depth, err := p.assignment(close)
			var over capError
			if err == nil && depth > l.MacroDepth {
				err = capError(fmt.Sprintf("it is defined through more than %d levels of macros", l.MacroDepth))
			}
			switch {
			case errors.As(err, &over):
				// Well formed, but over a cap: the macro is refused, and so is what uses it.
				key := strings.ToLower(name)
				delete(p.macros, key)
				p.refused[key] = true
				rep.add(Skipped{Line: start, Reason: "@string " + shorten(name, 40) + ": " + string(over)})
			case err != nil:
				rep.add(Skipped{Line: start, Reason: "@string: " + err.Error()})
				p.pos, p.line = at, start
				p.recover()
				continue
			default:
				key := strings.ToLower(name)
				p.macros[key], p.depth[key] = value, depth
				delete(p.refused, key)
			}
			p.space()
			if p.peek() == close {
				p.pos++
			}
			continue
		}
		ref, key, err := p.entry(kind, close)
		var over capError
		if errors.As(err, &over) {
			rep.add(Skipped{Line: start, Key: key, Reason: err.Error()})
			if !p.skipBalanced(close, true) { // the rest of the entry, unread
				p.pos, p.line = at, start
				p.recover()
			}
			continue
		}
		if err != nil {
			rep.add(Skipped{Line: start, Key: key, Reason: err.Error()})
			// An unbalanced brace may have run on to the end: go on from the next line
			// that starts an entry after this one's start.
			p.pos, p.line = at, start
			p.recover()
			continue
		}
		why, cuts := ref.finish(file, l)
		if why != "" {
			rep.add(Skipped{Line: start, Key: key, Reason: why})
			continue
		}
		rep.kept(start, ref, cuts)
		refs = append(refs, ref)
	}
	return refs, rep.done()
}

// capError is why a well-formed value is refused: it would grow past a cap.
type capError string

func (e capError) Error() string { return string(e) }

type bibParser struct {
	src    []rune
	pos    int
	line   int
	file   string
	lim    Limits
	macros map[string]string
	// depth is each macro's depth: 1 for one written out, one more than the deepest
	// macro it uses otherwise (the month macros are of depth 1).
	depth map[string]int
	// refused are the macros skipped at a cap: what uses one is skipped too.
	refused map[string]bool
	spent   int // the bytes macro expansion has produced in the file so far
}

func (p *bibParser) peek() rune {
	if p.pos >= len(p.src) {
		return 0
	}
	return p.src[p.pos]
}

func (p *bibParser) advance() rune {
	r := p.src[p.pos]
	p.pos++
	if r == '\n' {
		p.line++
	}
	return r
}

// next moves past the next '@', and says whether there was one.
func (p *bibParser) next() bool {
	for p.pos < len(p.src) {
		if p.advance() == '@' {
			return true
		}
	}
	return false
}

// recover moves to the start of the next line that begins an entry, after a malformed one.
func (p *bibParser) recover() {
	for p.pos < len(p.src) {
		if p.src[p.pos] == '@' && (p.pos == 0 || p.src[p.pos-1] == '\n') {
			return
		}
		p.advance()
	}
}

func (p *bibParser) space() {
	for p.pos < len(p.src) && unicode.IsSpace(p.src[p.pos]) {
		p.advance()
	}
}

// word reads a name: an entry type, a field or a macro.
func (p *bibParser) word() string {
	start := p.pos
	for p.pos < len(p.src) {
		r := p.src[p.pos]
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-:.+/'", r) {
			p.pos++
			continue
		}
		break
	}
	return string(p.src[start:p.pos])
}

// atEntry says whether the parser is at a line that starts an entry: no value runs over
// one. An unclosed brace otherwise reads to the end of the file, and the parser, going
// on from the next entry, would read to the end again for each one after it: a file of
// many unclosed entries took time in the square of its size.
func (p *bibParser) atEntry() bool {
	return p.pos > 0 && p.pos < len(p.src) && p.src[p.pos] == '@' && p.src[p.pos-1] == '\n'
}

// skipBalanced moves past the closing delimiter of a block whose opening was read. In an
// entry (not a comment) a line that starts an entry ends it too, unclosed: see atEntry.
func (p *bibParser) skipBalanced(close rune, entry bool) bool {
	depth := 0
	for p.pos < len(p.src) {
		if entry && p.atEntry() {
			return false
		}
		switch r := p.advance(); {
		case r == '{':
			depth++
		case r == '}' && depth > 0:
			depth--
		case r == close && depth == 0:
			return true
		}
	}
	return false
}

// entry reads an entry after its opening delimiter: the key, then the fields. A field
// over a cap is a capError, returned as soon as the field is read.
func (p *bibParser) entry(kind string, close rune) (Reference, string, error) {
	p.space()
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] != ',' && p.src[p.pos] != close && p.src[p.pos] != '\n' {
		p.pos++
	}
	key := strings.TrimSpace(string(p.src[start:p.pos]))
	p.space()
	var fields map[string]string // made at the first field: a file of empty entries costs none
	for {
		p.space()
		switch p.peek() {
		case ',':
			p.pos++
			continue
		case close:
			p.pos++
			return bibReference(kind, key, fields, p.lim), key, nil
		case 0:
			return Reference{}, key, fmt.Errorf("the entry is not closed (no %q before the end of the file)", close)
		case '@':
			return Reference{}, key, fmt.Errorf("the entry is not closed before the next one starts")
		}
		name, value, _, err := p.assignment(close)
		var over capError
		if errors.As(err, &over) {
			return Reference{}, key, capError(fmt.Sprintf("field %s: %s", shorten(name, 40), over))
		}
		if err != nil {
			return Reference{}, key, err
		}
		if fields == nil {
			fields = map[string]string{}
		}
		fields[strings.ToLower(name)] = value
	}
}

// assignment reads name = value (# value ...), and the depth of the macros the value
// uses (0: none). A value that uses a refused macro, or would grow past ValueBytes or
// the file's ExpandBytes by expanding its macros, is read to its end but not built: a
// capError. Macros cost what they expand to; text written out costs nothing, as the
// file's own size bounds it.
func (p *bibParser) assignment(close rune) (string, string, int, error) {
	p.space()
	name := p.word()
	if name == "" {
		return "", "", 0, fmt.Errorf("expected a field name, found %q", string(p.peek()))
	}
	p.space()
	if p.peek() != '=' {
		return "", "", 0, fmt.Errorf("field %s has no '=' after its name", shorten(name, 40))
	}
	p.pos++
	var parts []string
	var over error
	size, expanded, depth := 0, 0, 0
	for {
		p.space()
		v, macro, err := p.value(name, close)
		if err != nil {
			return "", "", 0, err
		}
		if over == nil && macro != "" {
			if p.refused[macro] {
				over = capError(fmt.Sprintf("it uses macro %s, which was skipped", shorten(macro, 40)))
			}
			expanded += len(v)
			depth = max(depth, p.depthOf(macro))
		}
		size += len(v)
		switch {
		case over != nil:
		case expanded > 0 && size > p.lim.ValueBytes:
			over = capError(fmt.Sprintf("it would be over %s once its macros are expanded", bytesText(int64(p.lim.ValueBytes))))
		case p.spent+expanded > p.lim.ExpandBytes:
			over = capError(fmt.Sprintf("its macros would take the file's expansion over its budget of %s", bytesText(int64(p.lim.ExpandBytes))))
		default:
			parts = append(parts, v)
		}
		p.space()
		if p.peek() != '#' {
			break
		}
		p.pos++
	}
	if over != nil {
		return name, "", 0, over
	}
	p.spent += expanded
	if depth > 0 {
		depth++ // a macro defined through macros is one deeper than they are
	}
	return name, strings.Join(parts, ""), max(depth, 1), nil
}

// where says where an unclosed value stopped: before the next entry, or at the end.
func (p *bibParser) where() string {
	if p.pos < len(p.src) {
		return " before the next entry starts"
	}
	return ""
}

// depthOf is a macro's depth: the month macros and those written out are of depth 1.
func (p *bibParser) depthOf(macro string) int {
	if d, ok := p.depth[macro]; ok {
		return d
	}
	return 1
}

// value reads one value: {braced}, "quoted", a number, or a macro's name. For a macro
// (defined, a month, or refused) it returns its lower-case name too.
func (p *bibParser) value(field string, close rune) (string, string, error) {
	switch r := p.peek(); {
	case r == '{':
		return p.delimited(field, '}', "braces")
	case r == '"':
		return p.delimited(field, '"', "quotes")
	case unicode.IsDigit(r):
		start := p.pos
		for p.pos < len(p.src) && unicode.IsDigit(p.src[p.pos]) {
			p.pos++
		}
		return string(p.src[start:p.pos]), "", nil
	case unicode.IsLetter(r):
		name := p.word()
		lower := strings.ToLower(name)
		if v, ok := p.macros[lower]; ok {
			return v, lower, nil
		}
		if p.refused[lower] {
			return "", lower, nil
		}
		if m, ok := months[lower]; ok {
			return m, lower, nil
		}
		return name, "", nil // an undefined macro: BibTeX warns and uses nothing; its name says more
	case r == 0:
		return "", "", fmt.Errorf("field %s has no value before the end of the file", shorten(field, 40))
	}
	return "", "", fmt.Errorf("field %s: a value cannot start with %q", shorten(field, 40), string(p.peek()))
}

// delimited reads a {braced} or "quoted" value, from its opening delimiter to end, the
// delimiter that closes it outside braces (in a quoted value, braces nest too, and a
// quote inside them is text). A value not closed before the next entry is an error that
// names the delimiters.
func (p *bibParser) delimited(field string, end rune, delimiters string) (string, string, error) {
	p.pos++
	start, depth := p.pos, 0
	for p.pos < len(p.src) && !p.atEntry() {
		switch r := p.advance(); {
		case r == end && depth == 0:
			return string(p.src[start : p.pos-1]), "", nil
		case r == '{':
			depth++
		case r == '}' && depth > 0:
			depth--
		}
	}
	return "", "", fmt.Errorf("field %s: its %s are not closed%s", shorten(field, 40), delimiters, p.where())
}

// bibReference makes a reference of an entry's fields.
func bibReference(kind, key string, f map[string]string, lim Limits) Reference {
	text := func(names ...string) string {
		for _, n := range names {
			if v := strings.TrimSpace(f[n]); v != "" {
				return DecodeLaTeX(v)
			}
		}
		return ""
	}
	r := Reference{
		Key: key, Type: kind,
		Title:     text("title"),
		Venue:     text("journal", "journaltitle", "booktitle", "school", "institution"),
		Volume:    text("volume"),
		Pages:     strings.TrimSpace(f["pages"]),
		Publisher: text("publisher"),
		URL:       strings.TrimSpace(f["url"]),
		Abstract:  text("abstract"),
		DOI:       strings.TrimSpace(f["doi"]),
	}
	r.Year = year(text("year", "date"))
	r.Attachments = bibFiles(f["file"])
	if a := f["author"]; a != "" {
		r.Authors = splitAuthors(a, lim)
	} else if e := f["editor"]; e != "" {
		r.Authors = splitAuthors(e, lim)
	}
	for _, k := range strings.FieldsFunc(text("keywords"), func(r rune) bool { return r == ',' || r == ';' }) {
		r.Keywords = append(r.Keywords, k)
	}
	return r
}

// year is the first four-digit year in a text.
func year(s string) int {
	for i := 0; i+4 <= len(s); i++ {
		if (i == 0 || s[i-1] < '0' || s[i-1] > '9') && (i+4 == len(s) || s[i+4] < '0' || s[i+4] > '9') {
			if y, err := strconv.Atoi(s[i : i+4]); err == nil && y > 1000 && y < 3000 {
				return y
			}
		}
	}
	return 0
}
