package lineage

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Session ids, generated: the starter and the desk name new sessions the same way.

// MaxSlugLength bounds the readable part of a generated session ID.
const MaxSlugLength = 40

// Slug makes the readable part of a session ID from a goal: lowercase a-z, 0-9 and '-',
// at most MaxSlugLength characters, cut at a word boundary when one is near.
func Slug(goal string) string {
	var b strings.Builder
	gap := false
	for _, r := range strings.ToLower(goal) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if gap && b.Len() > 0 {
				b.WriteByte('-')
			}
			gap = false
			b.WriteRune(r)
		} else {
			gap = true
		}
		if b.Len() > MaxSlugLength {
			break
		}
	}
	s := b.String()
	if len(s) > MaxSlugLength {
		s = s[:MaxSlugLength]
		if i := strings.LastIndexByte(s, '-'); i >= MaxSlugLength/2 && b.String()[MaxSlugLength] != '-' {
			s = s[:i]
		}
	}
	if s = strings.Trim(s, "-"); s == "" {
		return "session"
	}
	return s
}

// NewSessionID is the goal's slug and 8 random hex digits, so two sessions on the same goal
// never collide. It is the default id of a deployment without keys, whose research is
// readable anyway; with keys, NewSealedID names sessions.
func NewSessionID(goal string) string { return Slug(goal) + "-" + RandomHex(4) }

// NewSealedID is the default id of a session or schedule when the lab's research is
// encrypted: prefix and 16 random hex digits. The id is the workflow id, which Temporal
// never encodes: it sits in clear in the history, in visibility, in the ConversationId and
// ParentSession search attributes, in the ids of the session's forks and continuations
// (which derive from it), in the store's paths, in webhooks and in logs. So it says
// nothing of the goal. It is random rather than a keyed hash of the goal: two sessions on
// one goal must not collide (a hash would need a random part anyway), equal hashes would
// still tell a reader of visibility which sessions share a goal, and an id that moved with
// the key would change under a key rotation. Nothing looks a session up by its goal:
// continuations and forks are named from the parent's id (internal/lineage).
func NewSealedID(prefix string) string { return prefix + RandomHex(8) }

// RandomHex is n random bytes in hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
