package auth

import (
	"net/url"
	"strings"
	"unicode"
)

// SafeNext keeps a return path on this site: a path that starts with one "/", whose next
// character is neither "/" nor "\" (which browsers take for another host), and that holds
// no "\", control or space character anywhere, read as given and after percent-decoding.
// Browsers drop tabs and newlines from a URL before they read it, so "/%09/evil.example"
// would be "//evil.example", another site. Anything else is "/".
func SafeNext(next string) string {
	decoded, err := url.PathUnescape(next)
	if err != nil {
		return "/"
	}
	for _, p := range []string{next, decoded} {
		if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, `/\`) ||
			strings.ContainsFunc(p, func(r rune) bool {
				return r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) || r == unicode.ReplacementChar
			}) {
			return "/"
		}
	}
	return next
}
