package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cosci-dev/cosci/internal/vouch"
)

// KeyLen is the length of the desk's secret key, in bytes.
const KeyLen = vouch.KeyLen

// Key is the desk's secret: it seals the sign-in cookies (AES-256-GCM: nobody reads or
// forges them) and derives the forms' CSRF tokens. It comes from the environment, so a
// restarted desk, or another replica, reads the cookies the last one wrote.
type Key struct {
	seal cipher.AEAD
	csrf []byte
	acts *vouch.Key // signs who did what to which session
}

// KeyFromEnv reads the key from COSCI_DESK_KEY_FILE (a file holding it) or COSCI_DESK_KEY:
// 32 bytes, in hex or base64 (make one with: openssl rand -hex 32). found is false when
// neither is set.
func KeyFromEnv(getenv func(string) string) (k *Key, found bool, err error) {
	raw, found, err := vouch.SecretFromEnv(getenv)
	if err != nil || !found {
		return nil, found, err
	}
	k, err = NewKey(raw)
	return k, true, err
}

// RandomKey is a key for this process alone: the local mode's, when none is given.
// Restarting the desk then signs nobody out (the local user needs no cookie), but forms
// open in a browser need a reload.
func RandomKey() *Key {
	raw := make([]byte, KeyLen)
	_, _ = rand.Read(raw)
	k, _ := NewKey(raw)
	return k
}

// NewKey derives the sealing and CSRF keys from a secret of KeyLen bytes.
func NewKey(secret []byte) (*Key, error) {
	if len(secret) != KeyLen {
		return nil, fmt.Errorf("auth: key is %d bytes, want %d", len(secret), KeyLen)
	}
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("cosci desk " + label))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(derive("cookie"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	acts, err := vouch.NewKey(secret)
	if err != nil {
		return nil, err
	}
	return &Key{seal: aead, csrf: derive("csrf"), acts: acts}, nil
}

// Seal encrypts v for the cookie name until exp: the name is authenticated with it, so a
// value cannot move from one cookie to another.
func (k *Key) Seal(name string, v any, exp time.Time) (string, error) {
	body, err := json.Marshal(struct {
		Exp int64 `json:"exp"`
		V   any   `json:"v"`
	}{exp.Unix(), v})
	if err != nil {
		return "", err
	}
	nonce := make([]byte, k.seal.NonceSize())
	_, _ = rand.Read(nonce)
	out := k.seal.Seal(nonce, nonce, body, []byte(name))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// errCookie is any cookie that does not open: forged, damaged, expired, or sealed with
// another key.
var errCookie = errors.New("auth: cookie does not open")

// Open decrypts a sealed cookie value into v, if it has not expired at now.
func (k *Key) Open(name, value string, now time.Time, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < k.seal.NonceSize() {
		return errCookie
	}
	body, err := k.seal.Open(nil, raw[:k.seal.NonceSize()], raw[k.seal.NonceSize():], []byte(name))
	if err != nil {
		return errCookie
	}
	var env struct {
		Exp int64           `json:"exp"`
		V   json.RawMessage `json:"v"`
	}
	if err := json.Unmarshal(body, &env); err != nil || now.Unix() >= env.Exp {
		return errCookie
	}
	if err := json.Unmarshal(env.V, v); err != nil {
		return errCookie
	}
	return nil
}

// CSRF is the token every form of this signed-in person carries: bound to who they are
// and to this sign-in (nonce), so a token from another person or another sign-in fails.
func (k *Key) CSRF(id, nonce string) string {
	m := hmac.New(sha256.New, k.csrf)
	m.Write([]byte(id + "\x00" + nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF says whether token is the CSRF token of id and nonce.
func (k *Key) CheckCSRF(id, nonce, token string) bool {
	return equal(k.CSRF(id, nonce), token)
}

// equal compares two secrets in constant time.
func equal(a, b string) bool { return hmac.Equal([]byte(a), []byte(b)) }

// Acts is the key that signs the acts of signed-in people on sessions (internal/vouch).
func (k *Key) Acts() *vouch.Key { return k.acts }

// random is n random bytes, URL-safe.
func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
