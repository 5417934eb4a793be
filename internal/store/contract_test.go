package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cosci-dev/cosci/internal/keyring"
	"github.com/cosci-dev/cosci/internal/pgtest"
)

// pg is this package's private PostgreSQL server (TestMain): every test of the contract
// runs against a Dir and against a fresh database on it.
var pg *pgtest.Server

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	var err error
	if pg, err = pgtest.Start(""); err != nil {
		fmt.Fprintln(os.Stderr, "store tests:", err)
		return 1
	}
	code := m.Run()
	if err := pg.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "store tests: stopping PostgreSQL:", err)
	}
	return code
}

var databases atomic.Int64

// newDatabase creates an empty database on the package's server and returns its URL.
func newDatabase(t testing.TB) string {
	t.Helper()
	url, err := pg.CreateDatabase(t.Context(), fmt.Sprintf("store_%d", databases.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// openPostgres is a Store on a fresh database.
func openPostgres(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.Context(), newDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// dirStore is a Store on a Dir, with the Dir's paths at hand for the tests that look at files.
type dirStore struct {
	*Store
	dir *Dir
}

func (d dirStore) Root() string                { return d.dir.Root() }
func (d dirStore) SessionDir(id string) string { return d.dir.SessionDir(id) }

// open is a Store on a fresh Dir.
func open(t testing.TB) dirStore {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "root", "nested"))
	if err != nil {
		t.Fatal(err)
	}
	return dirStore{s, s.Backend().(*Dir)}
}

// eachStore runs a test of the contract once per backend, plain and encrypted: the same
// contract holds with the records sealed (Encrypt).
func eachStore(t *testing.T, test func(t *testing.T, s *Store)) {
	t.Helper()
	eachPlainStore(t, test)
	t.Run("dir-encrypted", func(t *testing.T) { test(t, encrypted(t, open(t).Store)) })
	t.Run("postgres-encrypted", func(t *testing.T) { test(t, encrypted(t, openPostgres(t))) })
}

// eachPlainStore runs a test once per backend, unencrypted: for the tests that look at
// how records are laid out (compressed, on disk), which sealing hides.
func eachPlainStore(t *testing.T, test func(t *testing.T, s *Store)) {
	t.Helper()
	t.Run("dir", func(t *testing.T) { test(t, open(t).Store) })
	t.Run("postgres", func(t *testing.T) { test(t, openPostgres(t)) })
}

// encrypted has s seal what it writes with a new key.
func encrypted(t testing.TB, s *Store) *Store {
	t.Helper()
	line, err := keyring.New("test")
	if err != nil {
		t.Fatal(err)
	}
	k, err := keyring.Parse("test key", line)
	if err != nil {
		t.Fatal(err)
	}
	s.Encrypt(k)
	return s
}

func tctx(t testing.TB) context.Context { return t.Context() }

// reopen is another Store on s's backend, with s's keys: another process of the same
// deployment, which has read nothing yet.
func reopen(s *Store) *Store {
	r := New(s.Backend(), s.Location())
	r.Encrypt(s.keys)
	r.Migrating(s.migrating)
	return r
}
