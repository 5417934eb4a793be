package citation

// What a quote leaves out. A run of the record's words can still misquote it: "reduced tau
// spread" is the record's words in "there was no evidence that PLX3397 reduced tau
// spread", and "microglia drive tau spread" in "it has been proposed that microglia drive
// tau spread". So the check reads what a fragment or an elision leaves out of the
// sentences it quotes, as a reader holding the source would:
//
//   - the lead-in: the words of the quote's own clause before it (back to a comma, a
//     semicolon or the sentence's start). A negation that ends it ("did not", "failed
//     to") or governs a clause it ends in ("no evidence that") makes the quote
//     contradicted; a hedge, an attribution, a contrast or a limitation in it, a clause
//     it ends in that no verb of finding governs ("posited that", "whether", "tended
//     to"), or a quantifier it ends in ("most", "a handful of the", "7 of the 31": the
//     record says it of part) makes it out of context;
//   - the trailing part: the rest of its clause after it. A limitation ("but only in
//     women", "unless"), a predicate the quote was the subject of ("... was not
//     confirmed"), or a clause that refers back to it and negates, hedges or limits it
//     ("although this was not significant") makes it out of context;
//   - an elided gap: an unbroken one holding a negation makes the quote contradicted, one
//     holding a hedge, a limitation or a qualifier, or ending in what governs the next
//     piece ("did little to"), out of context; a gap with clause boundaries is read as the
//     first piece's trailing part and the next piece's lead-in;
//   - an elision that joins sentences not next to each other is unsupported: the record
//     says neither in one place.
//
// A word no list holds is still read by these structures: the clause a quote was lifted
// from is governed by whatever precedes its "that".

import (
	"fmt"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
)

// readContext reads what a quote leaves out, given the record's passages [start, end) its
// pieces were found at, in order.
func readContext(rec []token, spans [][2]int) reading {
	first, last := spans[0][0], spans[len(spans)-1][1]
	if first >= last || last > len(rec) {
		return verdictOnly(research.CitationVerified, "")
	}
	for k := 0; k+1 < len(spans); k++ {
		a, b := rec[spans[k][1]-1].sent, rec[spans[k+1][0]].sent
		if b-a > 1 {
			return verdictOnly(research.CitationUnsupported, fmt.Sprintf("the elision joins sentences of the record that are not next to each other (%d sentences apart): the record says neither in one place", b-a))
		}
	}
	s0, _ := sentenceOf(rec, first)
	_, s1 := sentenceOf(rec, last-1)
	var found []string
	verdict := research.CitationVerified
	note := func(v, what string) {
		if v == "" {
			return
		}
		if rank(v) > rank(verdict) {
			verdict = v
		}
		found = append(found, what)
	}
	note(leadIn(rec, s0, first))
	for k := 0; k+1 < len(spans); k++ {
		j, i := spans[k][1], spans[k+1][0]
		if rec[j-1].sent == rec[i].sent {
			note(gap(rec, j, i))
			continue
		}
		_, e := sentenceOf(rec, j-1)
		s, _ := sentenceOf(rec, i)
		note(trailing(rec, j, e))
		note(leadIn(rec, s, i))
	}
	note(trailing(rec, last, s1))
	if verdict == research.CitationVerified {
		return verdictOnly(verdict, "")
	}
	r := reading{Finding: Finding{Verdict: verdict, Passage: span(rec, s0, s1)}, start: first, end: last}
	r.Note = "the quote leaves out what governs it: " + strings.Join(found, "; ")
	return r
}

// clauseNegation says whether a word negates a clause: "non", the first half of
// "non-carriers", negates only its noun.
func clauseNegation(w string) bool { return negations[w] && w != "non" }

// words are the canonical words of tokens.
func words(ts []token) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.word
	}
	return out
}

