package keyring

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustNew(t *testing.T, id string) string {
	t.Helper()
	line, err := New(id)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// TestParse: a key file's mistakes are refused with the line and what to do.
func TestParse(t *testing.T) {
	good := mustNew(t, "k2")
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "# nothing\n\n", "holds no key"},
		{"one field", "k1", "want a key id and a base64 key"},
		{"short key", "k1 c2hvcnQ=", "is not 32 bytes"},
		{"not base64", "k1 !!!", "is not 32 bytes"},
		{"bad id", "k/1 " + strings.Fields(good)[1], "key id"},
		{"twice", good + "\n" + good, "given twice"},
	} {
		if _, err := Parse("keys.txt", tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
	k, err := Parse("keys.txt", "# cosci keys\n"+good+"\n"+mustNew(t, "k1")+"\n")
	if err != nil {
		t.Fatal(err)
	}
	if k.Current() != "k2" || strings.Join(k.IDs(), ",") != "k2,k1" {
		t.Errorf("current %s, ids %v; want k2 first", k.Current(), k.IDs())
	}
}

// TestRotation: the first key seals; after a new key is put first, what the old one
// sealed still opens; without the old key it is a clear error, never a wrong text.
func TestRotation(t *testing.T) {
	old, next := mustNew(t, "2026-05"), mustNew(t, "2026-11")
	before, _ := Parse("keys", old)
	id, sealed := before.Seal([]byte("unpublished goal"), []byte("s-1/plan.json"))
	if id != "2026-05" {
		t.Fatalf("sealed with %s", id)
	}
	after, _ := Parse("keys", next+"\n"+old)
	if got, err := after.Open(id, sealed, []byte("s-1/plan.json")); err != nil || string(got) != "unpublished goal" {
		t.Errorf("after rotation: %q, %v", got, err)
	}
	if id, _ := after.Seal([]byte("x"), nil); id != "2026-11" {
		t.Errorf("after rotation sealed with %s; want the new key", id)
	}
	only, _ := Parse("keys", next)
	var unknown *UnknownKeyError
	if _, err := only.Open(id, sealed, []byte("s-1/plan.json")); !errors.As(err, &unknown) || unknown.ID != "2026-05" {
		t.Errorf("without the old key: %v; want an UnknownKeyError naming 2026-05", err)
	}
	if _, err := after.Open(id, sealed, []byte("s-2/plan.json")); !errors.Is(err, ErrTampered) {
		t.Errorf("opened in another place: %v; want ErrTampered", err)
	}
}

// TestText: sealed text opens; a text written before encryption passes as it is.
func TestText(t *testing.T) {
	k, _ := Parse("keys", mustNew(t, "k"))
	s := k.SealText("Why do persisters survive?", []byte("goal"))
	if !strings.HasPrefix(s, "sealed:") || strings.Contains(s, "persisters") {
		t.Fatalf("sealed text %q", s)
	}
	for in, want := range map[string]string{s: "Why do persisters survive?", "plain old goal": "plain old goal", "sealed: by hand": "sealed: by hand", "": ""} {
		if got, err := k.OpenText(in, []byte("goal")); err != nil || got != want {
			t.Errorf("OpenText(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	var none *Keyring
	if _, err := none.OpenText(s, []byte("goal")); err == nil {
		t.Error("a process without keys opened a sealed text")
	}
}

// TestFromEnv: keys from a file or the environment; neither is no encryption; a file that
// cannot be read is an error at start.
func TestFromEnv(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte(mustNew(t, "f")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env     map[string]string
		current string
		err     string
	}{
		{env: nil},
		{env: map[string]string{"COSCI_KEYS_FILE": file}, current: "f"},
		{env: map[string]string{"COSCI_KEYS": mustNew(t, "a") + ";" + mustNew(t, "b")}, current: "a"},
		{env: map[string]string{"COSCI_KEYS_FILE": file + ".missing"}, err: "COSCI_KEYS_FILE"},
		{env: map[string]string{"COSCI_KEYS_FILE": file, "COSCI_KEYS": "x"}, err: "both"},
	} {
		k, err := FromEnv(func(key string) string { return tc.env[key] })
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v; want an error naming %s", tc.env, err, tc.err)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.env, err)
		case tc.current == "" && k != nil, tc.current != "" && (k == nil || k.Current() != tc.current):
			t.Errorf("%v: keyring %v; want current %q", tc.env, k, tc.current)
		}
	}
}
