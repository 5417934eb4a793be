package testcheck

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// maxLines is the developer guide's bar: no non-test Go file over 500 lines. A file that
// grows past it holds more than one concern; split it where its concerns part.
const maxLines = 500

// TestNoLongFiles holds the whole module to the bar.
func TestNoLongFiles(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	long, err := longFiles(os.DirFS(root), maxLines)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range long {
		t.Errorf("%s: over %d lines; split it where its concerns part", f, maxLines)
	}
}

// TestLongFiles: what counts. Only non-test Go files, and not those of bin/ (the tools
// the Makefile installs), testdata/, or the directories the go command ignores (.x, _x).
func TestLongFiles(t *testing.T) {
	lines := func(n int) *fstest.MapFile { return &fstest.MapFile{Data: bytes.Repeat([]byte("x\n"), n)} }
	tree := fstest.MapFS{
		"main.go":                     lines(500),
		"big.go":                      lines(501),
		"big_test.go":                 lines(900),
		"pkg/inner/deep.go":           lines(777),
		"pkg/notes.md":                lines(900),
		"pkg/noendline.go":            {Data: []byte(strings.Repeat("x\n", 500) + "x")},
		"bin/npm/node_modules/dep.go": lines(900),
		"pkg/testdata/fixture.go":     lines(900),
		".scratch/tool.go":            lines(900),
		"_attic/old.go":               lines(900),
	}
	got, err := longFiles(tree, maxLines)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"big.go (501 lines)", "pkg/inner/deep.go (777 lines)", "pkg/noendline.go (501 lines)"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("long files %q; want %q", got, want)
	}
}

// longFiles lists the non-test Go files of fsys over limit lines, with their lengths, in
// lexical order.
func longFiles(fsys fs.FS, limit int) ([]string, error) {
	var long []string
	err := walkSource(fsys, func(path string, data []byte) error {
		n := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			n++ // a last line without its newline
		}
		if n > limit {
			long = append(long, fmt.Sprintf("%s (%d lines)", path, n))
		}
		return nil
	})
	return long, err
}

// walkSource calls visit with each non-test Go file of fsys and its contents, in lexical
// order, leaving out bin/ (the tools the Makefile installs), testdata/, and the
// directories the go command ignores (.x, _x).
func walkSource(fsys fs.FS, visit func(path string, data []byte) error) error {
	return fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (name == "bin" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		return visit(path, data)
	})
}

// moduleRoot is the directory of the go.mod above the test's working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}
