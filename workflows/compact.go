package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/activities"
	"github.com/cosci-dev/cosci/internal/proximity"
	"github.com/cosci-dev/cosci/internal/session"
)

// The lists that grow with a session, its hypotheses' records, the pairs that met and the
// similarities the proximity agent found, are written compactly in the continue-as-new
// input: a hypothesis id "h-0042" as the number 42, a record as an array, a pair as
// [a, b], a similarity as [a, b, sim]. What a run hands to the next is then about half
// the size of plain JSON.

// pairSet is the set of pairs that met, keyed by activities.PairKey, the key the Tournament activity reads them by.
type pairSet map[string]bool

// edgeList is the proximity graph's edges, in the order they were found.
type edgeList []proximity.Edge

// MarshalJSON writes the pairs sorted, so the same set always encodes the same way.
func (p pairSet) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(p))
	for k, met := range p {
		if met {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make([][2]any, len(keys))
	for i, k := range keys {
		a, b, _ := strings.Cut(k, "|")
		out[i] = [2]any{compactID(a), compactID(b)}
	}
	return json.Marshal(out)
}

func (p *pairSet) UnmarshalJSON(data []byte) error {
	var raw [][2]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("played pairs: %w", err)
	}
	*p = make(pairSet, len(raw))
	for _, r := range raw {
		a, b, err := expandPair(r[0], r[1])
		if err != nil {
			return err
		}
		(*p)[activities.PairKey(a, b)] = true
	}
	return nil
}

func (l edgeList) MarshalJSON() ([]byte, error) {
	out := make([][3]any, len(l))
	for i, e := range l {
		out[i] = [3]any{compactID(e.A), compactID(e.B), e.Sim}
	}
	return json.Marshal(out)
}

func (l *edgeList) UnmarshalJSON(data []byte) error {
	var raw [][3]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("proximity edges: %w", err)
	}
	*l = make(edgeList, len(raw))
	for i, r := range raw {
		a, b, err := expandPair(r[0], r[1])
		if err != nil {
			return err
		}
		var sim float64
		if err := json.Unmarshal(r[2], &sim); err != nil {
			return fmt.Errorf("proximity edge %s-%s: %w", a, b, err)
		}
		(*l)[i] = proximity.Edge{A: a, B: b, Sim: sim}
	}
	return nil
}

// compactID writes the ids the session gives ("h-0042") as numbers, any other as itself.
func compactID(id string) any {
	if n, ok := strings.CutPrefix(id, "h-"); ok && len(n) >= 4 {
		if v, err := strconv.Atoi(n); err == nil && v >= 0 && fmt.Sprintf("%04d", v) == n {
			return v
		}
	}
	return id
}

func expandID(raw json.RawMessage) (string, error) {
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return fmt.Sprintf("h-%04d", n), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("hypothesis id %s: neither a number nor a string", raw)
	}
	return s, nil
}

// entryList is the ranking's records, one array each: [id, title, origin, strategy,
// parents, round, cluster, excluded, elo, wins, losses, reviews, score], and the rating's
// standard error after them when it has one (fitted ratings).
type entryList []session.Entry

func (l entryList) MarshalJSON() ([]byte, error) {
	out := make([][]any, len(l))
	for i, e := range l {
		parents := make([]any, len(e.Parents))
		for j, p := range e.Parents {
			parents[j] = compactID(p)
		}
		out[i] = []any{compactID(e.ID), e.Title, e.Origin, e.Strategy, parents, e.Round, e.Cluster, e.Excluded,
			e.Elo, e.Wins, e.Losses, e.Reviews, e.Score}
		if e.EloSE != 0 {
			out[i] = append(out[i], e.EloSE)
		}
	}
	return json.Marshal(out)
}

func (l *entryList) UnmarshalJSON(data []byte) error {
	var raw [][]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("hypotheses: %w", err)
	}
	*l = make(entryList, len(raw))
	for i, r := range raw {
		if len(r) < 13 {
			return fmt.Errorf("hypotheses: record %d has %d fields, want 13 or 14", i, len(r))
		}
		if len(r) > 13 {
			if err := json.Unmarshal(r[13], &(*l)[i].EloSE); err != nil {
				return fmt.Errorf("hypotheses: record %d: %w", i, err)
			}
		}
		e := &(*l)[i]
		id, err := expandID(r[0])
		if err != nil {
			return err
		}
		e.ID = id
		var parents []json.RawMessage
		for _, f := range []struct {
			raw json.RawMessage
			v   any
		}{{r[1], &e.Title}, {r[2], &e.Origin}, {r[3], &e.Strategy}, {r[4], &parents}, {r[5], &e.Round}, {r[6], &e.Cluster},
			{r[7], &e.Excluded}, {r[8], &e.Elo}, {r[9], &e.Wins}, {r[10], &e.Losses}, {r[11], &e.Reviews}, {r[12], &e.Score}} {
			if err := json.Unmarshal(f.raw, f.v); err != nil {
				return fmt.Errorf("hypothesis %s: %w", id, err)
			}
		}
		for _, p := range parents {
			pid, err := expandID(p)
			if err != nil {
				return err
			}
			e.Parents = append(e.Parents, pid)
		}
	}
	return nil
}

func expandPair(x, y json.RawMessage) (a, b string, err error) {
	if a, err = expandID(x); err == nil {
		b, err = expandID(y)
	}
	return a, b, err
}
