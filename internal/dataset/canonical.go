package dataset

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// Canonical writes a CSV or TSV table in the one dialect the sandbox loads without
// sniffing: UTF-8, comma-separated, "\n" line ends, quotes only where needed (doubled
// inside), a header of the columns' Names, '.' decimals without thousands separators,
// dates as YYYY-MM-DD and timestamps as YYYY-MM-DD HH:MM:SS, booleans as true/false, and
// every missing value empty (load it with nullstr the empty string and the Columns' types;
// in a table of one column it is written "", as a blank line would be skipped). A text
// value that is itself empty is missing too: the file cannot tell them apart.
//
// Load it with DuckDB as
//
//	read_csv(path, header = true, auto_detect = false, delim = ',', quote = '"',
//	    escape = '"', nullstr = '', columns = <Schema.DuckDBColumns()>)
//
// Checked with DuckDB 1.5.6 (duckdb-go v2.10506.0): every table in testdata/lab loads cell
// for cell as Canonical wrote it, and so do a one-column table's "" (NULL), inf and -inf,
// exponents, BIGINT overflow written as DOUBLE, quotes and line breaks in text, and
// fractional seconds.
func (t *Table) Canonical(w io.Writer) error {
	if t.text == nil {
		return errors.New("dataset: only a CSV or TSV table has a canonical form; the sandbox reads " + t.Format + " itself")
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for i, c := range t.Columns {
		if i > 0 {
			line = append(line, ',')
		}
		line = appendField(line, c.Name)
	}
	if _, err := bw.Write(append(line, '\n')); err != nil {
		return err
	}
	err := t.eachRow(-1, func(rec []string) error {
		line = line[:0]
		for i, v := range rec {
			if i > 0 {
				line = append(line, ',')
			}
			r := &t.cols[i]
			if r.typ != VARCHAR {
				// Numbers, dates and booleans as written here need no quotes.
				line, _ = r.appendTo(line, v)
				continue
			}
			if missingIndex(trimSpace(v)) < 0 {
				line = appendField(line, v) // text as written
			}
		}
		if len(rec) == 1 && len(line) == 0 {
			// A blank line is no record to a CSV reader: one column's missing value is
			// written quoted, which DuckDB reads as NULL (allow_quoted_nulls).
			line = append(line, '"', '"')
		}
		_, err := bw.Write(append(line, '\n'))
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// DuckDBColumns is the columns argument of DuckDB's read_csv for the canonical form:
// {'name': 'TYPE', ...} in the table's order. Names are letters, digits and '_' (see
// Column), so they need no escaping; a quote is doubled all the same.
func (s Schema) DuckDBColumns() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range s.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + strings.ReplaceAll(c.Name, "'", "''") + "': '" + c.Type + "'")
	}
	b.WriteByte('}')
	return b.String()
}

// appendField appends a text field, quoted where it holds a comma, a quote or a line end
// (its quotes doubled), as RFC 4180 and DuckDB have it.
func appendField(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for j := 0; j < len(s); j++ {
		if s[j] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[j])
	}
	return append(dst, '"')
}

// eachRow calls f with each data record (at most limit, or all when limit < 0), with
// the row-names column where the header lacked it. The records were checked by scan.
func (t *Table) eachRow(limit int, f func([]string) error) error {
	r := t.reader()
	if _, err := r.Read(); err != nil {
		return csvError(err, t.text)
	}
	pad := len(t.Columns)
	for n := 0; limit < 0 || n < limit; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvError(err, t.text)
		}
		if len(rec) != pad {
			return refuse(0, "the table changed since it was read")
		}
		if err := f(rec); err != nil {
			return err
		}
	}
	return nil
}

// Preview limits: agents see a few rows, never a whole table, and no value long enough to
// carry a page of text. The agent layer delimits them as data; they are never instructions.
const (
	MaxPreviewRows  = 10
	MaxPreviewValue = 64 // runes; a longer value is cut and ends in "…"
)

// Preview returns at most n (and MaxPreviewRows) rows in their canonical form, each value
// at most MaxPreviewValue runes, "" for a missing value. Parquet and JSON lines have none
// here: the sandbox reads them.
func (t *Table) Preview(n int) [][]string {
	if t.text == nil || n <= 0 {
		return nil
	}
	n = min(n, MaxPreviewRows)
	var rows [][]string
	_ = t.eachRow(n, func(rec []string) error {
		row := make([]string, len(rec))
		for i, v := range rec {
			row[i] = bound(t.cols[i].convert(v), MaxPreviewValue)
		}
		rows = append(rows, row)
		return nil
	})
	return rows
}

// bound cuts s to at most n runes, marking the cut.
func bound(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for k < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	return s[:i] + "…"
}
