package citation

import (
	"encoding/json"
	"html"
	"regexp"
	"slices"
	"strings"
)

// Reading values out of a decoded result: JSON scalars and paths, and text with markup.

// scalar is a string or a number of JSON as a trimmed string.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case json.Number:
		return v.String()
	}
	return ""
}

// scalars is a scalar, or the scalars of a list.
func scalars(v any) []string {
	if list, ok := v.([]any); ok {
		var out []string
		for _, x := range list {
			if s := scalar(x); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	if s := scalar(v); s != "" {
		return []string{s}
	}
	return nil
}

// firstString is a string, or the first string of a list (Crossref's title: ["..."]).
func firstString(v any) string {
	if s := scalars(v); len(s) > 0 {
		return s[0]
	}
	return ""
}

// firstKey is the value of the first of the keys the object has (get).
func firstKey(o map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := lookup(o, k); ok {
			return v
		}
	}
	return nil
}

// get is the value of a key of an object, written as the key is or in any case and with
// any separators ("abstract" finds "Abstract" and "ABSTRACT", "abstractText" finds
// "abstract_text"): APIs and tools name one field in many ways.
func get(o map[string]any, key string) any {
	v, _ := lookup(o, key)
	return v
}

func lookup(o map[string]any, key string) (any, bool) {
	if v, ok := o[key]; ok {
		return v, true
	}
	best, found := "", false
	for k := range o {
		if sameKey(k, key) && (!found || k < best) { // of two keys that fold alike, the first in order
			best, found = k, true
		}
	}
	if !found {
		return nil, false
	}
	return o[best], true
}

// sameKey says whether two keys are the same in lower case without separators
// (foldKey), without building either's fold.
func sameKey(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && keySkip(a[i]) {
			i++
		}
		for j < len(b) && keySkip(b[j]) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if keyLower(a[i]) != keyLower(b[j]) {
			return false
		}
		i, j = i+1, j+1
	}
}

func keySkip(c byte) bool {
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
}

func keyLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldKey is a key in lower case without separators.
func foldKey(k string) string {
	b := make([]byte, 0, len(k))
	for j := 0; j < len(k); j++ {
		if c := k[j]; !keySkip(c) {
			b = append(b, keyLower(c))
		}
	}
	return string(b)
}

// dig follows a path of object keys.
func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = get(m, k)
	}
	return v
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var tagRE = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9:_-]*(?:\s[^<>]*)?/?>`)

// stripMarkup takes the tags out of a text that has some (Crossref's JATS abstracts,
// Europe PMC's <i> and <sup>) and reads its entities.
func stripMarkup(s string) string {
	if strings.Contains(s, "<") && tagRE.MatchString(s) {
		s = supTags(s) // "10<sup>-8</sup>" is "10^-8", not "10-8"
		s = tagRE.ReplaceAllStringFunc(s, func(tag string) string {
			name := strings.ToLower(strings.Trim(strings.Fields(tag)[0], "</>"))
			name = strings.TrimPrefix(name, "jats:")
			switch name {
			case "p", "title", "sec", "br", "div", "h1", "h2", "h3", "h4", "li":
				return "\n"
			}
			return ""
		})
		s = html.UnescapeString(s)
	} else if strings.Contains(s, "&") {
		s = html.UnescapeString(s)
	}
	return strings.TrimSpace(s)
}

// oneLine collapses a text's whitespace.
func oneLine(s string) string { return strings.TrimSpace(spacesRE.ReplaceAllString(s, " ")) }
