package main

// The id of a new session or schedule: given with --id (checked, and, with the lab's keys,
// warned of when it spells the goal) or made, readable from the goal or random.

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"

	"github.com/cosci-dev/cosci/internal/lineage"
)

// maxIDLength keeps session IDs readable; Temporal itself allows longer workflow IDs.
const maxIDLength = 200

// resolveID is the id of a new session or schedule (what) on goal, given with --id or ""
// for byDefault's, which is told whether the lab's research is encrypted. A given id is
// checked (checkID); with the lab's keys, warning says when it spells the goal.
func resolveID(what, given, goal string, byDefault func(sealed bool) string) (id, warning string, err error) {
	sealed, err := encrypted()
	if err != nil {
		return "", "", err
	}
	id = strings.TrimSpace(given)
	if id == "" {
		return byDefault(sealed), "", nil
	}
	if err := checkID(id); err != nil {
		return "", "", usageErrorf("invalid %s: id: %s (set with --id)", what, err)
	}
	if sealed {
		warning = idSpellsGoal("--id", id, goal)
	}
	return id, warning, nil
}

// checkID refuses an id too long to read, or with spaces or control characters in it.
func checkID(id string) error {
	if n := utf8.RuneCountInString(id); n > maxIDLength {
		return fmt.Errorf("is %d characters; at most %d", n, maxIDLength)
	}
	if strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return errors.New("must not contain spaces or control characters")
	}
	return nil
}

// The generated ids are lineage's, which the desk names its sessions with too.
const maxSlugLength = lineage.MaxSlugLength

func slug(goal string) string          { return lineage.Slug(goal) }
func newSessionID(goal string) string  { return lineage.NewSessionID(goal) }
func newSealedID(prefix string) string { return lineage.NewSealedID(prefix) }
func randomHex(n int) string           { return lineage.RandomHex(n) }

// idSpellsGoal warns, for an id given with flag in a deployment whose research is
// encrypted, when the id spells words of the goal: a word of four or more letters, or a
// run of two or more words, of the goal that the id holds in the same order. "" when it
// spells none. Ids are never encrypted (see newSealedID).
func idSpellsGoal(flag, id, goal string) string {
	spelled := sharedWords(id, goal)
	if len(spelled) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s spells the goal (%s): ids are not encrypted, so these words sit in clear in Temporal's history and visibility, "+
		"the store's paths, webhooks and logs, which the lab's keys do not cover; leave %s out for a random id", flag, id, strings.Join(spelled, " "), flag)
}

// commonWords are words of four letters or more that say nothing of a goal alone.
var commonWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("what when where which does with from that this have into than they their there these those " +
		"were been about over under between through would could should session review test") {
		commonWords[w] = true
	}
}

// sharedWords are the words of the goal that id spells (see idSpellsGoal), as the id spells
// them, each once, in the id's order. Words compare by their English stem (Snowball's), so
// "tardigrade" spells "tardigrades".
func sharedWords(id, goal string) []string {
	stems := func(s string) (words, stems []string) {
		words = strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		for _, w := range words {
			env := snowballstem.NewEnv(w)
			english.Stem(env)
			stems = append(stems, env.Current())
		}
		return words, stems
	}
	words, ids := stems(id)
	_, goals := stems(goal)
	inGoal := map[string]bool{}
	pairs := map[[2]string]bool{}
	for i, w := range goals {
		inGoal[w] = true
		if i > 0 {
			pairs[[2]string{goals[i-1], w}] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for i, w := range words {
		switch {
		case inGoal[ids[i]] && utf8.RuneCountInString(w) >= 4 && !commonWords[w]:
			add(w)
		case i > 0 && pairs[[2]string{ids[i-1], ids[i]}]:
			add(words[i-1])
			add(w)
		}
	}
	return out
}
