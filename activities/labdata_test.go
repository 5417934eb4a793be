package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/cosci-dev/cosci/internal/store"
)

// labFolder is a worker's data folder holding a table R wrote (internal/dataset's lab
// files), a link to it inside the folder, a link to a table outside it, a directory and a
// FIFO; and the rows R wrote, read from its truth file.
func labFolder(t *testing.T) (dir string, iris []byte, rows int) {
	t.Helper()
	lab := filepath.Join("..", "internal", "dataset", "testdata", "lab")
	iris, err := os.ReadFile(filepath.Join(lab, "r-iris.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Rows int `json:"rows"`
	}
	raw, err := os.ReadFile(filepath.Join(lab, "r-iris.truth.json"))
	if err == nil {
		err = json.Unmarshal(raw, &truth)
	}
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	dir = filepath.Join(base, "lab")
	outside := filepath.Join(base, "secret.csv")
	steps := []error{
		os.Mkdir(dir, 0o700),
		os.WriteFile(filepath.Join(dir, "iris.csv"), iris, 0o600),
		os.WriteFile(outside, iris, 0o600),
		os.Symlink("iris.csv", filepath.Join(dir, "inside-link.csv")),
		os.Symlink(outside, filepath.Join(dir, "out-link.csv")),
		os.Symlink("../secret.csv", filepath.Join(dir, "up-link.csv")),
		os.Mkdir(filepath.Join(dir, "plates"), 0o700),
		syscall.Mkfifo(filepath.Join(dir, "pipe.csv"), 0o600),
	}
	if err := errors.Join(steps...); err != nil {
		t.Fatal(err)
	}
	return dir, iris, truth.Rows
}

func labDataEnv(t *testing.T, dir string, maxBytes int64) (*store.Store, func(ImportLabDataInput) (store.DatasetRecord, error)) {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	l := &LabData{Dir: dir, Store: st, MaxBytes: maxBytes}
	env.RegisterActivityWithOptions(l.Import, activity.RegisterOptions{Name: ImportLabDataActivity})
	return st, func(in ImportLabDataInput) (store.DatasetRecord, error) {
		var rec store.DatasetRecord
		v, err := env.ExecuteActivity(ImportLabDataActivity, in)
		if err == nil {
			err = v.Get(&rec)
		}
		return rec, err
	}
}

// TestImportLabData: a table in the worker's data folder, and a link to it inside the
// folder, are stored in the session by the digest of the bytes R wrote, with R's rows;
// paths, links out of the folder, a directory, a FIFO and a file over the cap are refused
// with the reason, not retried, and store nothing; what was stored before stays.
func TestImportLabData(t *testing.T) {
	dir, iris, rows := labFolder(t)
	sum := sha256.Sum256(iris)
	st, importIt := labDataEnv(t, dir, 0)
	for _, name := range []string{"iris.csv", "inside-link.csv"} {
		rec, err := importIt(ImportLabDataInput{SessionID: "s-1", Name: name})
		if err != nil || rec.Digest != hex.EncodeToString(sum[:]) || rec.Schema.Rows != rows {
			t.Fatalf("%s: %+v, %v; want digest %x and %d rows", name, rec, err, sum, rows)
		}
	}
	stored, err := st.DatasetBytes(t.Context(), "s-1", hex.EncodeToString(sum[:]))
	if err != nil || string(stored) != string(iris) {
		t.Fatalf("stored %d bytes, %v; want R's %d", len(stored), err, len(iris))
	}
	cases := []struct{ name, why string }{
		{"../secret.csv", "is a path"},
		{filepath.Join(filepath.Dir(dir), "secret.csv"), "is a path"},
		{"plates/../iris.csv", "is a path"},
		{`..\secret.csv`, "is a path"},
		{"..", "not a file's name"},
		{"", "not a file's name"},
		{"out-link.csv", "leads out of the worker's data folder"},
		{"up-link.csv", "leads out of the worker's data folder"},
		{"plates", "not a regular file"},
		{"pipe.csv", "not a regular file"},
		{"missing.csv", `no file "missing.csv"`},
	}
	for _, c := range cases {
		_, err := importIt(ImportLabDataInput{SessionID: "s-2", Name: c.name})
		wantLabRefusal(t, c.name, err, c.why)
	}
	// Over the cap, asked by the starter or set by the worker: refused, and the session's
	// table stored before is still there, whole.
	if _, err := importIt(ImportLabDataInput{SessionID: "s-1", Name: "iris.csv", MaxBytes: int64(len(iris) - 1)}); err != nil {
		wantLabRefusal(t, "over the starter's cap", err, "over the cap")
	} else {
		t.Error("over the starter's cap: imported")
	}
	_, capped := labDataEnv(t, dir, int64(len(iris)-1))
	_, err = capped(ImportLabDataInput{SessionID: "s-1", Name: "iris.csv"})
	wantLabRefusal(t, "over the worker's cap", err, "over the cap")
	if left, err := st.Datasets(t.Context(), "s-2"); err != nil || len(left) != 0 {
		t.Errorf("refused imports left %d datasets (%v)", len(left), err)
	}
	if got, err := st.DatasetBytes(t.Context(), "s-1", hex.EncodeToString(sum[:])); err != nil || string(got) != string(iris) {
		t.Errorf("after the refusals the stored table reads %d bytes, %v", len(got), err)
	}
}

func wantLabRefusal(t *testing.T, what string, err error, why string) {
	t.Helper()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrLabDataRefused || !app.NonRetryable() || !strings.Contains(app.Error(), why) {
		t.Errorf("%s: %v; want a non-retryable %s saying %q", what, err, ErrLabDataRefused, why)
	}
}

// A worker without a data folder refuses every import, saying how to give it one.
func TestImportLabDataNoFolder(t *testing.T) {
	_, importIt := labDataEnv(t, "", 0)
	_, err := importIt(ImportLabDataInput{SessionID: "s-1", Name: "iris.csv"})
	wantLabRefusal(t, "no folder", err, "--lab-data DIR")
}

// The workflow runs the import on the data folder's queue and passes a refusal on
// without retrying it.
func TestImportLabDataWorkflow(t *testing.T) {
	dir, iris, _ := labFolder(t)
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, why string }{{"iris.csv", ""}, {"out-link.csv", "leads out"}} {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestWorkflowEnvironment()
		l := &LabData{Dir: dir, Store: st}
		calls := 0
		env.RegisterActivityWithOptions(l.Import, activity.RegisterOptions{Name: ImportLabDataActivity})
		env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) { calls++ })
		env.ExecuteWorkflow(ImportLabData, ImportLabDataInput{SessionID: "s-1", Name: c.name})
		var rec store.DatasetRecord
		err := env.GetWorkflowError()
		if err == nil {
			err = env.GetWorkflowResult(&rec)
		}
		switch {
		case c.why == "" && (err != nil || rec.Bytes != int64(len(iris))):
			t.Errorf("%s: %+v, %v", c.name, rec, err)
		case c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why) || calls != 1):
			t.Errorf("%s: %v after %d attempts; want refused once for %q", c.name, err, calls, c.why)
		}
	}
}
