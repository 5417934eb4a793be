package dataset

import (
	"fmt"
	"strings"
)

// Kinds a column may still be while its values are read.
const (
	pointNumber = 1 << iota // decimal point, ',' thousands (convention A)
	commaNumber             // decimal comma, '.' thousands (convention B)
	boolean
	date
	allKinds = pointNumber | commaNumber | boolean | date
)

const dateStyles = isoDate | dotDate | slashDMY | slashMDY

// column gathers what a column's values allow, one value at a time, so that a table is
// read in one pass whatever its width.
type column struct {
	missing [len(missingTokens)]int
	values  int // not missing
	kinds   int // what every value so far reads as
	styles  int // the date styles every value so far fits
	times   int // withTime and withoutTime, as met
	// fracPoint and fracComma: some value has a decimal part (or an exponent, or is
	// infinite) read with a decimal point, or a decimal comma.
	fracPoint, fracComma bool
	sawDot, sawComma     bool
	bools                int // boolWords met, as bits
	// ambiguous is a value both conventions read, differently ("1.000"): kept to say why.
	ambiguous string
}

func newColumn() *column { return &column{kinds: allKinds, styles: dateStyles} }

// add reads one cell.
func (c *column) add(raw string) {
	v := trimSpace(raw)
	if i := missingIndex(v); i >= 0 {
		c.missing[i]++
		return
	}
	c.values++
	if c.kinds == 0 {
		return
	}
	if c.kinds&(pointNumber|commaNumber) != 0 && c.addNumber(v) {
		return
	}
	if c.kinds&boolean != 0 {
		if _, ok := isBool(v); ok {
			c.kinds &= boolean
			c.bools |= boolWords(v)
			return
		}
		c.kinds &^= boolean
	}
	if c.kinds&date != 0 {
		styles, _, _ := scanDate(v)
		c.styles &= styles
		c.times |= styles &^ dateStyles
		if c.styles == 0 {
			c.kinds &^= date
		} else {
			c.kinds &= date
		}
	}
}

// addNumber reads v under both conventions, and tells whether either took it.
func (c *column) addNumber(v string) bool {
	if infinity(v) != "" {
		c.kinds &= pointNumber | commaNumber
		c.fracPoint, c.fracComma = true, true
		return true
	}
	// Only the conventions still open are tried: most columns close one at their first
	// value with a separator, and the reading is half of a number's cost.
	a, b := notNumber, notNumber
	if c.kinds&pointNumber != 0 {
		a = scanNumber(v, '.', ',')
	}
	if c.kinds&commaNumber != 0 {
		b = scanNumber(v, ',', '.')
	}
	if a == notNumber {
		c.kinds &^= pointNumber
	}
	if b == notNumber {
		c.kinds &^= commaNumber
	}
	if c.kinds&(pointNumber|commaNumber) == 0 {
		return false
	}
	c.kinds &= pointNumber | commaNumber
	c.fracPoint = c.fracPoint || a == fraction
	c.fracComma = c.fracComma || b == fraction
	dot, comma := strings.IndexByte(v, '.') >= 0, strings.IndexByte(v, ',') >= 0
	c.sawDot = c.sawDot || dot
	c.sawComma = c.sawComma || comma
	if a != notNumber && b != notNumber && (dot || comma) && c.ambiguous == "" {
		c.ambiguous = bound(v, 24) // shown in the schema: "1.000e99999..." is a number too
	}
	return true
}

// boolWords tells the language of a boolean's spelling, as a bit: English, German, French.
func boolWords(v string) int {
	switch v[0] {
	case 'W':
		return 2
	case 'V':
		return 4
	}
	if v == "FALSCH" {
		return 2
	}
	if v == "FAUX" {
		return 4
	}
	return 1
}

// reading is how a column's values are written canonically.
type reading struct {
	typ       string
	dec, thou byte // numbers
	style     int  // dates: the one style
}

