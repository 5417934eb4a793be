package dataset

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxColumns bounds a table's width, which the sandbox loads with explicit types.
const maxColumns = 4096

// readDelimited reads a CSV or TSV: the first record is the header, every other record
// has as many fields (or, as R's write.table writes row names, the header one fewer).
func readDelimited(data []byte, opt Options, format string) (*Table, error) {
	text, notes, err := toUTF8(data, opt.Encoding)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, refuse(0, "the file is empty")
	}
	if bytes.IndexByte(text, '\n') < 0 && bytes.IndexByte(text, '\r') >= 0 {
		// Excel's "CSV (Macintosh)": lines end in a bare CR, which encoding/csv does not
		// end a record at.
		text = bytes.ReplaceAll(text, []byte("\r"), []byte("\n"))
		notes = append(notes, "line ends of a bare CR (old Macintosh) read as line ends")
	} else if bytes.Contains(text, []byte("\r\n")) {
		notes = append(notes, "CRLF line ends")
	}
	comma := opt.Delimiter
	if comma == 0 {
		if format == TSV {
			comma = '\t'
		} else {
			comma = sniffDelimiter(text)
		}
	}
	if comma == '"' || comma == '\r' || comma == '\n' || comma == utf8.RuneError || !utf8.ValidRune(comma) {
		return nil, refuse(0, "%q cannot be a delimiter", comma)
	}
	t := &Table{text: text, comma: comma}
	t.Format, t.Delimiter, t.Notes = CSV, string(comma), notes
	if comma == '\t' {
		t.Format = TSV
	}
	if err := t.scan(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Table) reader() *csv.Reader {
	r := csv.NewReader(bytes.NewReader(t.text))
	r.Comma = t.comma
	r.FieldsPerRecord = -1 // counted here, to name the line and allow R's row names
	r.ReuseRecord = true
	return r
}

// scan reads every record once, gathering what each column's values allow, then resolves
// the columns.
func (t *Table) scan() error {
	r := t.reader()
	header, err := r.Read()
	if err != nil {
		return csvError(err, t.text)
	}
	header = append([]string(nil), header...)
	if len(header) > maxColumns {
		return refuse(1, "%d columns, over the %d a table may have", len(header), maxColumns)
	}
	cols := make([]*column, len(header))
	for i := range cols {
		cols[i] = newColumn()
	}
	rowNames := false
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return csvError(err, t.text)
		}
		if t.Rows == 0 && len(rec) == len(header)+1 {
			// R's write.table writes no header cell over the row names.
			rowNames = true
			header = append([]string{""}, header...)
			cols = append(cols, newColumn())
			t.Notes = append(t.Notes, "the header has one field fewer than the rows, as R's write.table writes row names: the first column is the row names")
		}
		if len(rec) != len(header) {
			line, _ := r.FieldPos(0)
			before := "the header has"
			if rowNames {
				before = "the rows before it have"
			}
			return refuse(line, "%d fields, where %s %d (a ragged row: a delimiter inside an unquoted value, or a value missing its delimiter)", len(rec), before, len(header))
		}
		for i, v := range rec {
			cols[i].add(v)
		}
		t.Rows++
	}
	if headerLooksLikeData(header) {
		t.Notes = append(t.Notes, "the first line, read as the header, holds only numbers and dates: if the file has no header, its first row is read as the column names")
	}
	t.Columns, t.Notes = columnNames(header, t.Notes, rowNames)
	t.resolve(cols)
	return nil
}

// headerLooksLikeData: a header of numbers and dates only is most likely a first row of
// data (R's write.table with col.names = FALSE, a sheet saved without its header line).
func headerLooksLikeData(header []string) bool {
	for _, h := range header {
		v := trimSpace(h)
		if v == "" {
			return false
		}
		if styles, _, _ := scanDate(v); styles == 0 && scanNumber(v, '.', ',') == notNumber && scanNumber(v, ',', '.') == notNumber {
			return false
		}
	}
	return len(header) > 0
}

// resolve sets each column's type: first the columns whose numbers only one convention
// reads, which are the file's evidence for the ones both read.
func (t *Table) resolve(cols []*column) {
	ev := evidence{semicolon: t.comma == ';'}
	for _, c := range cols {
		switch point, comma := c.conventions(); {
		case c.values == 0:
		case point && !comma:
			ev.point++
		case comma && !point:
			ev.comma++
		}
	}
	t.cols = make([]reading, len(cols))
	for i, c := range cols {
		r, read := c.resolve(ev)
		if t.Rows == 0 {
			read = "no rows"
		}
		if missing, n := c.missingRead(); n > 0 {
			read += "; " + missing
		}
		t.cols[i] = r
		t.Columns[i].Type, t.Columns[i].Read, t.Columns[i].Missing = r.typ, read, sum(c.missing[:])
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// csvError turns encoding/csv's error into a refusal naming the line.
func csvError(err error, text []byte) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return refuse(0, "%v", err)
	}
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return refuse(pe.Line, "a quote inside an unquoted value (column %d): quote the whole value and double the quotes inside it", pe.Column)
	case errors.Is(pe.Err, csv.ErrQuote) && backslashQuote(text, pe.Line):
		return refuse(pe.StartLine, "a quote escaped with a backslash (\\\"), as R's write.table writes by default: write the file with qmethod = \"double\" (or write.csv), which doubles quotes inside values")
	case errors.Is(pe.Err, csv.ErrQuote):
		return refuse(pe.StartLine, "a quoted value that never closes, or text after its closing quote (line %d, column %d)", pe.Line, pe.Column)
	}
	return refuse(pe.Line, "%v", pe.Err)
}

