package simulator

import (
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// EmbedDims is the length of Embed's vectors.
const EmbedDims = 256

// Embed is a stand-in for an embedding model, for the tests' fake OpenAI server and the
// offline calibration of the embedding measure: each word of three letters or more (in
// lower case, a plural's s dropped) and each of its character trigrams is hashed to a dimension with a sign, and the vector
// is normalised. Texts that share words and word stems come out close; it knows nothing
// of meaning, so the thresholds calibrated on it are for it alone (BENCHMARKS.md).
func Embed(text string) []float32 {
	v := make([]float64, EmbedDims)
	add := func(s string, w float64) {
		h := fnv.New64a()
		h.Write([]byte(s))
		x := h.Sum64()
		sign := 1.0
		if x&1 == 1 {
			sign = -1
		}
		v[(x>>1)%EmbedDims] += sign * w
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 3 || embedStop[w] {
			continue
		}
		if len(w) > 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		add("w:"+w, 1)
		padded := "<" + w + ">"
		for i := 0; i+3 <= len(padded); i++ {
			add("c:"+padded[i:i+3], 0.3)
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, EmbedDims)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// embedStop are words that say nothing of what a text is about.
var embedStop = map[string]bool{"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "from": true,
	"are": true, "was": true, "were": true, "which": true, "their": true, "they": true, "its": true, "not": true, "but": true,
	"when": true, "will": true, "into": true, "than": true, "more": true, "less": true, "has": true, "have": true}
