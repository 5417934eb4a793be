package dataset

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRead: whatever the bytes, Read refuses them or gives a table whose canonical form
// reads back as exactly its rows and columns, with unique names and a bounded preview.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/lab/*")
	for _, path := range files {
		if strings.HasSuffix(path, ".json") {
			continue
		}
		if data, err := os.ReadFile(path); err == nil && len(data) < 8<<10 {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"a;b\n1.000;1,5\n", "a,b\n\"x\ny\",2\n", "\xEF\xBB\xBFa\r\nNA\r\n-\r\n", "a\n01/02/2024\n13/02/2024\n",
		"a,a,A,\n1,2,3,4\n", "{\"a\":1}\n", "PAR1\x00\x00\x00\x00\x00\x00\x00\x00PAR1", "\xff\xfea\x00\n\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := Read(data, Options{MaxBytes: 1 << 20})
		if err != nil || tb.text == nil {
			return
		}
		var buf bytes.Buffer
		if err := tb.Canonical(&buf); err != nil {
			t.Fatalf("Canonical of a table Read took: %v", err)
		}
		if !utf8.Valid(buf.Bytes()) {
			t.Fatal("the canonical form is not UTF-8")
		}
		r := csv.NewReader(&buf)
		r.FieldsPerRecord = len(tb.Columns)
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatalf("the canonical form does not read back: %v", err)
		}
		if len(recs) != tb.Rows+1 {
			t.Fatalf("%d records written for %d rows", len(recs), tb.Rows)
		}
		seen := map[string]bool{}
		for _, c := range tb.Columns {
			if c.Name == "" || seen[strings.ToLower(c.Name)] {
				t.Fatalf("name %q empty or repeated", c.Name)
			}
			seen[strings.ToLower(c.Name)] = true
		}
		rows := tb.Preview(MaxPreviewRows + 5)
		if len(rows) > MaxPreviewRows || len(rows) > tb.Rows {
			t.Fatalf("a preview of %d rows of %d", len(rows), tb.Rows)
		}
		for _, row := range rows {
			for _, v := range row {
				if utf8.RuneCountInString(v) > MaxPreviewValue {
					t.Fatalf("a preview value of %d runes", utf8.RuneCountInString(v))
				}
			}
		}
	})
}
