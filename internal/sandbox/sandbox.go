// Package sandbox runs a model's read-only SQL over a session's datasets in DuckDB, in a
// child process of its own (bin/cosci-sandbox, built from ../../sandbox) under prlimit caps
// on address space, CPU and wall time. This package is the parent's side and links no
// DuckDB: the worker that imports it stays lean, and a crash in DuckDB takes down one
// child, not the worker.
//
// Two layers stand between the model's SQL and anything but reading the loaded tables:
//   - Guard (guard.go), here, on the SQL's tokens before any child starts: exactly one
//     read-only statement, no statement keyword that writes, attaches, loads or sets, and
//     no function that reads files or settings;
//   - the child: DuckDB's own statement type (a prepared statement must be a SELECT), its
//     parse tree (json_serialize_sql: no denied function, no table but the loaded ones and
//     the query's own CTEs), and its settings (enable_external_access=false and
//     lock_configuration=true, after temp_directory, max_temp_directory_size, memory_limit
//     and threads are set).
//
// Each layer is tested alone (guard_test.go; child_test.go calls the child directly), as
// is every cap (caps_test.go).
package sandbox

import (
	"fmt"
	"time"
)

// Format is how an input file is written.
type Format string

const (
	CSV     Format = "csv"     // the canonical CSV internal/dataset writes (see Input)
	Parquet Format = "parquet" // read with its own schema
	JSONL   Format = "jsonl"   // JSON lines, schema sniffed by DuckDB
)

// Column is one column of a table or a result: its name and DuckDB type.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Input is one dataset given to the sandbox as a table.
//
// A CSV input must be canonical (internal/dataset writes it so): UTF-8, comma separated,
// '.' decimals, ISO dates, an empty field is NULL, one header row; and its Columns, with
// DuckDB types, are required: it is read with auto-detection off, so that nothing about a
// lab's file is guessed twice. Parquet and JSON lines carry their own schema; Describe
// reports it.
type Input struct {
	Table   string   `json:"table"`
	Format  Format   `json:"format"`
	Columns []Column `json:"columns,omitempty"`
	// The file's bytes (Data), or a file to copy them from (From): either way the child
	// reads a copy in a directory of its own.
	Data []byte `json:"-"`
	From string `json:"-"`
}

// Caps bound one run. Zero fields take the defaults (DefaultCaps).
type Caps struct {
	Rows      int           `json:"rows"`       // result rows returned; more are cut (Truncated)
	Bytes     int           `json:"bytes"`      // result bytes (as JSON) returned; more are cut
	CellBytes int           `json:"cell_bytes"` // one text value's bytes; a longer one is cut
	MemoryMB  int           `json:"memory_mb"`  // DuckDB's memory_limit
	TempMB    int           `json:"temp_mb"`    // max_temp_directory_size: spill beyond memory
	Threads   int           `json:"threads"`    // DuckDB's threads
	Timeout   time.Duration `json:"timeout"`    // loading and the query together
	FeedRows  int           `json:"feed_rows"`  // rows of a feed (Request.Feed); more are refused (feed.go)
	FeedBytes int           `json:"feed_bytes"` // a feed's bytes as the child writes them; more are refused
}

// MaxRows is the most rows a result may have, whatever Caps.Rows asks: the child bounds
// the query by it, since DuckDB's driver holds a whole result in memory before the
// first row is read.
const MaxRows = 100_000

// DefaultCaps are what a zero Caps field takes.
var DefaultCaps = Caps{Rows: 1000, Bytes: 1 << 20, CellBytes: 1024, MemoryMB: 512, TempMB: 1024, Threads: 2, Timeout: 30 * time.Second}

