package citation

// Reading a text as the words a quote is compared in. A careful reader ignores how a
// passage is written and attends to what it says, so each word is put in one canonical
// form first: lower case, American spelling (spelling.go), Greek letters named ("β" is
// "beta"), a unit in one spelling ("µg", "mcg", "micrograms"), and numbers as values with
// their sign and decimal point ("sixteen" and "16"; ".01" and "0.01"; "1,024" and "1024";
// "−0.023" is not "0.023"). Comparators and the like ("<", "≥", "±", "%") are words of
// their own, and a range is one ("10–15%" and "10 to 15%" read the same). Each word
// keeps where it lies, its sentence, and whether a clause boundary comes before it, so
// that what a quote leaves out around it can be read (context.go).

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	"golang.org/x/text/unicode/norm"
)

type tokenKind uint8

const (
	wordToken   tokenKind = iota
	numberToken           // word is "#value#"
	symbolToken           // a comparator, "±", "%" (as "percent")
)

// A token is a word of a normalised text, with where it lies in that text, so the
// record's passage can be shown as the record wrote it.
type token struct {
	word, stem string
	kind       tokenKind
	start, end int
	text       *string
	sent       int  // the sentence it is in, counted from 0
	brk        bool // a clause boundary (, ; : a bracket, a dash) or a sentence's start comes before it
}

// surface is the token as the text writes it.
func (t token) surface() string {
	if t.text == nil || t.start >= t.end {
		return strings.Trim(t.word, "#")
	}
	return (*t.text)[t.start:t.end]
}

var (
	// an apostrophe inside a word: "Alzheimer's", "didn't".
	innerApostrophe = regexp.MustCompile(`(\pL)['\x{2019}\x{02BC}](\pL)`)
)

// normalise puts a text in the form quotes are compared in, keeping its case (the tokens
// are lowered) so that a passage reads as the record wrote it.
func normalise(s string) string {
	s = norm.NFKC.String(exponents(s))
	s = strings.ReplaceAll(s, "\u00AD", "") // a soft hyphen is only a place to break
	return innerApostrophe.ReplaceAllString(s, "$1$2")
}

// symbols are the characters read as words of their own.
var symbols = map[rune]string{
	'<': "<", '>': ">", '≤': "<=", '≥': ">=", '⩽': "<=", '⩾': ">=", '=': "=", '±': "±", '~': "~", '≈': "~",
	'×': "×", '%': "percent", '+': "+", '≠': "!=", '^': "^",
}

// tokenizer reads one text.
type tokenizer struct {
	checker
	text  string
	out   []token
	limit int
	sent  int
	brk   bool // a clause boundary since the last token
	end   bool // a sentence end since the last token
}

// tokenize is a text's words as the check reads them, at most limit of them (0: all).
func tokenize(s string, limit int) []token { return std.tokenize(s, limit) }

func (c checker) tokenize(s string, limit int) []token {
	t := &tokenizer{checker: c, text: normalise(s), limit: limit, brk: true}
	t.scan()
	if c.near && c.values {
		t.out = numbersInWords(t.out)
	}
	if c.values {
		t.out = intervalBounds(rangeUnits(t.out))
	}
	for i := range t.out {
		if t.out[i].stem == "" {
			t.out[i].stem = t.out[i].word
			if t.out[i].kind == wordToken {
				t.out[i].stem = stem(t.out[i].word)
			}
		}
	}
	if limit > 0 && len(t.out) > limit {
		t.out = t.out[:limit]
	}
	return t.out
}

func (t *tokenizer) full() bool { return t.limit > 0 && len(t.out) >= t.limit+8 }

func (t *tokenizer) emit(kind tokenKind, word string, start, end int) {
	if t.end && len(t.out) > 0 {
		t.sent++
	}
	t.out = append(t.out, token{word: word, kind: kind, start: start, end: end, text: &t.text, sent: t.sent, brk: t.brk || t.end})
	t.brk, t.end = false, false
}

// at is the rune at byte i, and its width; 0 past the end.
func (t *tokenizer) at(i int) (rune, int) {
	if i < 0 || i >= len(t.text) {
		return 0, 0
	}
	return utf8.DecodeRuneInString(t.text[i:])
}

