package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Surface is the exported API of one package, by kind. It is what
// `go doc -all` lists at package level:
//
//   - Decls: exported top-level names (each const, var, func and type
//     counts once, also when several share a declaration);
//   - Methods: exported methods of exported types (methods of unexported
//     types are not documented);
//   - Fields: exported fields of exported struct types and methods of
//     exported interface types.
//
// The export count of a package is Decls+Methods; Fields are reported
// apart because a field is data a user reads, not an entry point.
type Surface struct {
	Package                string
	Decls, Methods, Fields []string
}

// Count is the export count of the package: Decls + Methods.
func (s Surface) Count() int { return len(s.Decls) + len(s.Methods) }

// Public lists the public library packages under the module root: every
// directory with Go files outside internal/, examples/ and test/, whose
// package is not main. Paths are relative to root, with '/'.
func Public(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" ||
			name == "internal" || rel == "examples" || rel == "test" || rel == "python") {
			return filepath.SkipDir
		}
		files, err := sources(path)
		if err != nil || len(files) == 0 {
			return err
		}
		if f, err := parser.ParseFile(token.NewFileSet(), files[0], nil, parser.PackageClauseOnly); err != nil {
			return err
		} else if f.Name.Name != "main" {
			dirs = append(dirs, rel)
		}
		return nil
	})
	return dirs, err
}

// NestedModules lists the directories (relative to root, with '/') of the
// modules nested in the module at root that hold public packages: those
// Public walks into (gonum, whose dependency the main module keeps out of
// its users' module graphs).
func NestedModules(root string) ([]string, error) {
	pkgs, err := Public(root)
	if err != nil {
		return nil, err
	}
	var mods []string
	for _, p := range pkgs {
		for d := p; d != "." && d != ""; d = filepath.ToSlash(filepath.Dir(d)) {
			if _, err := os.Stat(filepath.Join(root, d, "go.mod")); err == nil {
				if !slices.Contains(mods, d) {
					mods = append(mods, d)
				}
				break
			}
		}
	}
	return mods, nil
}

// sources lists the non-test Go files of dir.
func sources(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range m {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	return out, nil
}

// parseDir parses the non-test files of dir.
func parseDir(fset *token.FileSet, dir string) ([]*ast.File, error) {
	files, err := sources(dir)
	if err != nil {
		return nil, err
	}
	var out []*ast.File
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		out = append(out, af)
	}
	return out, nil
}

// Measure returns the surface of the package in dir.
func Measure(dir string) (Surface, error) {
	fset := token.NewFileSet()
	files, err := parseDir(fset, dir)
	if err != nil {
		return Surface{}, err
	}
	s := Surface{Package: filepath.Base(dir)}
	exportedTypes := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok {
				for _, sp := range g.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok && ts.Name.IsExported() {
						exportedTypes[ts.Name.Name] = true
					}
				}
			}
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					s.Decls = append(s.Decls, d.Name.Name)
				} else if r := recvType(d.Recv.List[0].Type); exportedTypes[r] {
					s.Methods = append(s.Methods, r+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.IsExported() {
								s.Decls = append(s.Decls, n.Name)
							}
						}
					case *ast.TypeSpec:
						if !sp.Name.IsExported() {
							continue
						}
						s.Decls = append(s.Decls, sp.Name.Name)
						s.Fields = append(s.Fields, members(sp.Name.Name, sp.Type)...)
					}
				}
			}
		}
	}
	sort.Strings(s.Decls)
	sort.Strings(s.Methods)
	sort.Strings(s.Fields)
	return s, nil
}

// recvType is the name of a receiver's type (T, *T, T[P], *T[P]).
func recvType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// members lists the exported fields of a struct type and the exported
// methods of an interface type, as T.Name.
func members(t string, e ast.Expr) []string {
	var list *ast.FieldList
	switch x := e.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		list = x.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range list.List {
		for _, n := range f.Names {
			if n.IsExported() {
				out = append(out, t+"."+n.Name)
			}
		}
		if len(f.Names) == 0 { // embedded
			if n := recvType(f.Type); n != "" && ast.IsExported(n) {
				out = append(out, t+"."+n)
			} else if sel, ok := f.Type.(*ast.SelectorExpr); ok && sel.Sel.IsExported() {
				out = append(out, t+"."+sel.Sel.Name)
			}
		}
	}
	return out
}
