package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A query that runs away is stopped by a cap, each with its reason: the guard passes all
// of these (they are read-only), so the caps alone stop them.
func TestRunawayCrossJoin(t *testing.T) {
	q := `SELECT count(*) FROM range(1000000) a, range(1000000) b`
	// A long grace, so that the child's own deadline is what stops it even on a loaded machine.
	runner := Runner{Binary: childBin, Grace: 20 * time.Second}
	_, err := runner.Run(context.Background(), Request{Query: q, Caps: Caps{Timeout: 2 * time.Second}})
	r := wantRefusal(t, "a 10^6 x 10^6 cross join", err, ReasonTime, LayerCap)
	if r != nil && !strings.Contains(r.Detail, "interrupted") {
		t.Errorf("the cross join was stopped by %q, want the child's own deadline (interrupted)", r.Detail)
	}
}

// repeat('x', 2e9) ignores DuckDB's interruption (for over a minute on this loaded
// machine): the parent's wall-clock cap kills the child.
func TestRunawayIgnoresInterruption(t *testing.T) {
	q := `SELECT length(repeat('x', 2e9::BIGINT))`
	r := Runner{Binary: childBin, Grace: time.Second}
	_, err := r.Run(context.Background(), Request{Query: q, Caps: Caps{Timeout: time.Second, MemoryMB: 3000}})
	ref := wantRefusal(t, "repeat('x', 2e9) with memory to do it", err, ReasonTime, LayerCap)
	if ref != nil && !strings.Contains(ref.Detail, "killed") {
		t.Errorf("repeat('x', 2e9) was stopped by %q, want the wall-clock kill", ref.Detail)
	}
}

// The same query within a small memory_limit is stopped by DuckDB's memory cap.
func TestRunawayMemory(t *testing.T) {
	q := `SELECT length(repeat('x', 2e9::BIGINT))`
	_, err := testRunner().Run(context.Background(), Request{Query: q, Caps: Caps{Timeout: 20 * time.Second, MemoryMB: 200}})
	wantRefusal(t, "repeat('x', 2e9) within 200 MB", err, ReasonMemory, LayerCap)
}

// 10 GB of output is cut at the output caps: rows, bytes, and one value's bytes.
func TestOutputCaps(t *testing.T) {
	tenGB := `SELECT i, repeat('x', 1000) AS s FROM range(10000000) t(i)`
	cases := []struct {
		name     string
		q        string
		caps     Caps
		rows     int // rows returned (0: as many as fit in maxBytes, within a row of it)
		maxBytes int
	}{
		{"rows", tenGB, Caps{Rows: 100}, 100, 200 << 10},
		{"bytes", tenGB, Caps{Rows: MaxRows, Bytes: 1 << 20}, 0, 1 << 20},
		{"one value", `SELECT repeat('é', 100000) AS s`, Caps{CellBytes: 1001}, 1, 2 << 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.caps.Timeout = 30 * time.Second
			res, err := testRunner().Run(context.Background(), Request{Query: c.q, Caps: c.caps})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res.Rows)
			full := c.rows == 0 && len(b) > c.maxBytes-1100 || len(res.Rows) == c.rows
			if !res.Truncated || !full || len(b) > c.maxBytes {
				t.Errorf("truncated %v, %d rows, %d bytes; want truncated, %d rows, at most %d bytes", res.Truncated, len(res.Rows), len(b), c.rows, c.maxBytes)
			}
			if c.name == "one value" && !strings.HasPrefix(res.Rows[0][0].(string), "éé") || strings.ContainsRune(string(b), '\uFFFD') {
				t.Errorf("a value cut at its cap is not valid text: %.40s", b)
			}
		})
	}
}

// A query that needs more than memory_limit spills into the run's temp directory, under
// max_temp_directory_size, and never into .tmp/ of the working directory (DuckDB's
// default when temp_directory is not set before the lock).
func TestSpillStaysInItsDirectory(t *testing.T) {
	q := `SELECT sum(hash(x)) AS h FROM (SELECT md5(i::VARCHAR) AS x FROM range(2000000) t(i) ORDER BY x)`
	for _, c := range []struct {
		tempMB int
		want   Reason
	}{{1000, ""}, {1, ReasonMemory}} {
		dir := t.TempDir()
		creq, err := writeInputs(dir, Request{Mode: ModeQuery, Query: q, Caps: Caps{MemoryMB: 100, TempMB: c.tempMB, Timeout: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = testRunner().runChild(context.Background(), childBin, creq)
		if c.want == "" && err != nil {
			t.Fatalf("spill cap %d MB: %v", c.tempMB, err)
		}
		if c.want != "" {
			wantRefusal(t, "a sort beyond memory_limit with 1 MB to spill", err, c.want, LayerCap)
		}
		if _, err := os.Stat(filepath.Join(dir, ".tmp")); err == nil {
			t.Errorf("spill cap %d MB: the child wrote .tmp/ into its working directory", c.tempMB)
		}
	}
}

// A child killed while it spills leaves its spill files where they were written, which
// shows where that is: in the run's temp directory (which the parent removes), not .tmp/
// of the working directory. (DuckDB removes its files when it ends on its own, so the
// test above cannot see them.) The child is killed as soon as a spill file appears in
// either place, however loaded the machine.
func TestSpillOfAKilledChild(t *testing.T) {
	q := `SELECT sum(hash(x)) AS h FROM (SELECT md5(i::VARCHAR) AS x FROM range(8000000) t(i) ORDER BY x)`
	dir := t.TempDir()
	creq, err := writeInputs(dir, Request{Mode: ModeQuery, Query: q, Caps: Caps{MemoryMB: 100, TempMB: 4000, Timeout: 5 * time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := testRunner().runChild(ctx, childBin, creq)
		done <- err
	}()
	spilling := func() bool {
		a, _ := os.ReadDir(filepath.Join(dir, TempDir))
		b, _ := os.ReadDir(filepath.Join(dir, ".tmp"))
		return len(a)+len(b) > 0
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	giveUp := time.After(2 * time.Minute)
wait:
	for !spilling() {
		select {
		case err := <-done:
			t.Fatalf("the sort of 8,000,000 values ended (%v) before a spill file was seen: it no longer shows where it spills", err)
		case <-tick.C:
		case <-giveUp:
			break wait
		}
	}
	cancel()
	<-done
	spilled, _ := os.ReadDir(filepath.Join(dir, TempDir))
	if _, err := os.Stat(filepath.Join(dir, ".tmp")); err == nil || len(spilled) == 0 {
		t.Errorf("%d files spilled into the run's temp directory, .tmp/ in the working directory: %v; want files there and no .tmp/", len(spilled), err == nil)
	}
}
