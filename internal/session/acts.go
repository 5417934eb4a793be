package session

// What a desk's signature of an act covers of its payload (internal/vouch): a digest the
// desk computes when it signs and the session computes when it records the act, from the
// same parse, so that a signature read from one act vouches for no act that carried
// something else.

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
)

// ActDigest is the digest of an act's payload, given as its parts.
func ActDigest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// Digest is the digest of a command's payload as ParseCommand read it, without its By
// and BySig (which the signature covers on their own) or what the session sets itself.
func (c Command) Digest() string {
	c.By, c.BySig, c.Update, c.Signs = "", "", "", ""
	b, _ := json.Marshal(c) // a struct of plain fields: its JSON is the same every time
	return ActDigest(c.Name, string(b))
}

// TextDigest is the digest of a question's text, as the session keeps it (trimmed).
func TextDigest(text string) string { return ActDigest(text) }

// ConfirmDigest is the digest of a confirmation: the proposal it names and the digest of
// the command it applies (research.ProposedCommand.Digest).
func ConfirmDigest(proposal, command string) string { return ActDigest(proposal, command) }
