package store

import (
	"context"
	"encoding/json"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/cosci-dev/cosci/internal/stats"
)

// The analyses a session ran (#46): each run of an analysis plan in the sandbox, what it
// read and what it found, under analyses/<id>.json. The id is the workflow's, chosen
// deterministically, and a record is written once: a retried or re-run activity finds
// the record and returns it, as a turn's record is found (turns.go). Records are the
// evidence that hypotheses, reviews and answers cite (analysis:<id>), so the rows kept
// are bounded (AnalysisRows, AnalysisRowBytes): a record is read by people and agents,
// never a copy of the data.
const analysesDir = "analyses"

// Bounds on the result rows an analysis record keeps.
const (
	AnalysisRows     = 20
	AnalysisRowBytes = 8 << 10 // the kept rows as JSON
)

// AnalysisInput is one dataset an analysis read: its table name and content digest.
type AnalysisInput struct {
	Table  string `json:"table"`
	Digest string `json:"digest"`
}

// AnalysisRecord is one run of an analysis. Refused is set, and Stats nil, when the
// sandbox or the test refused it: a refused run is an answer, recorded like any other.
type AnalysisRecord struct {
	ID         string          `json:"id"`
	Hypothesis string          `json:"hypothesis,omitempty"`
	Experiment string          `json:"experiment,omitempty"`
	Kind       string          `json:"kind"`       // experiment.Kind: pre-registered or exploratory
	Plan       string          `json:"plan"`       // the plan's digest (experiment.Plan.Digest)
	Query      string          `json:"query"`      // the SQL as registered, byte for byte
	Test       string          `json:"test"`       // the menu's name (experiment.Menu)
	Columns    []string        `json:"columns"`    // the result columns that fed the test, in its order
	Inputs     []AnalysisInput `json:"inputs"`     // the datasets read
	PlannedAt  string          `json:"planned_at"` // when the plan was fixed (session.Stamp)
	Ran        string          `json:"ran"`        // when it ran (session.Stamp)

	// The result as the query gave it: its columns, its first rows (bounded), how many
	// rows the query returned, and how many of them the test dropped for a missing value.
	ResultColumns []string `json:"result_columns,omitempty"`
	Rows          [][]any  `json:"rows,omitempty"`
	RowsCut       bool     `json:"rows_cut,omitempty"` // Rows holds fewer than the query returned
	RowCount      int      `json:"row_count"`
	Dropped       int      `json:"dropped,omitempty"`

	Stats   *stats.Result `json:"stats,omitempty"`
	Refused string        `json:"refused,omitempty"` // why the sandbox or the test refused it
}

// PutAnalysis stores an analysis record under its id, its rows cut to the bounds, and
// returns the record the session holds: the one stored before under the id, if any (a
// re-run changes nothing), else r as stored.
func (s *Store) PutAnalysis(ctx context.Context, sessionID string, r AnalysisRecord) (AnalysisRecord, error) {
	k, err := key(sessionID, analysesDir, ".json", "analysis id", r.ID)
	if err != nil {
		return AnalysisRecord{}, err
	}
	var stored AnalysisRecord
	if found, err := s.find(ctx, sessionID, k, "analysis "+r.ID, &stored); err != nil || found {
		return stored, err
	}
	r.Rows, r.RowsCut = boundRows(r.Rows, r.RowsCut)
	if err := s.put(ctx, sessionID, k, r, true); err != nil {
		return AnalysisRecord{}, err
	}
	// Of two racing writers the first record stands: return what the session holds.
	return getAs[AnalysisRecord](ctx, s, sessionID, k, "analysis "+r.ID)
}

// boundRows keeps at most AnalysisRows rows and AnalysisRowBytes of them as JSON, and
// says whether any were cut (or had been).
func boundRows(rows [][]any, cut bool) ([][]any, bool) {
	if len(rows) > AnalysisRows {
		rows, cut = rows[:AnalysisRows], true
	}
	size := 2
	for i, row := range rows {
		b, err := json.Marshal(row)
		if size += len(b) + 1; err != nil || size > AnalysisRowBytes {
			return rows[:i], true
		}
	}
	return rows, cut
}

// Analysis reads an analysis record by its id; a session without it gives an error that
// wraps fs.ErrNotExist.
func (s *Store) Analysis(ctx context.Context, sessionID, id string) (AnalysisRecord, error) {
	return getByID[AnalysisRecord](ctx, s, sessionID, analysesDir, "analysis", id)
}

// FindAnalysis is Analysis for a record that may not be there: found is false, with a nil
// error, when it is not.
func (s *Store) FindAnalysis(ctx context.Context, sessionID, id string) (r AnalysisRecord, found bool, err error) {
	k, err := key(sessionID, analysesDir, ".json", "analysis id", id)
	if err != nil {
		return r, false, err
	}
	found, err = s.find(ctx, sessionID, k, "analysis "+id, &r)
	return r, found, err
}

// Analyses returns the session's analysis records in the order they ran.
func (s *Store) Analyses(ctx context.Context, sessionID string) ([]AnalysisRecord, error) {
	return inOrder(ctx, s, sessionID, analysesDir, "analysis", func(r AnalysisRecord) string { return r.Ran })
}

// inOrder reads every record under a session's dir, in the order of the times stamp
// gives them (session.Stamp's RFC 3339, whose trimmed fractions do not sort as text).
func inOrder[T any](ctx context.Context, s *Store, sessionID, dir, noun string, stamp func(T) string) ([]T, error) {
	if _, err := escape("session id", sessionID); err != nil {
		return nil, err
	}
	keys, err := s.b.List(ctx, sessionID, dir+"/")
	if err != nil {
		return nil, err
	}
	var out []T
	for _, k := range keys {
		if !strings.HasSuffix(k, ".json") {
			continue
		}
		r, err := getAs[T](ctx, s, sessionID, k, noun+" "+path.Base(k))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	at := func(r T) time.Time { t, _ := time.Parse(time.RFC3339Nano, stamp(r)); return t }
	sort.SliceStable(out, func(i, j int) bool { return at(out[i]).Before(at(out[j])) })
	return out, nil
}
