// Package dataset reads a lab's tables as labs export them (CSV and TSV from R, pandas,
// Excel and LibreOffice, Parquet, JSON lines) into a schema a scientist can check and a
// canonical CSV a sandbox can load without guessing, or refuses them with the reason.
//
// Why not let DuckDB sniff: its default reader takes a European "1.000" for 1.0 and says
// nothing. Here every column says how it was read ("decimal comma, '.' thousands", "dates
// as DD.MM.YYYY", "NA and - as missing (12)"), and what cannot be told apart is read as
// text with the reason, never guessed.
//
// The rules, each a decision a scientist can check in the schema:
//
//   - The first line is the header. A trailing "(unit)" or "[unit]" is the column's Unit;
//     names keep letters, digits and '_' and are made unique case-insensitively, with a
//     note. R's write.table, which writes no header cell over the row names, gets a
//     row_names column. A header of numbers and dates only is noted as perhaps data.
//   - Missing, in every column: empty, NA, N/A, n/a, NaN, nan, - and #N/A, counted per
//     column. NaN is missing, not a number: R writes it for 0/0, and a NaN in DuckDB
//     would carry into every mean of its column.
//   - Numbers: a column is read with a decimal point (',' thousands) or a decimal comma
//     ('.' thousands) when only one reads all its values; where both do ("1.000"), the
//     file's other columns decide, else a semicolon-separated file means decimal commas;
//     columns of both kinds in one file leave such a column text. Thousands groups are
//     strict; "007" is text (an identifier); over 18 digits is DOUBLE; Inf and -Inf are.
//   - Dates: YYYY-MM-DD and DD.MM.YYYY; D/M/YYYY against M/D/YYYY only where a part above
//     12 tells, else text with the reason. A time (HH:MM[:SS[.f]]) makes a TIMESTAMP;
//     time zones and two-digit years stay text.
//   - Booleans: TRUE, True and true (R, Excel, pandas) and their FALSE, and WAHR/FALSCH and
//     VRAI/FAUX (German and French spreadsheets); 0/1 and yes/no are not.
//   - Encodings: UTF-8 (with or without its byte-order mark) and UTF-16 with its mark are
//     read; anything else is refused naming the byte, its line and what it would be in
//     Windows-1252, unless that encoding is given: guessing it would be silent when wrong.
//   - Refused with the line: ragged rows, a quote inside an unquoted value, a quote that
//     never closes, quotes escaped with a backslash (R's write.table default).
//
// Parquet and JSON lines are only checked cheaply here (Parquet's magic at both ends, each
// JSON line an object within a bound): their columns are read by the DuckDB sandbox, so
// their Schema has Rows and Columns empty (Rows is set for JSON lines) and says so in Notes.
package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Formats a Schema names.
const (
	CSV     = "csv"
	TSV     = "tsv"
	Parquet = "parquet"
	JSONL   = "jsonl"
)

// DuckDB type names a Column is read as.
const (
	BIGINT    = "BIGINT"
	DOUBLE    = "DOUBLE"
	DATE      = "DATE"
	TIMESTAMP = "TIMESTAMP"
	BOOLEAN   = "BOOLEAN"
	VARCHAR   = "VARCHAR"
)

// DefaultMaxBytes caps a table when Options gives none: 512 MiB, well above a million-row
// CSV (about 60 MB) and below what the sandbox's memory cap can load.
const DefaultMaxBytes = 512 << 20

// Schema is what a table holds, as shown to the scientist and given to agents.
type Schema struct {
	Format    string   `json:"format"`
	Delimiter string   `json:"delimiter,omitempty"` // CSV and TSV only: ",", ";" or "\t"
	Rows      int      `json:"rows"`                // data rows, the header not counted
	Columns   []Column `json:"columns,omitempty"`   // empty for Parquet and JSON lines
	Notes     []string `json:"notes,omitempty"`     // what was done to the file as a whole
}

