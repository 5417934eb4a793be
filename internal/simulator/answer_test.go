package simulator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A model built on Offline (a test's, which embeds it and changes some of its answers)
// is asked through Answer. Offline's own Answer, which the model gets by embedding, calls
// Offline's methods: the model's changes would be skipped without a word. So every such
// model must have an Answer of its own (return simulator.Answer(ctx, m, q)); Go cannot
// enforce it, so this test does, over the module's source.

// simulatorPath is package simulator's import path.
const simulatorPath = "github.com/cosci-dev/cosci/internal/simulator"

// builtOnOffline is a type that embeds Offline, and what it declares of Simulated.
type builtOnOffline struct {
	where    string   // file:line of its declaration
	name     string   // the type's name
	changes  []string // the methods of Simulated it declares itself
	answered bool     // it declares Answer
	receiver string   // its methods' receiver, as an Answer of its own would take it ("m" or "*m")
}

// modelsOnOffline finds, in the files of each package (keyed by directory and package
// name), the types that embed Offline (or *Offline), with the methods they declare.
func modelsOnOffline(fset *token.FileSet, pkgs map[string][]*ast.File) []builtOnOffline {
	simulated := map[string]bool{}
	for i := range reflect.TypeFor[Simulated]().NumMethod() {
		simulated[reflect.TypeFor[Simulated]().Method(i).Name] = true
	}
	var out []builtOnOffline
	for _, files := range pkgs {
		embeds := map[string]token.Pos{} // type name -> its declaration
		methods := map[string][]string{} // type name -> the methods it declares
		pointer := map[string]bool{}     // type name -> some of its methods take a pointer
		for _, f := range files {
			local := "" // how f names package simulator ("" if it does not import it)
			for _, im := range f.Imports {
				if p, _ := strconv.Unquote(im.Path.Value); p == simulatorPath {
					local = "simulator"
					if im.Name != nil {
						local = im.Name.Name
					}
				}
			}
			isOffline := func(e ast.Expr) bool {
				if s, ok := e.(*ast.StarExpr); ok {
					e = s.X
				}
				switch e := e.(type) {
				case *ast.Ident:
					return f.Name.Name == "simulator" && e.Name == "Offline"
				case *ast.SelectorExpr:
					x, ok := e.X.(*ast.Ident)
					return ok && local != "" && x.Name == local && e.Sel.Name == "Offline"
				}
				return false
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.TypeSpec:
					if st, ok := n.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							if len(field.Names) == 0 && isOffline(field.Type) {
								embeds[n.Name.Name] = n.Pos()
							}
						}
					}
				case *ast.FuncDecl:
					if n.Recv != nil && len(n.Recv.List) == 1 {
						recv := n.Recv.List[0].Type
						s, star := recv.(*ast.StarExpr)
						if star {
							recv = s.X
						}
						if id, ok := recv.(*ast.Ident); ok {
							methods[id.Name] = append(methods[id.Name], n.Name.Name)
							pointer[id.Name] = pointer[id.Name] || star
						}
					}
				}
				return true
			})
		}
		for name, pos := range embeds {
			m := builtOnOffline{where: fset.Position(pos).String(), name: name, answered: slices.Contains(methods[name], "Answer"), receiver: name}
			if pointer[name] {
				m.receiver = "*" + name
			}
			for _, method := range methods[name] {
				if simulated[method] {
					m.changes = append(m.changes, method)
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// TestModelsOnOfflineAnswerThemselves fails on a type that embeds Offline, changes some of
// its answers, and has no Answer of its own to reach them.
func TestModelsOnOfflineAnswerThemselves(t *testing.T) {
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		key := filepath.Dir(path) + " " + f.Name.Name
		pkgs[key] = append(pkgs[key], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	changing := 0
	for _, m := range modelsOnOffline(fset, pkgs) {
		if len(m.changes) == 0 {
			continue
		}
		changing++
		if !m.answered {
			t.Errorf("%s: %s embeds Offline and changes its %s, but has no Answer of its own, so a turn would never reach them; add\n\tfunc (m %s) Answer(ctx context.Context, q prompt.Question) (research.Step[any], research.Usage, error) {\n\t\treturn simulator.Answer(ctx, m, q)\n\t}",
				m.where, m.name, strings.Join(m.changes, ", "), m.receiver)
		}
	}
	if changing == 0 {
		t.Fatal("found no model built on Offline that changes its answers; the tests have some (activities, workflows), so the search is broken")
	}
}

// TestModelsOnOffline checks the search on small packages.
func TestModelsOnOffline(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      []builtOnOffline // where left out
	}{
		{"answers itself", `package x
import "github.com/cosci-dev/cosci/internal/simulator"
type m struct{ *simulator.Offline }
func (m) Generate() {}
func (m) Answer() {}`, []builtOnOffline{{name: "m", changes: []string{"Generate"}, answered: true, receiver: "m"}}},
		{"changes without answering", `package x
import sim "github.com/cosci-dev/cosci/internal/simulator"
type m struct{ sim.Offline; n int }
func (*m) Review() {}
func (*m) EvolveStep() {}
func (*m) other() {}`, []builtOnOffline{{name: "m", changes: []string{"Review", "EvolveStep"}, receiver: "*m"}}},
		{"changes nothing", `package x
import "github.com/cosci-dev/cosci/internal/simulator"
type m struct{ simulator.Offline }`, []builtOnOffline{{name: "m", receiver: "m"}}},
		{"a named field is no embedding", `package x
import "github.com/cosci-dev/cosci/internal/simulator"
type w struct{ offline simulator.Offline }
func (w) Plan() {}`, nil},
		{"another package's Offline", `package x
import "example.com/simulator"
type m struct{ simulator.Offline }
func (m) Plan() {}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", tt.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			got := modelsOnOffline(fset, map[string][]*ast.File{"x": {f}})
			for i := range got {
				got[i].where = ""
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%+v; want %+v", got, tt.want)
			}
		})
	}
}
