// What a grounded answer (one from a turn that may call tools) adds: its references, each
// an id a tool returned with a quote and the claim it supports, and the rule the turn is
// told about tools.

package prompt

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/research"
)

// MaxReferences is how many references an answer may cite; MaxQuoteLength how long each
// quote may be, in characters, and MinQuoteWords how short: a quote of a word or two
// checks nothing (any source holds "tau" or "was increased"), so it is refused and the
// model asked again.
const (
	MaxReferences  = 8
	MaxQuoteLength = 600
	MinQuoteWords  = 5
	MaxClaimLength = 400
	maxPassageID   = 300
)

// referencesProperty is what a grounded answer adds to its schema: the sources it cites,
// each by the id a tool result gave it, with the passage it relies on.
const referencesProperty = `    "references": {
      "type": "array",
      "maxItems": 8,
      "description": "the sources you rely on, each one a tool returned in this conversation; empty if none",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "description": "the source's id exactly as the tool result gave it (a DOI, PMID, arXiv id or citation key)"},
          "quote": {"type": "string", "maxLength": 600, "description": "the passage you rely on (at least five words), copied word for word from that source's own part of the tool result; mark a left-out middle with ..."},
          "claim": {"type": "string", "maxLength": 400, "description": "the sentence of your answer that this quote supports"},
          "passage": {"type": "string", "maxLength": 300, "description": "when the quote is from a passage of a full text, that passage's id exactly as the tool result gave it (10.5555/x#p7.2); else empty"}
        },
        "required": ["id", "quote", "claim", "passage"],
        "additionalProperties": false
      }
    }`

// Grounded returns an answer schema with "references" added, for a turn that may call
// tools: the answer cites what the tools returned.
func Grounded(schema json.RawMessage) json.RawMessage {
	s := string(schema)
	i := strings.LastIndex(s, "\n  },\n  \"required\": [")
	if i < 0 {
		panic("prompt: a schema without top-level properties and required")
	}
	k := i + strings.Index(s[i:], "]")
	return json.RawMessage(s[:i] + ",\n" + referencesProperty + s[i:k] + `, "references"` + s[k:])
}

// youHaveTools opens what a turn that may call tools is told about them: their names.
func youHaveTools(t research.Tooling) string {
	var names []string
	for _, tool := range t.Tools {
		names = append(names, tool.Name)
	}
	if len(names) == 0 {
		return "You have tools"
	}
	return "You have tools (" + strings.Join(names, ", ") + ")"
}

// grounding is what a turn that may call tools is told about them: ground what it writes
// (what) in what they return, and cite only that. A turn without tools is told nothing.
func grounding(t research.Tooling, what string) string {
	if !t.On() {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n" + youHaveTools(t))
	b.WriteString(": search the literature with them before you answer, and ground " + what + " in what they return. " +
		"List each source you rely on in \"references\" by the id a tool result gave it, with a passage copied word for word from that source's own part of the result as its \"quote\" (a search hit's snippet, a fetched record's abstract, a passage of its full text; never another source's), and the sentence of your answer it supports as its \"claim\". " +
		"When the quote is from a passage of a full text, name that passage's id as its \"passage\" (10.5555/x#p7.2, as the result gave it): the quote is checked against that passage, and the report shows its page. " +
		"Cite only sources a tool returned in this conversation: a reference no tool returned counts as invented and is held against " + what + ". " +
		"When you have what you need, answer with the JSON object.\n")
	b.WriteString(ToolDataRule)
	return b.String()
}

// FinalStep is what a model is told when a turn's tool budget is spent.
const FinalStep = "The tool budget for this turn is spent: answer now with the JSON object, from what the tools have returned, without calling another tool."

// ModelRef is a reference as a model writes it: an id a tool gave, a quote of that source,
// and the claim of the answer the quote supports.
type ModelRef struct {
	ID    string `json:"id"`
	Quote string `json:"quote"`
	Claim string `json:"claim"`
	// Passage is the passage of a full text the quote is from, by its id, or "".
	Passage string `json:"passage,omitempty"`
}

// decodeGrounded decodes an answer that may cite sources into v, whose references field
// is cited, and reads the references (see references).
func decodeGrounded(agent string, raw []byte, v any, cited *[]ModelRef) ([]research.Reference, error) {
	if err := decode(agent, raw, v); err != nil {
		return nil, err
	}
	return references(agent, *cited)
}

// references reads the sources an answer cites: each needs an id, a quote of at least
// MinQuoteWords words and a claim; the same id is cited once (the first quote kept), and
// at most MaxReferences are.
func references(agent string, cited []ModelRef) ([]research.Reference, error) {
	var refs []research.Reference
	for i, c := range cited {
		id := strings.TrimSpace(c.ID)
		if id == "" {
			return nil, malformed(agent, "references[%d].id is empty; cite a source by the id a tool result gave it, or leave it out", i)
		}
		if slices.ContainsFunc(refs, func(r research.Reference) bool { return strings.EqualFold(r.ID, id) }) {
			continue
		}
		if len(refs) == MaxReferences {
			return nil, malformed(agent, "more than %d references; keep the %d that matter most", MaxReferences, MaxReferences)
		}
		quote := oneLine(c.Quote)
		if n := utf8.RuneCountInString(quote); n > MaxQuoteLength {
			return nil, malformed(agent, "references[%d].quote is %d characters; at most %d: quote the passage you rely on, not the whole source", i, n, MaxQuoteLength)
		}
		if n := quoteWords(quote); n < MinQuoteWords {
			return nil, malformed(agent, "references[%d].quote has %d words; quote at least %d words of %s, copied word for word from the tool result, so the quote can be checked", i, n, MinQuoteWords, id)
		}
		claim := oneLine(c.Claim)
		switch n := utf8.RuneCountInString(claim); {
		case n == 0:
			return nil, malformed(agent, "references[%d].claim is empty; give the sentence of your answer that %s supports", i, id)
		case n > MaxClaimLength:
			return nil, malformed(agent, "references[%d].claim is %d characters; at most %d: give the one sentence the source supports", i, n, MaxClaimLength)
		}
		passage := strings.TrimSpace(c.Passage)
		if len(passage) > maxPassageID {
			return nil, malformed(agent, "references[%d].passage is %d bytes; give the passage's id as the tool result gave it (10.5555/x#p7.2), or leave it empty", i, len(passage))
		}
		refs = append(refs, research.Reference{ID: id, Quote: quote, Claim: claim, Passage: passage})
	}
	return refs, nil
}

// quoteWords counts a quote's words: runs of letters or digits, so that "..." and
// punctuation count for nothing.
func quoteWords(s string) int {
	return len(strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
}
