package citation

// How numbers are written is not what they say. A paper typeset with superscripts
// ("4.1 × 10⁵ cm⁻²", or "10<sup>-8</sup>" in JATS and HTML) is quoted in plain text as
// "4.1 x 10^5 cm-2" or "4.1 x 10-2 cm^-2"; "62 ± 3%" as "62 +/- 3%"; a confidence
// interval with its bounds in either order. Each is read here into one form, the same
// for the record and the quote whichever of them writes what:
//
//   - an exponent is "^" and a signed number: a superscript after a number, a unit or a
//     bracket ("10⁻⁸", "cm⁻²"), a <sup> tag there, "^", and a hyphen that can only be
//     an exponent: after a power of ten that follows "×" ("3 × 10-2"), after 10 with
//     a smaller number (a range runs upwards: "10-8" is 10⁻⁸), and after a unit that
//     follows a number closely, with a power of 1 to 4 ("5 mg l-1 s-1", "10^5 spores m-2"),
//     a unit being one the check knows or any word of one to three lower-case letters
//     ("1.3 t ha-1 yr-1"); a superscript negative power after any word ("ha⁻¹");
//   - E-notation is a power of ten: "1.2e-05" is "1.2 × 10^-5", as software prints what
//     a paper typesets (R's and Python's p-values, an analysis record's numbers quoted
//     from a notebook);
//   - "x" between two numbers is "×"; "+/-" is "±";
//   - a confidence or credible interval's bounds are in ascending order.
//
// Superscripts after other words keep NFKC's reading ("R²" is "R2", "Ca²⁺" "Ca2+"): a
// footnote mark or an ion is not an exponent.

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// superscriptASCII are the superscript characters an exponent is written in.
var superscriptASCII = map[rune]byte{
	'⁰': '0', '¹': '1', '²': '2', '³': '3', '⁴': '4', '⁵': '5', '⁶': '6', '⁷': '7', '⁸': '8', '⁹': '9',
	'⁺': '+', '⁻': '-',
}

// supTag is a superscript tag around a short exponent: "<sup>-8</sup>", "<jats:sup>2</jats:sup>".
var supTag = regexp.MustCompile(`(?i)<((?:jats:)?sup)>\s*([-+−–]?\s*\d{1,3})\s*</(?:jats:)?sup>`)

// exponents writes the exponents of a text (superscripts and <sup> tags) after a number,
// a unit or a closing bracket as "^" and the exponent: "10⁻⁸" and "10<sup>-8</sup>" are
// "10^-8".
func exponents(s string) string { return eNotation(superscripts(supTags(s))) }

// eNumber is a number in E-notation standing alone: not inside a word, an id or a longer
// number ("3e4f", "v1.2e3" are not numbers).
var eNumber = regexp.MustCompile(`(^|[^\w.])(\d+(?:\.\d+)?)[eE]([-+−]?)0*(\d{1,3})\b`)

// eNotation writes E-notation as a power of ten: "1.2e-05" is "1.2 × 10^-5".
func eNotation(s string) string {
	if !strings.ContainsAny(s, "eE") {
		return s
	}
	return eNumber.ReplaceAllStringFunc(s, func(m string) string {
		p := eNumber.FindStringSubmatch(m)
		sign := strings.NewReplacer("+", "", "−", "-").Replace(p[3])
		return p[1] + p[2] + " × 10^" + sign + p[4]
	})
}

// supTags writes a <sup> tag's exponent after a number, a unit or a bracket as "^" and
// the exponent.
func supTags(s string) string {
	if strings.Contains(s, "<") {
		var b strings.Builder
		last := 0
		for _, m := range supTag.FindAllStringSubmatchIndex(s, -1) {
			if !exponentBase(s[:m[0]]) {
				continue // a footnote mark: the tag is stripped as any other
			}
			exp := strings.Join(strings.Fields(s[m[4]:m[5]]), "")
			b.WriteString(s[last:m[0]])
			b.WriteString("^" + strings.NewReplacer("−", "-", "–", "-").Replace(exp))
			last = m[1]
		}
		if last > 0 {
			b.WriteString(s[last:])
			s = b.String()
		}
	}
	return s
}

// superscripts writes superscript characters after a number, a unit or a bracket as "^"
// and the exponent in ASCII.
func superscripts(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { _, ok := superscriptASCII[r]; return ok }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if _, ok := superscriptASCII[r]; !ok || !exponentBase(s[:i]) && !negativePower(s[i:]) {
			b.WriteString(s[i : i+w])
			i += w
			continue
		}
		b.WriteByte('^')
		for i < len(s) {
			r, w := utf8.DecodeRuneInString(s[i:])
			c, ok := superscriptASCII[r]
			if !ok {
				break
			}
			b.WriteByte(c)
			i += w
		}
	}
	return b.String()
}

