package activities

// Tables from a data folder given to a worker (issue #46): `worker --lab-data DIR` serves
// the files of DIR to sessions, and `starter data add --session ID --from-worker NAME`
// imports one. The import runs on that worker (ImportLabDataWorkflow on its LabDataQueue):
// it reads DIR/NAME, reads the table as `data add` does (StoreTable), and stores it in
// the session store by digest; the starter then announces it to the session like any
// other table. So after an import nothing lives only on that worker's disk.
//
// NAME is a plain name inside DIR. A path (a separator, "..", an absolute path), a link
// that leads out of DIR, a file that is not a regular one and a file over the cap are
// refused with the reason, before anything is stored.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cosci-dev/cosci/internal/dataset"
	"github.com/cosci-dev/cosci/internal/store"
)

// The data folder's task queue, workflow and activity names. The workflow runs on the
// sessions' queue, the activity on the data folder's: a deployment with several data
// folders gives each worker its own queue (--lab-data-queue), and the starter names it
// (--lab-data-queue), so that a file is read on the worker whose folder holds it.
const (
	LabDataQueue          = "cosci-lab-data"
	ImportLabDataWorkflow = "ImportLabData"
	ImportLabDataActivity = "ImportLabDataFile"
	// ErrLabDataRefused is the failure type of an import refused for its name, its file or
	// its table: not retried.
	ErrLabDataRefused = "LabDataRefused"
)

// ImportLabDataInput names the file of the worker's data folder to import into a session.
type ImportLabDataInput struct {
	SessionID string `json:"session_id"`
	Name      string `json:"name"`
	// MaxBytes is the cap (--max-dataset-mb); 0 is dataset.DefaultMaxBytes. The worker's own
	// cap (LabData.MaxBytes), when lower, wins.
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// Queue is the data folder's task queue; "" is LabDataQueue.
	Queue string `json:"queue,omitempty"`
}

// LabData imports tables from the worker's data folder Dir into Store.
type LabData struct {
	Dir      string
	Store    *store.Store
	MaxBytes int64 // the worker's cap; 0 is dataset.DefaultMaxBytes
}

// Import reads Dir/Name and stores it in the session; a refusal is a non-retryable
// ErrLabDataRefused failure whose message says why.
func (l *LabData) Import(ctx context.Context, in ImportLabDataInput) (store.DatasetRecord, error) {
	limit := capOf(in.MaxBytes, l.MaxBytes)
	data, err := l.read(in.Name, limit)
	if err == nil {
		var rec store.DatasetRecord
		rec, err = StoreTable(ctx, l.Store, in.SessionID, in.Name, data, limit)
		if err == nil {
			return rec, nil
		}
	}
	var refused *TableRefused
	if errors.As(err, &refused) {
		return store.DatasetRecord{}, temporal.NewNonRetryableApplicationError(refused.Error(), ErrLabDataRefused, nil)
	}
	return store.DatasetRecord{}, err
}

func capOf(asked, worker int64) int64 {
	limit := int64(dataset.DefaultMaxBytes)
	for _, c := range []int64{asked, worker} {
		if c > 0 && c < limit {
			limit = c
		}
	}
	return limit
}

// read reads the plain name inside Dir, at most limit bytes; every refusal is a
// *TableRefused. os.Root keeps every step of the path, links included, inside Dir.
func (l *LabData) read(name string, limit int64) ([]byte, error) {
	if l.Dir == "" {
		return nil, &TableRefused{Reason: "this worker has no data folder (start it with --lab-data DIR)"}
	}
	if err := plainName(name); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(l.Dir)
	if err != nil {
		return nil, fmt.Errorf("the worker's data folder: %w", err)
	}
	defer root.Close()
	info, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &TableRefused{Reason: fmt.Sprintf("the worker's data folder has no file %q", name)}
	} else if err != nil {
		return nil, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		if info, err = root.Stat(name); err != nil {
			return nil, &TableRefused{Reason: fmt.Sprintf("%q is a link that leads out of the worker's data folder, or to nothing: only files inside it are read", name)}
		}
	}
	if !info.Mode().IsRegular() {
		return nil, &TableRefused{Reason: fmt.Sprintf("%q is not a regular file (%s)", name, info.Mode().Type())}
	}
	// O_NONBLOCK: a file swapped for a FIFO after the check cannot hang the worker.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &TableRefused{Reason: fmt.Sprintf("%q cannot be opened inside the worker's data folder", name)}
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, &TableRefused{Reason: fmt.Sprintf("%q is not a regular file", name)}
	}
	if info.Size() > limit {
		return nil, overCap(name, info.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		return nil, overCap(name, int64(len(data)), limit) // it grew while read
	}
	return data, err
}

// plainName refuses a name that is not one file's name: empty, "." or "..", with a
// separator or a NUL, or absolute.
func plainName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return &TableRefused{Reason: fmt.Sprintf("%q is not a file's name", name)}
	case strings.ContainsAny(name, `/\`+"\x00"):
		return &TableRefused{Reason: fmt.Sprintf("%q is a path: give the plain name of a file inside the worker's data folder (no directories, no .., no absolute path)", name)}
	}
	return nil
}

// TableRefused is a table refused before it was stored, with the reason: nothing was
// written.
type TableRefused struct{ Reason string }

func (r *TableRefused) Error() string { return "refused: " + r.Reason }

func overCap(name string, size, limit int64) error {
	return &TableRefused{Reason: fmt.Sprintf("%s is %s, over the cap of %s (--max-dataset-mb)", name, sizeText(size), sizeText(limit))}
}

// sizeText is a size in MB, or in bytes below one.
func sizeText(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d MB", n>>20)
}

// StoreTable reads data as a table and stores it in the session under its digest, for
// `starter data add` and the data folder alike: a file over limit, or one the reader
// refuses, is a *TableRefused with the reason, and nothing is written.
func StoreTable(ctx context.Context, st *store.Store, sessionID, name string, data []byte, limit int64) (store.DatasetRecord, error) {
	if int64(len(data)) > limit {
		return store.DatasetRecord{}, overCap(name, int64(len(data)), limit)
	}
	rec, err := st.PutDataset(ctx, sessionID, name, data, dataset.Options{MaxBytes: limit}, time.Now())
	var refused *dataset.Refused
	if errors.As(err, &refused) {
		return rec, &TableRefused{Reason: name + ": " + refused.Error()}
	}
	return rec, err
}

// LabDataWait is how long an import waits for a worker with the data folder to take it.
const LabDataWait = 2 * time.Minute

// ImportLabData is the workflow the starter starts (on the sessions' queue): the import,
// run on the data folder's queue by the worker that holds the folder; no such worker
// within LabDataWait fails it. It holds nothing but the activity's answer.
func ImportLabData(ctx workflow.Context, in ImportLabDataInput) (store.DatasetRecord, error) {
	queue := in.Queue
	if queue == "" {
		queue = LabDataQueue
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              queue,
		ScheduleToStartTimeout: LabDataWait,
		StartToCloseTimeout:    10 * time.Minute,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{ErrLabDataRefused}},
	})
	var rec store.DatasetRecord
	err := workflow.ExecuteActivity(ctx, ImportLabDataActivity, in).Get(ctx, &rec)
	return rec, err
}
