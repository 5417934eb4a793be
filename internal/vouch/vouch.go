// Package vouch is a desk's word that a signed-in person did one act on one session: the
// signature the desk sends beside the "by" of every command, question and confirmation,
// which the session records with the act, and which a page (the desk's, `starter
// history`) checks before it shows the name as the one who did it.
//
// A signature covers the whole act: the session, the kind of act (a command's name, Ask,
// Confirm), who, a digest of what it carried (session.Command.Digest, session.TextDigest,
// session.ConfirmDigest) and the Temporal update id the desk sent it as, which the session
// records; and the time it was made, which must be within Skew of when the session
// recorded the act. So a signature read from one act does not vouch for another act of
// the same session, another kind of act, the same act with another payload, or the same
// act sent again later as a new update.
//
// What it does not prove: that no other client of the Temporal namespace wrote the
// history. A worker, or an admin of the namespace, can write any event, signed or not;
// the signature shows only that a desk with the key signed such an act, not that the
// record of it came from that desk.
package vouch

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The kinds of act besides the commands (which are named by the command: "feedback",
// "answer-tool", "trust-tool", ...).
const (
	Ask     = "ask"
	Confirm = "confirm"
)

// Skew is how far from the signature's time a recorded act may be and still be the signed
// one: an update is recorded when the session takes it, within the desk's wait.
const Skew = 10 * time.Minute

// Act is what a signature covers.
type Act struct {
	Session string
	Kind    string // the command's name, Ask or Confirm
	By      string
	Payload string // the digest of what the act carried
	Update  string // the Temporal update id that carried it
}

// version is the signatures' format: "v2.<unix seconds>.<MAC>". v1 signed the session, By
// and the time alone, so it is no signature of an act: a v1 string verifies as nothing.
const version = "v2"

// Key signs and checks acts; it is derived from the desk's key.
type Key struct{ mac []byte }

// KeyLen is the length of the desk's secret, in bytes.
const KeyLen = 32

// NewKey derives the signing key from the desk's secret of KeyLen bytes.
func NewKey(secret []byte) (*Key, error) {
	if len(secret) != KeyLen {
		return nil, fmt.Errorf("the desk's key is %d bytes, want %d", len(secret), KeyLen)
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("cosci desk act"))
	return &Key{mac: m.Sum(nil)}, nil
}

// SecretFromEnv reads the desk's secret from COSCI_DESK_KEY_FILE (a file holding it) or
// COSCI_DESK_KEY: KeyLen bytes in hex or base64. found is false when neither is set.
func SecretFromEnv(getenv func(string) string) (secret []byte, found bool, err error) {
	text := getenv("COSCI_DESK_KEY")
	if file := getenv("COSCI_DESK_KEY_FILE"); file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, true, fmt.Errorf("COSCI_DESK_KEY_FILE: %w", err)
		}
		text = string(b)
	}
	if text = strings.TrimSpace(text); text == "" {
		return nil, false, nil
	}
	raw, err := hex.DecodeString(text)
	if err != nil {
		raw, err = base64.StdEncoding.DecodeString(text)
	}
	if err != nil || len(raw) != KeyLen {
		return nil, true, fmt.Errorf("the desk's key must be %d bytes in hex or base64 (make one with: openssl rand -hex 32)", KeyLen)
	}
	return raw, true, nil
}

// FromEnv is the act key of the desk's secret in the environment (SecretFromEnv); nil,
// with no error, when none is set.
func FromEnv(getenv func(string) string) (*Key, error) {
	secret, found, err := SecretFromEnv(getenv)
	if err != nil || !found {
		return nil, err
	}
	return NewKey(secret)
}

// Sign vouches that a.By did act a at t.
func (k *Key) Sign(a Act, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return version + "." + ts + "." + k.sum(a, ts)
}

// Verify says whether sig is this key's signature of act a, made within Skew of recorded
// (when the session recorded the act). An act with no update id is none a desk sent.
func (k *Key) Verify(a Act, sig string, recorded time.Time) bool {
	v, rest, ok := strings.Cut(sig, ".")
	ts, mac, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || v != version || a.Update == "" || a.By == "" {
		return false
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || !hmac.Equal([]byte(k.sum(a, ts)), []byte(mac)) {
		return false
	}
	d := recorded.Sub(time.Unix(unix, 0))
	return d <= Skew && d >= -Skew
}

func (k *Key) sum(a Act, ts string) string {
	m := hmac.New(sha256.New, k.mac)
	for _, part := range []string{a.Session, a.Kind, a.By, a.Payload, a.Update, ts} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Check is what a page says of a recorded act's "by".
type Check int

const (
	// Unsigned: no signature, or one that is not of this act (the page says "not signed").
	Unsigned Check = iota
	// Signed: a desk with this key signed this very act.
	Signed
	// Unchecked: a signature the page has no key to check ("signature not checked").
	Unchecked
)

// Of checks a recorded act's signature with k, which may be nil (no key here): an act
// with a signature is then Unchecked, never Signed. recorded is the session's RFC 3339
// time of the act.
func (k *Key) Of(a Act, sig, recorded string) Check {
	switch {
	case sig == "":
		return Unsigned
	case k == nil:
		return Unchecked
	}
	at, err := time.Parse(time.RFC3339Nano, recorded)
	if err != nil || !k.Verify(a, sig, at) {
		return Unsigned
	}
	return Signed
}
