// The goal's topics (the noun phrases a hypothesis names as its subject), and the little
// English grammar the simulator's texts need: articles, capitals, plurals and verb forms.

package simulator

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// topics returns the salient noun phrases of a goal, to put where a hypothesis names
// its subject ("Oxidative stress drives <topic> under chronic stress"). A phrase is a run
// of content words (punctuation and function words end it) of which at most the last
// three are kept, since in English the head noun comes last; a longer run also gives the
// words before those three, if they make a phrase of their own. An adjective that ends a
// run is dropped (its noun is elsewhere), and a run left with nothing is no topic. A verb
// splits a run into its subject and object; where the verb has a noun form, the two are
// put together: "Why do naked mole-rats resist cancer?" gives "cancer resistance in naked
// mole-rats", and "Why does tau pathology spread between brain regions?" gives "the
// spread of tau pathology" and "brain regions".
func topics(goal string) []string {
	var out []string
	seen := map[string]bool{}
	for _, run := range runs(goal) {
		for _, t := range phrases(run) {
			if !seen[strings.ToLower(t)] {
				seen[strings.ToLower(t)] = true
				out = append(out, t)
			}
		}
	}
	if len(out) == 0 {
		return []string{"the system under study"}
	}
	return out
}

// A word is one content word of a goal; verb says it is a verb where it stands.
type word struct {
	text string
	verb bool
}

// runs splits a goal into runs of consecutive content words. A word is a verb if it is
// one of verbs, or one of contextVerbs where the grammar wants a verb: anywhere in the
// run that follows "do", "does" or "did" ("why does tau pathology spread"), and first
// after "that", "which", "who" or "what" ("mechanisms that slow tau propagation").
func runs(goal string) [][]word {
	var out [][]word
	var run []word
	question, relative := false, false
	flush := func() {
		if len(run) > 0 {
			out = append(out, run)
			question = false // the question's verb is in the run that follows its "do"
		}
		run = nil
	}
	notWord := func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
	for i, field := range strings.Fields(goal) {
		w := strings.TrimFunc(field, notWord)
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		if strings.TrimLeftFunc(field, notWord) != field {
			flush() // an opening bracket or quote starts a new phrase
		}
		if i == 0 && isCapitalised(w) {
			w = strings.ToLower(w) // capitalised only because it starts the sentence
		}
		lower := strings.ToLower(w)
		switch {
		case auxiliaries[lower]:
			flush()
			question, relative = true, false
		case relatives[lower]:
			flush()
			relative = true
		case genericNouns[lower] && len(run) > 0 && isAdjective(run[len(run)-1].text):
			// "druggable mechanisms": a generic noun is a fine head for the adjective
			// before it, though never a topic on its own.
			run = append(run, word{w, false})
			flush()
			relative = false
		case utf8.RuneCountInString(w) < 3 || stopwords[lower]:
			flush()
			relative = false
		default:
			_, verb := verbs[lower]
			_, maybe := contextVerbs[lower]
			run = append(run, word{w, verb || maybe && (question || relative)})
			relative = false
		}
		if strings.TrimRightFunc(field, notWord) != field {
			flush()
		}
	}
	flush()
	return out
}

// phrases returns the noun phrases of a run of content words, split at its verbs; see
// topics.
func phrases(run []word) []string {
	isVerb := func(w word) bool { return w.verb }
	k := slices.IndexFunc(run, isVerb)
	if k < 0 {
		return nounPhrases(run)
	}
	rest := run[k+1:]
	j := slices.IndexFunc(rest, isVerb)
	if j < 0 {
		j = len(rest)
	}
	subject, object, more := nounPhrases(run[:k]), nounPhrases(rest[:j]), phrases(rest[j:])
	n, ok := nominals[verbBase(run[k].text)]
	if !ok || len(subject) == 0 {
		return slices.Concat(subject, object, more)
	}
	// The clause becomes one phrase, made of the subject's head phrase and the object's
	// first, which are no topics on their own: a hypothesis that "drives naked mole-rats"
	// would not read as science, nor a plan to link cancer resistance in them to cancer.
	head := subject[len(subject)-1]
	var clause string
	switch {
	case len(object) == 0: // "tau pathology spreads": the spread of tau pathology
		clause = "the " + n.noun + " of " + head
	case looksPlural(object[0]): // "bats tolerate viruses": tolerance to viruses in bats
		clause = n.noun + " " + n.prep + " " + object[0] + " in " + head
	default: // "mole-rats resist cancer": cancer resistance in mole-rats
		clause = object[0] + " " + n.noun + " in " + head
	}
	if len(object) > 0 {
		object = object[1:]
	}
	return slices.Concat(subject[:len(subject)-1], []string{clause}, object, more)
}

