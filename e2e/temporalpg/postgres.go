package temporalpg

// The server's PostgreSQL: its persistence and visibility databases and their schemas,
// set up with Temporal's own SQL tool.

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cosci-dev/cosci/internal/pgtest"
)

// setUpDatabases creates the persistence and visibility databases on pg (or reuses them)
// and sets up or updates their schemas with the SQL tool and schemas under bin.
func setUpDatabases(ctx context.Context, bin string, pg *pgtest.Server) error {
	for _, db := range []struct{ name, schema string }{
		{PersistenceDB, "temporal"},
		{VisibilityDB, "visibility"},
	} {
		if err := createDatabase(ctx, pg, db.name); err != nil {
			return err
		}
		versioned := filepath.Join(bin, schemaRoot, SchemaDir, db.schema, "versioned")
		if err := sqlTool(ctx, filepath.Join(bin, sqlToolBinary), pg, db.name, "setup-schema", "-v", "0.0"); err != nil {
			return err
		}
		if err := sqlTool(ctx, filepath.Join(bin, sqlToolBinary), pg, db.name, "update-schema", "-d", versioned); err != nil {
			return err
		}
	}
	return nil
}

// createDatabase creates a database on pg unless it exists.
func createDatabase(ctx context.Context, pg *pgtest.Server, name string) error {
	if _, err := pg.CreateDatabase(ctx, name); err != nil && !strings.Contains(err.Error(), "SQLSTATE 42P04") { // duplicate_database
		return fmt.Errorf("temporalpg: %w", err)
	}
	return nil
}

// sqlTool runs temporal-sql-tool against one database of pg.
func sqlTool(ctx context.Context, tool string, pg *pgtest.Server, db string, args ...string) error {
	cmd := exec.CommandContext(ctx, tool, append([]string{
		"--endpoint", "127.0.0.1", "--port", strconv.Itoa(pg.Port), "--user", pgtest.User,
		"--plugin", Plugin, "--database", db,
	}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("temporalpg: temporal-sql-tool %s on database %s: %w\n%s", args[0], db, err, out.String())
	}
	return nil
}