// leadIn reads the lead-in of a quote starting at to: the words of its clause before it,
// back to from at most.
func leadIn(rec []token, from, to int) (string, string) {
	if to <= from || to >= len(rec) || rec[to].brk {
		return "", ""
	}
	b := to - 1
	for b > from && !rec[b].brk {
		b--
	}
	a := rec[b:to]
	ws := words(a)
	n := len(ws)
	text := fmt.Sprintf("%q before it", span(rec, b, to))
	hasNeg := false
	for k, w := range ws {
		if clauseNegation(w) && !(k+1 < n && ws[k+1] == "only") { // "not only ... but also" negates nothing
			hasNeg = true
			if k >= n-2 {
				return research.CitationContradicted, text + " negates it"
			}
		}
	}
	lastWord := ws[n-1]
	embedding := complementizers[lastWord] || lastWord == "to" || lastWord == "as"
	if embedding && hasNeg {
		return research.CitationContradicted, text + " negates it"
	}
	if quantifies(a) {
		return research.CitationOutOfContext, text + " says it of part only"
	}
	for _, w := range ws {
		switch {
		case hedges[w]:
			return research.CitationOutOfContext, text + " hedges it"
		case attributions[w]:
			return research.CitationOutOfContext, text + " attributes it to others"
		case contrasts[w]:
			return research.CitationOutOfContext, text + " sets it against what the record holds"
		case limitations[w]:
			return research.CitationOutOfContext, text + " limits it"
		}
	}
	if embedding && governs(ws, rec[to]) {
		return research.CitationOutOfContext, text + " governs it: the record does not assert it"
	}
	return "", ""
}

// determiners are the words between a quantifier and its noun: "most of the cells".
var determiners = setOf("the", "these", "those", "our", "their", "its", "his", "her", "such")

// quantifies says whether a lead-in ends in what says how many of the quote's subject the
// record speaks of: a quantifier short of all ("most", "some", "a subset of"), a
// partitive whatever its words ("a handful of", "two-thirds of the"), or a count ("12
// of 30", "half the"). A quote that leaves it out says of all what the record says of
// some.
func quantifies(lead []token) bool {
	n := len(lead)
	for n > 0 && determiners[lead[n-1].word] {
		n--
	}
	if n == 0 {
		return false
	}
	last := lead[n-1]
	switch {
	case last.word == "of":
		return n >= 2 // "... of": what follows is part of what precedes
	case quantity(last.word) >= 0 && !universal(last.word):
		return true
	case last.kind == numberToken || numberWords[last.word]:
		p := n - 1
		for p > 0 && determiners[lead[p-1].word] {
			p--
		}
		return p == 0 || lead[p-1].word == "of" // "12 participants", "12 of the 30", "half the"
	}
	return false
}

// governs says whether a lead-in that ends in a complementizer, "to" or "as" governs the
// clause after it: the record asserts what follows "we found that", "was shown to",
// "given that", and a relative clause ("cells that expressed GFP"), not what follows
// "posited that", "whether", "tended to", "described as".
func governs(ws []string, next token) bool {
	n := len(ws)
	last := ws[n-1]
	if last == "whether" || last == "if" {
		return true
	}
	var before string
	if n >= 2 {
		before = ws[n-2]
	}
	switch last {
	case "that":
		switch {
		case factives[before] || findings[before]:
			return false
		case before == "so" || before == "such" || before == "given" || before == "now" || before == "than":
			return false
		case auxiliaries[next.word] || strings.HasSuffix(next.word, "ed") && next.kind == wordToken:
			return false // a relative clause: "the mice that were treated", "cells that expressed"
		}
		return true
	case "to", "as":
		switch {
		case factives[before] || before == "":
			return false
		case placedBy[before]:
			return false
		case strings.HasSuffix(before, "ed"), hedges[before], before == "likely", before == "tend", before == "tends",
			before == "able", before == "appears", before == "appear", before == "seems", before == "regarded":
			return true
		}
	}
	return false
}

// placedBy are the participles whose "to" places or compares rather than governs:
// "compared to", "exposed to", "randomized to".
var placedBy = setOf("compared", "related", "exposed", "subjected", "assigned", "randomized", "allocated", "referred",
	"admitted", "applied", "added", "switched", "converted", "bound", "attached", "returned", "moved", "transferred",
	"treated", "used")

// findings are the nouns of a source's own result: what follows their "that" is asserted.
var findings = setOf("finding", "findings", "observation", "observations", "fact", "discovery", "demonstration")

