// Package temporalpg runs a real Temporal server on PostgreSQL for tests: the production
// shape (persistence and visibility in PostgreSQL, the schema set up by Temporal's own SQL
// tool), on loopback ports of its own, as a separate process a test may stop, kill and
// restart.
//
// It runs the binaries `make server-tools` builds from the Go module proxy (`make test`
// builds them too): bin/temporal-server and bin/temporal-sql-tool, with the schemas of the
// same server release copied into bin/temporal-schema. The PostgreSQL server comes from
// internal/pgtest. The server runs in a Process (process.go), which e2e's dev server on a
// database file uses too. StartSQLite (sqlite.go) runs the same binary on a SQLite file
// instead, the dev server's shape.
package temporalpg

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/cosci-dev/cosci/internal/pgtest"
)

// The server release and its schema, shared with docker-compose.yml (worker/compose_test.go
// checks that the two agree).
const (
	// ServerVersion is the Temporal server release the Makefile builds (newer than the
	// 1.29.1 inside Temporal CLI v1.5.1, the dev server's).
	ServerVersion = "1.32.1"
	// Plugin is the SQL plugin of persistence and visibility.
	Plugin = "postgres12"
	// SchemaDir is where the schemas of Plugin are, relative to the schema root
	// (bin/temporal-schema here, /etc/temporal/schema in the temporalio/admin-tools image).
	SchemaDir = "postgresql/v12"
	// PersistenceDB and VisibilityDB are the databases Start creates on the PostgreSQL server.
	PersistenceDB = "temporal"
	VisibilityDB  = "temporal_visibility"
	// Namespace is the namespace Start registers, with the search attributes.
	Namespace = "default"
)

// The binaries and schemas under the module's bin/ directory.
const (
	serverBinary  = "temporal-server"
	sqlToolBinary = "temporal-sql-tool"
	schemaRoot    = "temporal-schema"
	makeTarget    = "server-tools"
)

// Server is a Temporal server process on PostgreSQL.
type Server struct {
	dir     string // the server's directory: config/ and the log
	binary  string // bin/temporal-server
	address string // the frontend's host:port
	logPath string
	tls     *tls.Config // how this package's clients dial a TLS frontend; nil: plain

	mu   sync.Mutex
	proc *Process // the running process; nil before the first start
}

// Start sets up a Temporal server on pg and starts it: it creates the persistence and
// visibility databases (or reuses them, when a server ran on pg before), sets up or updates
// their schemas with Temporal's SQL tool, writes the server's config into dir (which must
// exist), starts bin/temporal-server, waits until its frontend answers, makes sure
// namespace "default" exists and registers searchAttributes there (name -> type: Keyword,
// Int, Double, Text, Bool, Datetime or KeywordList), waiting until the server lists them.
// The server's output goes to a log file in dir (see Log). Without a deadline in ctx, Start
// gives up after startTimeout.
func Start(ctx context.Context, dir string, pg *pgtest.Server, searchAttributes map[string]string) (*Server, error) {
	return StartTLS(ctx, dir, pg, searchAttributes, nil)
}

// StartTLS is Start with the frontend serving TLS, with the files of t: mutual TLS, so
// that a client without a certificate the CA signed is refused. The server's system
// worker and this package's own clients present t's client certificate.
func StartTLS(ctx context.Context, dir string, pg *pgtest.Server, searchAttributes map[string]string, t *TLS) (*Server, error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	types, bin, err := prepare(searchAttributes, serverBinary, sqlToolBinary, filepath.Join(schemaRoot, SchemaDir))
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("temporalpg: %w", err)
	}

	if err := setUpDatabases(ctx, bin, pg); err != nil {
		return nil, err
	}

	services, err := loopbackServices()
	if err != nil {
		return nil, err
	}
	cfg := config{
		Plugin:        Plugin,
		PGAddress:     net.JoinHostPort("127.0.0.1", strconv.Itoa(pg.Port)),
		PGUser:        pgtest.User,
		PersistenceDB: PersistenceDB,
		VisibilityDB:  VisibilityDB,
		Services:      services,
		DynamicConfig: filepath.Join(dir, "config", "dynamicconfig.yaml"),
		TLS:           t,
	}
	var clientTLS *tls.Config
	if t != nil {
		if clientTLS, err = t.clientConfig(); err != nil {
			return nil, err
		}
	}
	return launch(ctx, dir, bin, cfg, clientTLS, types)
}

// prepare checks the search attributes' types and that bin/ holds the files named.
func prepare(searchAttributes map[string]string, files ...string) (map[string]enumspb.IndexedValueType, string, error) {
	types, err := indexedValueTypes(searchAttributes)
	if err != nil {
		return nil, "", err
	}
	bin, err := binDir()
	if err != nil {
		return nil, "", err
	}
	for _, name := range files {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return nil, "", fmt.Errorf("temporalpg: no %s: run `make %s` (or `make test`, which builds it) in %s first", filepath.Join(bin, name), makeTarget, filepath.Dir(bin))
		}
	}
	return types, bin, nil
}

// launch writes cfg into dir/config, starts bin/temporal-server on it, and waits until
// namespace "default" has the search attributes types.
func launch(ctx context.Context, dir, bin string, cfg config, clientTLS *tls.Config, types map[string]enumspb.IndexedValueType) (*Server, error) {
	if err := cfg.write(filepath.Join(dir, "config")); err != nil {
		return nil, err
	}
	s := &Server{
		tls:     clientTLS,
		dir:     dir,
		binary:  filepath.Join(bin, serverBinary),
		address: net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Frontend().GRPC)),
		logPath: filepath.Join(dir, "temporal-server.log"),
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	if err := s.setUpNamespace(ctx, types); err != nil {
		_ = s.Kill()
		return nil, s.withLog(err)
	}
	return s, nil
}

// Address is the frontend's host:port, for client.Options.HostPort and TEMPORAL_ADDRESS.
func (s *Server) Address() string { return s.address }

// Log is what the server wrote (all its runs), for a failed test to show.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

// withLog adds the end of the server's log to an error.
func (s *Server) withLog(err error) error {
	log := s.Log()
	const tail = 4000
	if len(log) > tail {
		log = "..." + log[len(log)-tail:]
	}
	return fmt.Errorf("%w\nserver log (%s):\n%s", err, s.logPath, log)
}

// binDir finds bin/ at the module root: the nearest directory above the working directory
// with a go.mod.
func binDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("temporalpg: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "bin"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("temporalpg: no go.mod above %s: run the tests inside the cosci module, after `make %s`", dir, makeTarget)
		}
		dir = parent
	}
}
