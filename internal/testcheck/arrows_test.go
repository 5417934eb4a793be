package testcheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// arrow is an import the module must not have: from's non-test files must not import to,
// directly, or (transitive) through any of the module's packages either. Packages are
// named by their directory under the module's root.
type arrow struct {
	from, to   string
	transitive bool
	why        string
}

// forbidden are the arrows issue 45 took out; each pulled more into a package than it
// uses. workflows reaches provider and desk reaches activities and fulltext through
// packages they must import (activities, workflows), so only their direct imports are
// held; provider must not reach the simulator by any path.
var forbidden = []arrow{
	{"internal/provider", "internal/simulator", true, "the binaries that offer the offline model give it to provider.Registry; everything that names or prices a model would carry the simulator (and citation) otherwise"},
	{"workflows", "internal/provider", false, "a workflow needs no model client: what it needs of prices is in internal/research"},
	{"desk", "activities", false, "the desk goes through workflows' API (workflows.Catalog, workflows.EndedReason)"},
	{"desk", "internal/fulltext", false, "the desk serves a PDF by its name, and reads none"},
}

// TestArrows holds the whole module to forbidden.
func TestArrows(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modulePath(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	imports, err := moduleImports(os.DirFS(root), mod)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range forbidden {
		if _, ok := imports[a.from]; !ok {
			t.Errorf("%s: no such package; is forbidden out of date?", a.from)
			continue
		}
		if p := importPath(imports, a); p != nil {
			t.Errorf("%s imports %s (%s): %s", a.from, a.to, strings.Join(p, " -> "), a.why)
		}
	}
}

// TestImportPath: what counts as an import. Only non-test files, whatever their build
// tags, of the module's own packages (a standard or outside package cannot import ours),
// and not those of testdata/, bin/ or the directories the go command ignores.
func TestImportPath(t *testing.T) {
	src := func(pkg string, imports ...string) *fstest.MapFile {
		var b strings.Builder
		fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"fmt\"\n", pkg)
		for _, i := range imports {
			fmt.Fprintf(&b, "\t%q\n", "example.com/m/"+i)
		}
		b.WriteString(")\n")
		return &fstest.MapFile{Data: []byte(b.String())}
	}
	tree := fstest.MapFS{
		"go.mod":               {Data: []byte("// the module\nmodule example.com/m // its path\n\ngo 1.26\n")},
		"a/a.go":               src("a", "b"),
		"a/a_test.go":          src("a", "sim"),
		"b/b.go":               src("b", "c"),
		"b/tagged.go":          {Data: []byte("//go:build special\n\npackage b\n\nimport _ \"example.com/m/d\"\n")},
		"c/c.go":               src("c"),
		"d/d.go":               src("d", "sim"),
		"sim/sim.go":           src("sim"),
		"e/e.go":               src("e", "a"),
		"e/testdata/x/x.go":    src("x", "sim"),
		"f/f.go":               src("f", "c", "a"),
		"f/_old/old.go":        src("old", "sim"),
		"bin/tool/tool.go":     src("tool", "sim"),
		"g/cycle.go":           src("g", "h"),
		"h/cycle.go":           src("h", "g"),
		".scratch/scratch.go":  src("scratch", "sim"),
		"notes/README.md":      {Data: []byte("import \"example.com/m/sim\"\n")},
		"notes/unparsable.txt": {Data: []byte("package")},
	}
	mod, err := modulePath(tree)
	if err != nil || mod != "example.com/m" {
		t.Fatalf("module path %q, %v; want example.com/m", mod, err)
	}
	imports, err := moduleImports(tree, mod)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		a    arrow
		want string // the path found, "" for none
	}{
		{arrow{from: "a", to: "b"}, "a -> b"},
		{arrow{from: "a", to: "sim"}, ""}, // a test's import
		{arrow{from: "a", to: "c"}, ""},
		{arrow{from: "a", to: "c", transitive: true}, "a -> b -> c"},
		{arrow{from: "a", to: "sim", transitive: true}, "a -> b -> d -> sim"}, // through a tagged file, not a test
		{arrow{from: "c", to: "sim", transitive: true}, ""},
		{arrow{from: "e", to: "sim", transitive: true}, "e -> a -> b -> d -> sim"},
		{arrow{from: "e", to: "x", transitive: true}, ""},                          // testdata
		{arrow{from: "f", to: "sim", transitive: true}, "f -> a -> b -> d -> sim"}, // the first import that leads there
		{arrow{from: "f", to: "old", transitive: true}, ""},
		{arrow{from: "g", to: "sim", transitive: true}, ""}, // a cycle ends
		{arrow{from: "g", to: "g", transitive: true}, "g -> h -> g"},
	} {
		got := strings.Join(importPath(imports, tt.a), " -> ")
		if got != tt.want {
			t.Errorf("%s to %s (transitive %v): %q; want %q", tt.a.from, tt.a.to, tt.a.transitive, got, tt.want)
		}
	}
	for _, skipped := range []string{"bin/tool", ".scratch", "e/testdata/x", "f/_old", "notes"} {
		if _, ok := imports[skipped]; ok {
			t.Errorf("%s is read as a package; want it skipped", skipped)
		}
	}
}

// modulePath is the path go.mod at the root of fsys declares.
func modulePath(fsys fs.FS) (string, error) {
	data, err := fs.ReadFile(fsys, "go.mod")
	if err != nil {
		return "", err
	}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], "\"`"), nil // a path may be quoted
		}
	}
	return "", fmt.Errorf("go.mod declares no module")
}

// moduleImports is, for each of the module's packages (by directory), the module's
// packages its non-test files import, in the order the files name them. Build tags are
// not read: a file of any build imports what it names.
func moduleImports(fsys fs.FS, mod string) (map[string][]string, error) {
	imports := map[string][]string{}
	fset := token.NewFileSet()
	err := walkSource(fsys, func(p string, data []byte) error {
		f, err := parser.ParseFile(fset, p, data, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := path.Dir(p)
		if _, ok := imports[dir]; !ok {
			imports[dir] = nil
		}
		for _, spec := range f.Imports {
			ip, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if pkg, ok := strings.CutPrefix(ip, mod+"/"); ok && !slices.Contains(imports[dir], pkg) {
				imports[dir] = append(imports[dir], pkg)
			}
		}
		return nil
	})
	return imports, err
}

// importPath is a way a.from imports a.to, from a.from to a.to, or nil for none: a
// direct import, or, for a transitive arrow, the first path a depth-first walk finds.
func importPath(imports map[string][]string, a arrow) []string {
	if !a.transitive {
		if slices.Contains(imports[a.from], a.to) {
			return []string{a.from, a.to}
		}
		return nil
	}
	seen := map[string]bool{}
	var walk func(pkg string) []string
	walk = func(pkg string) []string {
		for _, next := range imports[pkg] {
			if next == a.to {
				return []string{pkg, next}
			}
			if seen[next] {
				continue
			}
			seen[next] = true
			if p := walk(next); p != nil {
				return append([]string{pkg}, p...)
			}
		}
		return nil
	}
	return walk(a.from)
}