// Column is one column as read. Name is unique in the table (case-insensitively, as
// DuckDB compares names) and made of letters, digits and '_'; Header is the header cell
// as written. Read says how the values were read, for the scientist.
type Column struct {
	Name    string `json:"name"`
	Header  string `json:"header,omitempty"`
	Unit    string `json:"unit,omitempty"`
	Type    string `json:"type"`
	Read    string `json:"read"`
	Missing int    `json:"missing"`
}

// Options are what the caller knows of a file. The zero value sniffs everything.
type Options struct {
	Format    string // "", CSV, TSV, Parquet or JSONL; "" tells by the content
	Delimiter rune   // 0 sniffs comma, semicolon or tab
	// Encoding is "" (UTF-8, refused otherwise) or "windows-1252" (also "latin1"): the
	// bytes are transcoded. It is not guessed: a wrong guess turns every umlaut silently
	// into another letter, where a refusal names the byte and what to do.
	Encoding string
	MaxBytes int64 // 0 means DefaultMaxBytes
}

func (o Options) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

// Refused is a table that could not be read, with the reason a scientist can act on.
type Refused struct {
	Line   int // 1-based line of the file where the problem is, 0 for the file as a whole
	Reason string
}

func (e *Refused) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("dataset: line %d: %s", e.Line, e.Reason)
	}
	return "dataset: " + e.Reason
}

func refuse(line int, format string, args ...any) *Refused {
	return &Refused{Line: line, Reason: fmt.Sprintf(format, args...)}
}

// Table is a read table: its schema, the digest of the original bytes (datasets are
// content-addressed: the same bytes are the same dataset) and what Canonical and Preview
// need to write its values.
type Table struct {
	Schema
	Digest string // sha256 of the original bytes, lowercase hex

	text  []byte // UTF-8 without a byte-order mark (CSV and TSV)
	comma rune
	cols  []reading
}

// Digest is the sha256 of data in lowercase hex, the key a dataset is stored under.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ReadFile reads the table at path, refusing a file over the cap before reading it.
func ReadFile(path string, opt Options) (*Table, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Size() > opt.maxBytes() {
		return nil, tooBig(info.Size(), opt.maxBytes())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Read(data, opt)
}

func tooBig(size, limit int64) *Refused {
	return refuse(0, "the file is %s, over the cap of %s (--max-dataset-mb)", mb(size), mb(limit))
}

func mb(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// Read reads a table from its bytes. A file over the cap is refused before it is parsed.
func Read(data []byte, opt Options) (*Table, error) {
	if int64(len(data)) > opt.maxBytes() {
		return nil, tooBig(int64(len(data)), opt.maxBytes())
	}
	digest := Digest(data)
	format := opt.Format
	if format == "" {
		format = sniffFormat(data)
	}
	var t *Table
	var err error
	switch format {
	case Parquet:
		t, err = readParquet(data)
	case JSONL:
		t, err = readJSONLines(data)
	case CSV, TSV:
		t, err = readDelimited(data, opt, format)
	default:
		return nil, refuse(0, "unknown format %q (csv, tsv, parquet or jsonl)", format)
	}
	if err != nil {
		return nil, err
	}
	t.Digest = digest
	return t, nil
}

// sniffFormat tells the format by the content: other formats are refused by name, since
// a workbook uploaded as CSV would otherwise be refused as a ragged or non-UTF-8 CSV.
func sniffFormat(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("PAR1")):
		return Parquet
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return "xlsx (a zip archive: an Excel or LibreOffice workbook; export it as CSV)"
	case bytes.HasPrefix(data, []byte("\xD0\xCF\x11\xE0")):
		return "xls (an old Excel workbook; export it as CSV)"
	}
	// JSON lines when the first line is a JSON object: a CSV whose first cell begins
	// with '{' is still a CSV.
	first := bytes.TrimLeft(bytes.TrimPrefix(data, bom), " \t\r\n")
	if end := bytes.IndexByte(first, '\n'); end >= 0 {
		first = first[:end]
	}
	if first = bytes.TrimSpace(first); len(first) > 0 && first[0] == '{' && json.Valid(first) {
		return JSONL
	}
	return CSV
}

