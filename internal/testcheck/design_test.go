package testcheck

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestDesignListsEveryPackage holds docs/design.md's package table to the tree: a
// newcomer reads the table to find where a thing lives, so every package with non-test
// code is named there.
func TestDesignListsEveryPackage(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	design, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	missing, err := unlisted(os.DirFS(root), string(design))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range missing {
		t.Errorf("docs/design.md's package table does not name %s: add a row saying what it holds", p)
	}
}

// TestUnlisted: what counts as named. A package is named by its path in backquotes in a
// row's first cell, or, below a package the table names, by its own last element in that
// row ("`fixture`" in internal/fulltext's row); a mention in another row's prose does not
// count. A module of its own is not cosci's.
func TestUnlisted(t *testing.T) {
	code := &fstest.MapFile{Data: []byte("package x\n")}
	tree := fstest.MapFS{
		"a/a.go":          code,
		"a/sub/s.go":      code,
		"b/b.go":          code,
		"c/c_test.go":     code, // tests only: no package a user reaches
		"own/go.mod":      {Data: []byte("module own\n")},
		"own/o.go":        code,
		"prose/p.go":      code, // named outside the table
		"d/deeper/x/x.go": code,
		"e/e.go":          code, // named only in b's prose
	}
	table := "Prose names `prose`.\n\n| package | what it holds |\n|---|---|\n| `a` | a thing; `sub` its helper |\n| `b` | b |\n| `d/deeper` | below d |\n"
	got, err := unlisted(tree, table)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"d/deeper/x", "e", "prose"}; !slices.Equal(got, want) {
		t.Errorf("unlisted = %q, want %q", got, want)
	}
}

var quoted = regexp.MustCompile("`([^`]+)`")

// unlisted is the packages of fsys (directories with non-test Go files, outside nested
// modules) that the package table in design (its rows starting "| `") does not name.
func unlisted(fsys fs.FS, design string) ([]string, error) {
	named := map[string][]string{} // a row's first path -> every name in the row
	for _, line := range strings.Split(design, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		var names []string
		for _, m := range quoted.FindAllStringSubmatch(line, -1) {
			names = append(names, m[1])
		}
		first, _, _ := strings.Cut(line[1:], "|") // the row's first cell names its packages
		for _, m := range quoted.FindAllStringSubmatch(first, -1) {
			named[m[1]] = names
		}
	}
	modules := map[string]bool{}
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "go.mod" && p != "go.mod" {
			modules[path.Dir(p)] = true
		}
		return nil
	})
	var missing []string
	seen := map[string]bool{}
	err := walkSource(fsys, func(p string, _ []byte) error {
		dir := path.Dir(p)
		if dir == "." || seen[dir] || inModule(dir, modules) {
			return nil
		}
		seen[dir] = true
		if _, ok := named[dir]; ok {
			return nil
		}
		if parent, ok := named[path.Dir(dir)]; ok && slices.Contains(parent, path.Base(dir)) {
			return nil
		}
		missing = append(missing, dir)
		return nil
	})
	slices.Sort(missing)
	return missing, err
}

func inModule(dir string, modules map[string]bool) bool {
	for d := dir; d != "." && d != "/"; d = path.Dir(d) {
		if modules[d] {
			return true
		}
	}
	return false
}
