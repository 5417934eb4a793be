package store

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMigrateAppliedOnceBetweenRacers: workers starting at once on an empty database
// race to set up the schema; exactly one applies each version, and all of them start.
func TestMigrateAppliedOnceBetweenRacers(t *testing.T) {
	url := newDatabase(t)
	const racers = 8
	ps := make([]*Postgres, racers)
	for i := range racers {
		// Connect without migrating, so that the Migrate calls below race.
		p, err := connectPostgres(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		ps[i] = p
	}
	var wg sync.WaitGroup
	applied := make([][]int, racers)
	errs := make([]error, racers)
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied[i], errs[i] = p.Migrate(t.Context())
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for i := range racers {
		if errs[i] != nil {
			t.Fatalf("racer %d: %v", i, errs[i])
		}
		for _, v := range applied[i] {
			count[v]++
		}
	}
	for v := 1; v < len(migrations); v++ {
		if count[v] != 1 {
			t.Errorf("schema version %d applied %d times, want once", v, count[v])
		}
	}
	var rows int
	if err := ps[0].pool.QueryRow(t.Context(), `SELECT count(*) FROM cosci_schema`).Scan(&rows); err != nil || rows != len(migrations)-1 {
		t.Errorf("cosci_schema holds %d rows (%v), want %d", rows, err, len(migrations)-1)
	}
	if again, err := ps[0].Migrate(t.Context()); err != nil || len(again) != 0 {
		t.Errorf("Migrate on an up-to-date database applied %v, %v; want nothing", again, err)
	}
}

// TestOpenUnreachable: a database that does not answer gives an error that names the URL,
// hides the password and says what to do.
func TestOpenUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// Port 1 on loopback: nothing listens there.
	_, err := Open(ctx, "postgres://cosci:s3cret-pw@127.0.0.1:1/cosci?sslmode=disable&connect_timeout=5")
	if err == nil {
		t.Fatal("Open of an unreachable database succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"127.0.0.1:1", "cosci", "start the database", "COSCI_STORE"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(msg, "s3cret-pw") {
		t.Errorf("error %q shows the password", msg)
	}
	if _, err := Open(ctx, "postgres://cosci:s3cret-pw@127.0.0.1:1/cosci?sslmode=bogus"); err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("a malformed URL: err = %v; want an error without the password", err)
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://cosci:pw@db:5432/cosci?sslmode=disable", "postgres://cosci:xxxxx@db:5432/cosci?sslmode=disable"},
		{"postgres://cosci@db/cosci", "postgres://cosci@db/cosci"},
		{"postgresql://db/cosci", "postgresql://db/cosci"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
