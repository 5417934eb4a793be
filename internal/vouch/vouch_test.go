package vouch

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"
)

func randomKey(t *testing.T) *Key {
	secret := make([]byte, KeyLen)
	_, _ = rand.Read(secret)
	k, err := NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSignatureCoversTheAct: a signature vouches for the act it was made for, and for no
// other act of the same session: another kind, another payload, another update, another
// person or session, outside the window, or another desk's key.
func TestSignatureCoversTheAct(t *testing.T) {
	k := randomKey(t)
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	act := Act{Session: "s-1", Kind: "feedback", By: "ada@lab", Payload: "digest-of-toward-microglia", Update: "desk-1"}
	sig := k.Sign(act, at)
	change := func(f func(*Act)) Act { a := act; f(&a); return a }
	tests := []struct {
		name string
		act  Act
		sig  string
		at   time.Time
		key  *Key
		want bool
	}{
		{"as signed", act, sig, at.Add(2 * time.Second), k, true},
		{"recorded a little before the signature's time", act, sig, at.Add(-time.Minute), k, true},
		{"another session", change(func(a *Act) { a.Session = "s-2" }), sig, at, k, false},
		{"another person", change(func(a *Act) { a.By = "root@lab" }), sig, at, k, false},
		{"another kind of act", change(func(a *Act) { a.Kind = Ask }), sig, at, k, false},
		{"an edited payload", change(func(a *Act) { a.Payload = "digest-of-toward-astrocytes" }), sig, at, k, false},
		{"another update of the same session", change(func(a *Act) { a.Update = "desk-2" }), sig, at, k, false},
		{"no update id", change(func(a *Act) { a.Update = "" }), k.Sign(change(func(a *Act) { a.Update = "" }), at), at, k, false},
		{"long after", act, sig, at.Add(Skew + time.Second), k, false},
		{"long before", act, sig, at.Add(-Skew - time.Second), k, false},
		{"another desk's key", act, sig, at, randomKey(t), false},
		{"unsigned", act, "", at, k, false},
		{"garbage", act, "v2.x.y", at, k, false},
		{"the old format, by and time alone", act, "v1." + strings.TrimPrefix(sig, "v2."), at, k, false},
	}
	for _, tt := range tests {
		if got := tt.key.Verify(tt.act, tt.sig, tt.at); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestOf: what a page says of a recorded act: signed only when this key checks it, "not
// checked" where there is no key, never signed for a string nobody checked.
func TestOf(t *testing.T) {
	k := randomKey(t)
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	act := Act{Session: "s-1", Kind: Confirm, By: "ada@lab", Payload: "p", Update: "desk-1"}
	sig := k.Sign(act, at)
	recorded := at.Add(time.Second).Format(time.RFC3339)
	tests := []struct {
		name          string
		key           *Key
		sig, recorded string
		want          Check
	}{
		{"signed, checked", k, sig, recorded, Signed},
		{"no signature", k, "", recorded, Unsigned},
		{"no signature, no key", nil, "", recorded, Unsigned},
		{"a made-up string", k, "x", recorded, Unsigned},
		{"a made-up string, no key", nil, "x", recorded, Unchecked},
		{"no time recorded", k, sig, "", Unsigned},
		{"outside the window", k, sig, at.Add(Skew + time.Minute).Format(time.RFC3339), Unsigned},
	}
	for _, tt := range tests {
		if got := tt.key.Of(act, tt.sig, tt.recorded); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSecretFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if k, err := FromEnv(env(nil)); k != nil || err != nil {
		t.Errorf("no key: %v %v", k, err)
	}
	if k, err := FromEnv(env(map[string]string{"COSCI_DESK_KEY": strings.Repeat("ab", 32)})); k == nil || err != nil {
		t.Errorf("a hex key: %v", err)
	}
	if _, err := FromEnv(env(map[string]string{"COSCI_DESK_KEY": "short"})); err == nil {
		t.Error("a short key was accepted")
	}
}
