package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
)

// Hypotheses: each under hypotheses/<hypothesis id>.json, written once.

// PutHypothesis stores a hypothesis under its ID. If the session already holds a
// hypothesis with that ID, PutHypothesis keeps it and returns nil.
func (s *Store) PutHypothesis(ctx context.Context, sessionID string, h research.Hypothesis) error {
	return s.putByID(ctx, sessionID, hypothesesDir, "hypothesis", h.ID, h, true)
}

// Hypothesis returns a stored hypothesis. If there is none, the error wraps fs.ErrNotExist.
func (s *Store) Hypothesis(ctx context.Context, sessionID, id string) (research.Hypothesis, error) {
	return getByID[research.Hypothesis](ctx, s, sessionID, hypothesesDir, "hypothesis", id)
}

// Hypotheses returns the stored hypotheses with the given ids, keyed by id. If some are
// missing it returns the others together with an error that wraps fs.ErrNotExist and
// names the missing ids, so a caller that can do without them (a report) may go on.
func (s *Store) Hypotheses(ctx context.Context, sessionID string, ids []string) (map[string]research.Hypothesis, error) {
	found := make(map[string]research.Hypothesis, len(ids))
	var missing []string
	for _, id := range ids {
		if _, ok := found[id]; ok {
			continue
		}
		h, err := s.Hypothesis(ctx, sessionID, id)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if !slices.Contains(missing, id) {
				missing = append(missing, id)
			}
		case err != nil:
			return nil, err
		default:
			found[id] = h
		}
	}
	if len(missing) > 0 {
		shown := missing
		if len(shown) > 5 {
			shown = shown[:5]
		}
		first, _ := key(sessionID, hypothesesDir, ".json", "hypothesis id", missing[0])
		return found, fmt.Errorf("store: session %q lacks %d of the %d hypotheses asked for (%s; no %s): %w",
			sessionID, len(missing), len(found)+len(missing), strings.Join(quoteAll(shown), ", "), s.b.Where(sessionID, first), errNoRecord)
	}
	return found, nil
}

func quoteAll(ss []string) []string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return q
}
