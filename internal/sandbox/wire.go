package sandbox

// The child's protocol: one ChildRequest as JSON on its stdin, one ChildResponse as JSON on
// its stdout. The child (../../sandbox) imports these types; so can a test that calls the
// child directly, bypassing Guard, to test DuckDB's layer alone.

// ChildInput is an Input as the child sees it: a file in the run's directory.
type ChildInput struct {
	Table   string   `json:"table"`
	Format  Format   `json:"format"`
	Path    string   `json:"path"`
	Columns []Column `json:"columns,omitempty"`
}

// ChildRequest is one run of the child.
type ChildRequest struct {
	Mode Mode `json:"mode"`
	// Dir is the run's directory, which the parent made and removes: the child's temp
	// directory (spill) and DuckDB's home directory are inside it.
	Dir    string       `json:"dir"`
	Inputs []ChildInput `json:"inputs"`
	Query  string       `json:"query,omitempty"`
	Caps   Caps         `json:"caps"`
	// Feed names the result columns to write whole to FeedFile in Dir (Request.Feed).
	Feed []string `json:"feed,omitempty"`
}

// ChildResponse is the child's answer: a result, or a refusal.
type ChildResponse struct {
	Result
	Error *Refusal `json:"error,omitempty"`
}

// TempDir is the child's spill directory inside a run's directory.
const TempDir = "tmp"