// backslashQuote tells whether a backslash before a quote is on the line, or the one
// before it (where encoding/csv read the quoted value from).
func backslashQuote(text []byte, line int) bool {
	for n := 1; n < line-1 && len(text) > 0; n++ {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			return false
		}
		text = text[i+1:]
	}
	end := 0
	for k := 0; k < 2 && end < len(text); k++ {
		i := bytes.IndexByte(text[end:], '\n')
		if i < 0 {
			end = len(text)
			break
		}
		end += i + 1
	}
	return bytes.Contains(text[:end], []byte(`\"`))
}

// sniffDelimiter picks comma, semicolon or tab: the one found the same number of times,
// outside quotes, in each of the first records, the most often (tab, then semicolon, on a
// tie); else the most frequent in the header; else comma (a one-column file).
func sniffDelimiter(text []byte) rune {
	candidates := []byte{',', ';', '\t'}
	var counts [][3]int
	var cur [3]int
	quoted := false
	for i := 0; i < len(text) && len(counts) < 20; i++ {
		c := text[i]
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '\n':
			counts = append(counts, cur)
			cur = [3]int{}
		default:
			for k, d := range candidates {
				if c == d {
					cur[k]++
				}
			}
		}
	}
	if len(counts) < 20 && cur != [3]int{} {
		counts = append(counts, cur)
	}
	if len(counts) == 0 {
		return ',' // one line without a delimiter: one column
	}
	best, bestCount := -1, 0
	for k := range candidates {
		n := counts[0][k]
		consistent := n > 0
		for _, row := range counts[1:] {
			consistent = consistent && row[k] == n
		}
		// On a tie the later wins: a semicolon (or tab) on every line beside as many
		// commas is Europe's CSV with a decimal comma per line, not the other way round.
		if consistent && n >= bestCount && n > 0 {
			best, bestCount = k, n
		}
	}
	if best < 0 {
		for k := range candidates {
			if counts[0][k] > bestCount {
				best, bestCount = k, counts[0][k]
			}
		}
	}
	if best < 0 {
		return ','
	}
	return rune(candidates[best])
}

// columnNames makes each header cell a column: its unit split off ("dose (mg/kg)",
// "weight [g]"), its name made of letters, digits and '_' so that SQL needs no quotes, and
// unique case-insensitively (DuckDB's names are). What was changed is said in notes.
func columnNames(header []string, notes []string, rowNames bool) ([]Column, []string) {
	cols := make([]Column, len(header))
	taken := names{used: make(map[string]bool, len(header)), next: map[string]int{}}
	var renamed []string
	for i, h := range header {
		h = bound(strings.TrimSpace(h), maxHeader)
		name, unit := splitUnit(h)
		clean := identifier(name)
		if clean == "" && i == 0 && rowNames {
			clean = "row_names"
		} else if clean == "" {
			clean = fmt.Sprintf("column_%d", i+1)
			renamed = append(renamed, fmt.Sprintf("column %d has no name: named %s", i+1, clean))
		}
		unique := taken.unique(clean)
		if !strings.EqualFold(unique, clean) {
			renamed = append(renamed, fmt.Sprintf("column %d's name %q is taken: named %s", i+1, h, unique))
		}
		cols[i] = Column{Name: unique, Header: h, Unit: unit}
	}
	if len(renamed) > maxRenameNotes {
		more := len(renamed) - maxRenameNotes
		renamed = append(renamed[:maxRenameNotes], fmt.Sprintf("and %d more columns named so", more))
	}
	return cols, append(notes, renamed...)
}

// A header cell is kept to maxHeader runes, and at most maxRenameNotes renamings are told
// one by one: a schema is shown whole to agents and people.
const (
	maxHeader      = 128
	maxRenameNotes = 8
)

// splitUnit splits a trailing "(unit)" or "[unit]" off a header.
func splitUnit(h string) (name, unit string) {
	if len(h) < 3 {
		return h, ""
	}
	closer := h[len(h)-1]
	opener := map[byte]byte{')': '(', ']': '['}[closer]
	if opener == 0 {
		return h, ""
	}
	open := strings.LastIndexByte(h, opener)
	if open <= 0 {
		return h, ""
	}
	name, unit = strings.TrimSpace(h[:open]), strings.TrimSpace(h[open+1:len(h)-1])
	if name == "" || unit == "" {
		return h, ""
	}
	return name, unit
}

// identifier keeps letters and digits and turns every other run into one '_'
// ("Sepal.Length" -> "Sepal_Length"); a name starting with a digit gets a 'c'.
func identifier(s string) string {
	var b strings.Builder
	gap := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteRune(r)
			continue
		}
		gap = true
	}
	out := b.String()
	if out != "" && unicode.IsDigit(rune(out[0])) {
		out = "c" + out
	}
	if len(out) > 64 {
		out = strings.TrimRight(out[:64], "_")
		for !utf8.ValidString(out) {
			out = out[:len(out)-1]
		}
	}
	return out
}

// names hands out unique names, case-insensitively: the set of those used, and for each
// name the next suffix to try, so that a header of one name repeated 4,096 times is named
// in one pass, not in the square (or cube) of it.
type names struct {
	used map[string]bool
	next map[string]int
}

// unique is name, or name_2, name_3 ... whichever is not yet used, and marks it used.
func (n *names) unique(name string) string {
	out, key := name, strings.ToLower(name)
	k := max(n.next[key], 2)
	for n.used[strings.ToLower(out)] {
		out = name + "_" + strconv.Itoa(k)
		k++
	}
	n.next[key] = k
	n.used[strings.ToLower(out)] = true
	return out
}
