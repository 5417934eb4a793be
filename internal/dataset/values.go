package dataset

// How one cell reads. Each reader here answers only for one value; the column's reading
// (inference.go) is what every value of the column allows.

// missingTokens are read as missing in every column, whatever its type: what R writes
// for NA (and NaN: a NaN in the lab's data is a value that is not there, and DuckDB would
// otherwise carry it into every mean), what pandas, Excel (#N/A) and people write. The
// reading says which were met and how often.
var missingTokens = [...]string{"", "NA", "N/A", "n/a", "NaN", "nan", "-", "#N/A"}

// missingIndex is the index of s in missingTokens, or -1.
func missingIndex(s string) int {
	if len(s) > 4 {
		return -1
	}
	switch s {
	case "":
		return 0
	case "NA":
		return 1
	case "N/A":
		return 2
	case "n/a":
		return 3
	case "NaN":
		return 4
	case "nan":
		return 5
	case "-":
		return 6
	case "#N/A":
		return 7
	}
	return -1
}

// trimSpace drops the spaces and tabs some exporters pad cells with.
func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// numShape is how a cell reads as a number under one convention.
type numShape uint8

const (
	notNumber numShape = iota
	integer            // digits only (and thousands separators)
	fraction           // a decimal part, an exponent, or too many digits for BIGINT
)

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber reads s as a number with dec as the decimal separator and thou as the
// thousands separator. Thousands groups are strict (1-3 digits, then groups of 3), and an
// integer part with a leading zero ("007") is not a number: it is an identifier, and
// reading it as 7 would lose what it says.
func scanNumber(s string, dec, thou byte) numShape {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	start, digits, group, groups := i, 0, 0, 0
	for ; i < len(s); i++ {
		c := s[i]
		if isDigit(c) {
			digits++
			group++
			continue
		}
		if c != thou || group == 0 || group > 3 || (groups > 0 && group != 3) {
			break
		}
		groups++
		group = 0
	}
	if digits == 0 || (groups > 0 && group != 3) || (s[start] == '0' && digits > 1) {
		return notNumber
	}
	shape := integer
	if digits > 18 {
		shape = fraction
	}
	if i < len(s) && s[i] == dec {
		if i = digitsAfter(s, i+1); i < 0 {
			return notNumber
		}
		shape = fraction
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if i = digitsAfter(s, i); i < 0 {
			return notNumber
		}
		shape = fraction
	}
	if i != len(s) {
		return notNumber
	}
	return shape
}

