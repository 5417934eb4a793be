package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"time"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cosci-dev/cosci/internal/sandbox"
)

// query runs the checked query and reads its rows within the caps: at most Rows rows, at
// most Bytes bytes of them as JSON, each text value cut at CellBytes. At a cap the rows
// are closed, which stops DuckDB, and the result says Truncated: a query that would give
// 10 GB costs what its first rows cost. When the request names columns to feed a test
// (feed.go), the rows go on past the answer's caps, each row's fed columns written to the
// feed, up to the feed's own caps, past which the query is refused.
func query(ctx context.Context, conn *sql.Conn, q string, req sandbox.ChildRequest, res *sandbox.Result) error {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return err
	}
	for _, ct := range types {
		res.Columns = append(res.Columns, sandbox.Column{Name: ct.Name(), Type: ct.DatabaseTypeName()})
	}
	var feed *feeder
	if len(req.Feed) > 0 {
		if feed, err = newFeeder(req, res.Columns); err != nil {
			return err
		}
		defer feed.close()
	}
	vals := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	shown := answer{caps: req.Caps, res: res}
	for rows.Next() {
		if shown.full() && feed == nil {
			res.Truncated = true
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := shown.add(vals); err != nil {
			return err
		}
		if feed != nil {
			if err := feed.add(vals); err != nil {
				return err
			}
		}
	}
	if res.Truncated && feed == nil {
		return nil // rows.Close stops the query; its interruption is not an error
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if feed != nil {
		res.Feed, err = feed.finish()
	}
	return err
}

// answer collects the rows of the answer within its caps.
type answer struct {
	caps sandbox.Caps
	res  *sandbox.Result
	size int
	cut  bool // the bytes cap was reached: no more rows are kept
}

// full says no more rows fit: the next one makes the answer Truncated.
func (a *answer) full() bool { return a.cut || len(a.res.Rows) >= a.caps.Rows }

// add keeps one row if it fits, else marks the answer Truncated.
func (a *answer) add(vals []any) error {
	if a.full() {
		a.res.Truncated = true
		return nil
	}
	row := make([]any, len(vals))
	for i, v := range vals {
		if t, ok := v.(time.Time); ok && a.res.Columns[i].Type == "DATE" {
			row[i] = t.Format(time.DateOnly) // as the canonical CSV writes it
			continue
		}
		var cut bool
		row[i], cut = jsonValue(v, a.caps.CellBytes)
		a.res.Truncated = a.res.Truncated || cut
	}
	b, err := json.Marshal(row)
	if err != nil {
		return err
	}
	if a.size += len(b) + 1; a.size+1 > a.caps.Bytes { // the rows as one JSON array: commas and brackets
		a.res.Truncated, a.cut = true, true
		return nil
	}
	a.res.Rows = append(a.res.Rows, row)
	return nil
}

// jsonValue is a DuckDB value as JSON can carry it, text cut at n bytes (and whether it was).
func jsonValue(v any, n int) (any, bool) {
	switch x := v.(type) {
	case nil, bool, int8, int16, int32, int64, uint8, uint16, uint32, int, uint:
		return x, false
	case uint64:
		if x > 1<<53 {
			return fmt.Sprint(x), false
		}
		return x, false
	case float32:
		return jsonFloat(float64(x)), false
	case float64:
		return jsonFloat(x), false
	case string:
		return cut(x, n)
	case []byte:
		return cut(fmt.Sprintf("%x", x), n)
	case time.Time:
		return x.Format(time.RFC3339Nano), false
	case *big.Int:
		return x.String(), false
	case duckdb.Decimal:
		return jsonFloat(x.Float64()), false
	case duckdb.UUID:
		return x.String(), false
	case duckdb.Interval:
		return x, false
	case []any:
		out, trunc := make([]any, len(x)), false
		for i, e := range x {
			var c bool
			out[i], c = jsonValue(e, n)
			trunc = trunc || c
		}
		return out, trunc
	case map[string]any:
		out, trunc := make(map[string]any, len(x)), false
		for k, e := range x {
			var c bool
			out[k], c = jsonValue(e, n)
			trunc = trunc || c
		}
		return out, trunc
	case duckdb.OrderedMap:
		pairs := make([]any, 0, x.Len())
		ks, vs, trunc := x.Keys(), x.Values(), false
		for i := range ks {
			k, c1 := jsonValue(ks[i], n)
			v, c2 := jsonValue(vs[i], n)
			pairs = append(pairs, map[string]any{"key": k, "value": v})
			trunc = trunc || c1 || c2
		}
		return pairs, trunc
	}
	return cut(fmt.Sprint(v), n)
}

// jsonFloat is f, or its name where JSON has no number for it.
func jsonFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

func cut(s string, n int) (any, bool) {
	if len(s) <= n {
		return s, false
	}
	s = s[:n]
	for !utf8.ValidString(s) && len(s) > 0 {
		s = s[:len(s)-1]
	}
	return s, true
}
