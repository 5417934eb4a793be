package temporalpg

// The same server binary on a SQLite file: the shape of the CLI's dev server (`temporal
// server start-dev --db-filename`), one file and one connection, without the CLI. The CLI
// v1.5.1 that installs here runs server 1.29.1 inside, whose matching drops a query's
// answer that comes early (internal/connection/hedge.go); this runs the release the
// Makefile builds (ServerVersion), so e2e can measure both (BENCHMARKS.md, "The dev server").

import (
	"context"
	"fmt"
	"path/filepath"
)

// SQLiteOptions are what StartSQLite's server offers beside its frontend.
type SQLiteOptions struct {
	// DBFile is the SQLite file; "" keeps it in dir (temporal.db). An existing file is
	// reused with what it holds, as start-dev's --db-filename.
	DBFile string
	// InMemory keeps the database in memory instead, as start-dev without --db-filename.
	InMemory bool
	// MetricsPort serves the server's Prometheus metrics on 127.0.0.1; 0: none.
	MetricsPort int
	// DynamicValues are dynamic config values beside this package's: name -> a YAML value
	// (what start-dev takes as --dynamic-config-value name=value).
	DynamicValues map[string]string
}

// StartSQLite starts bin/temporal-server on a SQLite file, with its config in dir (which
// must exist), and waits until namespace "default" has searchAttributes, as Start does on
// PostgreSQL. It needs no schema tool: the server sets the file's schema up itself.
func StartSQLite(ctx context.Context, dir string, searchAttributes map[string]string, opts SQLiteOptions) (*Server, error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	types, bin, err := prepare(searchAttributes, serverBinary)
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("temporalpg: %w", err)
	}
	dbFile := opts.DBFile
	if dbFile == "" {
		dbFile = filepath.Join(dir, "temporal.db")
	}
	if dbFile, err = filepath.Abs(dbFile); err != nil {
		return nil, fmt.Errorf("temporalpg: %w", err)
	}
	services, err := loopbackServices()
	if err != nil {
		return nil, err
	}
	cfg := config{
		SQLiteFile:    dbFile,
		SQLiteMemory:  opts.InMemory,
		MetricsPort:   opts.MetricsPort,
		DynamicValues: opts.DynamicValues,
		Services:      services,
		DynamicConfig: filepath.Join(dir, "config", "dynamicconfig.yaml"),
	}
	return launch(ctx, dir, bin, cfg, nil, types)
}
