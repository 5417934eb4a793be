package sandbox

import (
	"os"
	"strings"
	"testing"
)

// The child alone, the guard bypassed: DuckDB's parse tree and statement type refuse what
// the guard refuses, each with its reason, so that a query the guard missed is still
// refused.
func TestChildRefusesWithoutGuard(t *testing.T) {
	cases := []struct {
		name, sql string
		want      Reason
	}{
		{"attach", `ATTACH ':memory:' AS m`, ReasonStatement},
		{"attach after a semicolon", `SELECT 1; ATTACH ':memory:'`, ReasonStatement},
		{"call enable_logging", `CALL enable_logging(storage='file', storage_path='log.csv')`, ReasonStatement},
		{"enable_logging as a table", `SELECT * FROM enable_logging(storage='file', storage_path='log.csv')`, ReasonStatement},
		{"enable_logging qualified", `SELECT * FROM system.main.enable_logging(storage='file', storage_path='log.csv')`, ReasonStatement},
		{"drop", `DROP TABLE assay`, ReasonStatement},
		{"update", `UPDATE assay SET dose = 0`, ReasonStatement},
		{"insert", `INSERT INTO assay VALUES (9, 'x', 1, NULL, NULL)`, ReasonStatement},
		{"delete", `DELETE FROM assay`, ReasonStatement},
		{"select then drop", `SELECT 1 FROM assay; DROP TABLE assay`, ReasonStatement},
		{"two selects", `SELECT 1; SELECT 2`, ReasonStatement},
		{"current_setting", `SELECT current_setting('temp_directory')`, ReasonSetting},
		{"current_setting qualified", `SELECT system.main.current_setting('home_directory')`, ReasonSetting},
		{"current_setting quoted", `SELECT "current_setting"('home_directory')`, ReasonSetting},
		{"duckdb_settings", `SELECT * FROM duckdb_settings()`, ReasonSetting},
		{"information_schema", `SELECT * FROM information_schema.tables`, ReasonFile},
		{"copy to", `COPY assay TO 'out.csv'`, ReasonStatement},
		{"install", `INSTALL httpfs`, ReasonStatement},
		{"load", `LOAD httpfs`, ReasonStatement},
		{"set", `SET memory_limit = '8GB'`, ReasonStatement},
		{"pragma", `PRAGMA version`, ReasonStatement},
		{"read_csv", `SELECT * FROM read_csv('/etc/passwd')`, ReasonFile},
		{"read_text in a subquery", `SELECT * FROM assay WHERE note IN (SELECT content FROM read_text('/etc/passwd'))`, ReasonFile},
		{"glob", `SELECT * FROM glob('/etc/*')`, ReasonFile},
		{"a file as a table", `SELECT * FROM '/etc/passwd'`, ReasonFile},
		{"a file after a comma", `SELECT * FROM assay, '/etc/passwd'`, ReasonFile},
		{"a file as a quoted table", `SELECT * FROM "/etc/passwd"`, ReasonFile},
		{"query runs text", `SELECT * FROM query('SELECT 42')`, ReasonStatement},
		{"explain analyze", `EXPLAIN ANALYZE SELECT 1`, ReasonStatement},
		{"not sql", `SELEC 1`, ReasonParse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if Guard(c.sql) == nil && c.want != ReasonParse {
				t.Logf("the guard passes %q: the child alone refuses it", c.sql)
			}
			_, err := unguarded(t, c.sql, Caps{Timeout: 20e9})
			wantRefusal(t, c.sql, err, c.want, LayerDuckDB)
		})
	}
}

// DuckDB's settings alone (enable_external_access=false, lock_configuration=true), the
// child's check skipped too: files, extensions and settings are refused by DuckDB itself;
// and what they leave open (design.md), which is why the check and the guard exist.
func TestChildSettingsAlone(t *testing.T) {
	const env = "COSCI_SANDBOX_UNCHECKED_FOR_TESTS=1"
	refused := []struct {
		name, sql string
		want      Reason
	}{
		{"read_csv", `SELECT * FROM read_csv('/etc/passwd')`, ReasonFile},
		// With external access off DuckDB does not try the string as a file: no such table.
		{"a file as a table", `SELECT * FROM '/etc/passwd'`, ReasonQuery},
		{"glob", `SELECT * FROM glob('/etc/*')`, ReasonFile},
		{"copy to", `COPY assay TO 'out.csv'`, ReasonFile},
		{"attach a file", `ATTACH 'other.db' AS o`, ReasonFile},
		{"install", `INSTALL httpfs`, ReasonExtension},
		{"load", `LOAD httpfs`, ReasonExtension},
		{"set", `SET memory_limit = '8GB'`, ReasonSetting},
		{"set external access", `SET enable_external_access = true`, ReasonSetting},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := unguarded(t, c.sql, Caps{Timeout: 20e9}, env)
			r := wantRefusal(t, c.sql, err, c.want, LayerDuckDB)
			if r != nil && (strings.Contains(r.Detail, "/") || strings.Contains(r.Detail, os.Getenv("HOME"))) {
				t.Errorf("%s: the detail names a path: %q", c.sql, r.Detail)
			}
		})
	}
	for _, sql := range []string{
		`ATTACH ':memory:' AS m`,
		`DROP TABLE assay`,
		`SELECT current_setting('temp_directory')`,
	} {
		t.Run("open: "+sql, func(t *testing.T) {
			if _, err := unguarded(t, sql, Caps{Timeout: 20e9}, env); err != nil {
				t.Errorf("%s: refused by DuckDB's settings alone (%v): design.md says they let it through; if DuckDB now refuses it, say so there", sql, err)
			}
		})
	}
}
