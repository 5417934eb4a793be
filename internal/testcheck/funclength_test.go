package testcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// maxFuncLines is the bar for one function: none outside tests over 100 lines, counted
// from its `func` to its closing brace. A function that long does several things; it
// reads top to bottom once split into functions named for what they do.
const maxFuncLines = 100

// TestNoLongFunctions holds the whole module to the bar.
func TestNoLongFunctions(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	long, err := longFunctions(os.DirFS(root), maxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range long {
		t.Errorf("%s: over %d lines; split it into functions named for what they do", f, maxFuncLines)
	}
}

// TestLongFunctions: what counts. Functions and methods of non-test Go files, from `func`
// to the closing brace, outside the directories the file test leaves out.
func TestLongFunctions(t *testing.T) {
	// fn is a function of n lines: its `func` line, n-2 statements, its closing brace.
	fn := func(name string, n int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", n-2) + "}\n"
	}
	src := func(funcs ...string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("package p\n\n" + strings.Join(funcs, "\n"))}
	}
	method := "type T struct{}\n\nfunc (T) " + strings.TrimPrefix(fn("m", 120), "func ")
	tree := fstest.MapFS{
		"a.go":                    src(fn("short", 100), fn("long", 101)),
		"a_test.go":               src(fn("inTest", 300)),
		"pkg/b.go":                src(method),
		"pkg/lit.go":              src("var f = " + fn("", 150)),
		"bin/tool/main.go":        src(fn("tool", 300)),
		"pkg/testdata/fixture.go": src(fn("fixture", 300)),
		".scratch/tool.go":        src(fn("scratch", 300)),
		"_attic/old.go":           src(fn("old", 300)),
		"pkg/notes.md":            {Data: []byte(fn("notes", 300))},
	}
	got, err := longFunctions(tree, maxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.go:104 long (101 lines)", "pkg/b.go:5 T.m (120 lines)"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("long functions %q; want %q", got, want)
	}
}

// longFunctions lists the functions and methods of the non-test Go files of fsys over
// limit lines, as file:line name (length), in lexical order of file and then by line. A
// function literal is counted with the function that holds it, not alone.
func longFunctions(fsys fs.FS, limit int) ([]string, error) {
	var long []string
	err := walkSource(fsys, func(path string, data []byte) error {
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, data, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
			if n := end - start + 1; n > limit {
				long = append(long, fmt.Sprintf("%s:%d %s (%d lines)", path, start, funcName(fd), n))
			}
		}
		return nil
	})
	return long, err
}

// funcName is a function's name, or Type.Name for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}
