package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// The desk's sign-outs (auth.Revocations), kept here so that every desk of a lab reads
// them: a sign-out at one desk holds at all. They live under DeskRecords, a name no
// session takes (the starter and the desk never make an id with a space):
//
//	signouts/<sign-in id>.json  a sign-in that signed out, and until when it would have lasted
//	people/<digest>.json        the moment before which a person's sign-ins all end
//
// A person's record is named by the digest of their identity, which may be longer than a
// record's name allows.

// DeskRecords is the store's place for what the desk keeps that is no session's.
const DeskRecords = "cosci desk"

const (
	signoutsDir = "signouts"
	peopleDir   = "people"
)

// signout is a signed-out sign-in.
type signout struct {
	Person string `json:"person"`
	SID    string `json:"sid"`
	Until  string `json:"until"` // RFC 3339: the sign-in would have ended then anyway
}

// everywhere is a person's "sign out everywhere".
type everywhere struct {
	Person string `json:"person"`
	Before string `json:"before"` // RFC 3339 with nanoseconds
	By     string `json:"by"`
}

// SignOut records that sign-in sid of person is signed out.
func (s *Store) SignOut(ctx context.Context, person, sid string, until time.Time) error {
	return s.putByID(ctx, DeskRecords, signoutsDir, "sign-in", sid,
		signout{Person: person, SID: sid, Until: until.UTC().Format(time.RFC3339)}, false)
}

// SignedOut says whether sign-in sid has been signed out.
func (s *Store) SignedOut(ctx context.Context, sid string) (bool, error) {
	k, err := key(DeskRecords, signoutsDir, ".json", "sign-in id", sid)
	if err != nil {
		return false, err
	}
	var rec signout
	found, err := s.find(ctx, DeskRecords, k, "sign-out", &rec)
	return found && rec.SID == sid, err
}

// SignOutEverywhere records that every sign-in of person begun before at ends, by whom.
func (s *Store) SignOutEverywhere(ctx context.Context, person, by string, at time.Time) error {
	return s.putByID(ctx, DeskRecords, peopleDir, "person", personKey(person),
		everywhere{Person: person, Before: at.UTC().Format(time.RFC3339Nano), By: by}, false)
}

// SignedOutBefore is the moment before which every sign-in of person ends; zero if none.
func (s *Store) SignedOutBefore(ctx context.Context, person string) (time.Time, error) {
	rec, err := getByID[everywhere](ctx, s, DeskRecords, peopleDir, "person", personKey(person))
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	if rec.Person != person {
		return time.Time{}, fmt.Errorf("store: the sign-out record of %q names %q", person, rec.Person)
	}
	return time.Parse(time.RFC3339Nano, rec.Before)
}

func personKey(person string) string {
	sum := sha256.Sum256([]byte(person))
	return hex.EncodeToString(sum[:])
}
