// Package keyring holds the keys that encrypt a lab's research: the goals, hypotheses,
// reviews and tool results cosci keeps in Temporal's history (through the payload codec)
// and in the session store. It is AES-256-GCM with a key id beside every sealed text, so
// that keys rotate: the first key of a keyring seals, and every key in it opens what it
// sealed, until the last text it sealed is gone.
//
// A key file has one key per line, an id and the key in standard base64 (32 bytes), the
// sealing key first; blank lines and lines starting with # are ignored:
//
//	# cosci keys: the first seals; keep the older ones until nothing sealed with them is left
//	2026-11 q5i0v8y3...=
//	2026-05 Zx01mW9q...=
package keyring

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Keyring is a set of keys by id, one of which seals.
type Keyring struct {
	current string
	aeads   map[string]cipher.AEAD
	ids     []string
}

// KeySize is the length of a key: AES-256.
const KeySize = 32

var validID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Parse reads keys in the key file's format; what names them in errors is where they
// came from (a file, an environment variable).
func Parse(what, text string) (*Keyring, error) {
	k := &Keyring{aeads: map[string]cipher.AEAD{}}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s, line %d: want a key id and a base64 key, separated by a space", what, n+1)
		}
		id, encoded := fields[0], fields[1]
		if !validID.MatchString(id) {
			return nil, fmt.Errorf("%s, line %d: key id %q: use letters, digits, '.', '_' or '-'", what, n+1, id)
		}
		if _, dup := k.aeads[id]; dup {
			return nil, fmt.Errorf("%s, line %d: key id %s is given twice", what, n+1, id)
		}
		key, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil || len(key) != KeySize {
			return nil, fmt.Errorf("%s, line %d: key %s is not %d bytes in base64 (make one with `starter keygen`)", what, n+1, id, KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.aeads[id] = aead
		k.ids = append(k.ids, id)
		if k.current == "" {
			k.current = id
		}
	}
	if k.current == "" {
		return nil, fmt.Errorf("%s holds no key", what)
	}
	return k, nil
}

// FromEnv reads the keyring the environment names: COSCI_KEYS_FILE, a key file, or
// COSCI_KEYS, the keys themselves (lines, or pairs separated by ';'). Neither set means no
// encryption: nil, nil. A file that cannot be read or keys that do not parse are an error,
// so that a process never starts with encryption half set up.
func FromEnv(getenv func(string) string) (*Keyring, error) {
	file, inline := getenv("COSCI_KEYS_FILE"), getenv("COSCI_KEYS")
	switch {
	case file != "" && inline != "":
		return nil, errors.New("both COSCI_KEYS_FILE and COSCI_KEYS are set: give the keys one way")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("COSCI_KEYS_FILE: %w", err)
		}
		return Parse("COSCI_KEYS_FILE "+file, string(b))
	case inline != "":
		return Parse("COSCI_KEYS", strings.ReplaceAll(inline, ";", "\n"))
	}
	return nil, nil
}

// New makes a key, in the key file's format: a line to add at the top of the file.
func New(id string) (string, error) {
	if !validID.MatchString(id) {
		return "", fmt.Errorf("key id %q: use letters, digits, '.', '_' or '-'", id)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	return id + " " + base64.StdEncoding.EncodeToString(key), nil
}

// Current is the id of the key that seals.
func (k *Keyring) Current() string { return k.current }

// IDs are the keyring's key ids, the sealing one first.
func (k *Keyring) IDs() []string { return append([]string(nil), k.ids...) }

// Seal encrypts plain with the current key, bound to context (which Open must be given
// again: a record's place, say, so that a sealed record copied elsewhere does not open).
// It returns the key id and nonce||ciphertext.
func (k *Keyring) Seal(plain, context []byte) (id string, sealed []byte) {
	aead := k.aeads[k.current]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on a supported platform
	}
	return k.current, aead.Seal(nonce, nonce, plain, context)
}

// UnknownKeyError is a text sealed with a key the keyring lacks.
type UnknownKeyError struct{ ID string }

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("sealed with key %s, which this process does not have: add it to COSCI_KEYS_FILE (keys rotate by adding the new one first and keeping the old)", e.ID)
}

// ErrTampered is a sealed text that does not open with its key: damaged, or moved from
// where it was sealed.
var ErrTampered = errors.New("a sealed text does not open with its key: it was damaged, or moved from where it was sealed")

// Open decrypts what Seal returned with the key id, given the same context.
func (k *Keyring) Open(id string, sealed, context []byte) ([]byte, error) {
	aead, ok := k.aeads[id]
	if !ok {
		return nil, &UnknownKeyError{ID: id}
	}
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrTampered
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], context)
	if err != nil {
		return nil, ErrTampered
	}
	return plain, nil
}

// magic starts every sealed blob: what SealBlob returns.
var magic = []byte("cosci-sealed-1\x00")

// SealBlob seals plain into one self-describing byte string: a marker, the key id and the
// ciphertext. The session store keeps records this way.
func (k *Keyring) SealBlob(plain, context []byte) []byte {
	id, sealed := k.Seal(plain, context)
	out := make([]byte, 0, len(magic)+1+len(id)+len(sealed))
	out = append(append(append(out, magic...), byte(len(id))), id...)
	return append(out, sealed...)
}

// IsSealed says whether b is a blob SealBlob made.
func IsSealed(b []byte) bool { return bytes.HasPrefix(b, magic) }

// OpenBlob opens what SealBlob made. A nil keyring opens nothing sealed.
func (k *Keyring) OpenBlob(b, context []byte) ([]byte, error) {
	rest := b[len(magic):]
	if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
		return nil, ErrTampered
	}
	id := string(rest[1 : 1+int(rest[0])])
	if k == nil {
		return nil, &UnknownKeyError{ID: id}
	}
	return k.Open(id, rest[1+int(rest[0]):], context)
}

// textPrefix marks a sealed string: what SealText returns.
const textPrefix = "sealed:"

// SealText seals a string into a string (the blob in base64 after a marker), for fields
// kept as text: an event's detail, a session's goal in the index.
func (k *Keyring) SealText(s string, context []byte) string {
	if s == "" {
		return ""
	}
	return textPrefix + base64.RawStdEncoding.EncodeToString(k.SealBlob([]byte(s), context))
}

// OpenText opens what SealText made; any other string is returned as it is (a record
// written before encryption was turned on).
func (k *Keyring) OpenText(s string, context []byte) (string, error) {
	if !strings.HasPrefix(s, textPrefix) {
		return s, nil
	}
	b, err := base64.RawStdEncoding.DecodeString(s[len(textPrefix):])
	if err != nil || !IsSealed(b) {
		return s, nil // a text that merely starts like one
	}
	plain, err := k.OpenBlob(b, context)
	return string(plain), err
}
