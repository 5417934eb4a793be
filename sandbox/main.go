// Command cosci-sandbox runs one read-only query over a session's datasets in DuckDB and
// exits. It is the child internal/sandbox starts under prlimit caps, and the only program
// of cosci that links DuckDB (github.com/duckdb/duckdb-go/v2): the worker stays lean and
// a crash in DuckDB takes down this process alone.
//
// It reads one sandbox.ChildRequest as JSON on stdin, loads the inputs into tables, sets
// temp_directory and max_temp_directory_size (inside the parent's directory), memory_limit
// and threads, then enable_external_access=false and lock_configuration=true, checks the
// query with DuckDB's own parser (one SELECT, no denied function, no table but the loaded
// ones: check.go), runs it under the request's deadline and writes one
// sandbox.ChildResponse as JSON on stdout. An error is passed on as a reason, never as
// DuckDB's own text, which carries the machine's paths (errors.go).
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/cosci-dev/cosci/internal/sandbox"
)

// uncheckedForTests names the environment variable that makes the child skip its check
// (check.go), for the tests of DuckDB's settings alone.
const uncheckedForTests = "COSCI_SANDBOX_UNCHECKED_FOR_TESTS"

func main() {
	var req sandbox.ChildRequest
	dec := json.NewDecoder(io.LimitReader(os.Stdin, 16<<20))
	resp := sandbox.ChildResponse{}
	if err := dec.Decode(&req); err != nil {
		resp.Error = &sandbox.Refusal{Reason: sandbox.ReasonInput, Layer: sandbox.LayerDuckDB, Detail: "the request could not be read"}
	} else {
		resp = run(req)
	}
	out, err := json.Marshal(resp)
	if err != nil {
		out, _ = json.Marshal(sandbox.ChildResponse{Error: &sandbox.Refusal{Reason: sandbox.ReasonQuery, Layer: sandbox.LayerDuckDB, Detail: "the result could not be written as JSON"}})
	}
	os.Stdout.Write(append(out, '\n'))
}

// run answers one request.
func run(req sandbox.ChildRequest) sandbox.ChildResponse {
	ctx, cancel := context.WithTimeout(context.Background(), req.Caps.Timeout)
	defer cancel()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return failed(sandbox.ReasonCrash, "DuckDB could not start")
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return failed(sandbox.ReasonCrash, "DuckDB could not start")
	}
	defer conn.Close()
	var resp sandbox.ChildResponse
	start := time.Now()
	if err := settle(ctx, conn, req); err != nil {
		return refused(err, req.Dir)
	}
	for _, in := range req.Inputs {
		if err := load(ctx, conn, in); err != nil {
			return refused(err, req.Dir)
		}
	}
	if err := lock(ctx, conn); err != nil {
		return refused(err, req.Dir)
	}
	resp.Load = time.Since(start)
	start = time.Now()
	switch req.Mode {
	case sandbox.ModeDescribe:
		resp.Tables, err = describe(ctx, conn, req.Inputs)
	default:
		// The check may be skipped only by the child's environment, which the parent
		// sets whole: child_test.go skips it to show what DuckDB's settings alone refuse.
		// Both the query as given (one statement?) and as it will run are checked.
		q := bounded(req.Query, req.Caps.Rows)
		if len(req.Feed) > 0 {
			q = bounded(req.Query, max(req.Caps.Rows, req.Caps.FeedRows)) // one more than the feed's cap is refused
		}
		if os.Getenv(uncheckedForTests) != "1" {
			if err = check(ctx, conn, req.Query, req.Inputs); err == nil {
				err = check(ctx, conn, q, req.Inputs)
			}
		} else {
			q = req.Query // DuckDB's settings alone, on the statement as given
		}
		if err == nil {
			err = query(ctx, conn, q, req, &resp.Result)
		}
	}
	resp.Query = time.Since(start)
	if err != nil {
		return refused(err, req.Dir)
	}
	return resp
}