// appendTo appends one cell written canonically; ok is false for a missing value, which
// appends nothing.
func (r *reading) appendTo(dst []byte, raw string) (out []byte, ok bool) {
	v := trimSpace(raw)
	if missingIndex(v) >= 0 {
		return dst, false
	}
	switch r.typ {
	case BIGINT, DOUBLE:
		return appendNumber(dst, v, r.dec, r.thou), true
	case BOOLEAN:
		if b, _ := isBool(v); b {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case DATE, TIMESTAMP:
		_, first, monthFirst := scanDate(v)
		if r.style == slashMDY {
			first = monthFirst
		}
		return first.appendISO(dst, r.typ == TIMESTAMP), true
	}
	return append(dst, raw...), true
}

// convert is one cell written canonically, "" for a missing value.
func (r *reading) convert(raw string) string {
	b, _ := r.appendTo(nil, raw)
	return string(b)
}

// evidence is what the file's columns say of its decimal separator, for the columns
// whose values both conventions read ("1.000", "2,500").
type evidence struct {
	point, comma int  // columns only one convention reads
	semicolon    bool // a semicolon-separated file: Europe's CSV, decimal commas
}

// conventions are the decimal conventions that read every value of the column so far.
func (c *column) conventions() (point, comma bool) {
	return c.kinds&pointNumber != 0, c.kinds&commaNumber != 0
}

// resolve turns what the values allow into the column's type and how it was read.
func (c *column) resolve(ev evidence) (reading, string) {
	if c.values == 0 {
		return reading{typ: VARCHAR}, "all missing"
	}
	switch {
	case c.kinds&(pointNumber|commaNumber) != 0:
		return c.resolveNumber(ev)
	case c.kinds&boolean != 0:
		var words []string
		for i, w := range []string{"TRUE/FALSE", "WAHR/FALSCH", "VRAI/FAUX"} {
			if c.bools&(1<<i) != 0 {
				words = append(words, w)
			}
		}
		return reading{typ: BOOLEAN}, strings.Join(words, ", ") + " as booleans"
	case c.kinds&date != 0:
		return c.resolveDate()
	}
	return reading{typ: VARCHAR}, "text"
}

func (c *column) resolveNumber(ev evidence) (reading, string) {
	point, comma := c.conventions()
	why := ""
	if point && comma && (c.sawDot || c.sawComma) {
		// Both conventions read every value, differently: "1.000" is 1 or 1000.
		switch {
		case ev.point > 0 && ev.comma > 0:
			return reading{typ: VARCHAR}, fmt.Sprintf("text: %q could be read with a decimal point or a decimal comma, and the file has columns of each", c.ambiguous)
		case ev.comma > 0:
			point, why = false, "decimal commas in the file's other columns"
		case ev.point > 0:
			comma, why = false, "decimal points in the file's other columns"
		case ev.semicolon:
			point, why = false, "the file is semicolon-separated and no column has a decimal point"
		default:
			comma, why = false, "the file is not semicolon-separated and no column has a decimal comma"
		}
		if point {
			why = fmt.Sprintf("%q read as %s: %s", c.ambiguous, canonicalNumber(c.ambiguous, '.', ','), why)
		} else {
			why = fmt.Sprintf("%q read as %s: %s", c.ambiguous, canonicalNumber(c.ambiguous, ',', '.'), why)
		}
	}
	r := reading{typ: BIGINT, dec: '.', thou: ','}
	frac := c.fracPoint
	if !point {
		r.dec, r.thou, frac = ',', '.', c.fracComma
	}
	if frac {
		r.typ = DOUBLE
	}
	var parts []string
	switch {
	case !c.sawDot && !c.sawComma && r.typ == BIGINT:
		parts = append(parts, "integers")
	case !c.sawDot && !c.sawComma:
		parts = append(parts, "numbers")
	case r.dec == '.':
		parts = appendIf(parts, c.sawDot, "decimal point")
		parts = appendIf(parts, c.sawComma, "',' thousands")
	default:
		parts = appendIf(parts, c.sawComma, "decimal comma")
		parts = appendIf(parts, c.sawDot, "'.' thousands")
	}
	parts = appendIf(parts, why != "", why)
	return r, strings.Join(parts, ", ")
}

func appendIf(parts []string, cond bool, s string) []string {
	if cond {
		return append(parts, s)
	}
	return parts
}

func (c *column) resolveDate() (reading, string) {
	typ, what := DATE, "dates"
	if c.times&withTime != 0 {
		typ, what = TIMESTAMP, "timestamps"
	}
	clock := ""
	if typ == TIMESTAMP {
		clock = " HH:MM:SS"
	}
	switch {
	case c.styles&isoDate != 0:
		return reading{typ: typ, style: isoDate}, what + " as YYYY-MM-DD" + clock
	case c.styles&dotDate != 0:
		return reading{typ: typ, style: dotDate}, what + " as DD.MM.YYYY" + clock
	case c.styles == slashDMY|slashMDY:
		return reading{typ: VARCHAR}, "text: dates with '/' that read as DD/MM/YYYY and as MM/DD/YYYY alike (no part above 12 tells which)"
	case c.styles == slashDMY:
		return reading{typ: typ, style: slashDMY}, what + " as DD/MM/YYYY" + clock + " (a first part above 12)"
	}
	return reading{typ: typ, style: slashMDY}, what + " as MM/DD/YYYY" + clock + " (a second part above 12)"
}

// missingRead says which missing markers a column met and how often: "NA and - as
// missing (12)".
func (c *column) missingRead() (string, int) {
	var names []string
	total := 0
	for i, n := range c.missing {
		if n == 0 {
			continue
		}
		total += n
		name := missingTokens[i]
		if name == "" {
			name = "empty"
		}
		names = append(names, name)
	}
	if total == 0 {
		return "", 0
	}
	list := names[0]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return fmt.Sprintf("%s as missing (%d)", list, total), total
}
