package main

// The tests of the ids ids.go makes and checks.

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var sessionIDPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*-[0-9a-f]{8}$`)

func TestSlug(t *testing.T) {
	tests := []struct{ goal, want string }{
		{"Why do cells age?", "why-do-cells-age"},
		{"  CRISPR   off-target effects!!  ", "crispr-off-target-effects"},
		{"Über-fast neurons, 2024", "ber-fast-neurons-2024"},
		{"抗生素耐药性", "session"},
		{"", "session"},
		{"---", "session"},
		// Cut at the last word boundary before 40 characters.
		{"Why do some bacteria survive antibiotic exposure without resistance genes?", "why-do-some-bacteria-survive-antibiotic"},
		// One long word is cut where it must be.
		{strings.Repeat("x", 100), strings.Repeat("x", 40)},
		// Words that do not fit are dropped, not cut.
		{strings.Repeat("a", 35) + " bcd e", strings.Repeat("a", 35) + "-bcd"},
		{strings.Repeat("a", 35) + " bcdef", strings.Repeat("a", 35)},
		// A word ending exactly at 40 characters is kept whole.
		{strings.Repeat("a", 36) + " bcd efg", strings.Repeat("a", 36) + "-bcd"},
	}
	for _, tt := range tests {
		got := slug(tt.goal)
		if got != tt.want {
			t.Errorf("slug(%q) = %q, want %q", tt.goal, got, tt.want)
		}
		if len(got) > maxSlugLength || !regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`).MatchString(got) {
			t.Errorf("slug(%q) = %q: not 1-%d characters of a-z, 0-9 and single inner dashes", tt.goal, got, maxSlugLength)
		}
	}
}

func TestNewSessionID(t *testing.T) {
	seen := map[string]bool{}
	for i := range 2000 {
		id := newSessionID("The same goal, every time: " + strings.Repeat("long ", i%20))
		if !sessionIDPattern.MatchString(id) {
			t.Fatalf("session ID %q does not look like slug-8hex", id)
		}
		if len(id) > maxSlugLength+9 {
			t.Fatalf("session ID %q is %d characters; at most %d", id, len(id), maxSlugLength+9)
		}
		if seen[id] {
			t.Fatalf("session ID %q generated twice", id)
		}
		seen[id] = true
	}
}

func TestSharedWords(t *testing.T) {
	const goal = "Why do tardigrades survive desiccation? A study of CAHS proteins, with cryo-EM."
	tests := []struct {
		id   string
		want []string
	}{
		{"s-0123456789abcdef", nil},
		{"lab-run-7", nil},
		{"Tardigrades_2026", []string{"tardigrades"}},
		{"tardigrade-1", []string{"tardigrade"}}, // the same word in another form
		{"exp-desiccation-tardigrades", []string{"desiccation", "tardigrades"}},
		{"cahs-proteins", []string{"cahs", "proteins"}},
		{"why-do-1", []string{"why", "do"}}, // a run of short words
		{"do-why-1", nil},                   // the same words, not a run of the goal's
		{"with-a-study", []string{"study"}}, // "with" alone says nothing
		{"cryo.em", []string{"cryo", "em"}}, // a run, whatever separates it
		{"proteins-proteins", []string{"proteins"}},
	}
	for _, tt := range tests {
		if got := sharedWords(tt.id, goal); !slices.Equal(got, tt.want) {
			t.Errorf("sharedWords(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}