// trailing reads the rest of a quote's clause after it ends at from, up to to at most.
func trailing(rec []token, from, to int) (string, string) {
	if from >= to || from >= len(rec) {
		return "", ""
	}
	k := from + 1
	for k < to && !rec[k].brk {
		k++
	}
	s := rec[from:k]
	ws := words(s)
	text := fmt.Sprintf("%q after it", span(rec, from, k))
	at := func(i int) string {
		if i < len(ws) {
			return ws[i]
		}
		return ""
	}
	first := ws[0]
	limits, hedged, denied, strong := false, false, false, false
	for _, w := range ws {
		limits = limits || clauseNegation(w) || limitations[w] || qualifier(w)
		hedged = hedged || hedges[w]
		denied = denied || clauseNegation(w)
		strong = strong || significance[w]
	}
	switch {
	case first == "only" || first == "solely" || first == "exclusively" || first == "except" || first == "unless" ||
		first == "provided" || first == "albeit":
		return research.CitationOutOfContext, text + " limits it"
	case (first == "but" || first == "and" || first == "yet") && (at(1) == "not" || at(1) == "only") && placeWords[at(2)]:
		return research.CitationOutOfContext, text + " limits it"
	case clauseNegation(first):
		return research.CitationOutOfContext, text + " limits it"
	case auxiliaries[first] && !rec[from].brk:
		for _, w := range ws[:min(3, len(ws))] {
			if clauseNegation(w) {
				return research.CitationContradicted, text + " denies it"
			}
		}
		return research.CitationOutOfContext, text + " is what the record says of it"
	case denied && strong:
		// "... and did not reach significance": the finding's strength denied
		return research.CitationOutOfContext, text + " qualifies it"
	case (first == "although" || first == "though" || first == "albeit") && (limits || hedged):
		// a concession that limits the finding before it: "although the trial was not
		// powered to ...", "although none measured events directly"
		return research.CitationOutOfContext, text + " qualifies it"
	case (limits || hedged && concessives[first]) && refersBack(ws):
		// "which was not significant", "although this may reflect chance"; not "which
		// may promote inflammation", a clause of its own about what follows
		return research.CitationOutOfContext, text + " qualifies it"
	}
	return "", ""
}

// placeWords open the place, time or group a finding holds for: "but only in women".
var placeWords = setOf("in", "at", "among", "when", "after", "during", "for", "under", "with", "within", "if",
	"once", "while", "before", "on", "by", "from", "where", "following")

// refersBack says whether a clause refers back to what came before it: "which ...", a
// concessive with an anaphor or a qualifier ("although this", "but the difference", "but
// not significantly", "though modestly"), or an anaphor or a finding's noun within its
// first words ("an effect that"). A concessive that opens a clause of its own ("whereas
// plaque load did not change") does not.
func refersBack(ws []string) bool {
	at := func(i int) string {
		if i < len(ws) {
			return ws[i]
		}
		return ""
	}
	switch {
	case ws[0] == "which":
		return true
	case concessives[ws[0]]:
		w1 := at(1)
		return anaphors[w1] || anaphoricNouns[w1] || w1 == "the" && anaphoricNouns[at(2)] || qualifier(w1) ||
			hedges[w1] || limitations[w1] || w1 == "not" && (placeWords[at(2)] || qualifier(at(2)) || significance[at(2)])
	}
	for _, w := range ws[:min(3, len(ws))] {
		if anaphors[w] && w != "that" || anaphoricNouns[w] {
			return true
		}
	}
	return false
}

// significance are the words of a finding's strength: "but not significantly".
var significance = setOf("significant", "significantly", "significance", "statistically", "all", "always", "every",
	"consistently", "robust", "robustly", "persist", "persisted", "sustained", "durable", "replicated", "reproducible")

// gap reads what an elision leaves out between two pieces of one sentence: tokens
// [from, to).
func gap(rec []token, from, to int) (string, string) {
	broken := rec[from].brk || rec[to].brk
	for k := from + 1; k < to && !broken; k++ {
		broken = rec[k].brk
	}
	if broken {
		v, what := trailing(rec, from, to)
		v2, what2 := leadIn(rec, from, to)
		if rank(v2) > rank(v) || v == "" {
			return v2, what2
		}
		return v, what
	}
	g := rec[from:to]
	ws := words(g)
	text := fmt.Sprintf("the elided %q", span(rec, from, to))
	for k, w := range ws {
		if clauseNegation(w) && !(k+1 < len(ws) && ws[k+1] == "only") {
			return research.CitationContradicted, text + " negates what it joins"
		}
	}
	for _, w := range ws {
		if hedges[w] || limitations[w] || attributions[w] || contrasts[w] || qualifier(w) {
			return research.CitationOutOfContext, text + " qualifies what it joins"
		}
	}
	if last := ws[len(ws)-1]; (complementizers[last] || last == "to") && governs(ws, rec[to]) {
		return research.CitationOutOfContext, text + " governs what follows it"
	}
	if last := ws[len(ws)-1]; len(ws) <= 3 && (last == "to" || last == "of") {
		return research.CitationOutOfContext, text + " governs what follows it" // "did little to", "fell short of"
	}
	return "", ""
}