// settle sets what must be set before the configuration is locked: where DuckDB spills and
// how much, its memory and threads, and its home directory (inside the run's directory, so
// that nothing of the machine's home is read or named).
func settle(ctx context.Context, conn *sql.Conn, req sandbox.ChildRequest) error {
	c := req.Caps
	sets := []string{
		"SET home_directory = " + literal(req.Dir),
		"SET temp_directory = " + literal(filepath.Join(req.Dir, sandbox.TempDir)),
		fmt.Sprintf("SET max_temp_directory_size = '%dMB'", c.TempMB),
		fmt.Sprintf("SET memory_limit = '%dMB'", c.MemoryMB),
		fmt.Sprintf("SET threads = %d", c.Threads),
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		"SET allow_community_extensions = false",
		"SET enable_progress_bar = false",
	}
	for _, s := range sets {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// lock closes the file system and the configuration: from here on no statement can read
// or write a file, attach a database, load an extension or change a setting.
func lock(ctx context.Context, conn *sql.Conn) error {
	for _, s := range []string{"SET enable_external_access = false", "SET lock_configuration = true"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// typePattern is what a column's DuckDB type may look like: DECIMAL(10,2), TIMESTAMP WITH
// TIME ZONE, VARCHAR; nothing that could end the struct literal it is written into.
var typePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_ ]*(\([0-9, ]*\))?$`)

// load reads one input into a table of its own.
func load(ctx context.Context, conn *sql.Conn, in sandbox.ChildInput) error {
	var from string
	switch in.Format {
	case sandbox.CSV:
		if len(in.Columns) == 0 {
			return inputError("the CSV input %q has no column types: a canonical CSV is read with its columns given", in.Table)
		}
		cols := make([]string, len(in.Columns))
		for i, c := range in.Columns {
			if !typePattern.MatchString(c.Type) {
				return inputError("the column %q of %q has a type DuckDB does not know: %q", c.Name, in.Table, c.Type)
			}
			cols[i] = literal(c.Name) + ": " + literal(c.Type)
		}
		from = fmt.Sprintf("read_csv(%s, header = true, delim = ',', quote = '\"', escape = '\"', columns = {%s}, nullstr = '', auto_detect = false)",
			literal(in.Path), strings.Join(cols, ", "))
	case sandbox.Parquet:
		from = fmt.Sprintf("read_parquet(%s)", literal(in.Path))
	case sandbox.JSONL:
		from = fmt.Sprintf("read_json(%s, format = 'newline_delimited')", literal(in.Path))
	default:
		return inputError("the input %q has no format the sandbox reads (csv, parquet, jsonl)", in.Table)
	}
	_, err := conn.ExecContext(ctx, "CREATE TABLE "+ident(in.Table)+" AS SELECT * FROM "+from)
	if err != nil {
		return &loadError{table: in.Table, err: err}
	}
	return nil
}

// describe gives each loaded table's columns, types and row count.
func describe(ctx context.Context, conn *sql.Conn, inputs []sandbox.ChildInput) ([]sandbox.Table, error) {
	var tables []sandbox.Table
	for _, in := range inputs {
		t := sandbox.Table{Name: in.Table}
		rows, err := conn.QueryContext(ctx, "SELECT * FROM "+ident(in.Table)+" LIMIT 0")
		if err != nil {
			return nil, err
		}
		types, err := rows.ColumnTypes()
		if err == nil {
			for _, ct := range types {
				t.Columns = append(t.Columns, sandbox.Column{Name: ct.Name(), Type: ct.DatabaseTypeName()})
			}
		}
		rows.Close()
		if err != nil {
			return nil, err
		}
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+ident(in.Table)).Scan(&t.Rows); err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return tables, nil
}

// bounded sets the query inside one that returns at most rows+1 rows (the one more says
// the result was cut). The driver materialises a result whole before its first row is
// read: without the LIMIT a query of 10 GB of rows would be stopped by the memory cap,
// not cut at the row cap. The query goes in on lines of its own, so that a comment at its
// end cannot swallow the closing parenthesis; a text of more than one statement cannot
// parse as one subquery, and the check then refuses it.
func bounded(query string, rows int) string {
	return fmt.Sprintf("SELECT * FROM (\n%s\n) AS sandbox_result LIMIT %d", sandbox.Statement(query), rows+1)
}

// literal is s as a SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// ident is s as a quoted SQL identifier.
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
