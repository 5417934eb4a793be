package dataset

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// canonical reads a table's canonical form back as records, header first.
func canonical(t *testing.T, tb *Table) [][]string {
	t.Helper()
	var buf bytes.Buffer
	if err := tb.Canonical(&buf); err != nil {
		t.Fatalf("Canonical: %v", err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("the canonical form does not read back: %v\n%s", err, buf.String())
	}
	return recs
}

// columnCase is one column of a small file: how it must be typed, read and written.
type columnCase struct {
	name   string
	in     string
	opt    Options
	col    int
	typ    string
	values []string // canonical, "" for missing
	read   string   // a part of the column's Read
}

func runColumnCases(t *testing.T, cases []columnCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := Read([]byte(tc.in), tc.opt)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			c := tb.Columns[tc.col]
			if c.Type != tc.typ {
				t.Errorf("type %s, want %s (read %q)", c.Type, tc.typ, c.Read)
			}
			if !strings.Contains(c.Read, tc.read) {
				t.Errorf("read %q, want it to say %q", c.Read, tc.read)
			}
			recs := canonical(t, tb)
			var got []string
			for _, r := range recs[1:] {
				got = append(got, r[tc.col])
			}
			if strings.Join(got, "|") != strings.Join(tc.values, "|") {
				t.Errorf("values %q, want %q", got, tc.values)
			}
		})
	}
}

func TestNumbers(t *testing.T) {
	runColumnCases(t, []columnCase{
		{name: "European thousands are thousands, never 1.0", in: "g;h\n1.000;1\n2.500;2\n",
			typ: BIGINT, values: []string{"1000", "2500"}, read: `"1.000" read as 1000: the file is semicolon-separated`},
		{name: "millions", in: "g;h\n1.000;1\n12.345.678;3\n", typ: BIGINT, values: []string{"1000", "12345678"}, read: "'.' thousands"},
		{name: "decimal comma with '.' thousands", in: "g;h\n1.234,5;1\n0,25;2\n-3,0;3\n",
			typ: DOUBLE, values: []string{"1234.5", "0.25", "-3.0"}, read: "decimal comma, '.' thousands"},
		{name: "decimal comma elsewhere decides an ambiguous column", in: "a;b\n1,5;1.000\n2,25;2.000\n",
			col: 1, typ: BIGINT, values: []string{"1000", "2000"}, read: "decimal commas in the file's other columns"},
		{name: "decimal point elsewhere decides an ambiguous column", in: "a;b\n1.5;1.000\n2.25;2.000\n",
			col: 1, typ: DOUBLE, values: []string{"1.000", "2.000"}, read: "decimal points in the file's other columns"},
		{name: "semicolons with decimal points", in: "a;b\n1.5;x\n2.25;y\n",
			typ: DOUBLE, values: []string{"1.5", "2.25"}, read: "decimal point"},
		{name: "comma file, quoted thousands", in: "a,b\n\"1,234.5\",x\n\"10,000\",y\n",
			typ: DOUBLE, values: []string{"1234.5", "10000"}, read: "decimal point, ',' thousands"},
		{name: "comma file, quoted decimal commas", in: "a,b\n\"1,5\",x\n\"2,75\",y\n",
			typ: DOUBLE, values: []string{"1.5", "2.75"}, read: "decimal comma"},
		{name: "both conventions in the file leave an ambiguous column as text", in: "a;b;c\n1.5;1,5;1.000\n2.5;2,5;2.000\n",
			col: 2, typ: VARCHAR, values: []string{"1.000", "2.000"}, read: "columns of each"},
		{name: "integers", in: "n\n1\n-2\n+3\n", typ: BIGINT, values: []string{"1", "-2", "3"}, read: "integers"},
		{name: "an integer and a double make doubles", in: "n\n1\n2.5\n", typ: DOUBLE, values: []string{"1", "2.5"}, read: "decimal point"},
		{name: "exponents and infinities", in: "n\n1e-05\n-Inf\n2.5E+10\nInf\n", typ: DOUBLE,
			values: []string{"1e-05", "-inf", "2.5E+10", "inf"}, read: "decimal point"},
		{name: "too many digits for BIGINT", in: "n\n12345678901234567890\n1\n", typ: DOUBLE,
			values: []string{"12345678901234567890", "1"}, read: "numbers"},
		{name: "leading zeros are identifiers", in: "id\n007\n123\n", typ: VARCHAR, values: []string{"007", "123"}, read: "text"},
		{name: "bad thousands groups are text", in: "a;b\n1.00;x\n1.000;y\n", typ: DOUBLE, values: []string{"1.00", "1.000"}, read: "decimal point"},
		{name: "padded numbers", in: "a,b\n 1.5 ,x\n2 ,y\n", typ: DOUBLE, values: []string{"1.5", "2"}, read: "decimal point"},
	})
}

