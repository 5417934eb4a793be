package store

import (
	"bytes"
	"context"
	"math/rand/v2"
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

// TestRedact: no form a PostgreSQL location takes shows its password, and what is not a
// secret stays as written. Before, ?password= and every keyword/value form came back whole.
func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://cosci:pw@db:5432/cosci?sslmode=disable", "postgres://cosci:xxxxx@db:5432/cosci?sslmode=disable"},
		{"postgres://cosci@db/cosci", "postgres://cosci@db/cosci"},
		{"postgresql://db/cosci", "postgresql://db/cosci"},
		{"postgres://db/cosci?sslmode=verify-full&password=s3cret-pw", "postgres://db/cosci?sslmode=verify-full&password=xxxxx"},
		{"postgres://db/cosci?PassWord=s3cret-pw", "postgres://db/cosci?PassWord=xxxxx"},
		{"postgres://db/cosci?pass%77ord=s3cret-pw&application_name=me@lab", "postgres://db/cosci?pass%77ord=xxxxx&application_name=me@lab"},
		{"postgres://db/cosci?sslkey=/etc/k.pem&sslpassword=s3cret-pw&passfile=/home/c/.pgpass", "postgres://db/cosci?sslkey=/etc/k.pem&sslpassword=xxxxx&passfile=/home/c/.pgpass"},
		{"postgres://cosci:pw@db1:5432,db2:5432/cosci?password=s3cret-pw", "postgres://cosci:xxxxx@db1:5432,db2:5432/cosci?password=xxxxx"},
		// Malformed: an unescaped '/', '#' or ':' in the password; masked up to the last '@'.
		{"postgres://cosci:s3c/ret-pw@db/cosci", "postgres://cosci:xxxxx@db/cosci"},
		{"postgres://cosci:12/s3cret-pw@db/cosci", "postgres://cosci:xxxxx@db/cosci"},
		{"postgres://cosci:s3c#ret-pw@db/cosci", "postgres://cosci:xxxxx@db/cosci"},
		{"postgres://cosci:12?s3cret-pw@db/cosci", "postgres://cosci:xxxxx@db/cosci"},
		// An '@' in a parameter leaves the userinfo's end in doubt: masked up to it.
		{"postgres://db:5432/cosci?application_name=me@lab&password=s3cret-pw", "postgres://db:xxxxx@lab&password=xxxxx"},
		{"postgres://[db?x]/cosci?password=s3cret-pw super&sslmode=disable", "postgres://[db?x]/cosci?password=xxxxx&sslmode=disable"},
		// libpq's keyword/value form.
		{"host=db user=cosci password=s3cret-pw dbname=cosci", "host=db user=cosci password=xxxxx dbname=cosci"},
		{"host=db password = 's3cret pw' dbname=cosci", "host=db password = xxxxx dbname=cosci"},
		{`host=db password='s3cret\' pw' sslpassword=s3cret-pw sslkey=/etc/k.pem`, "host=db password=xxxxx sslpassword=xxxxx sslkey=/etc/k.pem"},
		{"host=db PASSWORD='s3cret pw", "host=db PASSWORD=xxxxx"},
		{"host=db password=s3cret'pw dbname=cosci", "host=db password=xxxxx dbname=cosci"},
		// A directory is not touched.
		{".data/sessions", ".data/sessions"},
		{"/srv/cosci/store 100%", "/srv/cosci/store 100%"},
	}
	for _, tt := range tests {
		got := Redact(tt.in)
		if got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
		for _, secret := range []string{"s3c", "ret-pw", "pw'", "pw@"} {
			if strings.Contains(got, secret) {
				t.Errorf("Redact(%q) = %q shows %q", tt.in, got, secret)
			}
		}
	}
}

// TestRedactNeverShowsAPassword: passwords of every character a URL or a keyword/value
// string can hold, unescaped as people paste them, in every place a password goes; none
// shows in Redact's answer (seeded, so a failure repeats).
func TestRedactNeverShowsAPassword(t *testing.T) {
	forms := []string{
		"postgres://u:%s@h/db", "postgresql://u:%s@h:5432/db?sslmode=disable", "postgres://u:%s@h1:1,h2:2/db?application_name=a@b",
		"postgres://h/db?password=%s", "postgres://h/db?sslmode=disable&sslpassword=%s&connect_timeout=5",
		"host=h password=%s dbname=d", "host=h password='%s' dbname=d",
	}
	const chars = "abXZ09:/?#@&=%{} '\\"
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		pw := []byte("Q7")
		for range 1 + r.IntN(8) {
			pw = append(pw, chars[r.IntN(len(chars))])
		}
		pw = append(pw, "Z9"...)
		form := forms[r.IntN(len(forms))]
		switch {
		case strings.Contains(form, "?password=") || strings.Contains(form, "&sslpassword="):
			// '&' ends a parameter's value, as pgx reads it: the rest is another parameter.
			pw = bytes.ReplaceAll(pw, []byte("&"), []byte("a"))
		case strings.Contains(form, "'%s'"):
			// Quoted, as libpq writes it: backslashes doubled, quotes escaped.
			pw = bytes.ReplaceAll(bytes.ReplaceAll(pw, []byte(`\`), []byte(`\\`)), []byte("'"), []byte(`\'`))
		case strings.Contains(form, "password=%s"):
			pw = bytes.Map(func(c rune) rune {
				if strings.ContainsRune(" '\\", c) {
					return 'a'
				}
				return c
			}, pw)
		}
		loc := strings.Replace(form, "%s", string(pw), 1)
		if got := Redact(loc); strings.Contains(got, "Q7") || strings.Contains(got, "Z9") {
			t.Fatalf("Redact(%q) = %q", loc, got)
		}
	}
}

// TestRedactTrims: a location with a stray space is read as the database it names, and its
// password stays masked.
func TestRedactTrims(t *testing.T) {
	const loc = " postgres://cosci:hunter2@db/cosci\n"
	if !IsDatabase(loc) || strings.Contains(Redact(loc), "hunter2") {
		t.Errorf("IsDatabase(%q) = %v, Redact = %q", loc, IsDatabase(loc), Redact(loc))
	}
}
