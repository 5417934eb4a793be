package store

import (
	"strings"
	"testing"
	"time"
)

func TestSignOuts(t *testing.T) { eachStore(t, testSignOuts) }

// testSignOuts: the desk's sign-outs round-trip, apart from every session.
func testSignOuts(t *testing.T, s *Store) {
	ctx := tctx(t)
	ada := "ada@lab"
	long := "https://login.lab.example#" + strings.Repeat("x", 400) // an issuer and subject longer than a name may be
	if out, err := s.SignedOut(ctx, "sid-1"); err != nil || out {
		t.Fatalf("before any sign-out: %v, %v", out, err)
	}
	if err := s.SignOut(ctx, ada, "sid-1", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for sid, want := range map[string]bool{"sid-1": true, "sid-2": false} {
		if out, err := s.SignedOut(ctx, sid); err != nil || out != want {
			t.Errorf("SignedOut(%s) = %v, %v; want %v", sid, out, err, want)
		}
	}
	at := time.Date(2026, 11, 28, 9, 0, 0, 123456789, time.UTC)
	for _, person := range []string{ada, long} {
		if b, err := s.SignedOutBefore(ctx, person); err != nil || !b.IsZero() {
			t.Fatalf("%.20s before sign out everywhere: %v, %v", person, b, err)
		}
		if err := s.SignOutEverywhere(ctx, person, "root@lab", at); err != nil {
			t.Fatal(err)
		}
		if b, err := s.SignedOutBefore(ctx, person); err != nil || !b.Equal(at) {
			t.Errorf("%.20s: SignedOutBefore = %v, %v; want %v", person, b, err, at)
		}
	}
	if b, _ := s.SignedOutBefore(ctx, "bob@lab"); !b.IsZero() {
		t.Errorf("bob was signed out everywhere with ada: %v", b)
	}
	if rows, err := s.Sessions(ctx); err != nil || len(rows) != 0 {
		t.Errorf("the sign-outs show as sessions: %v, %v", rows, err)
	}
}
