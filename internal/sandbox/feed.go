package sandbox

// The feed: the columns a test reads, streamed whole out of the child beside its answer.
//
// The answer's rows are for people and records: JSON, cut at Caps.Rows and Caps.Bytes
// (MaxRows at most), since every row of it is held, stored and shown. A test needs every
// row of only the columns it reads, and a million rows as JSON cost some 40 MB and a
// second to write and read again. So a request may name result columns (Request.Feed);
// the child then runs the query whole, up to its own cap (Caps.FeedRows, Caps.FeedBytes),
// and writes those columns to FeedFile in the run's directory in a compact binary form,
// row by row: one tag byte per value, then 8 bytes for a number or a length and the bytes
// for a text. The parent reads them into Result.Feed before the directory is removed. A
// result over the feed's cap is refused (ReasonFeed), naming the cap: the test would
// otherwise run on a part of the data and say nothing of it.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// FeedFile is the feed's file in a run's directory.
const FeedFile = "feed.bin"

// The feed's caps where Caps leaves them zero. Two million rows: twice the issue's
// million-row table, as one row per observation. 64 MiB: two number columns of two
// million rows (9 bytes a value) with room for a text column of short labels. What bounds
// them is the worker, which holds the columns as Go values (some 50 bytes a value) and
// sorts them for the test: 2 million rows of two columns are about 200 MB of its memory.
const (
	DefaultFeedRows  = 2_000_000
	DefaultFeedBytes = 64 << 20
)

// Feed is the columns of a whole result a request named, as the child streamed them.
type Feed struct {
	// Columns are the result's names of the columns fed, in the order the request named
	// them (a name is matched as written, else case-insensitively).
	Columns []string `json:"columns"`
	Rows    int      `json:"rows"`
	// Values holds one row per result row, a value per column: nil, bool, float64 or
	// string, the types JSON decoding gives the answer's rows.
	Values [][]any `json:"-"`
}

// The tags of the feed's values.
const (
	tagNull byte = iota
	tagNumber
	tagFalse
	tagTrue
	tagText
)

// FeedWriter writes a feed within its caps (the child's side).
type FeedWriter struct {
	w     *bufio.Writer
	caps  Caps
	rows  int
	bytes int
	num   [9]byte
}

// NewFeedWriter writes a feed to w within caps' FeedRows, FeedBytes and CellBytes.
func NewFeedWriter(w io.Writer, caps Caps) *FeedWriter {
	return &FeedWriter{w: bufio.NewWriterSize(w, 1<<16), caps: caps.withDefaults()}
}

// Rows is how many rows were written.
func (f *FeedWriter) Rows() int { return f.rows }

// Row writes one row: each value nil, bool, float64 or string (cols names them for a
// refusal). Over a cap it is a *Refusal naming the cap.
func (f *FeedWriter) Row(vals []any, cols []string) error {
	if f.rows >= f.caps.FeedRows {
		return refuse(ReasonFeed, LayerCap, "the test's columns ran over the feed cap of %d rows (Caps.FeedRows): filter the rows, or sample them in the query", f.caps.FeedRows)
	}
	for i, v := range vals {
		n, err := f.value(v, cols[i])
		if err != nil {
			return err
		}
		if f.bytes += n; f.bytes > f.caps.FeedBytes {
			return refuse(ReasonFeed, LayerCap, "the test's columns ran over the feed cap of %d bytes (Caps.FeedBytes) after %d rows: select shorter values, or fewer rows", f.caps.FeedBytes, f.rows)
		}
	}
	f.rows++
	return nil
}

func (f *FeedWriter) value(v any, col string) (int, error) {
	switch x := v.(type) {
	case nil:
		return 1, f.w.WriteByte(tagNull)
	case bool:
		if x {
			return 1, f.w.WriteByte(tagTrue)
		}
		return 1, f.w.WriteByte(tagFalse)
	case float64:
		f.num[0] = tagNumber
		binary.LittleEndian.PutUint64(f.num[1:], math.Float64bits(x))
		_, err := f.w.Write(f.num[:])
		return 9, err
	case string:
		if len(x) > f.caps.CellBytes {
			return 0, refuse(ReasonFeed, LayerCap, "a value of the column %q is over the cell cap of %d bytes (Caps.CellBytes), and the test reads values whole", col, f.caps.CellBytes)
		}
		f.num[0] = tagText
		binary.LittleEndian.PutUint64(f.num[1:], uint64(len(x)))
		if _, err := f.w.Write(f.num[:]); err != nil {
			return 0, err
		}
		_, err := f.w.WriteString(x)
		return 9 + len(x), err
	}
	return 0, fmt.Errorf("sandbox: a feed value of type %T", v)
}

// Flush writes what is buffered.
func (f *FeedWriter) Flush() error { return f.w.Flush() }

// FindColumn finds a result column by name: as written, else the one column that matches
// it case-insensitively (DuckDB compares names so, and keeps their case in the result). The
// child finds a feed's columns so, and internal/analysis a test's among the answer's.
func FindColumn(names []string, name string) (int, error) {
	if i := slices.Index(names, name); i >= 0 {
		return i, nil
	}
	found := -1
	for i, n := range names {
		if strings.EqualFold(n, name) {
			if found >= 0 {
				return 0, fmt.Errorf("the result has two columns named %q in different case", name)
			}
			found = i
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("the result has no column %q (it has %s)", name, strings.Join(names, ", "))
	}
	return found, nil
}

var errFeed = errors.New("the child's feed could not be read")

// readFeed reads the feed the child wrote at path: feed.Rows rows of len(feed.Columns)
// values, in at most maxBytes. Text values that repeat (group labels) share one string.
func readFeed(path string, feed *Feed, maxBytes int) error {
	file, err := os.Open(path)
	if err != nil {
		return errFeed
	}
	defer file.Close()
	r := bufio.NewReaderSize(io.LimitReader(file, int64(maxBytes)+1), 1<<16)
	ncols := len(feed.Columns)
	if feed.Rows < 0 || ncols == 0 || feed.Rows > maxBytes/ncols {
		return errFeed
	}
	cells := make([]any, feed.Rows*ncols)
	feed.Values = make([][]any, feed.Rows)
	texts := map[string]string{}
	var num [8]byte
	for i := range cells {
		tag, err := r.ReadByte()
		if err != nil {
			return errFeed
		}
		switch tag {
		case tagNull:
		case tagFalse, tagTrue:
			cells[i] = tag == tagTrue
		case tagNumber, tagText:
			if _, err := io.ReadFull(r, num[:]); err != nil {
				return errFeed
			}
			u := binary.LittleEndian.Uint64(num[:])
			if tag == tagNumber {
				cells[i] = math.Float64frombits(u)
				continue
			}
			if cells[i], err = readText(r, u, maxBytes, texts); err != nil {
				return err
			}
		default:
			return errFeed
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return errFeed // more than the answer said, or over maxBytes
	}
	for i := range feed.Values {
		feed.Values[i] = cells[i*ncols : (i+1)*ncols : (i+1)*ncols]
	}
	return nil
}

// readText reads a text of n bytes, shared with an equal one read before while there are
// few distinct ones.
func readText(r *bufio.Reader, n uint64, maxBytes int, texts map[string]string) (string, error) {
	if n > uint64(maxBytes) {
		return "", errFeed
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", errFeed
	}
	if s, ok := texts[string(b)]; ok {
		return s, nil
	}
	s := string(b)
	if len(texts) < 1024 {
		texts[s] = s
	}
	return s, nil
}
