package sandbox

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// childBin is the child binary, built from ../../sandbox by TestMain, so that the tests
// need nothing built beforehand (the first link of DuckDB takes about 2 minutes).
var childBin string

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cosci-sandbox-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	childBin = filepath.Join(dir, "cosci-sandbox")
	out, err := exec.Command("go", "build", "-o", childBin, "github.com/cosci-dev/cosci/sandbox").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the sandbox's child: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// assayColumns are the lab table's columns, as internal/dataset would give them.
var assayColumns = []Column{
	{Name: "id", Type: "BIGINT"}, {Name: "arm", Type: "VARCHAR"}, {Name: "dose", Type: "DOUBLE"},
	{Name: "day", Type: "DATE"}, {Name: "note", Type: "VARCHAR"},
}

// assayCSV is a canonical CSV written by Go's encoding/csv (which quotes a field with a
// comma, a quote or a line break as every CSV writer does): an empty field is NULL.
func assayCSV(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	rows := [][]string{
		{"id", "arm", "dose", "day", "note"},
		{"1", "control", "0.5", "2026-01-02", "plain"},
		{"2", "treated", "1.5", "2026-01-03", "with, a comma"},
		{"3", "treated", "2.5", "", "two\nlines"},
		{"4", "control", "", "2026-01-05", `a "quote"`},
		{"5", "treated", "3.5", "2026-01-06", ""},
	}
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func assayInput(t testing.TB) Input {
	return Input{Table: "assay", Format: CSV, Columns: assayColumns, Data: assayCSV(t)}
}

// testRunner runs the test's child binary.
func testRunner(env ...string) Runner { return Runner{Binary: childBin, env: env} }

// unguarded runs a query in the child with the guard bypassed: the child's layer alone.
func unguarded(t *testing.T, query string, caps Caps, env ...string) (Result, error) {
	t.Helper()
	creq, err := writeInputs(t.TempDir(), Request{Mode: ModeQuery, Inputs: []Input{assayInput(t)}, Query: query, Caps: caps})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return testRunner(env...).runChild(ctx, childBin, creq)
}

// wantRefusal fails unless err is a refusal with the reason and layer.
func wantRefusal(t *testing.T, what string, err error, reason Reason, layer Layer) *Refusal {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("%s: got %v, want a refusal (%s by the %s)", what, err, reason, layer)
	}
	if r.Reason != reason || r.Layer != layer {
		t.Errorf("%s: refused for %s by the %s (%q), want %s by the %s", what, r.Reason, r.Layer, r.Detail, reason, layer)
	}
	return r
}

func rowsJSON(t *testing.T, res Result) string {
	t.Helper()
	b, err := json.Marshal(res.Rows)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The parent's side stays pure Go: the worker imports it, and DuckDB is linked by the
// child alone.
func TestParentLinksNoDuckDB(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{len .CgoFiles}}", "github.com/cosci-dev/cosci/internal/sandbox").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, cgo, _ := strings.Cut(l, " ")
		if strings.Contains(pkg, "duckdb") || cgo != "0" {
			t.Errorf("internal/sandbox depends on %s (%s cgo files): only the child may link DuckDB", pkg, cgo)
		}
	}
}
