package store

import (
	"context"
	"fmt"

	"github.com/cosci-dev/cosci/internal/research"
)

// Meta-reviews: one a round, under metareviews/0001.json, written once.

// metaReviewKey pads the round so that a listing sorts like the rounds.
func metaReviewKey(round int) string { return fmt.Sprintf("%s/%04d.json", metaReviewsDir, round) }

// PutMetaReview stores the meta-review of round m.Round. If the session already holds
// that round's meta-review, PutMetaReview keeps it and returns nil.
func (s *Store) PutMetaReview(ctx context.Context, sessionID string, m research.MetaReview) error {
	if m.Round < 0 {
		return fmt.Errorf("store: meta-review round %d is negative; number rounds from 0", m.Round)
	}
	return s.put(ctx, sessionID, metaReviewKey(m.Round), m, true)
}

// MetaReview returns the meta-review of one round. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) MetaReview(ctx context.Context, sessionID string, round int) (research.MetaReview, error) {
	if round < 0 {
		return research.MetaReview{}, fmt.Errorf("store: meta-review round %d is negative; number rounds from 0", round)
	}
	return getAs[research.MetaReview](ctx, s, sessionID, metaReviewKey(round), fmt.Sprintf("meta-review of round %d", round))
}
