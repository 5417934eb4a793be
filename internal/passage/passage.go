// Package passage names a passage of a source's full text, from the extractor that cuts
// the text into passages (internal/fulltext), through the library's index and the
// literature server's results (internal/library), to the citation that names it
// (internal/citation) and the pages that show it.
//
// Its written form is the wire form stored sessions, recorded histories and the
// literature server's results hold: "<source>#p<page>.<index>" ("10.5555/x#p7.2", the
// second passage of page 7), or, in a text without pages (JATS, HTML),
// "<source>#s<section>.<index>" (the second passage of its third section). The place alone
// ("p7.2") is what the extractor gives, before the library names its source. String
// writes it and Parse reads it; nothing else in the tree splits one.
package passage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ID names one passage: the source it is of and its place in the source's full text.
type ID struct {
	// Source is the reference's id (its DOI or citation key), as the library gives it;
	// "" for a place alone.
	Source string
	// Page is the 1-based page the passage starts on; 0 in a text without pages.
	Page int
	// Section is the 1-based ordinal of the passage's section, in a text without pages
	// only (0 with pages).
	Section int
	// Index is the passage's 1-based place on its page, or in its section; 0 for an id
	// that names no passage (a source alone).
	Index int
}

// maxNumber bounds each number of a place: no text has a million pages, sections or
// passages on one page, and a bound keeps a model's id from overflowing.
const maxNumber = 999999

// At is the id of the passage at page page, the index-th passage there.
func At(source string, page, index int) ID { return ID{Source: source, Page: page, Index: index} }

// InSection is the id of the index-th passage of the section-th section of a text
// without pages.
func InSection(source string, section, index int) ID {
	return ID{Source: source, Section: section, Index: index}
}

// HasPlace says whether the id names a passage, not only a source.
func (id ID) HasPlace() bool { return id.Index > 0 && (id.Page > 0) != (id.Section > 0) }

// Place is the passage's place in its text: "p7.2", "s3.2"; "" for an id without one.
func (id ID) Place() string {
	switch {
	case !id.HasPlace():
		return ""
	case id.Page > 0:
		return "p" + strconv.Itoa(id.Page) + "." + strconv.Itoa(id.Index)
	}
	return "s" + strconv.Itoa(id.Section) + "." + strconv.Itoa(id.Index)
}

// String is the id's written form: "<source>#<place>"; the source alone for an id
// without a place, the place alone for one without a source.
func (id ID) String() string {
	switch place := id.Place(); {
	case place == "":
		return id.Source
	case id.Source == "":
		return place
	default:
		return id.Source + "#" + place
	}
}

// In is the id with its source set: a place the extractor gave, named in the library.
func (id ID) In(source string) ID {
	id.Source = source
	return id
}

// SamePlace says whether two ids name the same place, whatever their sources.
func (id ID) SamePlace(o ID) bool {
	return id.HasPlace() && id.Page == o.Page && id.Section == o.Section && id.Index == o.Index
}

// ErrNoPlace is what Parse says of a written id that names no passage: a source's id
// alone, or one whose place is not "p<page>.<index>" or "s<section>.<index>".
var ErrNoPlace = errors.New(`names no passage: a passage's id is "<source>#p<page>.<index>" (10.5555/x#p7.2), or "#s<section>.<index>" in a text without pages`)

// Parse reads a written passage id: "<source>#p7.2", "<source>#s3.2", or the place
// alone ("p7.2"), in either case and with spaces around it, as a tool or a model writes
// it. The source is everything before the last "#". An id that names no passage is an
// error wrapping ErrNoPlace; it is then returned as a source alone (Source s, trimmed),
// so that a DOI with a "#" of its own still names its source.
func Parse(s string) (ID, error) {
	s = strings.TrimSpace(s)
	source, place := "", s
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		source, place = strings.TrimSpace(s[:i]), s[i+1:]
		if source == "" {
			return ID{Source: s}, fmt.Errorf("%q has no source before its \"#\": %w", s, ErrNoPlace)
		}
	}
	id, ok := parsePlace(place)
	if !ok {
		return ID{Source: s}, fmt.Errorf("%q %w", s, ErrNoPlace)
	}
	return id.In(source), nil
}

// parsePlace reads "p7.2" or "s3.2" (either case), each number from 1 to maxNumber.
func parsePlace(place string) (ID, bool) {
	if len(place) < 4 || len(place) > 16 {
		return ID{}, false
	}
	kind := place[0] | 0x20 // lower case
	major, minor, ok := strings.Cut(place[1:], ".")
	if !ok || kind != 'p' && kind != 's' {
		return ID{}, false
	}
	a, okA := number(major)
	b, okB := number(minor)
	if !okA || !okB {
		return ID{}, false
	}
	if kind == 'p' {
		return ID{Page: a, Index: b}, true
	}
	return ID{Section: a, Index: b}, true
}

// number reads a positive decimal of digits alone ("07" is 7; "+7", "7e0", "" are none).
func number(s string) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0 && n <= maxNumber
}
