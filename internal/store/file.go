package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

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
		err = f.Chmod(0o644) // CreateTemp makes 0600; records are for reading with any tool
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
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
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

// putJSON writes v as indented JSON, which a scientist can read with any tool.
func putJSON(path string, v any, once bool) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", filepath.Base(path), err)
	}
	return writeFile(path, append(b, '\n'), once)
}

// getJSON reads a record. A missing file yields an error wrapping fs.ErrNotExist.
func getJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("store: %s is not a valid record (%v); it was changed outside the store: restore it from a backup or remove it", path, err)
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
