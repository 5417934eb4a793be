package sandbox

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A feed carries every row of the columns named, past the answer's caps, with the types
// the answer's JSON gives them: a number column, a condition, a text and NULLs. The truth
// is the query's own arithmetic, row by row.
func TestFeedWhole(t *testing.T) {
	const n = 250_000 // past MaxRows, the most an answer holds
	q := `SELECT i, i % 2 = 0 AS even, 'g' || (i % 3) AS grp, CASE WHEN i % 7 = 0 THEN NULL ELSE i * 0.5 END AS x FROM range(250000) t(i) ORDER BY i`
	res, err := testRunner().Run(context.Background(), Request{Query: q, Caps: Caps{Rows: 10, Timeout: time.Minute}, Feed: []string{"X", "grp", "even"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 10 || !res.Truncated {
		t.Errorf("the answer has %d rows (truncated %v), want 10, cut", len(res.Rows), res.Truncated)
	}
	f := res.Feed
	if f == nil || f.Rows != n || len(f.Values) != n || strings.Join(f.Columns, ",") != "x,grp,even" {
		t.Fatalf("feed %+v, want %d rows of x, grp, even", f, n)
	}
	for i, row := range f.Values {
		var x any = float64(i) * 0.5
		if i%7 == 0 {
			x = nil
		}
		grp := "g" + string(rune('0'+i%3))
		if len(row) != 3 || row[0] != x || row[1] != grp || row[2] != (i%2 == 0) {
			t.Fatalf("row %d fed as %v, want [%v %v %v]", i, row, x, grp, i%2 == 0)
		}
	}
}

// Past the feed's caps the query is refused, and the refusal names the cap; so are a
// column the result lacks and a text over the cell cap, which the test would read cut.
func TestFeedRefused(t *testing.T) {
	q := `SELECT i, 'label-' || i AS s FROM range(5000) t(i)`
	cases := []struct {
		name   string
		caps   Caps
		feed   []string
		reason Reason
		layer  Layer
		detail string
	}{
		{"rows", Caps{FeedRows: 4999}, []string{"i"}, ReasonFeed, LayerCap, "feed cap of 4999 rows"},
		{"bytes", Caps{FeedBytes: 20_000}, []string{"i", "s"}, ReasonFeed, LayerCap, "feed cap of 20000 bytes"},
		{"cell", Caps{CellBytes: 8}, []string{"s"}, ReasonFeed, LayerCap, "cell cap of 8 bytes"},
		{"no column", Caps{}, []string{"i", "y"}, ReasonQuery, LayerDuckDB, `no column "y"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.caps.Timeout = time.Minute
			_, err := testRunner().Run(context.Background(), Request{Query: q, Caps: c.caps, Feed: c.feed})
			r := wantRefusal(t, c.name, err, c.reason, c.layer)
			if r != nil && !strings.Contains(r.Detail, c.detail) {
				t.Errorf("refused with %q, want it to name %q", r.Detail, c.detail)
			}
		})
	}
	// At the caps exactly, it runs.
	res, err := testRunner().Run(context.Background(), Request{Query: q, Caps: Caps{FeedRows: 5000, Timeout: time.Minute}, Feed: []string{"i"}})
	if err != nil || res.Feed == nil || res.Feed.Rows != 5000 {
		t.Fatalf("at the row cap: %+v, %v", res.Feed, err)
	}
}

// The parent reads a feed exactly as written, and refuses one cut short, one longer than
// the child said, and one with a tag it does not know.
func TestReadFeed(t *testing.T) {
	var b bytes.Buffer
	w := NewFeedWriter(&b, Caps{})
	rows := [][]any{{1.5, "a"}, {nil, true}, {math.Inf(-1), false}, {math.NaN(), "a"}}
	for _, r := range rows {
		if err := w.Row(r, []string{"x", "y"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	good := b.Bytes()
	read := func(data []byte, n int) (*Feed, error) {
		path := filepath.Join(t.TempDir(), FeedFile)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f := &Feed{Columns: []string{"x", "y"}, Rows: n}
		return f, readFeed(path, f, 1<<20)
	}
	f, err := read(good, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		for j, v := range r {
			got := f.Values[i][j]
			if g, ok := got.(float64); ok && math.IsNaN(g) && math.IsNaN(v.(float64)) {
				continue
			}
			if got != v {
				t.Errorf("row %d column %d read as %v, want %v", i, j, got, v)
			}
		}
	}
	bad := append([]byte{}, good...)
	bad[0] = 9
	for name, c := range map[string]struct {
		data []byte
		rows int
	}{"cut short": {good[:len(good)-1], 4}, "longer": {good, 3}, "bad tag": {bad, 4}} {
		if _, err := read(c.data, c.rows); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}
