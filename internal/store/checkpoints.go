package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/session"
)

// Checkpoints: a session's snapshots under checkpoints/000001.json, compressed, whole or as
// the changes over an earlier one; each is committed with the events before it and the
// session's index row.

// PutCheckpoint writes snap as checkpoint number snap.Seq, appends newEvents to the
// session's event log and updates the session's index row. It returns where the
// checkpoint is (see Where).
//
// It survives retries: events whose Seq is not above the last one in the log are skipped
// (so newEvents must be in Seq order), and an existing checkpoint with the same number is
// kept.
func (s *Store) PutCheckpoint(ctx context.Context, snap session.Snapshot, newEvents []session.Event) (where string, err error) {
	return s.PutCheckpointOver(ctx, 0, snap, newEvents)
}

// PutCheckpointOver is PutCheckpoint for an incremental snapshot: when base is above 0,
// snap's Hypotheses, Played and Edges hold only what changed since checkpoint base.
//
// The store keeps such a checkpoint as it came, the changes over base, and Checkpoint
// merges the chain back (session.Merge). A checkpoint is kept whole instead once the
// changes since the last whole one would outweigh it, or the chain would pass
// maxCheckpointChain links: so a session's records grow with its hypotheses, not with
// hypotheses × checkpoints, and reading any checkpoint reads at most about twice a whole
// one.
func (s *Store) PutCheckpointOver(ctx context.Context, base int, snap session.Snapshot, newEvents []session.Event) (where string, err error) {
	if _, err := escape("session id", snap.SessionID); err != nil {
		return "", err
	}
	if snap.Seq < 0 {
		return "", fmt.Errorf("store: checkpoint number %d is negative; number checkpoints from 1", snap.Seq)
	}
	k := checkpointKey(snap.Seq)
	rec, whole := storedCheckpoint{Snapshot: snap}, snap
	if base > 0 {
		if base >= snap.Seq {
			return "", fmt.Errorf("store: checkpoint %d cannot build on checkpoint %d, which is not before it", snap.Seq, base)
		}
		prev, chain, err := s.checkpoint(ctx, snap.SessionID, base, nil)
		if err != nil {
			return "", fmt.Errorf("store: checkpoint %d builds on checkpoint %d: %w", snap.Seq, base, err)
		}
		whole = session.Merge(prev, snap)
		changes, err := json.Marshal(snap) // as the record holds it, before compression
		if err != nil {
			return "", fmt.Errorf("store: encode checkpoint %d: %w", snap.Seq, err)
		}
		rec = storedCheckpoint{Base: base, Links: chain.Links + 1, ChainBytes: chain.ChainBytes + len(changes), WholeBytes: chain.WholeBytes, Snapshot: snap}
		if rec.Links >= maxCheckpointChain || rec.ChainBytes > rec.WholeBytes {
			rec = storedCheckpoint{Snapshot: whole}
		}
	}
	data, err := encodeCompact(k, rec)
	if err != nil {
		return "", err
	}
	sum := summaryOf(whole)
	err = s.b.Commit(ctx, Commit{SessionID: snap.SessionID, Events: newEvents, Key: k, Data: data, Index: &sum})
	if err != nil {
		return "", err
	}
	return s.b.Where(snap.SessionID, k), nil
}

// maxCheckpointChain bounds how many stored changes reading a checkpoint merges.
const maxCheckpointChain = 64

// storedCheckpoint is a checkpoint as the store keeps it: whole, or, when Base is above 0,
// the changes since checkpoint Base (see PutCheckpointOver), with what the chain back to
// the last whole checkpoint holds: its links, the bytes of its changes, and the bytes of
// that whole checkpoint.
type storedCheckpoint struct {
	Base       int `json:"changes_since,omitempty"`
	Links      int `json:"chain_links,omitempty"`
	ChainBytes int `json:"chain_bytes,omitempty"`
	WholeBytes int `json:"whole_bytes,omitempty"`
	session.Snapshot
}

