package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cosci-dev/cosci/internal/session"
)

// Dir is a Backend on local disk: one directory per session under a root, one file per
// record (its key, with '/' for the path separator), the event log as JSON lines in
// events.jsonl and the session's index row in session.json. Files are 0600 and
// directories 0700: only the store's user reads them.
//
// Every write is atomic: a crash leaves the old file or the new one, never a torn one.
// Several processes on one machine may share a root; hosts that do not share a disk need
// Postgres.
type Dir struct {
	root string // absolute, so every path the store returns is too
}

// OpenDir returns the Dir rooted at root, creating the directory if it is missing.
func OpenDir(root string) (*Dir, error) {
	if root == "" {
		return nil, errors.New("store: root directory is empty; name the directory that should hold session data")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := mkdirs(abs); err != nil {
		return nil, err
	}
	return &Dir{root: abs}, nil
}

// Root returns the absolute root directory.
func (d *Dir) Root() string { return d.root }

// Close does nothing: a Dir holds no connection.
func (d *Dir) Close() {}

// SessionDir returns the directory that holds a session: the root joined with the escaped
// session id, or "" for an id that cannot name a directory.
func (d *Dir) SessionDir(sessionID string) string {
	name, err := escape("session id", sessionID)
	if err != nil {
		return ""
	}
	return filepath.Join(d.root, name)
}

func (d *Dir) path(sessionID, key string) string {
	return filepath.Join(d.SessionDir(sessionID), filepath.FromSlash(key))
}

// Where is the record's path.
func (d *Dir) Where(sessionID, key string) string { return d.path(sessionID, key) }

// Get reads a record.
func (d *Dir) Get(_ context.Context, sessionID, key string) ([]byte, error) {
	b, err := os.ReadFile(d.path(sessionID, key))
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return b, nil
}

// List lists the records of one directory of a session; temporary files and
// subdirectories are left out, and a missing directory has none.
func (d *Dir) List(_ context.Context, sessionID, dir string) ([]string, error) {
	entries, err := os.ReadDir(d.path(sessionID, dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var keys []string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		keys = append(keys, dir+e.Name())
	}
	return keys, nil
}

// Put writes a record atomically.
func (d *Dir) Put(_ context.Context, sessionID, key string, data []byte, once bool) error {
	return writeFile(d.path(sessionID, key), data, once)
}

// Copy hard-links each record (records are immutable once written, so a link is a free
// copy), or copies it where linking fails (another file system).
func (d *Dir) Copy(_ context.Context, from, to string, keys []string) error {
	dirs := make(map[string]bool) // directories that gained a link, to sync once each
	for _, k := range keys {
		dst := d.path(to, k)
		linked, err := linkOrCopy(d.path(from, k), dst)
		if err != nil {
			return err
		}
		if linked {
			dirs[filepath.Dir(dst)] = true
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// Commit appends the events, then writes the record, then the index row: each step
// atomic, in an order that never lets a later one exist without an earlier.
func (d *Dir) Commit(ctx context.Context, c Commit) error {
	dir := d.SessionDir(c.SessionID)
	if err := appendEvents(filepath.Join(dir, eventsFile), c.Events); err != nil {
		return err
	}
	if c.Key != "" {
		if err := writeFile(d.path(c.SessionID, c.Key), c.Data, true); err != nil {
			return err
		}
	}
	if c.Index != nil {
		return d.index(filepath.Join(dir, indexFile), *c.Index)
	}
	return nil
}

// index replaces the session's index row unless it holds a later checkpoint. An archive
// time, once set, stays.
func (d *Dir) index(path string, row Summary) error {
	defer lock(path)()
	var old Summary
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &old) == nil {
		if old.Checkpoint > row.Checkpoint {
			return nil
		}
		if row.Archived == "" {
			row.Archived = old.Archived
		}
	}
	b, err := json.MarshalIndent(row, "", "  ")
	if err != nil {
		return fmt.Errorf("store: encode the index row of %s: %w", row.SessionID, err)
	}
	return writeFile(path, append(b, '\n'), false)
}

// Sessions reads the index row of every session directory that has one.
func (d *Dir) Sessions(_ context.Context) ([]Summary, error) {
	entries, err := os.ReadDir(d.root)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var rows []Summary
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(d.root, e.Name(), indexFile)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a session that never checkpointed, or a branch being prepared
		}
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		var row Summary
		if err := json.Unmarshal(b, &row); err != nil {
			return nil, &DamagedError{SessionID: e.Name(), Record: path, Problem: fmt.Sprintf("not a valid index row: %v; remove it, and the next checkpoint writes it anew", err)}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Events reads events.jsonl.
func (d *Dir) Events(_ context.Context, sessionID string) ([]session.Event, error) {
	path := filepath.Join(d.SessionDir(sessionID), eventsFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer f.Close()
	var events []session.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20) // a Detail may be long; don't fail on lines past 64 KiB
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e session.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, &DamagedError{SessionID: sessionID, Record: fmt.Sprintf("%s:%d", path, line), Problem: fmt.Sprintf("not an event: %v", err)}
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("store: read %s: %w", path, err)
	}
	return events, nil
}

// appendEvents adds events to a JSON-lines log. It rewrites the whole file through
// writeFile rather than appending in place, so a crash can never leave a torn last line.
func appendEvents(path string, events []session.Event) error {
	if len(events) == 0 {
		return nil
	}
	defer lock(path)()
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: %w", err)
	}
	last, err := lastSeq(path, old)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.Grow(len(old) + 256*len(events))
	buf.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		buf.WriteByte('\n') // the file was edited by hand; keep lines apart
	}
	added := false
	for _, e := range events {
		if e.Seq <= last {
			continue // already logged by an earlier attempt
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("store: encode event %d: %w", e.Seq, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
		last, added = e.Seq, true
	}
	if !added {
		return nil
	}
	return writeFile(path, buf.Bytes(), false)
}

// lastSeq returns the Seq of the last event in a log. An empty log has no last event,
// so it returns math.MinInt: every event is new, even one numbered 0.
func lastSeq(path string, log []byte) (int, error) {
	log = bytes.TrimRight(log, " \t\r\n")
	if len(log) == 0 {
		return math.MinInt, nil
	}
	line := log[bytes.LastIndexByte(log, '\n')+1:]
	var e session.Event
	if err := json.Unmarshal(line, &e); err != nil {
		return 0, &DamagedError{SessionID: filepath.Base(filepath.Dir(path)), Record: path, Problem: fmt.Sprintf("its last line is not an event: %v", err)}
	}
	return e.Seq, nil
}

// linkOrCopy gives path to the record at from: a hard link, or a copy written atomically
// where linking fails. An existing path is kept, and a missing from is skipped. linked
// says a link was made, whose directory the caller must sync to make it durable.
func linkOrCopy(from, to string) (linked bool, err error) {
	if _, err := os.Lstat(to); err == nil {
		return false, nil // an earlier attempt made it, or dst wrote its own: keep it
	}
	if err := mkdirs(filepath.Dir(to)); err != nil {
		return false, err
	}
	err = link(from, to)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil // a concurrent attempt was first
	}
	// Another file system, or one without hard links: copy. This also tells a missing
	// source apart from a failed link.
	data, err := os.ReadFile(from)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return false, writeFile(to, data, true)
}

// link makes a hard link; tests replace it to take the copying path.
var link = os.Link

// tempPrefix starts the name of every temporary file. Escaped ids never start with a dot
// (see escape), so listings can tell a leftover temporary file from a record.
const tempPrefix = ".tmp-"

// maxName bounds an escaped id. Most file systems allow 255 bytes per name, and the
// store adds a suffix such as "-12.json".
const maxName = 200

// escape turns an id (a session, hypothesis, turn or review type id, which may hold any
// character) into a single, portable file name. Letters, digits, '-' and '_' stand for
// themselves, and so does '.' except in first place; every other byte becomes %XX. A
// leading dot is escaped so that no record looks hidden or collides with a temporary file.
// The mapping is one-to-one because '%' itself is escaped.
func escape(kind, id string) (string, error) {
	switch id {
	case "":
		return "", fmt.Errorf("store: %s is empty; every record needs one", kind)
	case ".", "..":
		return "", fmt.Errorf("store: %s %q names a directory, not a record; choose another", kind, id)
	}
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '.' && i > 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	if b.Len() > maxName {
		return "", fmt.Errorf("store: %s %.40q... is %d bytes once escaped for a file name; at most %d: use a shorter one", kind, id, b.Len(), maxName)
	}
	return b.String(), nil
}

// writeFile writes data to path atomically: readers see the old file or the new one,
// never a torn one, even after a crash. It writes a temporary file in the same directory,
// fsyncs it, moves it into place and fsyncs the directory so the new name is durable too.
//
// With once set, an existing file wins: writeFile returns nil and leaves it alone. The
// temporary file is moved into place with os.Link, which fails if the target exists, so
// of two concurrent writers exactly one succeeds and the other keeps its result.
func writeFile(path string, data []byte, once bool) (err error) {
	if once {
		// Retries are common and most find their record already written: skip the work.
		if _, err := os.Lstat(path); err == nil {
			return nil
		}
	}
	dir := filepath.Dir(path)
	if err := mkdirs(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	tmp := f.Name()
	defer func() {
		// After a rename the temporary name is gone; after a link or a failure, remove it.
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = fmt.Errorf("store: %w", rerr)
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		// Records are research: for the store's user alone, whatever the umask (CreateTemp
		// makes 0600 today; say so rather than rely on it).
		err = f.Chmod(fileMode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store: write %s: %w", path, err)
	}
	if once {
		err = os.Link(tmp, path)
		if errors.Is(err, fs.ErrExist) {
			return nil // another writer was first; its record stands
		}
	} else {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return syncDir(dir)
}

// The modes of what the store creates: its user's alone, since records are unpublished
// research that other users of the machine must not read (a store of an earlier version
// keeps its modes: chmod -R go-rwx it).
const (
	fileMode = 0o600
	dirMode  = 0o700
)

// mkdirs is os.MkdirAll that also fsyncs the parent of every directory it creates, so a
// record written after a crash is never lost with the directory that held it.
func mkdirs(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("store: %s is a file, not a directory; move it out of the store", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirs(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("store: %w", err)
	}
	return syncDir(parent)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store: sync directory %s: %w", dir, err)
	}
	return nil
}

// locks serialises read-modify-write of one file (the event log) within a process. It is
// keyed by path rather than held by a Store, because a worker may Open the same root many
// times.
var locks sync.Map // path -> *sync.Mutex

func lock(path string) (unlock func()) {
	m, _ := locks.LoadOrStore(path, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}