// nounPhrases returns the noun phrases in a run of words with no verb: the run without
// the adjectives that end it, at most three words long; and, if the run was longer, the
// noun phrases of the words before those three when there are two words or more.
func nounPhrases(run []word) []string {
	for len(run) > 0 && isAdjective(run[len(run)-1].text) {
		run = run[:len(run)-1]
	}
	if len(run) == 0 {
		return nil
	}
	text := func(ws []word) string {
		s := make([]string, len(ws))
		for i, w := range ws {
			s[i] = w.text
		}
		return strings.Join(s, " ")
	}
	if len(run) <= 3 {
		return []string{text(run)}
	}
	last := text(run[len(run)-3:])
	if before := run[:len(run)-3]; len(before) >= 2 {
		return append(nounPhrases(before), last)
	}
	return []string{last}
}

// isAdjective reports whether a word is an adjective: one of adjectives, or one with an
// adjective's ending ("druggable", "dangerous", "harmless").
func isAdjective(w string) bool {
	w = strings.ToLower(w)
	if adjectives[w] {
		return true
	}
	if adjectiveLookalikes[w] {
		return false
	}
	for _, suffix := range []string{"able", "ible", "ous", "ful", "less"} {
		if strings.HasSuffix(w, suffix) && len(w) > len(suffix)+2 {
			return true
		}
	}
	return false
}

// looksPlural reports whether a phrase's last word looks like a plural noun, which
// cannot stand first in a compound ("viruses tolerance").
func looksPlural(phrase string) bool {
	w := strings.ToLower(phrase[strings.LastIndexByte(phrase, ' ')+1:])
	return strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is")
}

// verbBase returns the base form of a verb in verbs or contextVerbs.
func verbBase(w string) string {
	w = strings.ToLower(w)
	if b, ok := verbs[w]; ok {
		return b
	}
	return contextVerbs[w]
}

// isCapitalised reports whether w is a capital followed by lower-case letters only ("Why",
// not "DNA" or "McCarthy").
func isCapitalised(w string) bool {
	r, n := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r) && strings.ToLower(w[n:]) == w[n:]
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// lowerFirst lower-cases a sentence's first letter to continue a sentence with it, unless
// the first word is an acronym or a name ("DNA", "McCarthy").
func lowerFirst(s string) string {
	first, _, _ := strings.Cut(s, " ")
	if !isCapitalised(strings.TrimFunc(first, func(r rune) bool { return !unicode.IsLetter(r) })) {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

func article(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an"
	}
	return "a"
}

// truncate shortens s to at most n runes, at a word boundary when there is one.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	s = string([]rune(s)[:n])
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	return s
}

// stopwords are words that say nothing about a goal's subject: function words, and the
// verbs and adjectives goals are phrased with ("identify novel ...").
var stopwords = set(`a about above across after again against all also an and any are as at be because been
before being below between both but by can could did do does doing down during each either few for from
further had has have having here how however if in into is it its itself just may might more most much must
no nor not now of off on once only or other our out over own same should so some such than that the their
them then there these they this those through to too under until up upon very was we were what when where
whether which while who whom why will with within without would you your
identify identifying explain explaining explore exploring understand understanding investigate investigating
determine determining develop developing propose proposing find finding discover discovering study studying
novel new potential possible possibly likely role roles mechanism mechanisms cause causes causing factor factors
way ways use using used based approach approaches hypothesis hypotheses goal research`)

// genericNouns are stopwords that still head a phrase after an adjective.
var genericNouns = set(`mechanism mechanisms cause causes factor factors role roles approach approaches`)

