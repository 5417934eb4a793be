package passage

import (
	"errors"
	"testing"
)

// TestParse: the written forms a tool and a model give, read into their parts, and what
// names no passage.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ID
		ok   bool
	}{
		{"10.5555/cosci.tau.001#p7.2", ID{Source: "10.5555/cosci.tau.001", Page: 7, Index: 2}, true},
		{"kim2021#s3.1", ID{Source: "kim2021", Section: 3, Index: 1}, true},
		{" 10.5555/x#P12.10 ", ID{Source: "10.5555/x", Page: 12, Index: 10}, true},
		{"p7.2", ID{Page: 7, Index: 2}, true},
		{"S1.1", ID{Section: 1, Index: 1}, true},
		{"10.1000/a#b#p1.1", ID{Source: "10.1000/a#b", Page: 1, Index: 1}, true}, // the last "#" is the place's
		{"10.5555/cosci.tau.001", ID{Source: "10.5555/cosci.tau.001"}, false},
		{"https://doi.org/10.1000/x#frag/ment", ID{Source: "https://doi.org/10.1000/x#frag/ment"}, false},
		{"#p1.1", ID{Source: "#p1.1"}, false},
		{"10.5555/x#p7", ID{Source: "10.5555/x#p7"}, false},
		{"10.5555/x#p0.1", ID{Source: "10.5555/x#p0.1"}, false},
		{"10.5555/x#p7.0", ID{Source: "10.5555/x#p7.0"}, false},
		{"10.5555/x#p-7.2", ID{Source: "10.5555/x#p-7.2"}, false},
		{"10.5555/x#p+7.2", ID{Source: "10.5555/x#p+7.2"}, false},
		{"10.5555/x#p7.2.1", ID{Source: "10.5555/x#p7.2.1"}, false},
		{"10.5555/x#p9999999.1", ID{Source: "10.5555/x#p9999999.1"}, false},
		{"10.5555/x#q7.2", ID{Source: "10.5555/x#q7.2"}, false},
		{"", ID{}, false},
	} {
		got, err := Parse(tc.in)
		if got != tc.want || (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrNoPlace) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestString: the written form, and that Parse reads back what String writes.
func TestString(t *testing.T) {
	for _, tc := range []struct {
		id   ID
		want string
	}{
		{At("10.5555/x", 7, 2), "10.5555/x#p7.2"},
		{InSection("kim2021", 3, 1), "kim2021#s3.1"},
		{At("", 7, 2), "p7.2"},
		{ID{Source: "10.5555/x"}, "10.5555/x"},
		{ID{Source: "10.5555/x", Page: 7}, "10.5555/x"},                       // no index: no place
		{ID{Source: "10.5555/x", Page: 7, Section: 2, Index: 1}, "10.5555/x"}, // both: no place
	} {
		if got := tc.id.String(); got != tc.want {
			t.Errorf("%+v.String() = %q; want %q", tc.id, got, tc.want)
		}
		if back, err := Parse(tc.want); tc.id.HasPlace() && (err != nil || back != tc.id) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.want, back, err, tc.id)
		}
	}
}

func TestSamePlace(t *testing.T) {
	a, b := At("10.5555/x", 7, 2), At("https://doi.org/10.5555/X", 7, 2)
	if !a.SamePlace(b) || a.SamePlace(At("10.5555/x", 7, 1)) || a.SamePlace(InSection("10.5555/x", 7, 2)) || (ID{}).SamePlace(ID{}) {
		t.Error("SamePlace compares the place alone, and a place only")
	}
}