// before is the rune before byte i; 0 at the start.
func (t *tokenizer) before(i int) rune {
	if i <= 0 {
		return 0
	}
	r, _ := utf8.DecodeLastRuneInString(t.text[:i])
	return r
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func (t *tokenizer) scan() {
	for i := 0; i < len(t.text) && !t.full(); {
		r, w := t.at(i)
		next, nw := t.at(i + w)
		switch {
		case !t.values && isWordRune(r):
			i = t.word(i) // a number is letters like any other word's
		case !t.values && symbols[r] != "":
			t.separator(i, r, next)
			i += w
		case isDigit(r), r == '.' && isDigit(next) && !isWordRune(t.before(i)):
			i = t.number(i, -1)
		case t.values && isMinus(r) && isDigit(next) && t.hyphenExponent(i, w):
			t.emit(symbolToken, "^", i, i+w) // "10-8" after "×", "cm-2" after a number: exponents
			i = t.number(i+w, i)
		case t.values && r == '+' && next == '/' && isMinus(t.afterRune(i+w+nw)):
			_, mw := t.at(i + w + nw)
			t.emit(symbolToken, "±", i, i+w+nw+mw) // "+/-" is "±"
			i += w + nw + mw
		case t.values && (r == '-' || r == '−') && (isDigit(next) || next == '.' && isDigit(t.afterRune(i+w+nw))) && t.signPosition(i):
			i = t.number(i+w, i)
		case isWordRune(r):
			i = t.word(i)
		case symbols[r] != "":
			word, n := symbols[r], w
			if (r == '<' || r == '>') && next == '=' {
				word, n = string(r)+"=", w+nw
			}
			t.emit(symbolToken, word, i, i+n)
			i += n
		default:
			t.separator(i, r, next)
			i += w
		}
	}
}

func (t *tokenizer) afterRune(i int) rune { r, _ := t.at(i); return r }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

// signPosition says whether a minus or hyphen at i is a number's sign: after a space, a
// bracket, a comparator or the start, not inside a word or a range ("IL-6", "10-15").
func (t *tokenizer) signPosition(i int) bool {
	p := t.before(i)
	return p == 0 || unicode.IsSpace(p) || strings.ContainsRune("([{=<>≤≥≈~±:;,/^–", p)
}

// separator reads a character between words: a sentence's end, a clause boundary, or a
// dash that is a range between two numbers.
func (t *tokenizer) separator(i int, r, next rune) {
	switch r {
	case '.', '!', '?':
		// a sentence ends at a stop followed by a space and a capital or a digit (not
		// "et al. reported", "e.g. in")
		j := i + 1
		for j < len(t.text) && (t.text[j] == ' ' || t.text[j] == '\n' || t.text[j] == '\t' || t.text[j] == '"' || t.text[j] == ')') {
			j++
		}
		if j == len(t.text) {
			t.end = true
			return
		}
		if n, _ := t.at(j); j > i+1 && (unicode.IsUpper(n) || isDigit(n) || n == '(' || n == '[') {
			t.end = true
		}
	case '\n':
		if n, _ := t.at(i + 1); unicode.IsUpper(n) || n == '\n' || isDigit(n) {
			t.end = true
		}
	case ',', ';', ':', '(', ')', '[', ']', '{', '}', '—', '|':
		t.brk = true
	case '–', '-', '−', '‒', '―':
		if t.afterNumber() && !t.brk && !t.end {
			// a dash between two numbers is a range: "10–15%" is "10 to 15%"
			j := i + utf8.RuneLen(r)
			for j < len(t.text) && t.text[j] == ' ' {
				j++
			}
			if n, _ := t.at(j); isDigit(n) || n == '.' || n == '−' || n == '-' {
				t.emit(wordToken, "to", i, i+utf8.RuneLen(r))
				return
			}
		}
		if unicode.IsSpace(t.before(i)) && unicode.IsSpace(next) {
			t.brk = true // a dash between spaces sets a clause off
		}
	}
}

// afterNumber says whether the last word read is a number, or a number's unit or percent.
func (t *tokenizer) afterNumber() bool {
	n := len(t.out)
	if n == 0 {
		return false
	}
	last := t.out[n-1]
	return last.kind == numberToken || n >= 2 && t.out[n-2].kind == numberToken && (last.word == "percent" || units[last.word])
}

// number reads a number at i: digits with a decimal point and thousands separators, and
// a unit written against it ("25mg", "1.8-fold" reads its "fold" as a word next). sign is
// where its minus sign is, or -1.
func (t *tokenizer) number(i, sign int) int {
	start, negative := i, sign >= 0
	var b strings.Builder
	if negative {
		b.WriteByte('-')
	}
	point := false
	for i < len(t.text) {
		c := t.text[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
			i++
			continue
		case c == '.' && !point && i+1 < len(t.text) && isDigit(rune(t.text[i+1])):
			if b.Len() == 0 || b.String() == "-" {
				b.WriteByte('0')
			}
			point = true
			b.WriteByte('.')
			i++
			continue
		case c == ',' && !point && thousands(t.text[i+1:]) && b.Len() > 0:
			i++
			continue
		}
		break
	}
	// letters against the number: a unit ("25mg", "12h") is a word of its own; anything
	// else makes one word of it all ("5xFAD", "3D", "2nd").
	if r, _ := t.at(i); (r == 'x' || r == 'X') && t.values && isDigit(t.afterRune(i+1)) { // "3x10^5"
		if negative {
			start = sign
		}
		t.emitNumber(b.String(), start, i)
		t.emit(symbolToken, "×", i, i+1)
		return i + 1
	}
	if r, _ := t.at(i); unicode.IsLetter(r) {
		j := t.runEnd(i)
		suffix := strings.ToLower(t.text[i:j])
		if u := canon(suffix); !units[u] {
			t.emit(wordToken, t.canon(strings.ToLower(t.text[start:j])), start, j) // "-5xFAD": no sign
			return j
		}
		if negative {
			start = sign
		}
		t.emitNumber(b.String(), start, i)
		t.emit(wordToken, t.canon(suffix), i, j)
		return j
	}
	// digits right after a letter and a hyphen name something ("IL-6", "COVID-19"): a word
	if p := t.before(start); (p == '-' || p == '‑') && unicode.IsLetter(t.before(start-utf8.RuneLen(p))) && !negative {
		t.emit(wordToken, t.text[start:i], start, i)
		return i
	}
	if negative {
		start = sign
	}
	t.emitNumber(b.String(), start, i)
	return i
}

// thousands says whether s starts with three digits and then no digit: "1,024".
func thousands(s string) bool {
	return len(s) >= 3 && isDigit(rune(s[0])) && isDigit(rune(s[1])) && isDigit(rune(s[2])) && (len(s) == 3 || !isDigit(rune(s[3])))
}

func (t *tokenizer) emitNumber(digits string, start, end int) {
	v, err := strconv.ParseFloat(digits, 64)
	if err != nil {
		t.emit(wordToken, digits, start, end)
		return
	}
	t.emit(numberToken, numberWord(v), start, end)
}

// numberWord is the canonical word of a value.
func numberWord(v float64) string {
	if v == 0 {
		v = 0 // -0 is 0
	}
	return "#" + strconv.FormatFloat(v, 'g', -1, 64) + "#"
}

// runEnd is the end of the run of letters and digits at i.
func (t *tokenizer) runEnd(i int) int {
	for i < len(t.text) {
		r, w := t.at(i)
		if !isWordRune(r) {
			break
		}
		i += w
	}
	return i
}

// word reads a run of letters and digits.
func (t *tokenizer) word(i int) int {
	j := t.runEnd(i)
	w := strings.ToLower(t.text[i:j])
	if !t.near {
		t.emit(wordToken, w, i, j)
		return j
	}
	if w == "x" && t.values && t.times(i) { // "3 x 10^5"
		t.emit(symbolToken, "×", i, j)
		return j
	}
	if n, ok := strings.CutSuffix(w, "fold"); ok && cardinals[n] > 0 && t.values { // "twofold"
		t.emit(numberToken, numberWord(cardinals[n]), i, j-4)
		t.emit(wordToken, "fold", j-4, j)
		return j
	}
	t.emit(wordToken, canon(w), i, j)
	return j
}

// canon is a word's canonical form, unless the checker compares words as written.
func (c checker) canon(w string) string {
	if !c.near {
		return w
	}
	return canon(w)
}

// canons caches canon: a text's words repeat, and records are read again for each
// citation. It holds at most maxCanons words.
var (
	canons     sync.Map
	canonsHeld atomic.Int64
)

const maxCanons = 1 << 16

// canon is a lower-case word's canonical form: a unit in one spelling, Greek letters
// named, American spelling.
func canon(w string) string {
	if c, ok := canons.Load(w); ok {
		return c.(string)
	}
	c := canonOf(w)
	if canonsHeld.Load() < maxCanons {
		canons.Store(w, c)
		canonsHeld.Add(1)
	}
	return c
}

func canonOf(w string) string {
	if u, ok := unitAliases[w]; ok {
		return u
	}
	if strings.ContainsFunc(w, isGreek) {
		var b strings.Builder
		for _, r := range w {
			if name, ok := greek[r]; ok {
				b.WriteString(name)
			} else {
				b.WriteRune(r)
			}
		}
		w = b.String()
		if u, ok := unitAliases[w]; ok {
			return u
		}
	}
	return american(w)
}

func isGreek(r rune) bool { return r >= 0x0370 && r <= 0x03FF || r == 'ϕ' }

var greek = map[rune]string{
	'α': "alpha", 'β': "beta", 'γ': "gamma", 'δ': "delta", 'ε': "epsilon", 'ζ': "zeta", 'η': "eta", 'θ': "theta",
	'ι': "iota", 'κ': "kappa", 'λ': "lambda", 'μ': "mu", 'ν': "nu", 'ξ': "xi", 'ο': "omicron", 'π': "pi", 'ρ': "rho",
	'σ': "sigma", 'ς': "sigma", 'τ': "tau", 'υ': "upsilon", 'φ': "phi", 'ϕ': "phi", 'χ': "chi", 'ψ': "psi", 'ω': "omega",
}

// stem is a word's English stem (Snowball's, the stemmer the library's index uses), so
// that "reduce" and "reduced" align.
func stem(w string) string {
	env := snowballstem.NewEnv(w)
	english.Stem(env)
	return env.Current()
}

// span is the record's text from its token i to its token j (exclusive).
func span(rec []token, i, j int) string {
	if i >= j || j > len(rec) {
		return ""
	}
	start, end := rec[i].start, rec[j-1].end
	if end <= start {
		return ""
	}
	return strings.Join(strings.Fields((*rec[i].text)[start:end]), " ")
}

// sentenceOf is the span of the sentence holding token i: [start, end).
func sentenceOf(rec []token, i int) (int, int) {
	s, e := i, i
	for s > 0 && rec[s-1].sent == rec[i].sent {
		s--
	}
	for e < len(rec) && rec[e].sent == rec[i].sent {
		e++
	}
	return s, e
}
