package simulator

// The simulator's record of what it planted. The kind of each citation it writes (see
// plant.go) is its own hidden truth: the citation benchmarks score the check against it,
// and the simulator's own later turns need it (a review judges a quote's support by it,
// an evolved hypothesis carries over only its parents' honest citations). It stays here,
// never in the references cosci parses, stores and passes between activities: a real
// model's answer has no such field, and cosci must not read one.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/cosci-dev/cosci/internal/research"
)

// Truth is what the simulator planted: the kind of each citation of a hypothesis, by its
// statement, the reference's quote and its claim, which are what the parser kept of the
// simulator's answer and what the store then holds. (A review's citations are all
// honest: fabrication is measured on hypotheses.)
// A worker keeps it in memory; with a file, it also appends each record there, and reads
// what other processes appended when it does not know a citation: workers that take over
// each other's turns share it, and a benchmark reads it once the session is done. Safe
// for concurrent use; the zero value is an empty record in memory.
type Truth struct {
	mu    sync.Mutex
	kinds map[string]string // key (see truthKey) -> kind
	path  string            // "" in memory only
	read  int64             // how much of the file has been read
}

// truthRecord is a line of a truth file.
type truthRecord struct {
	Key  string `json:"key"`
	ID   string `json:"id"` // for a reader of the file; not part of the key
	Kind string `json:"kind"`
}

// truthKey identifies a citation of a citing text. The id is not part of it: cosci may
// write a cited id otherwise than the model did (a passage's id split off), but keeps
// the quote and the claim as the parser read them.
func truthKey(citing string, ref research.Reference) string {
	sum := sha256.Sum256([]byte(citing + "\x00" + ref.Quote + "\x00" + ref.Claim))
	return hex.EncodeToString(sum[:16])
}

// OpenTruth is a record kept in the file at path too (created if missing), with what the
// file already holds.
func OpenTruth(path string) (*Truth, error) {
	t := &Truth{path: path}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the simulator's truth: %w", err)
	}
	f.Close()
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.catchUp(); err != nil {
		return nil, err
	}
	return t, nil
}

// Hypothesis is the kind the simulator planted for a reference of hypothesis h; false
// when it planted none there (a scientist's hypothesis, a citation of another model).
func (t *Truth) Hypothesis(h research.Hypothesis, ref research.Reference) (string, bool) {
	return t.kind(h.Statement, ref)
}

func (t *Truth) kind(citing string, ref research.Reference) (string, bool) {
	key := truthKey(citing, ref)
	t.mu.Lock()
	defer t.mu.Unlock()
	if k, ok := t.kinds[key]; ok {
		return k, true
	}
	if t.path == "" || t.catchUp() != nil {
		return "", false
	}
	k, ok := t.kinds[key]
	return k, ok
}

// remember records the kinds of the citations cs as the parser read them (refs, of the
// citing text citing): each reference gets the kind of the citation with its id.
func (t *Truth) remember(citing string, refs []research.Reference, cs []plantedRef) error {
	var lines bytes.Buffer
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.kinds == nil {
		t.kinds = map[string]string{}
	}
	for _, ref := range refs {
		c, ok := plantedFor(ref, cs)
		if !ok {
			continue
		}
		key := truthKey(citing, ref)
		t.kinds[key] = c.kind
		if t.path != "" {
			b, _ := json.Marshal(truthRecord{Key: key, ID: ref.ID, Kind: c.kind})
			lines.Write(append(b, '\n'))
		}
	}
	if lines.Len() == 0 {
		return nil
	}
	// One write of whole lines with O_APPEND: workers appending at once do not interleave.
	f, err := os.OpenFile(t.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("the simulator's truth: %w", err)
	}
	_, err = f.Write(lines.Bytes())
	return errors.Join(err, f.Close())
}

// catchUp reads the lines the file gained since it was last read. t.mu is held.
func (t *Truth) catchUp() error {
	f, err := os.Open(t.path)
	if err != nil {
		return fmt.Errorf("the simulator's truth: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(t.read, io.SeekStart); err != nil {
		return fmt.Errorf("the simulator's truth: %w", err)
	}
	if t.kinds == nil {
		t.kinds = map[string]string{}
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil { // a line without its end is still being written: read it next time
			return nil
		}
		t.read += int64(len(line))
		var rec truthRecord
		if json.Unmarshal(line, &rec) != nil || rec.Key == "" {
			return fmt.Errorf("the simulator's truth %s: a line that is not a record: %.80q", t.path, line)
		}
		t.kinds[rec.Key] = rec.Kind
	}
}
