package library

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	papers "github.com/cosci-dev/cosci/internal/fulltext/fixture"
)

// deadline bounds how long a test waits for an event that should come at once: it fails
// there, instead of hanging until go test's timeout.
const deadline = 2 * time.Minute

// blockingPDFText is a pdftotext that, for a file whose path holds slow, waits until the
// test releases it: its opening of a FIFO is the event "reading it has begun" (the test's
// opening of the other end returns then), and the FIFO's close the release.
func blockingPDFText(t *testing.T, slow string) (tool string, begun <-chan struct{}, release func()) {
	t.Helper()
	real, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fifo, released := filepath.Join(dir, "fifo"), filepath.Join(dir, "released")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tool = filepath.Join(dir, "pdftotext")
	script := "#!/bin/sh\ncase \"$*\" in *" + slow + "*) [ -e '" + released + "' ] || cat '" + fifo + "' > /dev/null ;; esac\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	opened := make(chan struct{})
	var w *os.File // held open until released: the reader waits for its close
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil { // returns once the reader opens it
			w = f
			close(opened)
		}
	}()
	var once sync.Once
	release = func() {
		once.Do(func() {
			os.WriteFile(released, nil, 0o600)
			select {
			case <-opened:
				w.Close()
			default: // not begun: a reader that opens it now passes, the file marked released
				if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			}
		})
	}
	return tool, opened, release
}

func within[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(deadline):
		t.Fatalf("%s did not come within %s", what, deadline)
		panic("unreachable")
	}
}

// TestServerAnswersWhileReading: a library opened in the background answers MCP's
// initialize, tools/list, search and fetch while a full text takes long to read (its
// pdftotext blocks until the test releases it): the search finds the passages indexed so
// far and says how many full texts are still being read, a fetch of the one being read
// says so, and once it is read both find it.
func TestServerAnswersWhileReading(t *testing.T) {
	needPDFText(t)
	dir := t.TempDir()
	for name, p := range map[string]papers.Paper{"slow.pdf": papers.Ito, "fast.pdf": papers.Kim} {
		b, _, err := papers.PDF(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bib := "@article{slow, title = {Microglia carry tau}, year = 2021, file = {:slow.pdf:PDF}}\n@article{fast, title = {BIN1 regulates tau}, year = 2021, file = {:fast.pdf:PDF}}\n"
	if err := os.WriteFile(filepath.Join(dir, "refs.bib"), []byte(bib), 0o644); err != nil {
		t.Fatal(err)
	}
	tool, begun, release := blockingPDFText(t, "slow.pdf")
	var l *Library
	t.Cleanup(func() { // the reader released first: a failed test does not leave it waiting
		release()
		if l != nil {
			l.Close()
		}
	})
	published := make(chan int, 100)
	done := make(chan error, 1)
	opened := make(chan *Library, 1)
	go func() {
		l, err := OpenWith(dir, t.TempDir(), nil, Options{PDFText: tool, Background: true,
			OnTexts: func(_ Changes, err error) { done <- err }, published: func(n int) { published <- n }})
		if err != nil {
			t.Error(err)
		}
		opened <- l
	}()
	if l = within(t, opened, "OpenWith's return while a full text is being read"); l == nil {
		t.FailNow()
	}
	within(t, begun, "the slow file's reading")
	for n := within(t, published, "a publication"); n != 1; n = within(t, published, "the fast text's publication") {
	}

	ct, st := mcp.NewInMemoryTransports()
	ss, err := Server(l).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil) // initialize
	if err != nil {
		t.Fatalf("initialize while a full text is being read: %v", err)
	}
	defer cs.Close()
	if tools, err := cs.ListTools(context.Background(), nil); err != nil || len(tools.Tools) != 2 {
		t.Fatalf("tools/list: %+v, %v", tools, err)
	}
	search := func(q string) SearchOutput {
		t.Helper()
		text, isErr := call(t, cs, "search", map[string]any{"query": q})
		var out SearchOutput
		if isErr || json.Unmarshal([]byte(text), &out) != nil {
			t.Fatalf("search %q: %s", q, text)
		}
		return out
	}
	out := search("tau microglia BIN1 exosome")
	if out.Reading != 1 || out.Note != "1 of 2 full texts is still being read: their passages are not searched yet; search again later for them" || len(out.Results) != 2 {
		t.Errorf("search while slow.pdf is read: reading %d, note %q, %d references", out.Reading, out.Note, len(out.Results))
	}
	for _, p := range out.Passages {
		if p.ID != "fast" {
			t.Errorf("a passage of %s, whose text is being read", p.ID)
		}
	}
	if len(out.Passages) == 0 {
		t.Error("the text read already is not searched")
	}
	text, isErr := call(t, cs, "fetch", map[string]any{"id": "slow"})
	var f FetchOutput
	if isErr || json.Unmarshal([]byte(text), &f) != nil || f.Fulltext != nil || f.FulltextNote != "its full text slow.pdf is still being read: fetch it again later for its passages" {
		t.Errorf("fetch of the reference being read: %s", text)
	}
	if text, isErr := call(t, cs, "fetch", map[string]any{"id": "slow", "page": 1}); !isErr || !strings.Contains(text, "slow: its full text slow.pdf is still being read") {
		t.Errorf("fetch of a page of the text being read: %q (error %v)", text, isErr)
	}

	release()
	if err := within(t, done, "the end of the reading"); err != nil {
		t.Fatal(err)
	}
	out = search("exosome inhibition GW4869 seeding dentate gyrus")
	if out.Reading != 0 || out.Note != "" || len(out.Passages) == 0 || out.Passages[0].Passage != "slow#p1.13" {
		t.Errorf("search once read: reading %d, note %q, passages %+v", out.Reading, out.Note, out.Passages)
	}
	if text, isErr := call(t, cs, "fetch", map[string]any{"id": "slow", "page": 1}); isErr || !strings.Contains(text, "slow#p1.13") {
		t.Errorf("fetch once read: %s", text)
	}
}
