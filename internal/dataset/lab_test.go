package dataset

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// truth is a table's values as its maker (R, pandas, a spreadsheet) held them, dumped by
// the maker itself beside the file it wrote (scripts/labtables.sh).
type truth struct {
	File    string `json:"file"`
	Maker   string `json:"maker"`
	Options struct {
		Delimiter string `json:"delimiter"`
		Encoding  string `json:"encoding"`
		Refused   string `json:"refused"` // the file must be refused with this reason
	} `json:"options"`
	Rows    int `json:"rows"`
	Columns []struct {
		Name   string `json:"name"`
		Class  string `json:"class"` // R's: integer, numeric, logical, character, factor, Date, POSIXct
		Values []any  `json:"values"`
	} `json:"columns"`
}

// TestLabTables reads every table in testdata/lab and compares every cell with what its
// maker held: the type the reader gave it must be one that holds the value, and the value
// written canonically must be the maker's.
func TestLabTables(t *testing.T) {
	truths, err := filepath.Glob("testdata/lab/*.truth.json")
	if err != nil || len(truths) == 0 {
		t.Fatalf("no truths in testdata/lab (%v): run make lab-tables", err)
	}
	for _, path := range truths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var tr truth
		if err := json.Unmarshal(data, &tr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		t.Run(tr.File, func(t *testing.T) { checkLabTable(t, tr) })
	}
}

func checkLabTable(t *testing.T, tr truth) {
	opt := Options{Encoding: tr.Options.Encoding}
	if tr.Options.Delimiter != "" {
		opt.Delimiter = []rune(tr.Options.Delimiter)[0]
	}
	tb, err := ReadFile(filepath.Join("testdata/lab", tr.File), opt)
	if tr.Options.Refused != "" {
		if err == nil || !strings.Contains(err.Error(), tr.Options.Refused) {
			t.Fatalf("%s: err %v, want it refused: %s", tr.Maker, err, tr.Options.Refused)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", tr.Maker, err)
	}
	if tb.Format == JSONL && tb.Rows == tr.Rows && len(tb.Columns) == 0 && len(tr.Columns) == 0 {
		return // its columns are the sandbox's to read
	}
	if tb.Rows != tr.Rows || len(tb.Columns) != len(tr.Columns) {
		t.Fatalf("%d rows of %d columns, the maker wrote %d of %d", tb.Rows, len(tb.Columns), tr.Rows, len(tr.Columns))
	}
	recs := canonical(t, tb)
	for j, tc := range tr.Columns {
		col := tb.Columns[j]
		if col.Header != tc.Name {
			t.Errorf("column %d: header %q, the maker's name %q", j+1, col.Header, tc.Name)
		}
		bad := 0
		for i, want := range tc.Values {
			got := recs[i+1][j]
			if problem := cellProblem(tc.Class, col.Type, want, got); problem != "" {
				if bad++; bad <= 3 {
					t.Errorf("%s (%s, read %s: %q) row %d: %s", col.Name, tc.Class, col.Type, col.Read, i+1, problem)
				}
			}
		}
	}
}

// cellProblem says how a canonical cell differs from the maker's value, or "".
func cellProblem(class, typ string, want any, got string) string {
	if want == nil {
		if got != "" {
			return "missing, read as " + strconv.Quote(got)
		}
		return ""
	}
	if got == "" {
		return "read as missing, the maker held " + strconv.Quote(toText(want))
	}
	switch class {
	case "integer", "numeric", "int64", "float64":
		if typ != DOUBLE && (typ != BIGINT || class == "numeric" && !integral(want)) {
			return "a number read as " + typ
		}
		return numberProblem(want, got)
	case "logical", "bool":
		if typ != BOOLEAN || got != toText(want) {
			return "boolean " + toText(want) + " read as " + typ + " " + strconv.Quote(got)
		}
	case "Date", "POSIXct":
		wantType := DATE
		if class == "POSIXct" {
			wantType = TIMESTAMP
		}
		if typ != wantType || got != toText(want) {
			return class + " " + toText(want) + " read as " + typ + " " + strconv.Quote(got)
		}
	default: // character, factor: text, which may read as numbers ("1" for a factor level)
		if got != toText(want) {
			return strconv.Quote(toText(want)) + " read as " + typ + " " + strconv.Quote(got)
		}
	}
	return ""
}

func integral(v any) bool {
	f, ok := v.(float64)
	return ok && f == math.Trunc(f)
}

func numberProblem(want any, got string) string {
	g, err := strconv.ParseFloat(got, 64)
	if err != nil {
		return "not a number: " + strconv.Quote(got)
	}
	var w float64
	switch v := want.(type) {
	case float64:
		w = v
	case string: // "Inf", "-Inf"
		w, _ = strconv.ParseFloat(strings.TrimPrefix(v, "+"), 64)
	}
	// R writes 15 significant digits, pandas repr's 17.
	if g != w && math.Abs(g-w) > 1e-13*math.Abs(w) {
		return "read as " + got + ", the maker held " + strconv.FormatFloat(w, 'g', -1, 64)
	}
	return ""
}

func toText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return ""
}