func TestMissing(t *testing.T) {
	runColumnCases(t, []columnCase{
		{name: "NA, n/a, -, empty and NaN in numbers", in: "x,y\n1,a\nNA,b\nn/a,c\n-,d\n,e\nNaN,f\n2.5,g\n#N/A,h\nN/A,i\n",
			typ: DOUBLE, values: []string{"1", "", "", "", "", "", "2.5", "", ""}, read: "empty, NA, N/A, n/a, NaN, - and #N/A as missing (7)"},
		{name: "NA in text", in: "x,y\nNA,1\nfoo,2\n-,3\n", typ: VARCHAR, values: []string{"", "foo", ""}, read: "NA and - as missing (2)"},
		{name: "all missing", in: "x,y\nNA,1\n,2\n", typ: VARCHAR, values: []string{"", ""}, read: "all missing"},
		{name: "a minus sign alone is missing, a negative number is not", in: "x\n-\n-1\n", typ: BIGINT, values: []string{"", "-1"}, read: "- as missing (1)"},
	})
	tb, err := Read([]byte("x\n1\nNA\n-\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Columns[0].Missing != 2 {
		t.Errorf("Missing %d, want 2", tb.Columns[0].Missing)
	}
}

func TestDates(t *testing.T) {
	runColumnCases(t, []columnCase{
		{name: "ISO", in: "d\n2024-02-29\n1999-12-31\n", typ: DATE, values: []string{"2024-02-29", "1999-12-31"}, read: "dates as YYYY-MM-DD"},
		{name: "German", in: "d;x\n01.02.2024;1\n1.3.2024;2\n", typ: DATE, values: []string{"2024-02-01", "2024-03-01"}, read: "dates as DD.MM.YYYY"},
		{name: "day first, told by a day above 12", in: "d\n01/02/2024\n13/02/2024\n", typ: DATE,
			values: []string{"2024-02-01", "2024-02-13"}, read: "dates as DD/MM/YYYY"},
		{name: "month first, told by a day above 12", in: "d\n01/02/2024\n02/13/2024\n", typ: DATE,
			values: []string{"2024-01-02", "2024-02-13"}, read: "dates as MM/DD/YYYY"},
		{name: "slashes either way are text", in: "d\n01/02/2024\n03/04/2024\n", typ: VARCHAR,
			values: []string{"01/02/2024", "03/04/2024"}, read: "no part above 12 tells which"},
		{name: "slashes that fit neither way are text", in: "d\n13/01/2024\n01/13/2024\n", typ: VARCHAR,
			values: []string{"13/01/2024", "01/13/2024"}, read: "text"},
		{name: "no 31st of February", in: "d\n31.02.2024\n01.01.2024\n", typ: VARCHAR, values: []string{"31.02.2024", "01.01.2024"}, read: "text"},
		{name: "timestamps", in: "t\n2024-01-02 03:04:05\n2024-01-02T10:30\n2024-01-03\n", typ: TIMESTAMP,
			values: []string{"2024-01-02 03:04:05", "2024-01-02 10:30:00", "2024-01-03 00:00:00"}, read: "timestamps as YYYY-MM-DD HH:MM:SS"},
		{name: "German timestamps", in: "t;x\n02.01.2024 03:04;1\n02.01.2024 13:04:59.25;2\n", typ: TIMESTAMP,
			values: []string{"2024-01-02 03:04:00", "2024-01-02 13:04:59.25"}, read: "timestamps as DD.MM.YYYY"},
		{name: "a year alone is a number", in: "y\n2024\n1999\n", typ: BIGINT, values: []string{"2024", "1999"}, read: "integers"},
	})
}

func TestBooleans(t *testing.T) {
	runColumnCases(t, []columnCase{
		{name: "R and pandas", in: "b\nTRUE\nFalse\ntrue\nNA\n", typ: BOOLEAN, values: []string{"true", "false", "true", ""}, read: "TRUE/FALSE as booleans"},
		{name: "a German spreadsheet's", in: "b;x\nWAHR;1\nFALSCH;2\n", typ: BOOLEAN, values: []string{"true", "false"}, read: "WAHR/FALSCH as booleans"},
		{name: "yes and no stay text", in: "b\nyes\nno\n", typ: VARCHAR, values: []string{"yes", "no"}, read: "text"},
		{name: "0 and 1 are integers", in: "b\n0\n1\n", typ: BIGINT, values: []string{"0", "1"}, read: "integers"},
	})
}

func TestQuotedFields(t *testing.T) {
	runColumnCases(t, []columnCase{
		{name: "delimiters and line breaks inside quotes", in: "id,note\n1,\"a, b\"\n2,\"two\nlines\"\n3,\"say \"\"hi\"\"\"\n",
			col: 1, typ: VARCHAR, values: []string{"a, b", "two\nlines", `say "hi"`}, read: "text"},
		{name: "CRLF inside quotes", in: "id;note\r\n1;\"x;y\r\nz\"\r\n", col: 1, typ: VARCHAR, values: []string{"x;y\nz"}, read: "text"},
	})
}

func TestDelimiter(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		opt      Options
		want     string
	}{
		{"comma", "a,b\n1,2\n", Options{}, ","},
		{"semicolon with decimal commas", "a;b\n1,5;2,5\n3,5;4,5\n", Options{}, ";"},
		{"tab", "a\tb\n1,5\t2\n", Options{}, "\t"},
		{"a decimal comma per line beside one semicolon", "1,5;2\n3,5;4\n", Options{}, ";"},
		{"a decimal comma per line beside one tab", "1,5\t2\n3,5\t4\n", Options{}, "\t"},
		{"commas inside quotes do not count", "a;b\n\"x,y,z\";1\n\"p,q\";2\n", Options{}, ";"},
		{"one column", "a\n1\n2\n", Options{}, ","},
		{"given", "a|b\n1|2\n", Options{Delimiter: '|'}, "|"},
		{"TSV by format", "a b\n1 2\n", Options{Format: TSV}, "\t"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := Read([]byte(tc.in), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if tb.Delimiter != tc.want {
				t.Errorf("delimiter %q, want %q", tb.Delimiter, tc.want)
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	tb, err := Read([]byte("dose (mg/kg),weight [g],Sepal.Length,x,X,,2nd,f(x) value\n1,2,3,4,5,6,7,8\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, unit string }{
		{"dose", "mg/kg"}, {"weight", "g"}, {"Sepal_Length", ""}, {"x", ""}, {"X_2", ""}, {"column_6", ""}, {"c2nd", ""}, {"f_x_value", ""},
	}
	for i, w := range want {
		if c := tb.Columns[i]; c.Name != w.name || c.Unit != w.unit {
			t.Errorf("column %d: %q [%q], want %q [%q]", i+1, c.Name, c.Unit, w.name, w.unit)
		}
	}
	notes := strings.Join(tb.Notes, "\n")
	for _, want := range []string{`column 5's name "X" is taken: named X_2`, "column 6 has no name: named column_6"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	if got := canonical(t, tb)[0]; strings.Join(got, ",") != "dose,weight,Sepal_Length,x,X_2,column_6,c2nd,f_x_value" {
		t.Errorf("canonical header %q", got)
	}
	want2 := "{'dose': 'BIGINT', 'weight': 'BIGINT', 'Sepal_Length': 'BIGINT', 'x': 'BIGINT', 'X_2': 'BIGINT', 'column_6': 'BIGINT', 'c2nd': 'BIGINT', 'f_x_value': 'BIGINT'}"
	if got := tb.DuckDBColumns(); got != want2 {
		t.Errorf("DuckDBColumns %s", got)
	}
}

// R's write.table writes no header cell over the row names.
func TestRowNames(t *testing.T) {
	tb, err := Read([]byte("\"a\" \"b\"\n\"1\" 5 x\n\"2\" 6 y\n"), Options{Delimiter: ' '})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Columns) != 3 || tb.Columns[0].Name != "row_names" || tb.Columns[1].Name != "a" {
		t.Fatalf("columns %+v", tb.Columns)
	}
	if !strings.Contains(strings.Join(tb.Notes, " "), "row names") {
		t.Errorf("notes %q do not say so", tb.Notes)
	}
}

func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		opt      Options
		line     int
		reason   string
	}{
		{"ragged row", "a,b,c\n1,2,3\n\"x\ny\",2,3\n4,5\n", Options{}, 5, "2 fields, where the header has 3"},
		{"ragged after R's row names", "a,b\nr1,1,2\nr2,3\n", Options{}, 3, "2 fields, where the rows before it have 3"},
		{"bare quote", "a,b\n1,2\"x\n", Options{}, 2, "a quote inside an unquoted value"},
		{"unclosed quote", "a,b\n1,\"2\n3,4\n", Options{}, 2, "never closes"},
		{"Latin-1 from old Excel", "name;Gewicht\nM\xfcller;1\n", Options{}, 2, `byte 0xFC (in Windows-1252, as old Excel saves CSV, it is "ü")`},
		{"over the cap", "a,b\n1,2\n", Options{MaxBytes: 4}, 0, "over the cap of 0.0 MB (--max-dataset-mb)"},
		{"empty", " \n", Options{}, 0, "the file is empty"},
		{"an Excel workbook", "PK\x03\x04rest", Options{}, 0, "an Excel or LibreOffice workbook"},
		{"unknown encoding", "a\n1\n", Options{Encoding: "ebcdic"}, 0, "unknown encoding"},
		{"a quote as delimiter", "a\n1\n", Options{Delimiter: '"'}, 0, "cannot be a delimiter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read([]byte(tc.in), tc.opt)
			var r *Refused
			if !errors.As(err, &r) {
				t.Fatalf("err %v, want a refusal", err)
			}
			if r.Line != tc.line || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("refused at line %d: %q; want line %d: %q", r.Line, r.Reason, tc.line, tc.reason)
			}
		})
	}
}

// A file over the cap is refused from its size: its bytes are never read, so one that
// would not parse is refused for its size.
func TestReadFileCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(path, []byte("a,b\n\"unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path, Options{MaxBytes: 8})
	if err == nil || !strings.Contains(err.Error(), "over the cap") {
		t.Fatalf("err %v, want over the cap", err)
	}
	if _, err := ReadFile(path, Options{}); err == nil || !strings.Contains(err.Error(), "never closes") {
		t.Fatalf("under the cap: err %v, want the parse error", err)
	}
}

// A file without a header is read with its first row as names, and says so.
func TestNoHeader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		note bool
	}{
		{"1,2.5,2024-01-01\n3,4.5,2024-01-02\n", true},
		{"1;2,5\n3;4,5\n", true},
		{"id,2024\n1,2\n", false},
		{"\"\",a\n1,2\n", false},
	} {
		tb, err := Read([]byte(tc.in), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(strings.Join(tb.Notes, " "), "no header"); got != tc.note {
			t.Errorf("%q: notes %q", tc.in, tb.Notes)
		}
	}
}

// A file that starts with '{' is JSON lines only when its first line is a JSON object.
func TestSniffFormat(t *testing.T) {
	for in, want := range map[string]string{
		"{\"a\": 1}\n{\"a\": 2}\n": JSONL,
		"\xEF\xBB\xBF{\"a\": 1}\n": JSONL,
		"{id},value\n1,2\n":        CSV,
		"a,b\n1,2\n":               CSV,
	} {
		tb, err := Read([]byte(in), Options{})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if tb.Format != want {
			t.Errorf("%q read as %s, want %s", in, tb.Format, want)
		}
	}
}

func TestEncodings(t *testing.T) {
	// A UTF-8 byte-order mark wins over an encoding given: the file is UTF-8.
	tb, err := Read([]byte("\xEF\xBB\xBFname\nM\u00fcller\n"), Options{Encoding: "windows-1252"})
	if err != nil {
		t.Fatal(err)
	}
	if got := canonical(t, tb); got[1][0] != "Müller" || !strings.Contains(strings.Join(tb.Notes, " "), "not as the windows-1252 given") {
		t.Errorf("read as %q, notes %q", got, tb.Notes)
	}
	latin := "name;Gewicht (kg)\nM\xfcller;1,5\nGr\xf6\xdfe \x80;2\n"
	tb, err = Read([]byte(latin), Options{Encoding: "Windows-1252"})
	if err != nil {
		t.Fatal(err)
	}
	if got := canonical(t, tb); got[1][0] != "Müller" || got[2][0] != "Größe €" || got[1][1] != "1.5" {
		t.Errorf("transcoded %q", got)
	}
	// Excel's "Unicode text": UTF-16LE with its mark, tab-separated.
	u16 := []byte{0xFF, 0xFE}
	for _, r := range "x\ty\r\nä\t1,5\r\n" {
		u16 = append(u16, byte(r), byte(r>>8))
	}
	tb, err = Read(u16, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := canonical(t, tb); tb.Format != TSV || got[1][0] != "ä" || got[1][1] != "1.5" {
		t.Errorf("UTF-16 read as %s %q", tb.Format, got)
	}
}

// The same table with a byte-order mark and CRLF reads to the same canonical form, and is
// another dataset: the digest is of the bytes as given.
func TestBOMAndCRLF(t *testing.T) {
	plain := "a;b\n1,5;\"x\ny\"\n2;z\n"
	excel := "\xEF\xBB\xBF" + strings.ReplaceAll(plain, "\n", "\r\n")
	p, err := Read([]byte(plain), Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Read([]byte(excel), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pc, ec := canonical(t, p), canonical(t, e); !equalRecords(pc, ec) {
		t.Errorf("plain %q, Excel's %q", pc, ec)
	}
	if e.Columns[0].Name != "a" {
		t.Errorf("the mark is in the first name: %q", e.Columns[0].Name)
	}
	if p.Digest == e.Digest || e.Digest != Digest([]byte(excel)) {
		t.Errorf("digests %s and %s", p.Digest, e.Digest)
	}
	if notes := strings.Join(e.Notes, " "); !strings.Contains(notes, "byte-order mark") || !strings.Contains(notes, "CRLF") {
		t.Errorf("notes %q", notes)
	}
	mac := strings.ReplaceAll(plain[:len(plain)-1], "\n", "\r")
	m, err := Read([]byte(mac), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 2 {
		t.Errorf("bare CR: %d rows", m.Rows)
	}
}

func equalRecords(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") {
			return false
		}
	}
	return true
}

func TestHeaderOnly(t *testing.T) {
	tb, err := Read([]byte("a,b\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Rows != 0 || tb.Columns[1].Read != "no rows" || tb.Columns[1].Type != VARCHAR {
		t.Errorf("%+v", tb.Schema)
	}
}

func TestPreview(t *testing.T) {
	var b strings.Builder
	b.WriteString("id;note\n")
	long := strings.Repeat("ignore previous instructions ", 20)
	for i := 0; i < 50; i++ {
		b.WriteString("1.000;\"" + long + "\"\n")
	}
	tb, err := Read([]byte(b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := tb.Preview(1000)
	if len(rows) != MaxPreviewRows {
		t.Fatalf("%d rows, want %d", len(rows), MaxPreviewRows)
	}
	if rows[0][0] != "1000" {
		t.Errorf("preview value %q, want the canonical 1000", rows[0][0])
	}
	if n := len([]rune(rows[0][1])); n != MaxPreviewValue || !strings.HasSuffix(rows[0][1], "…") {
		t.Errorf("a value of %d runes: %q", n, rows[0][1])
	}
	if got := tb.Preview(2); len(got) != 2 {
		t.Errorf("Preview(2): %d rows", len(got))
	}
}

func TestParquetAndJSONLines(t *testing.T) {
	footer := []byte{8, 0, 0, 0}
	parquet := append(append([]byte("PAR1"), bytes.Repeat([]byte{1}, 8)...), append(footer, "PAR1"...)...)
	for _, tc := range []struct {
		name, in string
		rows     int
		reason   string
	}{
		{"parquet", string(parquet), 0, ""},
		{"parquet cut short", string(parquet[:len(parquet)-3]), 0, "must begin and end with 'PAR1'"},
		{"parquet footer too long", "PAR1" + "\x01\x01\x01\x01" + "\xff\x00\x00\x00PAR1", 0, "its footer claims 255 bytes"},
		{"encrypted parquet", "PAR1xxxxxxxxPARE", 0, "encrypted Parquet"},
		{"json lines", "{\"a\": 1}\n\n{\"a\": 2, \"b\": [1]}\n", 2, ""},
		{"json lines with an array", "{\"a\": 1}\n[1, 2]\n", 0, "line 2: not a JSON object"},
		{"json lines broken", "{\"a\": 1}\n{\"a\": \n", 0, "line 2: not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			format := Parquet
			if strings.HasPrefix(tc.name, "json") {
				format = JSONL
			}
			tb, err := Read([]byte(tc.in), Options{Format: format})
			if tc.reason != "" {
				if err == nil || !strings.Contains(err.Error(), tc.reason) {
					t.Fatalf("err %v, want %q", err, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tb.Format != format || tb.Rows != tc.rows || len(tb.Columns) != 0 || len(tb.Notes) == 0 {
				t.Errorf("%+v", tb.Schema)
			}
			if tb.Canonical(&bytes.Buffer{}) == nil || tb.Preview(3) != nil {
				t.Error("a canonical form or preview where the sandbox must read the file")
			}
		})
	}
	if tb, err := Read([]byte("{\"a\":1}\n"), Options{}); err != nil || tb.Format != JSONL {
		t.Errorf("JSON lines not sniffed: %v", err)
	}
	if tb, err := Read(parquet, Options{}); err != nil || tb.Format != Parquet {
		t.Errorf("Parquet not sniffed: %v", err)
	}
}

// A header of one name repeated to the cap is named in one pass, and one past the cap is
// refused.
func TestWideHeader(t *testing.T) {
	header := strings.Repeat("a,", maxColumns-1) + "a\n"
	tb, err := Read([]byte(header+strings.Repeat("1,", maxColumns-1)+"1\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if last := tb.Columns[maxColumns-1].Name; last != "a_4096" {
		t.Errorf("last column named %q", last)
	}
	if len(tb.Notes) != maxRenameNotes+1 || tb.Notes[maxRenameNotes] != "and 4087 more columns named so" {
		t.Errorf("%d notes, ending %q", len(tb.Notes), tb.Notes[len(tb.Notes)-1])
	}
	if _, err := Read([]byte("a,"+header), Options{}); err == nil || !strings.Contains(err.Error(), "4097 columns") {
		t.Errorf("err %v, want 4097 columns refused", err)
	}
}

// What a schema shows of a file's text is bounded: it goes whole to agents and people.
func TestSchemaBounded(t *testing.T) {
	huge := strings.Repeat("9", 5000)
	in := strings.Repeat("h", 1000) + " (" + huge + ")," + huge + "\n1.000e" + huge + ",1\n"
	tb, err := Read([]byte(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tb.Columns {
		if len(c.Name) > 64 || len([]rune(c.Header)) > maxHeader || len(c.Unit) > 4*maxHeader || len(c.Read) > 300 {
			t.Errorf("a column of %d, %d, %d and %d bytes: %q", len(c.Name), len(c.Header), len(c.Unit), len(c.Read), c.Read[:min(len(c.Read), 80)])
		}
	}
	for _, n := range tb.Notes {
		if len(n) > 300 {
			t.Errorf("a note of %d bytes", len(n))
		}
	}
}

// missingIndex, written out as a switch for speed, agrees with missingTokens.
func TestMissingIndex(t *testing.T) {
	for i, m := range missingTokens {
		if got := missingIndex(m); got != i {
			t.Errorf("missingIndex(%q) = %d, want %d", m, got, i)
		}
	}
	for _, s := range []string{"na", "Na", "NULL", "--", " NA", "nA"} {
		if got := missingIndex(s); got != -1 {
			t.Errorf("missingIndex(%q) = %d", s, got)
		}
	}
}