// checkpoint reads checkpoint seq whole, and returns how its stored chain stands (all zero
// but WholeBytes for a checkpoint stored whole). whole holds checkpoints already read
// whole, by number, so that reading every checkpoint of a session reads each record once.
func (s *Store) checkpoint(ctx context.Context, sessionID string, seq int, whole map[int]session.Snapshot) (session.Snapshot, storedCheckpoint, error) {
	var rec storedCheckpoint
	if snap, ok := whole[seq]; ok {
		return snap, rec, nil
	}
	if snap, chain, ok := s.latest.get(sessionID, seq); ok {
		return snap, chain, nil
	}
	raw, err := s.b.Get(ctx, sessionID, checkpointKey(seq))
	if errors.Is(err, fs.ErrNotExist) {
		return session.Snapshot{}, rec, fmt.Errorf("store: session %q has no checkpoint %d (no %s): %w", sessionID, seq, s.b.Where(sessionID, checkpointKey(seq)), errNoRecord)
	}
	if err != nil {
		return session.Snapshot{}, rec, err
	}
	plain, err := unpack(raw)
	if err != nil {
		return session.Snapshot{}, rec, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, checkpointKey(seq)), Problem: err.Error()}
	}
	if err := json.Unmarshal(plain, &rec); err != nil {
		return session.Snapshot{}, rec, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, checkpointKey(seq)), Problem: "not a valid checkpoint: " + err.Error()}
	}
	if rec.Base <= 0 {
		// Chains are weighed by their JSON, what reading them parses, compressed or not.
		rec.WholeBytes = len(plain)
		s.latest.keep(seq, rec.Snapshot, storedCheckpoint{WholeBytes: len(plain)})
		return rec.Snapshot, rec, nil
	}
	if rec.Base >= seq {
		return session.Snapshot{}, rec, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, checkpointKey(seq)),
			Problem: fmt.Sprintf("it builds on checkpoint %d, which is not before it", rec.Base)}
	}
	prev, _, err := s.checkpoint(ctx, sessionID, rec.Base, whole)
	if errors.Is(err, fs.ErrNotExist) {
		// Checkpoint seq exists, so the one it builds on did: it was removed.
		return session.Snapshot{}, rec, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, checkpointKey(seq)),
			Problem: fmt.Sprintf("it builds on checkpoint %d, which is missing: no %s", rec.Base, s.b.Where(sessionID, checkpointKey(rec.Base)))}
	}
	if err != nil {
		return session.Snapshot{}, rec, fmt.Errorf("store: checkpoint %d builds on checkpoint %d: %w", seq, rec.Base, err)
	}
	merged := session.Merge(prev, rec.Snapshot)
	chain := rec
	chain.Snapshot = session.Snapshot{}
	s.latest.keep(seq, merged, chain)
	return merged, rec, nil
}

// checkpointKey pads the number so that a listing sorts like the sequence.
func checkpointKey(seq int) string { return fmt.Sprintf("%s/%06d.json", checkpointsDir, seq) }

// checkpointSeqs lists the numbers of a session's checkpoints, in order.
func (s *Store) checkpointSeqs(ctx context.Context, sessionID string) ([]int, error) {
	keys, err := s.b.List(ctx, sessionID, checkpointsDir+"/")
	if err != nil {
		return nil, err
	}
	var seqs []int
	for _, k := range keys {
		name, ok := strings.CutSuffix(path.Base(k), ".json")
		if !ok || !allDigits(name) {
			continue
		}
		if n, err := strconv.Atoi(name); err == nil {
			seqs = append(seqs, n)
		}
	}
	// Sort numbers, not names: past 999999 the padding no longer orders them.
	slices.Sort(seqs)
	return seqs, nil
}

// Checkpoint returns checkpoint number seq, whole. If there is none, the error wraps
// fs.ErrNotExist.
func (s *Store) Checkpoint(ctx context.Context, sessionID string, seq int) (session.Snapshot, error) {
	snap, _, err := s.checkpoint(ctx, sessionID, seq, nil)
	return snap, err
}

// LatestCheckpoint returns the session's checkpoint with the highest number. If there is
// none, the error wraps fs.ErrNotExist.
func (s *Store) LatestCheckpoint(ctx context.Context, sessionID string) (session.Snapshot, error) {
	if _, err := escape("session id", sessionID); err != nil {
		return session.Snapshot{}, err
	}
	seqs, err := s.checkpointSeqs(ctx, sessionID)
	if err != nil {
		return session.Snapshot{}, err
	}
	if len(seqs) == 0 {
		return session.Snapshot{}, fmt.Errorf("store: session %q has no checkpoint yet (none in %s): %w",
			sessionID, s.b.Where(sessionID, checkpointsDir), errNoRecord)
	}
	return s.Checkpoint(ctx, sessionID, seqs[len(seqs)-1])
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// Checkpoints returns every checkpoint of the session, in the order of their numbers. A
// session without checkpoints yields an empty list and no error.
func (s *Store) Checkpoints(ctx context.Context, sessionID string) ([]session.Snapshot, error) {
	if _, err := escape("session id", sessionID); err != nil {
		return nil, err
	}
	seqs, err := s.checkpointSeqs(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	snaps := make([]session.Snapshot, 0, len(seqs))
	whole := make(map[int]session.Snapshot, len(seqs))
	for _, n := range seqs {
		snap, _, err := s.checkpoint(ctx, sessionID, n, whole)
		if err != nil {
			return nil, err
		}
		whole[n] = snap
		snaps = append(snaps, snap)
	}
	return snaps, nil
}
