// Package access decides who may do what at the desk: the roles people hold, the record of
// a session's owner and the people it is shared with, and one pure function, Decide, that
// says yes or says what is missing. It does no I/O: the desk reads the record from the
// session store and the identity from the sign-in, and asks.
package access

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/research"
)

// Role is what a person may do at the desk at all.
type Role string

// The roles. A scientist starts sessions, reads and steers their own and those shared
// with them; an admin reads and steers every session.
const (
	Scientist Role = "scientist"
	Admin     Role = "admin"
)

// Level is what a grant lets its holder do with one session.
type Level string

// The levels of a grant: read it (its pages, report and artefacts), or steer it too (every
// command, tool-call answers included).
const (
	Read  Level = "read"
	Steer Level = "steer"
)

// Levels lists the levels a grant may have, weakest first.
var Levels = []Level{Read, Steer}

// Action is what someone asks to do.
type Action string

// The actions the desk asks about.
const (
	ActRead  Action = "read"  // see a session: its pages, its live line, its report
	ActSteer Action = "steer" // send it a command
	ActShare Action = "share" // grant or revoke access to it
	ActStart Action = "start" // start a session of one's own
)

// Identity is a signed-in person: ID is what the session records as its scientist and
// what grants name (the verified e-mail address, else the identity provider's subject).
type Identity struct {
	ID     string   `json:"id"`
	Name   string   `json:"name,omitempty"`
	Groups []string `json:"groups,omitempty"`
	Roles  []Role   `json:"roles,omitempty"`
}

// Has says whether the identity holds a role.
func (i Identity) Has(r Role) bool { return slices.Contains(i.Roles, r) }

// Grant is one person's access to a session, and who gave it when.
type Grant struct {
	Who   string `json:"who"`
	Level Level  `json:"level"`
	By    string `json:"by"`
	At    string `json:"at"` // RFC 3339, UTC
}

// Record is a session's access record: its owner (the scientist who started it) and the
// grants. A session without a record is its scientist's alone.
type Record struct {
	SessionID string  `json:"session_id"`
	Owner     string  `json:"owner"`
	Grants    []Grant `json:"grants,omitempty"`
}

// Level returns the level granted to who, "" for none.
func (r Record) Level(who string) Level {
	for _, g := range r.Grants {
		if g.Who == who {
			return g.Level
		}
	}
	return ""
}

// Decision is Decide's answer: allowed, or why not, in words that say what is missing.
type Decision struct {
	Allowed bool
	Missing string
}

// Decide says whether who may take act on the session rec describes (rec is ignored for
// ActStart). The rules: nobody without a role does anything; an admin does everything; a
// scientist starts sessions, and reads, steers and shares their own; a grant of steer
// lets its holder read and steer, one of read lets them read; only the owner and admins
// share.
func Decide(who Identity, rec Record, act Action) Decision {
	ok := Decision{Allowed: true}
	no := func(format string, args ...any) Decision { return Decision{Missing: fmt.Sprintf(format, args...)} }
	if who.ID == "" {
		return no("a signed-in identity")
	}
	if who.Has(Admin) {
		return ok
	}
	if !who.Has(Scientist) {
		return no("the scientist role: %s holds no desk role; ask an admin to add you to the scientists' group or the policy file", who.ID)
	}
	if act == ActStart {
		return ok
	}
	if Owned(rec) && rec.Owner == who.ID {
		return ok
	}
	owner := rec.Owner
	if !Owned(rec) {
		owner = "no one (an admin shares it)"
	}
	level := rec.Level(who.ID)
	switch act {
	case ActRead:
		if level == Read || level == Steer {
			return ok
		}
		return no("read access to session %s: it belongs to %s and is not shared with %s; ask them or an admin to share it", rec.SessionID, owner, who.ID)
	case ActSteer:
		if level == Steer {
			return ok
		}
		if level == Read {
			return no("steer access to session %s: %s may read it only; ask %s or an admin to share it for steering", rec.SessionID, who.ID, owner)
		}
		return no("steer access to session %s: it belongs to %s and is not shared with %s", rec.SessionID, owner, who.ID)
	case ActShare:
		return no("ownership of session %s: only %s or an admin shares it", rec.SessionID, owner)
	}
	return no("a known action (asked for %q)", act)
}

// Owned says whether a session has an owner to be its scientist at the desk: a session
// started without one (research.DefaultScientistID, "anonymous") belongs to no one who
// signs in under that name; it is an admin's to share.
func Owned(rec Record) bool {
	return rec.Owner != "" && rec.Owner != research.DefaultScientistID
}

// Share returns rec with who granted level by by at t, replacing any earlier grant of who;
// level "" revokes it. The owner needs no grant, and an identity is one line of text.
func Share(rec Record, who string, level Level, by string, t time.Time) (Record, error) {
	who = strings.TrimSpace(who)
	switch {
	case who == "":
		return rec, errors.New("share with whom? give an identity (an e-mail address as the desk shows it)")
	case len(who) > 320 || strings.ContainsAny(who, "\r\n\t"):
		return rec, errors.New("an identity is one line of at most 320 characters")
	case Owned(rec) && who == rec.Owner:
		return rec, fmt.Errorf("%s owns session %s and needs no grant", who, rec.SessionID)
	case level != "" && !slices.Contains(Levels, level):
		return rec, fmt.Errorf("level %q is not one of read, steer", level)
	}
	grants := slices.DeleteFunc(slices.Clone(rec.Grants), func(g Grant) bool { return g.Who == who })
	if level != "" {
		grants = append(grants, Grant{Who: who, Level: level, By: by, At: t.UTC().Format(time.RFC3339)})
	}
	rec.Grants = grants
	return rec, nil
}
