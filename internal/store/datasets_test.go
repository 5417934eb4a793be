package store

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/cosci-dev/cosci/internal/dataset"
)

// A European lab export: what the store keeps must be these bytes, and its schema.
const labTable = "Probe;Gewicht (g);Datum\r\nM\u00fcller;1.234,5;01.02.2024\r\nSchmidt;NA;13.02.2024\r\n"

// TestDatasets: a table is stored with its schema, content-addressed, read back byte for
// byte, and a refused one (over the cap, not parsed) writes nothing and loses nothing.
func TestDatasets(t *testing.T) {
	eachStore(t, func(t *testing.T, s *Store) {
		ctx := tctx(t)
		t0 := time.Date(2026, 11, 28, 21, 0, 0, 0, time.UTC)
		r, err := s.PutDataset(ctx, "s1", "../lab/Waage\n2.csv", []byte(labTable), dataset.Options{}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Digest != dataset.Digest([]byte(labTable)) || r.Name != "Waage2.csv" || r.Bytes != int64(len(labTable)) {
			t.Errorf("record %+v", r)
		}
		if c := r.Schema.Columns; len(c) != 3 || c[1].Name != "Gewicht" || c[1].Unit != "g" || c[1].Type != dataset.DOUBLE || c[2].Type != dataset.DATE {
			t.Errorf("schema %+v", r.Schema)
		}
		// The same bytes again, under another name and later: the first record stands.
		again, err := s.PutDataset(ctx, "s1", "copy.csv", []byte(labTable), dataset.Options{}, t0.Add(time.Hour))
		if err != nil || again.Name != "Waage2.csv" || again.Added != r.Added {
			t.Errorf("stored again: %+v, %v", again, err)
		}
		// Refused: over the cap, and not a table. Neither is stored.
		big := []byte("a,b\n" + strings.Repeat("1,2\n", 100))
		_, err = s.PutDataset(ctx, "s1", "big.csv", big, dataset.Options{MaxBytes: 100}, t0)
		var refused *dataset.Refused
		if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "--max-dataset-mb") {
			t.Errorf("over the cap: %v", err)
		}
		if _, err := s.PutDataset(ctx, "s1", "ragged.csv", []byte("a,b\n1\n"), dataset.Options{}, t0); !errors.As(err, &refused) || refused.Line != 2 {
			t.Errorf("ragged: %v", err)
		}
		for _, refused := range [][]byte{big, []byte("a,b\n1\n")} {
			if _, err := s.Dataset(ctx, "s1", dataset.Digest(refused)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused dataset's record is stored: %v", err)
			}
			if _, err := s.DatasetBytes(ctx, "s1", dataset.Digest(refused)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused dataset's bytes are stored: %v", err)
			}
		}
		list, err := s.Datasets(ctx, "s1")
		if err != nil || len(list) != 1 || list[0].Digest != r.Digest {
			t.Fatalf("datasets %+v, %v", list, err)
		}
		got, err := reopen(s).DatasetBytes(ctx, "s1", r.Digest)
		if err != nil || !bytes.Equal(got, []byte(labTable)) {
			t.Errorf("bytes read back: %q, %v", got, err)
		}
		if _, err := s.DatasetBytes(ctx, "s1", strings.Repeat("0", 64)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("an unknown digest: %v", err)
		}
		if _, err := s.Dataset(ctx, "s1", "../../etc/passwd"); err == nil {
			t.Error("a digest that is a path is read")
		}
		if other, err := s.Datasets(ctx, "s2"); err != nil || len(other) != 0 {
			t.Errorf("another session holds %+v, %v", other, err)
		}
	})
}

// Where the session is encrypted, neither the bytes nor the schema lie in the store in
// the clear; and bytes changed in the store are refused as damaged, not analysed.
func TestDatasetsSealedAndChecked(t *testing.T) {
	ds := open(t)
	s := encrypted(t, ds.Store)
	ctx := tctx(t)
	r, err := s.PutDataset(ctx, "s1", "lab.csv", []byte(labTable), dataset.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dataKey, recordKey, _ := datasetKeys("s1", r.Digest)
	for _, k := range []string{dataKey, recordKey} {
		raw, err := s.Backend().Get(ctx, "s1", k)
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := Plain(raw)
		if bytes.Contains(raw, []byte("Schmidt")) || bytes.Contains(plain, []byte("Schmidt")) || bytes.Contains(raw, []byte("Gewicht")) {
			t.Errorf("%s holds the table in the clear", k)
		}
	}

	plainStore := open(t).Store
	r, err = plainStore.PutDataset(ctx, "s1", "lab.csv", []byte(labTable), dataset.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dataKey, _, _ = datasetKeys("s1", r.Digest)
	forged := strings.Replace(labTable, "1.234,5", "9.234,5", 1)
	if err := plainStore.Backend().Put(ctx, "s1", dataKey, pack([]byte(forged)), false); err != nil {
		t.Fatal(err)
	}
	var damaged *DamagedError
	if _, err := plainStore.DatasetBytes(ctx, "s1", r.Digest); !errors.As(err, &damaged) || !strings.Contains(damaged.Problem, "does not match its digest") {
		t.Errorf("changed bytes read: %v", err)
	}
}
