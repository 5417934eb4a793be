package library

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// LaTeX as reference exports write it: accents and special letters as commands, braces
// that protect capitals, dashes and ties. DecodeLaTeX turns it into plain Unicode text.

// accents are LaTeX's accent commands and the combining marks they stand for.
var accents = map[string]rune{
	"'": '\u0301', "`": '\u0300', "^": '\u0302', "\"": '\u0308', "~": '\u0303', "=": '\u0304',
	".": '\u0307', "u": '\u0306', "v": '\u030C', "H": '\u030B', "c": '\u0327', "k": '\u0328',
	"r": '\u030A', "d": '\u0323', "b": '\u0331',
}

// letters are LaTeX's commands for letters and symbols.
var letters = map[string]string{
	"ss": "ß", "o": "ø", "O": "Ø", "aa": "å", "AA": "Å", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
	"l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "dh": "ð", "DH": "Ð", "th": "þ", "TH": "Þ", "ng": "ŋ",
	"textendash": "–", "textemdash": "—", "textquoteleft": "‘", "textquoteright": "’",
	"textquotedblleft": "“", "textquotedblright": "”", "textregistered": "®", "texttrademark": "™",
	"copyright": "©", "textdegree": "°", "degree": "°", "pm": "±", "times": "×", "textasciitilde": "~",
	"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "kappa": "κ", "lambda": "λ",
	"mu": "μ", "pi": "π", "sigma": "σ", "tau": "τ", "omega": "ω", "Delta": "Δ", "Omega": "Ω",
	"ldots": "…", "dots": "…", "textbraceleft": "{", "textbraceright": "}", "textbackslash": "\\", "S": "§", "P": "¶", "dag": "†", "ddag": "‡",
	"&": "&", "%": "%", "_": "_", "$": "$", "#": "#", "{": "{", "}": "}", " ": " ", ",": " ", ";": " ", "\\": " ",
}

// DecodeLaTeX turns a BibTeX field's LaTeX into plain text: accent commands become
// accented letters ({\"o}, \"{o}, \"o: ö), letter commands their letters (\ss: ß), text
// commands their argument (\emph{x}: x), math loses its dollars, -- and --- become en and
// em dashes, ~ a space, and braces go.
func DecodeLaTeX(s string) string {
	if !strings.ContainsAny(s, "\\{}$~-`'") {
		return s
	}
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '{', '}', '$':
			continue
		case '~':
			b.WriteByte(' ')
			continue
		case '-':
			switch {
			case i+2 < len(rs) && rs[i+1] == '-' && rs[i+2] == '-':
				b.WriteString("—")
				i += 2
			case i+1 < len(rs) && rs[i+1] == '-':
				b.WriteString("–")
				i++
			default:
				b.WriteRune(r)
			}
			continue
		case '`':
			if i+1 < len(rs) && rs[i+1] == '`' {
				b.WriteString("“")
				i++
				continue
			}
		case '\'':
			if i+1 < len(rs) && rs[i+1] == '\'' {
				b.WriteString("”")
				i++
				continue
			}
		case '\\':
			i = command(rs, i, &b)
			continue
		}
		b.WriteRune(r)
	}
	return norm.NFC.String(b.String())
}

// command decodes the command at rs[i] (a backslash) into b and returns the index of its
// last rune.
func command(rs []rune, i int, b *strings.Builder) int {
	if i+1 >= len(rs) {
		return i
	}
	// A one-symbol command: an accent or an escaped character.
	if c := rs[i+1]; !unicode.IsLetter(c) {
		name := string(c)
		if mark, ok := accents[name]; ok {
			letter, end := accentArgument(rs, i+2)
			if letter != "" {
				b.WriteString(letter)
				b.WriteRune(mark)
				return end
			}
		}
		if l, ok := letters[name]; ok {
			b.WriteString(l)
			return i + 1
		}
		b.WriteRune(c)
		return i + 1
	}
	j := i + 1
	for j < len(rs) && unicode.IsLetter(rs[j]) {
		j++
	}
	name := string(rs[i+1 : j])
	if mark, ok := accents[name]; ok && len(name) == 1 { // \u{g}, \v s, \c{c}
		letter, end := accentArgument(rs, j)
		if letter != "" {
			b.WriteString(letter)
			b.WriteRune(mark)
			return end
		}
	}
	if l, ok := letters[name]; ok {
		// A letter command eats the space that ends it: "\ss e" is "ße"; "{\ss}e" too.
		if j < len(rs) && rs[j] == ' ' {
			j++
		}
		b.WriteString(l)
		return j - 1
	}
	// Any other command (\emph, \textit, \url, \mathrm): its argument, if any, stays;
	// the command goes. A command that ends in a space eats it.
	if j < len(rs) && rs[j] == ' ' {
		return j
	}
	return j - 1
}

// accentArgument is the letter an accent applies to, starting at rs[i] ({x}, {\i}, x, or
// " x"), and the index of its last rune.
func accentArgument(rs []rune, i int) (string, int) {
	for i < len(rs) && rs[i] == ' ' {
		i++
	}
	if i >= len(rs) {
		return "", i - 1
	}
	if rs[i] == '{' {
		end := i + 1
		for end < len(rs) && rs[end] != '}' {
			end++
		}
		inner := string(rs[i+1 : min(end, len(rs))])
		switch inner {
		case "\\i":
			inner = "i"
		case "\\j":
			inner = "j"
		}
		if end >= len(rs) {
			return inner, len(rs) - 1
		}
		return inner, end
	}
	if rs[i] == '\\' && i+1 < len(rs) && (rs[i+1] == 'i' || rs[i+1] == 'j') {
		return string(rs[i+1]), i + 1
	}
	return string(rs[i]), i
}
