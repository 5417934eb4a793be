package workflows

// The ranking as the supervisor keeps it: entries (ids, titles, scores), their index,
// similarities, and the ids of new hypotheses.

import (
	"fmt"
	"slices"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/session"
)

// reindex rebuilds the lookups over Entries and Edges.
func (s *supervisor) reindex() {
	s.index = make(map[string]int, len(s.Entries))
	for i, e := range s.Entries {
		s.index[e.ID] = i
	}
	s.sim = make(map[string]float64, len(s.Edges))
	for _, e := range s.Edges {
		s.sim[activities.PairKey(e.A, e.B)] = e.Sim
	}
}

// recent is the scientist's latest steering, newest last; a few are enough to steer a
// prompt, and the payload stays small however often the scientist steers.
func (s *supervisor) recent(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return slices.Clone(list[max(0, len(list)-5):])
}

func (s *supervisor) newID() string {
	s.NextID++
	return fmt.Sprintf("h-%04d", s.NextID)
}

func (s *supervisor) add(e session.Entry) {
	s.index[e.ID] = len(s.Entries)
	s.Entries = append(s.Entries, e)
}

// competing lists the ids still in the tournament, in the order they were made.
func (s *supervisor) competing() []string {
	var ids []string
	for _, e := range s.Entries {
		if e.Excluded == "" {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

func (s *supervisor) similarity(x, y string) float64 { return s.sim[activities.PairKey(x, y)] }

// ranked returns every hypothesis by Elo, highest first, ties by id; excluded ones last.
func (s *supervisor) ranked() []session.Entry { return session.Rank(s.Entries) }

// top returns the n best competing hypotheses: the first n of ranked's, without sorting
// them all (it is asked after every turn).
func (s *supervisor) top(n int) []session.Entry { return session.Top(s.Entries, n) }
