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

// sealV1 seals as SealBlob did before the form was authenticated: the old marker, and the
// context alone as the associated data.
func sealV1(k *Keyring, plain, context []byte) []byte {
	id, sealed := k.Seal(plain, context)
	return append(append(append(append([]byte(nil), magicV1...), byte(len(id))), id...), sealed...)
}

// TestForms: a blob says its form; one of the old form opens with the context it was
// sealed with; a new blob relabelled as old does not open with the old form's context (or
// any), nor an old one relabelled as new: the form cannot be downgraded to move a record.
func TestForms(t *testing.T) {
	k, _ := Parse("keys", mustNew(t, "k"))
	oldCtx, newCtx := []byte("hypotheses/h-1.json"), []byte("s-1\x00hypotheses/h-1.json")
	old := sealV1(k, []byte("old text"), oldCtx)
	cur := k.SealBlob([]byte("new text"), newCtx)
	for _, tc := range []struct {
		b    []byte
		want Form
	}{{[]byte(`{"id": "h-1"}`), Plain}, {old, Old}, {cur, Sealed}} {
		if got := BlobForm(tc.b); got != tc.want {
			t.Errorf("BlobForm(%.20q) = %v; want %v", tc.b, got, tc.want)
		}
	}
	if got, err := k.OpenBlob(old, oldCtx); err != nil || string(got) != "old text" {
		t.Errorf("old form: %q, %v", got, err)
	}
	if got, err := k.OpenBlob(cur, newCtx); err != nil || string(got) != "new text" {
		t.Errorf("new form: %q, %v", got, err)
	}
	relabel := func(b, marker []byte) []byte { return append(append([]byte(nil), marker...), b[len(marker):]...) }
	down, up := relabel(cur, magicV1), relabel(old, magic)
	for name, tc := range map[string]struct{ b, ctx []byte }{
		"new as old, old context": {down, oldCtx},
		"new as old, new context": {down, newCtx},
		"old as new, old context": {up, oldCtx},
		"new, moved":              {cur, []byte("s-2\x00hypotheses/h-1.json")},
	} {
		if got, err := k.OpenBlob(tc.b, tc.ctx); !errors.Is(err, ErrTampered) {
			t.Errorf("%s: %q, %v; want ErrTampered", name, got, err)
		}
	}
	s := k.SealText("a goal", []byte("goal"))
	if TextForm(s) != Sealed || TextForm("a goal") != Plain || TextForm("sealed: by hand") != Plain {
		t.Errorf("TextForm: %v, %v, %v", TextForm(s), TextForm("a goal"), TextForm("sealed: by hand"))
	}
}

// TestKeyFileMode: a key file other users may read or change is refused with the chmod
// that fixes it; with COSCI_KEYS_FILE_LAX=1 it is read, with a warning.
func TestKeyFileMode(t *testing.T) {
	var warned []string
	defer func(w func(string)) { Warn = w }(Warn)
	Warn = func(msg string) { warned = append(warned, msg) }
	for _, tc := range []struct {
		mode os.FileMode
		lax  bool
		err  bool
	}{
		{mode: 0o600}, {mode: 0o400},
		{mode: 0o644, err: true}, {mode: 0o640, err: true}, {mode: 0o604, err: true}, {mode: 0o620, err: true},
		{mode: 0o644, lax: true},
	} {
		file := filepath.Join(t.TempDir(), "keys")
		if err := os.WriteFile(file, []byte(mustNew(t, "f")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(file, tc.mode); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"COSCI_KEYS_FILE": file}
		if tc.lax {
			env["COSCI_KEYS_FILE_LAX"] = "1"
		}
		warned = nil
		k, err := FromEnv(func(key string) string { return env[key] })
		switch {
		case tc.err:
			if err == nil || !strings.Contains(err.Error(), "chmod 600 "+file) {
				t.Errorf("mode %04o: %v; want an error saying chmod 600 %s", tc.mode, err, file)
			}
		case err != nil || k == nil:
			t.Errorf("mode %04o (lax %v): %v", tc.mode, tc.lax, err)
		case tc.lax && (len(warned) != 1 || !strings.Contains(warned[0], "chmod 600")):
			t.Errorf("mode %04o, lax: warned %q; want one warning with the chmod", tc.mode, warned)
		case !tc.lax && len(warned) > 0:
			t.Errorf("mode %04o: warned %q", tc.mode, warned)
		}
	}
}
