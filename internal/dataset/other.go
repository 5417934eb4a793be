package dataset

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
)

// readParquet checks only what is cheap and catches a truncated or mislabelled file:
// "PAR1" at both ends and a footer that fits. Its columns are read by the sandbox.
func readParquet(data []byte) (*Table, error) {
	if len(data) >= 4 && bytes.Equal(data[len(data)-4:], []byte("PARE")) {
		return nil, refuse(0, "an encrypted Parquet file (footer 'PARE'): the sandbox cannot read it; export it unencrypted")
	}
	if len(data) < 12 || !bytes.HasPrefix(data, []byte("PAR1")) || !bytes.HasSuffix(data, []byte("PAR1")) {
		return nil, refuse(0, "not a whole Parquet file: it must begin and end with 'PAR1' (is it cut short?)")
	}
	footer := binary.LittleEndian.Uint32(data[len(data)-8 : len(data)-4])
	if int64(footer) > int64(len(data)-12) {
		return nil, refuse(0, "a damaged Parquet file: its footer claims %d bytes of a %d-byte file", footer, len(data))
	}
	t := &Table{}
	t.Format = Parquet
	t.Notes = []string{"Parquet: its rows and columns are read by the sandbox"}
	return t, nil
}

// maxJSONLine bounds one JSON line: a table's row, not a document.
const maxJSONLine = 1 << 20

// readJSONLines checks that every non-empty line is one JSON object, within the bound,
// and counts them. Its columns are read by the sandbox.
func readJSONLines(data []byte) (*Table, error) {
	text, notes, err := toUTF8(data, "")
	if err != nil {
		return nil, err
	}
	t := &Table{}
	t.Format, t.Notes = JSONL, append(notes, "JSON lines: its columns are read by the sandbox")
	for line := 1; len(text) > 0; line++ {
		end := bytes.IndexByte(text, '\n')
		if end < 0 {
			end = len(text)
		}
		row := bytes.TrimSpace(text[:end])
		text = text[min(end+1, len(text)):]
		if len(row) == 0 {
			continue
		}
		if len(row) > maxJSONLine {
			return nil, refuse(line, "a JSON line of %d bytes, over the %d a row may have", len(row), maxJSONLine)
		}
		if row[0] != '{' || !json.Valid(row) {
			return nil, refuse(line, "not a JSON object: JSON lines holds one object per line")
		}
		t.Rows++
	}
	if t.Rows == 0 {
		return nil, refuse(0, "the file is empty")
	}
	return t, nil
}