// negativePower says whether a run of superscripts is a negative power ("⁻¹" of
// "ha⁻¹"), which after any word is an exponent: an ion's charge ("Cl⁻", "Ca²⁺") ends
// in its sign.
func negativePower(s string) bool {
	r, w := utf8.DecodeRuneInString(s)
	if r != '⁻' {
		return false
	}
	digits := 0
	for _, r := range s[w:] {
		c, ok := superscriptASCII[r]
		if !ok {
			break
		}
		if c < '0' || c > '9' {
			return false
		}
		digits++
	}
	return digits > 0
}

// exponentBase says whether what a text ends in takes an exponent: a digit, a closing
// bracket, or a unit ("cm", "s", "µmol").
func exponentBase(before string) bool {
	r, _ := utf8.DecodeLastRuneInString(before)
	switch {
	case r == utf8.RuneError:
		return false
	case isDigit(r) || r == ')':
		return true
	case !unicode.IsLetter(r):
		return false
	}
	j := len(before)
	for j > 0 {
		r, w := utf8.DecodeLastRuneInString(before[:j])
		if !unicode.IsLetter(r) {
			break
		}
		j -= w
	}
	return units[canon(strings.ToLower(norm.NFKC.String(before[j:])))]
}

// isMinus says whether a character is a hyphen or a minus sign.
func isMinus(r rune) bool { return r == '-' || r == '−' || r == '‐' || r == '‑' }

// hyphenExponent says whether the hyphen or minus at i, before digits, writes an
// exponent (see the package's notes above): after "× 10", after 10 with a smaller whole
// number, or after a unit that follows a number with a power of 1 to 4.
func (t *tokenizer) hyphenExponent(i, w int) bool {
	n := len(t.out)
	if n == 0 || t.brk || t.end || !isWordRune(t.before(i)) {
		return false
	}
	j := i + w
	k := j
	for k < len(t.text) && isDigit(rune(t.text[k])) {
		k++
	}
	if k == j || k < len(t.text) && (t.text[k] == '.' || t.text[k] == ',' && thousands(t.text[k+1:])) {
		return false // not a whole number
	}
	power, _ := strconv.Atoi(t.text[j:k])
	last := t.out[n-1]
	switch {
	case last.kind == numberToken && last.word == "#10#":
		return n >= 2 && t.out[n-2].word == "×" || power < 10
	case last.kind == wordToken && (units[last.word] || shortUnit(last.surface())) && k-j == 1 && power >= 1 && power <= 4:
		return t.numberBefore(n - 1)
	}
	return false
}

