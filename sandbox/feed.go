package main

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cosci-dev/cosci/internal/sandbox"
)

// feeder writes the columns a request named (ChildRequest.Feed) of every result row to
// the feed's file in the run's directory (internal/sandbox/feed.go).
type feeder struct {
	file  *os.File
	w     *sandbox.FeedWriter
	idx   []int
	names []string
	types []string
	row   []any
}

// newFeeder finds the named columns among the result's and opens the feed's file.
func newFeeder(req sandbox.ChildRequest, cols []sandbox.Column) (*feeder, error) {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	f := &feeder{row: make([]any, len(req.Feed))}
	for _, name := range req.Feed {
		i, err := sandbox.FindColumn(names, name)
		if err != nil {
			return nil, refusal(sandbox.ReasonQuery, err.Error())
		}
		f.idx = append(f.idx, i)
		f.names = append(f.names, names[i])
		f.types = append(f.types, cols[i].Type)
	}
	file, err := os.OpenFile(filepath.Join(req.Dir, sandbox.FeedFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, refusal(sandbox.ReasonCrash, "the feed's file could not be made")
	}
	f.file, f.w = file, sandbox.NewFeedWriter(file, req.Caps)
	return f, nil
}

// add writes one result row's fed columns.
func (f *feeder) add(vals []any) error {
	for i, j := range f.idx {
		f.row[i] = feedValue(vals[j], f.types[i])
	}
	return f.w.Row(f.row, f.names)
}

// finish writes what is buffered and says what was fed.
func (f *feeder) finish() (*sandbox.Feed, error) {
	if err := f.w.Flush(); err != nil {
		return nil, refusal(sandbox.ReasonCrash, "the feed's file could not be written")
	}
	if err := f.file.Close(); err != nil {
		return nil, refusal(sandbox.ReasonCrash, "the feed's file could not be written")
	}
	return &sandbox.Feed{Columns: f.names, Rows: f.w.Rows()}, nil
}

func (f *feeder) close() { f.file.Close() }

// feedValue is a DuckDB value as a test reads it: NULL, a boolean, a number (every
// numeric type as float64, as the answer's JSON gives it) or a text (a date as the
// canonical CSV writes it, anything else as the answer shows it).
func feedValue(v any, typ string) any {
	switch x := v.(type) {
	case nil, bool, float64, string:
		return x
	case int8:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case uint8:
		return float64(x)
	case uint16:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	case uint:
		return float64(x)
	case float32:
		return float64(x)
	case duckdb.Decimal:
		return x.Float64()
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	case time.Time:
		if typ == "DATE" {
			return x.Format(time.DateOnly)
		}
		return x.Format(time.RFC3339Nano)
	}
	s, _ := jsonValue(v, 1<<30)
	if str, ok := s.(string); ok {
		return str
	}
	return fmt.Sprint(s)
}
