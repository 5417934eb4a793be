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
	"runtime"
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
//
// A key file that other users of the machine may read or write (any group or other
// permission) is refused, as ssh refuses such a private key: whoever reads it reads every
// session. COSCI_KEYS_FILE_LAX=1 makes it a warning (to Warn) instead, for a file system
// that cannot keep modes.
func FromEnv(getenv func(string) string) (*Keyring, error) {
	file, inline := getenv("COSCI_KEYS_FILE"), getenv("COSCI_KEYS")
	switch {
	case file != "" && inline != "":
		return nil, errors.New("both COSCI_KEYS_FILE and COSCI_KEYS are set: give the keys one way")
	case file != "":
		if err := checkMode(file); err != nil {
			if getenv("COSCI_KEYS_FILE_LAX") != "1" {
				return nil, err
			}
			Warn("warning: " + err.Error())
		}
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

// Warn tells the person running the process about a key file FromEnv accepts only because
// COSCI_KEYS_FILE_LAX is set: on standard error, where the worker's log and the starter's
// messages go.
var Warn = func(msg string) { fmt.Fprintln(os.Stderr, msg) }

// checkMode refuses a key file whose mode lets other users read or change it. Windows
// keeps no such modes: there the file's ACL is the operator's to set.
func checkMode(file string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(file)
	if err != nil {
		return fmt.Errorf("COSCI_KEYS_FILE: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("COSCI_KEYS_FILE %s is open to other users of this machine (mode %04o), and whoever reads it reads every session: run `chmod 600 %s` (or set COSCI_KEYS_FILE_LAX=1 to only warn)", file, perm, file)
	}
	return nil
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

// The marker that starts a sealed blob says its form. A blob of the current form is
// sealed with the marker in the associated data, before what the caller binds it to: the
// form is authenticated, so a blob relabelled with the other marker does not open (a new
// record cannot be passed off as an old one to be read with the old, weaker binding).
// Blobs of the old form (version 1) were sealed with the caller's context alone; OpenBlob
// opens them with the context the caller gives for that form.
var (
	magicV1 = []byte("cosci-sealed-1\x00")
	magic   = []byte("cosci-sealed-2\x00")
)

// Form is how a byte string or a text stands: plain, sealed in the old form, or sealed.
type Form int

const (
	Plain  Form = iota // not sealed at all
	Old                // sealed before the form was authenticated (version 1)
	Sealed             // sealed as SealBlob and SealText seal now
)

// BlobForm says whether b is a blob SealBlob made, and in which form.
func BlobForm(b []byte) Form {
	switch {
	case bytes.HasPrefix(b, magic):
		return Sealed
	case bytes.HasPrefix(b, magicV1):
		return Old
	}
	return Plain
}

// SealBlob seals plain into one self-describing byte string: a marker, the key id and the
// ciphertext, bound to the marker and to context. The session store keeps records this way.
func (k *Keyring) SealBlob(plain, context []byte) []byte {
	id, sealed := k.Seal(plain, append(append([]byte(nil), magic...), context...))
	out := make([]byte, 0, len(magic)+1+len(id)+len(sealed))
	out = append(append(append(out, magic...), byte(len(id))), id...)
	return append(out, sealed...)
}

// IsSealed says whether b is a blob SealBlob made, in either form.
func IsSealed(b []byte) bool { return BlobForm(b) != Plain }

// OpenBlob opens what SealBlob made, given the context it was sealed with: for a blob of
// the old form, the context that form was sealed with. A nil keyring opens nothing sealed.
func (k *Keyring) OpenBlob(b, context []byte) ([]byte, error) {
	form := BlobForm(b)
	if form == Plain {
		return nil, ErrTampered
	}
	rest := b[len(magic):] // both markers are as long
	if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
		return nil, ErrTampered
	}
	id := string(rest[1 : 1+int(rest[0])])
	if k == nil {
		return nil, &UnknownKeyError{ID: id}
	}
	if form == Sealed {
		context = append(append([]byte(nil), magic...), context...)
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

// TextForm says whether s is a text SealText made, and in which form.
func TextForm(s string) Form {
	if !strings.HasPrefix(s, textPrefix) {
		return Plain
	}
	b, err := base64.RawStdEncoding.DecodeString(s[len(textPrefix):])
	if err != nil {
		return Plain // a text that merely starts like one
	}
	return BlobForm(b)
}

// OpenText opens what SealText made, given the context it was sealed with (for a text of
// the old form, that form's); any other string is returned as it is (a text written before
// encryption was turned on: whoever expects only sealed texts checks TextForm first).
func (k *Keyring) OpenText(s string, context []byte) (string, error) {
	if TextForm(s) == Plain {
		return s, nil
	}
	b, _ := base64.RawStdEncoding.DecodeString(s[len(textPrefix):])
	plain, err := k.OpenBlob(b, context)
	return string(plain), err
}
