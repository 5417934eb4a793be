package store

import (
	"fmt"
	"strings"
	"testing"
)

// TestLineage: from any session of a tree, Lineage finds its root and every session started
// from it, children oldest first; a loop of parents ends the walk; an unknown id is not found.
func TestLineage(t *testing.T) {
	row := func(id, parent string) Summary { return Summary{SessionID: id, Parent: parent} }
	// Newest first, as Sessions gives them.
	family := []Summary{row("c2", "b"), row("c1", "b"), row("other", ""), row("b", "a"), row("a", "")}
	loop := []Summary{row("x", "y"), row("y", "x")}
	for _, tc := range []struct {
		name string
		rows []Summary
		id   string
		want string // the tree, each node "id(children)"
	}{
		{"from the root", family, "a", "a(b(c1 c2))"},
		{"from a leaf", family, "c2", "a(b(c1 c2))"},
		{"a session alone", family, "other", "other"},
		{"parents that loop", loop, "x", "y(x)"},
		{"not in the index", family, "z", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, ok := Lineage(tc.rows, tc.id)
			if got := render(tree); ok != (tc.want != "") || got != tc.want {
				t.Errorf("Lineage(%s) = %q, %v; want %q", tc.id, got, ok, tc.want)
			}
		})
	}
}

func render(t *Tree) string {
	if t == nil {
		return ""
	}
	var kids []string
	for _, c := range t.Children {
		kids = append(kids, render(c))
	}
	if len(kids) == 0 {
		return t.SessionID
	}
	return fmt.Sprintf("%s(%s)", t.SessionID, strings.Join(kids, " "))
}
