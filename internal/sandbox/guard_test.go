package sandbox

import (
	"errors"
	"testing"
)

// The guard alone: every refusal the issue and design.md list, each with its reason, and
// the queries that must pass (words of the lists inside strings, quoted names and
// comments; columns named like functions).
func TestGuardRefuses(t *testing.T) {
	cases := []struct {
		name, sql string
		want      Reason
	}{
		{"attach", `ATTACH ':memory:' AS m`, ReasonAttach},
		{"attach after a semicolon", `SELECT 1; ATTACH ':memory:'`, ReasonStatement},
		{"attach after a semicolon and a comment", "SELECT 1; -- x\nATTACH ':memory:'", ReasonStatement},
		{"detach", `DETACH m`, ReasonAttach},
		{"call enable_logging", `CALL enable_logging(storage='file', storage_path='log.csv')`, ReasonStatement},
		{"enable_logging as a table", `SELECT * FROM enable_logging(storage='file', storage_path='log.csv')`, ReasonStatement},
		{"enable_logging qualified", `SELECT * FROM system.main.enable_logging(storage='file')`, ReasonStatement},
		{"drop", `DROP TABLE t`, ReasonWrite},
		{"update", `UPDATE t SET a = 1`, ReasonWrite},
		{"insert", `INSERT INTO t VALUES (1, 'x')`, ReasonWrite},
		{"delete", `DELETE FROM t`, ReasonWrite},
		{"create", `CREATE TABLE u AS SELECT 1`, ReasonWrite},
		{"alter", `ALTER TABLE t ADD COLUMN c INT`, ReasonWrite},
		{"with then delete", `WITH x AS (SELECT 1) DELETE FROM t`, ReasonWrite},
		{"select then drop", `SELECT 1 FROM t; DROP TABLE t`, ReasonStatement},
		{"current_setting", `SELECT current_setting('temp_directory')`, ReasonSetting},
		{"current_setting qualified", `SELECT system.main.current_setting('home_directory')`, ReasonSetting},
		{"current_setting quoted", `SELECT "current_setting"('home_directory')`, ReasonSetting},
		{"current_setting spaced", "SELECT CURRENT_SETTING /* x */ ('home_directory')", ReasonSetting},
		{"duckdb_settings", `SELECT * FROM duckdb_settings()`, ReasonSetting},
		{"duckdb_settings without parentheses", `SELECT * FROM duckdb_settings`, ReasonSetting},
		{"information_schema", `SELECT * FROM information_schema.tables`, ReasonSetting},
		{"copy to", `COPY t TO '/tmp/out.csv'`, ReasonFile},
		{"copy query to", `COPY (SELECT * FROM t) TO 'out.parquet' (FORMAT parquet)`, ReasonFile},
		{"export", `EXPORT DATABASE '/tmp/db'`, ReasonFile},
		{"install", `INSTALL httpfs`, ReasonExtension},
		{"load", `LOAD httpfs`, ReasonExtension},
		{"force install", `FORCE INSTALL httpfs`, ReasonExtension},
		{"set", `SET memory_limit = '8GB'`, ReasonSetting},
		{"reset", `RESET threads`, ReasonSetting},
		{"pragma", `PRAGMA version`, ReasonSetting},
		{"read_csv", `SELECT * FROM read_csv('/etc/passwd')`, ReasonFile},
		{"read_csv_auto", `SELECT * FROM read_csv_auto('/etc/passwd')`, ReasonFile},
		{"read_parquet in a subquery", `SELECT * FROM t WHERE a IN (SELECT a FROM read_parquet('x.parquet'))`, ReasonFile},
		{"read_json_objects", `SELECT * FROM read_json_objects('/etc/hosts')`, ReasonFile},
		{"read_text", `SELECT * FROM read_text('/etc/passwd')`, ReasonFile},
		{"read_blob", `SELECT * FROM read_blob('/etc/passwd')`, ReasonFile},
		{"glob", `SELECT * FROM glob('/etc/*')`, ReasonFile},
		{"parquet_metadata", `SELECT * FROM parquet_metadata('x.parquet')`, ReasonFile},
		{"a file as a table", `SELECT * FROM '/etc/passwd'`, ReasonFile},
		{"a file joined", `SELECT * FROM t JOIN 'x.csv' ON true`, ReasonFile},
		{"a file as a quoted table", `SELECT * FROM "/etc/passwd"`, ReasonFile},
		{"query runs text", `SELECT * FROM query('SELECT current_setting(''home_directory'')')`, ReasonStatement},
		{"getenv", `SELECT getenv('HOME')`, ReasonSetting},
		{"explain analyze", `EXPLAIN ANALYZE SELECT 1`, ReasonStatement},
		{"empty", `  -- nothing`, ReasonStatement},
		{"only a semicolon", `;`, ReasonStatement},
		{"escape string", `SELECT E'\' ' FROM t`, ReasonParse},
		{"dollar quoting", `SELECT $$x$$`, ReasonParse},
		{"unclosed string", `SELECT 'x`, ReasonParse},
		{"unclosed comment", `SELECT 1 /* x`, ReasonParse},
		{"not a query", `SUMMARIZE t`, ReasonStatement},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Guard(c.sql)
			var r *Refusal
			if !errors.As(err, &r) {
				t.Fatalf("Guard(%q) = %v, want a refusal (%s)", c.sql, err, c.want)
			}
			if r.Reason != c.want || r.Layer != LayerGuard {
				t.Errorf("Guard(%q): reason %s by %s, want %s by the guard (%s)", c.sql, r.Reason, r.Layer, c.want, r.Detail)
			}
		})
	}
}

func TestGuardPasses(t *testing.T) {
	for _, sql := range []string{
		`SELECT 'drop'`,
		`SELECT 'ATTACH '':memory:''; DROP TABLE t' AS s`,
		`SELECT "load", "set" FROM t`,
		`SELECT read_count, query_id FROM t`,
		`SELECT a -- DROP TABLE t
		 FROM t`,
		`SELECT /* ; DELETE FROM t */ a FROM t;`,
		`SELECT a FROM t; -- the end`,
		`SELECT a FROM t;  /* done */  `,
		`WITH g AS (SELECT b, avg(a) AS m FROM t GROUP BY b) SELECT * FROM g ORDER BY m DESC`,
		`VALUES (1, 'a'), (2, 'b')`,
		`FROM t SELECT a`,
		`(SELECT 1) UNION ALL (SELECT 2)`,
		`SELECT replace(b, 'x', 'y'), regexp_matches(b, '^a') FROM t`,
		`SELECT count(*) FROM t AS x JOIN u ON x.a = u.a`,
		`SELECT 1e9, 2.5, 'it''s'`,
	} {
		if err := Guard(sql); err != nil {
			t.Errorf("Guard(%q) = %v, want nil", sql, err)
		}
	}
}