// auxiliaries start a question whose verb follows its subject ("why do mole-rats resist
// cancer"); relatives start a clause whose verb comes first ("targets that slow ...",
// "what sets ...").
var (
	auxiliaries = set("do does did")
	relatives   = set("that which who what")
)

// verbs are words that are verbs wherever they stand, in their base and third-person
// forms; contextVerbs are nouns too ("spread", "age"), and verbs only where the grammar
// wants one (see runs). Each maps a form to its base.
var (
	verbs = forms(`resist survive tolerate evade promote inhibit regulate induce suppress enhance
reduce prevent protect affect enable allow accelerate activate mediate contribute become remain persist
evolve arise emerge occur exist differ vary fail die grow respond adapt acquire lose avoid produce
undergo propagate metastasise metastasize accumulate regenerate recover differentiate divide migrate
invade infect colonise colonize outcompete secrete express bind degrade interact depend withstand
maintain sustain know make keep help show happen seem appear tend require involve lack learn predict`)
	contextVerbs = forms(`spread escape age form change shift switch fold decline signal drive control
trigger aggregate influence increase decrease need damage release transfer repair slow live lead sense
block alter shape limit impact fuel benefit balance set`)
)

// nominals are the nouns of verbs, with the preposition that takes an object ("resistance
// to"), so that a clause can become a noun phrase; see phrases.
var nominals = map[string]struct{ noun, prep string }{
	"resist": {"resistance", "to"}, "survive": {"survival", "of"}, "tolerate": {"tolerance", "to"},
	"withstand": {"tolerance", "to"}, "evade": {"evasion", "of"}, "escape": {"escape", "from"},
	"spread": {"spread", "of"}, "propagate": {"propagation", "of"}, "grow": {"growth", "of"},
	"age": {"ageing", "of"}, "die": {"death", "of"}, "persist": {"persistence", "of"},
	"evolve": {"evolution", "of"}, "form": {"formation", "of"}, "accumulate": {"accumulation", "of"},
	"aggregate": {"aggregation", "of"}, "migrate": {"migration", "of"}, "metastasise": {"metastasis", "of"},
	"metastasize": {"metastasis", "of"}, "regenerate": {"regeneration", "of"}, "differentiate": {"differentiation", "of"},
	"divide": {"division", "of"}, "respond": {"response", "to"}, "adapt": {"adaptation", "to"},
	"recover": {"recovery", "from"}, "lose": {"loss", "of"}, "acquire": {"acquisition", "of"},
	"produce": {"production", "of"}, "degrade": {"degradation", "of"}, "repair": {"repair", "of"},
	"secrete": {"secretion", "of"}, "maintain": {"maintenance", "of"},
}

// adjectives are common adjectives a goal may end a phrase with ("why are some tumours
// resistant"); adjectiveLookalikes are nouns with an adjective's ending (see isAdjective).
var (
	adjectives = set(`early late chronic acute naked resistant tolerant susceptible sensitive vulnerable
effective specific common rare high higher low lower large larger small smaller young old older healthy
severe mild fast faster slow slower long longer short shorter good better bad worse important key major main
different similar relevant robust resilient stable unstable active inactive toxic safe harmful beneficial
protective metabolic genetic cellular molecular clinical therapeutic immune neural environmental evolutionary
functional structural systemic aggressive invasive persistent dormant alive dead unknown known unclear
present absent successful efficient diverse rapid prone`)
	adjectiveLookalikes = set("table cable vegetable variable constable bible crucible")
)

// forms maps each verb in a list, and its third-person singular, to the verb.
func forms(list string) map[string]string {
	m := map[string]string{}
	for _, v := range strings.Fields(list) {
		m[v] = v
		switch {
		case strings.HasSuffix(v, "s") || strings.HasSuffix(v, "sh") || strings.HasSuffix(v, "ch") || strings.HasSuffix(v, "x"):
			m[v+"es"] = v
		case strings.HasSuffix(v, "y") && !strings.ContainsRune("aeiou", rune(v[len(v)-2])):
			m[v[:len(v)-1]+"ies"] = v
		default:
			m[v+"s"] = v
		}
	}
	return m
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