// shortUnit says whether a word may be a unit no list holds ("ha", "yr", "t"): one to
// three lower-case letters.
func shortUnit(w string) bool {
	if w == "" || len(w) > 3 {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// numberBefore says whether a number comes among the three tokens before token i, in
// its clause: a unit after one ("4 g m-2", "10^5 spores m-2", "0.6 g C m-2 d-1").
func (t *tokenizer) numberBefore(i int) bool {
	for k := i - 1; k >= 0 && k >= i-3; k-- {
		if t.out[k].kind == numberToken {
			return true
		}
		if t.out[k].brk {
			return false
		}
	}
	return false
}

// times says whether an "x" at i, after a number, is a multiplication sign: a number
// follows it.
func (t *tokenizer) times(i int) bool {
	n := len(t.out)
	if n == 0 || t.out[n-1].kind != numberToken || t.brk || t.end {
		return false
	}
	j := i + 1
	for j < len(t.text) && t.text[j] == ' ' {
		j++
	}
	return j < len(t.text) && isDigit(rune(t.text[j])) && (j == i+1 || t.text[i+1] == ' ')
}

// Numbers in words and ranges' units, read into the same values as digits.

// numbersInWords reads runs of number words as the values they spell: "sixteen" is 16,
// "twenty-four" 24, "two hundred" 200.
func numbersInWords(ts []token) []token {
	out := ts[:0:0]
	for i := 0; i < len(ts); {
		v, n := spelled(ts[i:])
		if n == 0 {
			out = append(out, ts[i])
			i++
			continue
		}
		t := ts[i]
		t.kind, t.word, t.stem, t.end = numberToken, numberWord(v), "", ts[i+n-1].end
		out = append(out, t)
		i += n
	}
	return out
}

// spelled reads the number the words at the start of ts spell, and how many words it takes.
func spelled(ts []token) (float64, int) {
	total, part, n := 0.0, 0.0, 0
	for n < len(ts) && ts[n].kind == wordToken && (n == 0 || !ts[n].brk) {
		w := ts[n].word
		if v, ok := cardinals[w]; ok {
			if part >= 20 && v < 10 && int(part)%10 == 0 || part == 0 {
				part += v
			} else {
				break
			}
		} else if m, ok := multipliers[w]; ok && (part > 0 || n > 0) {
			if part == 0 {
				part = 1
			}
			total += part * m
			part = 0
		} else {
			break
		}
		n++
	}
	return total + part, n
}

// rangeUnits gives the first number of a range the unit of the second: "10–15%" says
// "10% to 15%".
func rangeUnits(ts []token) []token {
	for i := 0; i+3 < len(ts); i++ {
		if ts[i].kind != numberToken || ts[i+1].word != "to" || ts[i+2].kind != numberToken {
			continue
		}
		u := ts[i+3]
		if u.word == "percent" || units[u.word] {
			syn := u
			syn.start, syn.end, syn.brk, syn.sent = ts[i].end, ts[i].end, false, ts[i].sent
			ts = append(ts[:i+1], append([]token{syn}, ts[i+1:]...)...)
			i += 3
		}
	}
	return ts
}

// intervalWords open a confidence or credible interval: "95% CI 0.44 to 0.83".
var intervalWords = setOf("ci", "cri", "interval", "intervals", "hdi", "ui")

// intervalBounds puts an interval's two bounds in ascending order: "95% CI 0.83 to 0.44"
// is the interval "95% CI 0.44 to 0.83". Only an interval's: "fell from 40 to 20" is not
// "rose from 20 to 40".
func intervalBounds(ts []token) []token {
	for i := range ts {
		if !intervalWords[ts[i].word] {
			continue
		}
		a := i + 1
		for a < len(ts) && a <= i+3 && ts[a].kind != numberToken {
			a++ // "CI:", "CI =", "interval, "
		}
		if a >= len(ts) || ts[a].kind != numberToken {
			continue
		}
		b := a + 1
		if b+1 < len(ts) && (ts[b].word == "percent" || units[ts[b].word]) && ts[b+1].word == "to" {
			b++ // "41% to 58%", as rangeUnits reads "41 to 58%"
		}
		if b < len(ts) && ts[b].word == "to" {
			b++
		}
		if b >= len(ts) || ts[b].kind != numberToken || ts[b].sent != ts[a].sent {
			continue
		}
		if value(ts[a].word) > value(ts[b].word) {
			ts[a].word, ts[b].word = ts[b].word, ts[a].word
		}
	}
	return ts
}

// value is a number token's value.
func value(word string) float64 {
	v, _ := strconv.ParseFloat(strings.Trim(word, "#"), 64)
	return v
}

// A statistic set off in brackets ("... was unchanged (p = 0.41) after ...") is what a
// quote often leaves out without marking it. Its number is not changed but dropped: the
// quote is altered (the record's words, one aside fewer), not contradicted, and not two
// passages spliced either, however long the aside ("(OR 0.61, 95% CI 0.44 to 0.83)").

// statisticAsides are the brackets of the record that hold a statistic, as the tokens
// [s, e) inside each, in order: a bracket (not nested) that holds a number or a
// comparator and no word that governs a finding (a negation, a hedge, a limitation:
// "(but not in women)" is no statistic). One pass over the tokens.
func statisticAsides(rec []token) [][2]int {
	var out [][2]int
	depth, open, prevEnd := 0, -1, 0
	for k := 0; k <= len(rec); k++ {
		var between string
		switch {
		case k < len(rec) && rec[k].text != nil && rec[k].start >= prevEnd:
			between = (*rec[k].text)[prevEnd:rec[k].start]
		case k == len(rec) && k > 0 && rec[k-1].text != nil:
			between = (*rec[k-1].text)[min(prevEnd, len(*rec[k-1].text)):]
		}
		for _, c := range between {
			switch c {
			case '(', '[':
				depth++
				if depth == 1 {
					open = k
				}
			case ')', ']':
				if depth == 1 && open >= 0 && open < k && statistic(rec[open:k]) {
					out = append(out, [2]int{open, k})
				}
				depth = max(0, depth-1)
			}
		}
		if k < len(rec) {
			prevEnd = max(prevEnd, rec[k].end)
		}
	}
	return out
}

// statistic says whether a bracket's tokens are a statistic.
func statistic(ts []token) bool {
	stat := false
	for _, t := range ts {
		if clauseNegation(t.word) || hedges[t.word] || limitations[t.word] || qualifier(t.word) {
			return false
		}
		stat = stat || t.kind == numberToken || comparator(t.word)
	}
	return stat
}

// asideMask marks the record's tokens that are in a statistic in brackets.
func asideMask(rec []token) []bool {
	mask := make([]bool, len(rec))
	for _, a := range statisticAsides(rec) {
		for k := a[0]; k < a[1]; k++ {
			mask[k] = true
		}
	}
	return mask
}

// droppedAsides are the statistics in brackets a quote leaves out whole: for each of the
// record's tokens in one, the aside; and how many edits they make beyond one each.
func droppedAsides(rec []token, left map[int]bool) (in map[int][2]int, extra int) {
	in = map[int][2]int{}
	for _, a := range statisticAsides(rec) {
		whole := true
		for k := a[0]; k < a[1] && whole; k++ {
			whole = left[k]
		}
		if !whole {
			continue
		}
		for k := a[0]; k < a[1]; k++ {
			in[k] = a
		}
		extra += a[1] - a[0] - 1
	}
	return in, extra
}
