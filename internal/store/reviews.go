package store

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/research"
)

// Reviews: each under reviews/<hypothesis id>/<review type>-<n>.json, written once.

// PutReview stores the n-th review of type r.Type of hypothesis r.HypothesisID. The index
// lets a scientist add reviews of a type the session already ran. If the session already
// holds that review, PutReview keeps it and returns nil.
func (s *Store) PutReview(ctx context.Context, sessionID string, n int, r research.Review) error {
	if n < 0 {
		return fmt.Errorf("store: review index %d is negative; number reviews from 0", n)
	}
	k, err := key(sessionID, reviewsDir, "-"+strconv.Itoa(n)+".json",
		"hypothesis id", r.HypothesisID, "review type", r.Type)
	if err != nil {
		return err
	}
	return s.put(ctx, sessionID, k, r, true)
}

// Reviews returns every stored review of one hypothesis, ordered by review type (in the
// order of research.ReviewTypes, then other types by name) and then by index. A hypothesis
// without reviews yields an empty list and no error.
func (s *Store) Reviews(ctx context.Context, sessionID, hypothesisID string) ([]research.Review, error) {
	dir, err := key(sessionID, reviewsDir, "/", "hypothesis id", hypothesisID)
	if err != nil {
		return nil, err
	}
	keys, err := s.b.List(ctx, sessionID, dir+"/")
	if err != nil {
		return nil, err
	}
	type indexed struct {
		n int
		r research.Review
	}
	var all []indexed
	for _, k := range keys {
		name, ok := strings.CutSuffix(path.Base(k), ".json")
		if !ok {
			continue
		}
		// The index follows the last '-': escaped types may hold '-', indexes cannot.
		n, err := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
		if err != nil {
			continue // not a review record
		}
		var r research.Review
		if err := s.get(ctx, sessionID, k, "review", &r); err != nil {
			return nil, err
		}
		all = append(all, indexed{n, r})
	}
	slices.SortFunc(all, func(a, b indexed) int {
		return cmp.Or(
			cmp.Compare(typeRank(a.r.Type), typeRank(b.r.Type)),
			strings.Compare(a.r.Type, b.r.Type),
			cmp.Compare(a.n, b.n))
	})
	reviews := make([]research.Review, len(all))
	for i, x := range all {
		reviews[i] = x.r
	}
	return reviews, nil
}

// typeRank places the known review types in the order a session runs them, others after.
func typeRank(t string) int {
	if i := slices.Index(research.ReviewTypes, t); i >= 0 {
		return i
	}
	return len(research.ReviewTypes)
}
