package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A canonical CSV is read as written: NULL for an empty field, a quoted comma and line
// break inside one value, dates as ISO dates; the query's order is kept through the
// child's row bound.
func TestRunCSV(t *testing.T) {
	q := `SELECT id, arm, dose, day, note FROM assay ORDER BY id DESC;  -- newest first`
	res, err := testRunner().Run(context.Background(), Request{Inputs: []Input{assayInput(t)}, Query: q, Caps: Caps{Timeout: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	want := `[[5,"treated",3.5,"2026-01-06",null],[4,"control",null,"2026-01-05","a \"quote\""],` +
		`[3,"treated",2.5,null,"two\nlines"],[2,"treated",1.5,"2026-01-03","with, a comma"],[1,"control",0.5,"2026-01-02","plain"]]`
	if got := rowsJSON(t, res); got != want || res.Truncated {
		t.Errorf("rows (truncated %v):\n got %s\nwant %s", res.Truncated, got, want)
	}
	wantCols := []Column{{"id", "BIGINT"}, {"arm", "VARCHAR"}, {"dose", "DOUBLE"}, {"day", "DATE"}, {"note", "VARCHAR"}}
	if !reflect.DeepEqual(res.Columns, wantCols) {
		t.Errorf("columns %v, want %v", res.Columns, wantCols)
	}
}

// An aggregate over the loaded table, the analyst's kind of query.
func TestRunAggregate(t *testing.T) {
	q := `WITH g AS (SELECT arm, count(*) AS n, avg(dose) AS mean FROM assay GROUP BY arm) SELECT * FROM g ORDER BY arm`
	res, err := testRunner().Run(context.Background(), Request{Inputs: []Input{assayInput(t)}, Query: q})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rowsJSON(t, res), `[["control",2,0.5],["treated",3,2.5]]`; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// Describe gives each input's schema and row count: the CSV's as given, the Parquet
// file's as its writer made it (testdata/README.md), the JSON lines' as DuckDB reads
// what encoding/json wrote.
func TestDescribe(t *testing.T) {
	var jl strings.Builder
	for i, r := range []map[string]any{{"sample": "s1", "od": 0.25, "ok": true}, {"sample": "s2", "od": 1.0, "ok": false}, {"sample": "s3", "od": nil, "ok": true}} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err, i)
		}
		jl.Write(append(b, '\n'))
	}
	inputs := []Input{
		assayInput(t),
		{Table: "plate", Format: Parquet, From: "testdata/assay.parquet"},
		{Table: "reads", Format: JSONL, Data: []byte(jl.String())},
	}
	res, err := testRunner().Run(context.Background(), Request{Mode: ModeDescribe, Inputs: inputs})
	if err != nil {
		t.Fatal(err)
	}
	want := []Table{
		{Name: "assay", Columns: assayColumns, Rows: 5},
		{Name: "plate", Columns: []Column{{"id", "BIGINT"}, {"arm", "VARCHAR"}, {"dose", "DECIMAL(21,1)"}, {"day", "DATE"}, {"note", "VARCHAR"}}, Rows: 10},
		{Name: "reads", Columns: []Column{{"od", "DOUBLE"}, {"ok", "BOOLEAN"}, {"sample", "VARCHAR"}}, Rows: 3},
	}
	if !reflect.DeepEqual(res.Tables, want) {
		t.Errorf("tables:\n got %+v\nwant %+v", res.Tables, want)
	}
}

// Run asks the guard first: a write never reaches a child.
func TestRunGuardsFirst(t *testing.T) {
	r := Runner{Binary: "/nonexistent/cosci-sandbox"} // no child: only the guard can answer
	_, err := r.Run(context.Background(), Request{Inputs: []Input{assayInput(t)}, Query: `DELETE FROM assay`})
	wantRefusal(t, "DELETE", err, ReasonWrite, LayerGuard)
}

// What goes wrong is said without DuckDB's text where that names the machine's paths: an
// input that does not parse, a column that does not exist.
func TestErrorsNameNoPath(t *testing.T) {
	home, _ := os.UserHomeDir()
	bad := Input{Table: "assay", Format: CSV, Columns: assayColumns, Data: []byte("id,arm,dose,day,note\nx,y,z,w,v\n")}
	for _, c := range []struct {
		name   string
		in     Input
		q      string
		reason Reason
		names  string
	}{
		{"an input that does not parse", bad, `SELECT 1`, ReasonInput, "assay"},
		{"a column that does not exist", assayInput(t), `SELECT nope FROM assay`, ReasonQuery, "nope"},
		// DuckDB's message names the file it read: the run directory's path.
		{"a Parquet file that is not one", Input{Table: "plate", Format: Parquet, Data: []byte("not parquet")}, `SELECT 1`, ReasonInput, "plate"},
	} {
		_, err := testRunner().Run(context.Background(), Request{Inputs: []Input{c.in}, Query: c.q})
		r := wantRefusal(t, c.name, err, c.reason, LayerDuckDB)
		if r == nil {
			continue
		}
		if !strings.Contains(r.Detail, c.names) {
			t.Errorf("%s: %q does not name %q", c.name, r.Detail, c.names)
		}
		if strings.Contains(r.Detail, os.TempDir()) || home != "" && strings.Contains(r.Detail, home) || strings.Contains(r.Detail, "input-1") {
			t.Errorf("%s: %q names a path of the machine", c.name, r.Detail)
		}
	}
}

// Every form of query the guard lets through runs inside the child's row bound (which sets
// it in a subquery): VALUES, FROM first, a parenthesised union, a trailing ';' and comments.
func TestRunQueryForms(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{`VALUES (1, 'a'), (2, 'b')`, `[[1,"a"],[2,"b"]]`},
		{`FROM assay SELECT id WHERE id < 3 ORDER BY id`, `[[1],[2]]`},
		{`(SELECT 1 AS x) UNION ALL (SELECT 2) ORDER BY x`, `[[1],[2]]`},
		{`SELECT count(*) FROM assay; -- the end, no newline`, `[[5]]`},
		{`SELECT count(*) FROM assay -- no ';'`, `[[5]]`},
		{`SELECT count(*) /* ; */ FROM assay;  /* done */`, `[[5]]`},
	} {
		res, err := testRunner().Run(context.Background(), Request{Inputs: []Input{assayInput(t)}, Query: c.q})
		if err != nil {
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		if got := rowsJSON(t, res); got != c.want {
			t.Errorf("%s: rows %s, want %s", c.q, got, c.want)
		}
	}
}
