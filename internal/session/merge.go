package session

import (
	"slices"
	"strings"
)

// Rank orders hypotheses by Elo, highest first, ties by id; excluded ones last.
func Rank(entries []Entry) []Entry {
	out := slices.Clone(entries)
	slices.SortStableFunc(out, rankOrder)
	return out
}

// Top is the first n competing hypotheses of Rank(entries), in that order, found without
// sorting the whole ranking: a session asks for its top few after every turn (the Web
// UI's details, the supervisor's policy), and sorting thousands of records each time was
// half of what replaying a run of a large session cost.
func Top(entries []Entry, n int) []Entry {
	if entries == nil {
		return nil // as Rank's
	}
	top := make([]Entry, 0, max(0, min(n, len(entries))))
	if n <= 0 {
		return top
	}
	for _, e := range entries {
		if e.Excluded != "" || len(top) == n && rankOrder(e, top[n-1]) >= 0 {
			continue
		}
		// After every entry it does not rank before, as a stable sort keeps them.
		i, _ := slices.BinarySearchFunc(top, e, func(x, e Entry) int {
			if rankOrder(e, x) < 0 {
				return 1
			}
			return -1
		})
		if len(top) < n {
			top = append(top, Entry{})
		}
		copy(top[i+1:], top[i:len(top)-1])
		top[i] = e
	}
	return top
}

// rankOrder is the ranking's order: competing before excluded, refuted after the rest,
// then Elo (plus SupportedBonus for a supported hypothesis), highest first, then id.
func rankOrder(x, y Entry) int {
	if (x.Excluded == "") != (y.Excluded == "") {
		if x.Excluded == "" {
			return -1
		}
		return 1
	}
	if tx, ty := x.Standing.refutedTier(), y.Standing.refutedTier(); tx != ty {
		return tx - ty
	}
	if rx, ry := x.rating(), y.rating(); rx != ry {
		if rx > ry {
			return -1
		}
		return 1
	}
	return strings.Compare(x.ID, y.ID)
}

// Merge completes delta, a snapshot whose Hypotheses, Played, Edges and Results hold only
// what changed since base, into a whole snapshot: base's lists with delta's on top. A session
// of thousands of hypotheses changes a few dozen per round, so a checkpoint's input and
// its record in the store stay small however large the session grows; the store merges
// when it reads one.
func Merge(base, delta Snapshot) Snapshot {
	byID := make(map[string]int, len(base.Hypotheses))
	entries := slices.Clone(base.Hypotheses)
	for i, e := range entries {
		byID[e.ID] = i
	}
	for _, e := range delta.Hypotheses {
		if i, ok := byID[e.ID]; ok {
			entries[i] = e
		} else {
			byID[e.ID] = len(entries)
			entries = append(entries, e)
		}
	}
	out := delta
	out.Hypotheses = Rank(entries)
	played := slices.Concat(base.Played, delta.Played)
	slices.Sort(played)
	out.Played = slices.Compact(played)
	out.Edges = slices.Concat(base.Edges, delta.Edges)
	out.Results = slices.Concat(base.Results, delta.Results)
	return out
}

// SameEntry reports whether two records of a hypothesis are equal.
func SameEntry(x, y Entry) bool {
	return x.ID == y.ID && x.Title == y.Title && x.Origin == y.Origin && x.Strategy == y.Strategy &&
		slices.Equal(x.Parents, y.Parents) && x.Round == y.Round && x.Cluster == y.Cluster &&
		x.Excluded == y.Excluded && x.Elo == y.Elo && x.EloSE == y.EloSE && x.Wins == y.Wins && x.Losses == y.Losses &&
		x.Reviews == y.Reviews && x.Score == y.Score && x.Standing == y.Standing
}