// digitsAfter is where the run of digits at s[i:] ends, or -1 when there is none.
func digitsAfter(s string, i int) int {
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

// infinity is what R and others write for an infinite value, as DuckDB reads it.
func infinity(s string) string {
	switch s {
	case "Inf", "inf", "Infinity", "+Inf":
		return "inf"
	case "-Inf", "-inf", "-Infinity":
		return "-inf"
	}
	return ""
}

// appendNumber appends a number read with the decimal separator dec in DuckDB's form:
// thousands separators dropped, '.' as the decimal point, no '+'.
func appendNumber(dst []byte, s string, dec, thou byte) []byte {
	if inf := infinity(s); inf != "" {
		return append(dst, inf...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+' && i == 0:
		case c == thou:
		case c == dec:
			dst = append(dst, '.')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func canonicalNumber(s string, dec, thou byte) string {
	return string(appendNumber(nil, s, dec, thou))
}

// isBool reads R's and Excel's TRUE/FALSE, pandas' True/False, and what German and
// French spreadsheets write for them (Gnumeric and Excel in de_DE: WAHR/FALSCH).
func isBool(s string) (value, ok bool) {
	switch s {
	case "TRUE", "True", "true", "WAHR", "VRAI":
		return true, true
	case "FALSE", "False", "false", "FALSCH", "FAUX":
		return false, true
	}
	return false, false
}

// Date styles a column can be written in.
const (
	isoDate  = 1 << iota // 2024-03-01
	dotDate              // 01.03.2024 (German, Swiss, Russian Excel)
	slashDMY             // 01/03/2024 read day first
	slashMDY             // 01/03/2024 read month first
	withTime             // any value has a time of day
	withoutTime
)

// civil is a date and an optional time as written.
type civil struct {
	y, m, d int
	clock   string // "HH:MM:SS[.fff]" or ""
}

// scanDate reads s as a date in any of the styles, returning the styles it fits and the
// date read in each: the day-first and month-first readings of a slash date differ.
func scanDate(s string) (styles int, dmy, mdy civil) {
	date, clock := s, ""
	if len(s) > 10 {
		cut := -1
		for i := 8; i < len(s) && i <= 10; i++ {
			if s[i] == ' ' || s[i] == 'T' {
				cut = i
				break
			}
		}
		if cut < 0 {
			return 0, dmy, mdy
		}
		var ok bool
		if clock, ok = scanClock(s[cut+1:]); !ok {
			return 0, dmy, mdy
		}
		date = s[:cut]
	}
	timeBit := withoutTime
	if clock != "" {
		timeBit = withTime
	}
	if len(date) == 10 && date[4] == '-' && date[7] == '-' {
		y, m, d := num(date[0:4]), num(date[5:7]), num(date[8:10])
		if validDate(y, m, d) {
			return isoDate | timeBit, civil{y, m, d, clock}, civil{}
		}
		return 0, dmy, mdy
	}
	a, b, y, sep, ok := splitDate(date)
	if !ok {
		return 0, dmy, mdy
	}
	if sep == '.' {
		if validDate(y, b, a) {
			return dotDate | timeBit, civil{y, b, a, clock}, civil{}
		}
		return 0, dmy, mdy
	}
	if validDate(y, b, a) {
		styles |= slashDMY
		dmy = civil{y, b, a, clock}
	}
	if validDate(y, a, b) {
		styles |= slashMDY
		mdy = civil{y, a, b, clock}
	}
	if styles != 0 {
		styles |= timeBit
	}
	return styles, dmy, mdy
}

// splitDate reads "a.b.yyyy" or "a/b/yyyy" with one or two digits in a and b.
func splitDate(s string) (a, b, y int, sep byte, ok bool) {
	i := 0
	part := func() int {
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i-start < 1 || i-start > 2 {
			return -1
		}
		return num(s[start:i])
	}
	if a = part(); a < 0 || i >= len(s) || (s[i] != '.' && s[i] != '/') {
		return 0, 0, 0, 0, false
	}
	sep = s[i]
	i++
	if b = part(); b < 0 || i >= len(s) || s[i] != sep || len(s)-i-1 != 4 {
		return 0, 0, 0, 0, false
	}
	y = num(s[i+1:])
	return a, b, y, sep, y >= 0
}

// scanClock reads "HH:MM", "HH:MM:SS" or "HH:MM:SS.fff" into "HH:MM:SS[.fff]".
func scanClock(s string) (string, bool) {
	if len(s) < 4 {
		return "", false
	}
	colon := 1
	if s[1] != ':' {
		colon = 2
	}
	h := num(s[:colon])
	rest := s[colon:]
	if h < 0 || h > 23 || len(rest) < 3 || rest[0] != ':' {
		return "", false
	}
	m := num(rest[1:3])
	if m < 0 || m > 59 {
		return "", false
	}
	sec, frac := "00", ""
	rest = rest[3:]
	if len(rest) > 0 {
		if len(rest) < 3 || rest[0] != ':' || num(rest[1:3]) < 0 || num(rest[1:3]) > 59 {
			return "", false
		}
		sec = rest[1:3]
		rest = rest[3:]
		if len(rest) > 0 {
			if rest[0] != '.' || len(rest) < 2 || num(rest[1:]) < 0 || len(rest) > 10 {
				return "", false
			}
			frac = rest
		}
	}
	return pad2(h) + ":" + pad2(m) + ":" + sec + frac, true
}

// num reads a run of ASCII digits, or -1.
func num(s string) int {
	if len(s) == 0 || len(s) > 9 {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func validDate(y, m, d int) bool {
	if y < 1 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

func pad2(n int) string {
	return string(appendPad2(nil, n))
}

func appendPad2(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/10%10), byte('0'+n%10))
}

// appendISO appends a date (and its time, in a TIMESTAMP column) as DuckDB reads it.
func (c civil) appendISO(dst []byte, timestamp bool) []byte {
	dst = append(dst, byte('0'+c.y/1000%10), byte('0'+c.y/100%10), byte('0'+c.y/10%10), byte('0'+c.y%10), '-')
	dst = appendPad2(dst, c.m)
	dst = append(dst, '-')
	dst = appendPad2(dst, c.d)
	if timestamp {
		clock := c.clock
		if clock == "" {
			clock = "00:00:00"
		}
		dst = append(dst, ' ')
		dst = append(dst, clock...)
	}
	return dst
}
