package research

// Text helpers for what cosci shows people: reports, the starter, the Web UI.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Shorten makes s one line of at most n characters: whitespace collapses to single
// spaces, and a longer text is cut at a word boundary in its second half (else mid-word)
// and marked with "…".
func Shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	cut := string([]rune(s)[:n-1])
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = strings.TrimRight(cut[:i], " ,;:")
	}
	return cut + "…"
}

// Dollars writes an amount of US dollars as a person reads it, without the sign: in
// cents from a dollar up ("12.35"), and to two significant digits below ("0.42", "0.013",
// "0.0042"), since a model call costs fractions of a cent.
func Dollars(v float64) string {
	if v >= 1 || v <= 0 {
		return fmt.Sprintf("%.2f", max(v, 0))
	}
	decimals := min(max(2, 1-int(math.Floor(math.Log10(v)))), 8)
	return fmt.Sprintf("%.*f", decimals, v)
}

// Thousands writes a whole number with its digits grouped in threes, "1,250,000": token
// counts run to millions.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// ShortDuration writes a duration without its zero tails, as a person writes one: 24h, 1h30m,
// 30m, 90s as 1m30s (time.Duration's String gives 24h0m0s and 30m0s).
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Fold removes a text's accents, "García" is "Garcia", so that a name made into a key or
// compared matches however its accents were written.
func Fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
