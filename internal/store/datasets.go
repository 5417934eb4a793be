package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/session"
)

// The lab's tables a session holds (#46), content-addressed like the tool records: the
// same bytes are the same dataset, added once however often they are given.
//
//	datasets/<digest>.data  the original bytes, compressed (and sealed where the session is)
//	datasets/<digest>.json  the DatasetRecord: its name, size and schema as read
//
// Both are written once, the bytes first: a record implies its bytes are stored, and a
// retry or a second upload changes nothing. A file over the cap or one that does not
// parse is refused before anything is written, so nothing already stored is lost.
const datasetsDir = "datasets"

// DatasetRecord is a dataset as the session holds it.
type DatasetRecord struct {
	Digest string         `json:"digest"` // sha256 of the original bytes, hex
	Name   string         `json:"name"`   // the file's base name as given, cleaned and bounded
	Bytes  int64          `json:"bytes"`
	Added  string         `json:"added"` // when it was first stored (session.Stamp)
	Schema dataset.Schema `json:"schema"`
}

// maxDatasetName bounds a dataset's name: it is shown to agents and on the desk.
const maxDatasetName = 120

// PutDataset reads data as a table (opt.MaxBytes is the deployment's cap,
// --max-dataset-mb) and stores it in the session with its schema. A file refused by the
// reader returns its *dataset.Refused and writes nothing. The same bytes stored before
// return the record stored then, name and time included.
func (s *Store) PutDataset(ctx context.Context, sessionID, name string, data []byte, opt dataset.Options, now time.Time) (DatasetRecord, error) {
	if _, err := escape("session id", sessionID); err != nil {
		return DatasetRecord{}, err
	}
	table, err := dataset.Read(data, opt)
	if err != nil {
		return DatasetRecord{}, err
	}
	dataKey, recordKey, err := datasetKeys(sessionID, table.Digest)
	if err != nil {
		return DatasetRecord{}, err
	}
	var stored DatasetRecord
	if found, err := s.find(ctx, sessionID, recordKey, "dataset "+table.Digest[:12], &stored); err != nil || found {
		return stored, err
	}
	if err := s.b.Put(ctx, sessionID, dataKey, pack(data), true); err != nil {
		return DatasetRecord{}, err
	}
	r := DatasetRecord{Digest: table.Digest, Name: datasetName(name), Bytes: int64(len(data)), Added: session.Stamp(now), Schema: table.Schema}
	if err := s.put(ctx, sessionID, recordKey, r, true); err != nil {
		return DatasetRecord{}, err
	}
	// Of two racing writers the first record stands: return what the session holds.
	return getAs[DatasetRecord](ctx, s, sessionID, recordKey, "dataset "+table.Digest[:12])
}

func datasetKeys(sessionID, digest string) (data, record string, err error) {
	if !digestRE.MatchString(digest) {
		return "", "", fmt.Errorf("store: %q is not a dataset's digest (64 hex digits)", digest)
	}
	if data, err = key(sessionID, datasetsDir, ".data", "dataset", digest); err != nil {
		return "", "", err
	}
	record, err = key(sessionID, datasetsDir, ".json", "dataset", digest)
	return data, record, err
}

// datasetName keeps a file's base name, without control characters, to maxDatasetName
// bytes of UTF-8.
func datasetName(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, name)
	for len(name) > maxDatasetName {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "." || name == "/" || name == "" {
		return "dataset"
	}
	return name
}

// Dataset reads a dataset's record by its digest.
func (s *Store) Dataset(ctx context.Context, sessionID, digest string) (DatasetRecord, error) {
	_, k, err := datasetKeys(sessionID, digest)
	if err != nil {
		return DatasetRecord{}, err
	}
	return getAs[DatasetRecord](ctx, s, sessionID, k, "dataset "+digest[:12])
}

// DatasetBytes reads a dataset's original bytes. They are the evidence analyses rest on:
// bytes that no longer match their digest are refused as damaged.
func (s *Store) DatasetBytes(ctx context.Context, sessionID, digest string) ([]byte, error) {
	k, _, err := datasetKeys(sessionID, digest)
	if err != nil {
		return nil, err
	}
	b, err := s.b.Get(ctx, sessionID, k)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: session %q has no dataset %s (no %s): %w", sessionID, digest[:12], s.b.Where(sessionID, k), errNoRecord)
	}
	if err != nil {
		return nil, err
	}
	if b, err = unpack(b); err != nil {
		return nil, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, k), Problem: err.Error()}
	}
	if dataset.Digest(b) != digest {
		return nil, &DamagedError{SessionID: sessionID, Record: s.b.Where(sessionID, k), Problem: "its content does not match its digest"}
	}
	return b, nil
}

// Datasets returns the session's datasets, in the order they were added.
func (s *Store) Datasets(ctx context.Context, sessionID string) ([]DatasetRecord, error) {
	return inOrder(ctx, s, sessionID, datasetsDir, "dataset", func(r DatasetRecord) string { return r.Added })
}