func (c Caps) withDefaults() Caps {
	d := DefaultCaps
	pick := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&c.Rows, d.Rows)
	c.Rows = min(c.Rows, MaxRows)
	pick(&c.Bytes, d.Bytes)
	pick(&c.CellBytes, d.CellBytes)
	pick(&c.MemoryMB, d.MemoryMB)
	pick(&c.TempMB, d.TempMB)
	pick(&c.Threads, d.Threads)
	pick(&c.FeedRows, DefaultFeedRows)
	pick(&c.FeedBytes, DefaultFeedBytes)
	if c.Timeout <= 0 {
		c.Timeout = d.Timeout
	}
	return c
}

// Mode is what the child is asked to do.
type Mode string

const (
	ModeQuery    Mode = "query"    // run Request.Query
	ModeDescribe Mode = "describe" // each input's columns, types and row count
)

// Request is one run of the sandbox.
type Request struct {
	Mode   Mode
	Inputs []Input
	Query  string
	Caps   Caps
	// Feed names result columns to return whole, beyond the answer's caps (feed.go): the
	// columns a test reads.
	Feed []string
}

// Table is one loaded input as Describe sees it.
type Table struct {
	Name    string   `json:"name"`
	Columns []Column `json:"columns"`
	Rows    int64    `json:"rows"`
}

// Result is what a run gives back.
type Result struct {
	Columns   []Column      `json:"columns,omitempty"`
	Rows      [][]any       `json:"rows,omitempty"`
	Truncated bool          `json:"truncated,omitempty"` // rows, bytes or a cell were cut at a cap
	Tables    []Table       `json:"tables,omitempty"`    // ModeDescribe
	Feed      *Feed         `json:"feed,omitempty"`      // the columns Request.Feed named, every row
	Load      time.Duration `json:"load"`                // loading the inputs, in the child
	Query     time.Duration `json:"query"`               // the query, in the child
	Start     time.Duration `json:"-"`                   // from starting the child to its answer, less Load and Query
}

// Reason is why a query was refused or stopped: a code a caller can act on.
type Reason string

const (
	ReasonStatement Reason = "statement" // not exactly one read-only statement (SELECT, WITH ... SELECT, VALUES)
	ReasonWrite     Reason = "write"     // would change data (DROP, UPDATE, INSERT, DELETE, CREATE, ALTER ...)
	ReasonFile      Reason = "file"      // would read or write a file other than the loaded inputs
	ReasonAttach    Reason = "attach"    // would attach or detach a database
	ReasonExtension Reason = "extension" // would install or load an extension
	ReasonSetting   Reason = "setting"   // would read or change a setting (or the configuration is locked)
	ReasonParse     Reason = "parse"     // not SQL the guard or DuckDB can read
	ReasonTime      Reason = "time"      // over the time cap (interrupted, or killed at the wall-clock or CPU cap)
	ReasonMemory    Reason = "memory"    // over the memory cap (DuckDB's memory_limit, the spill cap, or the address-space cap)
	ReasonQuery     Reason = "query"     // DuckDB could not run it (a name that does not exist, a type mismatch ...)
	ReasonInput     Reason = "input"     // an input could not be loaded
	ReasonCrash     Reason = "crash"     // the child died otherwise
	ReasonFeed      Reason = "feed"      // the columns fed to a test ran over the feed's caps (Caps.FeedRows, Caps.FeedBytes)
)

// Layer says which layer stopped a query: the benchmark's table and the tests read it.
type Layer string

const (
	LayerGuard  Layer = "guard"  // Guard, before any child starts
	LayerDuckDB Layer = "duckdb" // the child: DuckDB's statement type, parse tree or settings
	LayerCap    Layer = "cap"    // a cap: the child's query deadline, memory_limit, or prlimit
)

// Refusal is a query refused or stopped, with its reason. Detail is ours, short, and never
// DuckDB's own message text, which carries paths of the machine.
type Refusal struct {
	Reason Reason `json:"reason"`
	Layer  Layer  `json:"layer"`
	Detail string `json:"detail"`
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("sandbox refused the query (%s, by the %s): %s", r.Reason, r.Layer, r.Detail)
}

func refuse(reason Reason, layer Layer, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Layer: layer, Detail: fmt.Sprintf(format, args...)}
}