var bom = []byte("\xEF\xBB\xBF")

// toUTF8 returns the text as UTF-8 without a byte-order mark, with notes of what was done.
func toUTF8(data []byte, encoding string) ([]byte, []string, error) {
	switch {
	case bytes.HasPrefix(data, bom):
		// The mark says UTF-8 whatever encoding was given: transcoding it as another
		// would turn every umlaut into two letters.
		notes := []string{"a UTF-8 byte-order mark (Excel's 'CSV UTF-8') dropped"}
		if encoding != "" && !isUTF8Name(encoding) {
			notes = append(notes, fmt.Sprintf("read as UTF-8, as its byte-order mark says, not as the %s given", encoding))
		}
		return checkUTF8(data[len(bom):], notes)
	case bytes.HasPrefix(data, []byte("\xFF\xFE")), bytes.HasPrefix(data, []byte("\xFE\xFF")):
		return fromUTF16(data)
	}
	switch {
	case encoding == "" || isUTF8Name(encoding):
		return checkUTF8(data, nil)
	case isWindows1252Name(encoding):
		return fromWindows1252(data), []string{"transcoded from Windows-1252 as asked"}, nil
	}
	return nil, nil, refuse(0, "unknown encoding %q (UTF-8 or windows-1252)", encoding)
}

func isUTF8Name(e string) bool {
	switch strings.ToLower(e) {
	case "utf-8", "utf8":
		return true
	}
	return false
}

func isWindows1252Name(e string) bool {
	switch strings.ToLower(e) {
	case "windows-1252", "cp1252", "latin1", "latin-1", "iso-8859-1":
		return true
	}
	return false
}

func checkUTF8(data []byte, notes []string) ([]byte, []string, error) {
	if utf8.Valid(data) {
		return data, notes, nil
	}
	at := 0
	for at < len(data) {
		r, n := utf8.DecodeRune(data[at:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		at += n
	}
	line := 1 + bytes.Count(data[:at], []byte("\n"))
	b := data[at]
	hint := ""
	if b >= 0xA0 {
		hint = fmt.Sprintf(" (in Windows-1252, as old Excel saves CSV, it is %q)", string(rune(b)))
	}
	return nil, nil, refuse(line, "not UTF-8: byte 0x%02X%s; save the file as 'CSV UTF-8', or give the encoding windows-1252", b, hint)
}

// win1252 holds what Windows-1252 puts at 0x80-0x9F, where Latin-1 has control codes;
// 0 marks the five bytes it leaves undefined.
var win1252 = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}

func fromWindows1252(data []byte) []byte {
	out := make([]byte, 0, len(data)+len(data)/8)
	for _, b := range data {
		switch {
		case b < 0x80:
			out = append(out, b)
		case b < 0xA0 && win1252[b-0x80] != 0:
			out = utf8.AppendRune(out, win1252[b-0x80])
		default:
			out = utf8.AppendRune(out, rune(b))
		}
	}
	return out
}

// fromUTF16 reads Excel's "Unicode text" export (UTF-16 with its byte-order mark).
func fromUTF16(data []byte) ([]byte, []string, error) {
	if len(data)%2 != 0 {
		return nil, nil, refuse(0, "UTF-16 with an odd number of bytes: the file is cut short")
	}
	little := data[0] == 0xFF
	units := make([]uint16, 0, len(data)/2-1)
	for i := 2; i+1 < len(data); i += 2 {
		if little {
			units = append(units, uint16(data[i])|uint16(data[i+1])<<8)
		} else {
			units = append(units, uint16(data[i])<<8|uint16(data[i+1]))
		}
	}
	runes := utf16.Decode(units)
	out := make([]byte, 0, len(runes))
	for _, r := range runes {
		out = utf8.AppendRune(out, r)
	}
	return out, []string{"transcoded from UTF-16 (Excel's 'Unicode text')"}, nil
}
