package store

// Tree is a session and the sessions started from it, as the session index records them.
type Tree struct {
	Summary
	Children []*Tree
}

// maxTreeDepth bounds the walk to the root, against an index whose parents loop.
const maxTreeDepth = 1000

// Lineage is the tree of id's sessions in the index's rows (newest first, as Sessions
// gives them): up to its root, then down through every session started from it, children
// oldest first. It says false when id is not in the rows.
func Lineage(rows []Summary, id string) (*Tree, bool) {
	byID := make(map[string]Summary, len(rows))
	for _, r := range rows {
		byID[r.SessionID] = r
	}
	root, ok := byID[id]
	if !ok {
		return nil, false
	}
	seen := map[string]bool{id: true}
	for p, ok := byID[root.Parent]; ok && !seen[p.SessionID] && len(seen) < maxTreeDepth; p, ok = byID[root.Parent] {
		root, seen[p.SessionID] = p, true
	}
	kids := map[string][]Summary{}
	for i := len(rows) - 1; i >= 0; i-- {
		kids[rows[i].Parent] = append(kids[rows[i].Parent], rows[i])
	}
	seen = map[string]bool{root.SessionID: true}
	var grow func(n *Tree)
	grow = func(n *Tree) {
		for _, k := range kids[n.SessionID] {
			if !seen[k.SessionID] {
				seen[k.SessionID] = true
				c := &Tree{Summary: k}
				n.Children = append(n.Children, c)
				grow(c)
			}
		}
	}
	top := &Tree{Summary: root}
	grow(top)
	return top, true
}
