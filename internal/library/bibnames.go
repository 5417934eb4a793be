package library

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// BibTeX's names: an author list split at its top-level "and"s, each name written
// "Family, Given".

// splitAuthors splits a BibTeX name list ("A and B and {C and D Inc.}") and writes each
// name "Family, Given": "Last, First", "Last, Jr., First" and "First von Last" forms, a
// braced name (an organisation) as it is. Past the first lim.Authors names it only
// splits: the rest are left as written, for finish to count and drop. A name written in
// more than four times TextBytes is cut to that first, as it will be cut anyway: taking
// apart a "name" of a million words costs far more than its bytes.
func splitAuthors(list string, lim Limits) []string {
	var names []string
	depth, start := 0, 0
	for i := 0; i < len(list); {
		r, size := utf8.DecodeRuneInString(list[i:])
		switch r {
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		}
		if and := i + size; depth == 0 && unicode.IsSpace(r) && and+3 < len(list) && strings.EqualFold(list[and:and+3], "and") {
			if after, size2 := utf8.DecodeRuneInString(list[and+3:]); unicode.IsSpace(after) {
				names = append(names, list[start:i])
				start = and + 3 + size2
				i = start
				continue
			}
		}
		i += size
	}
	names = append(names, list[start:])
	var out []string
	for i, n := range names {
		if len(out) == lim.Authors {
			return append(out, names[i:]...)
		}
		if n = bibName(shorten(n, 4*lim.TextBytes)); n != "" && !strings.EqualFold(n, "others") {
			out = append(out, n)
		}
	}
	return out
}

// bibName writes one BibTeX name as "Family, Given".
func bibName(n string) string {
	n = strings.TrimSpace(n)
	if strings.HasPrefix(n, "{") && strings.HasSuffix(n, "}") && balanced(n[1:len(n)-1]) {
		return clean(DecodeLaTeX(n)) // {World Health Organization}
	}
	parts := splitTop(n, ',')
	switch len(parts) {
	case 1:
		words := splitTop(n, ' ')
		var kept []string
		for _, w := range words {
			if w = strings.TrimSpace(w); w != "" {
				kept = append(kept, w)
			}
		}
		if len(kept) == 0 {
			return ""
		}
		if len(kept) == 1 {
			return clean(DecodeLaTeX(kept[0]))
		}
		// First von Last: the family name starts at the first lower-case particle of the
		// middle, or is the last word.
		at := len(kept) - 1
		for i := 1; i < len(kept)-1; i++ {
			if r := []rune(strings.TrimLeft(kept[i], "{\\")); len(r) > 0 && unicode.IsLower(r[0]) {
				at = i
				break
			}
		}
		return clean(DecodeLaTeX(strings.Join(kept[at:], " "))) + ", " + clean(DecodeLaTeX(strings.Join(kept[:at], " ")))
	case 2:
		return joinName(parts[0], parts[1])
	default: // Last, Jr, First
		return joinName(parts[0]+" "+parts[1], parts[2])
	}
}

func joinName(family, given string) string {
	family, given = clean(DecodeLaTeX(family)), clean(DecodeLaTeX(given))
	if given == "" {
		return family
	}
	return family + ", " + given
}

// splitTop splits s at sep outside braces.
func splitTop(s string, sep rune) []string {
	var parts []string
	depth, start := 0, 0
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '{':
			depth++
		case r == '}' && depth > 0:
			depth--
		case r == sep && depth == 0:
			parts = append(parts, string(rs[start:i]))
			start = i + 1
		}
	}
	return append(parts, string(rs[start:]))
}

// balanced says whether a text's braces pair up.
func balanced(s string) bool {
	depth := 0
	for _, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}
