package apicheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Checker type-checks public packages from source against the compiled
// export data of their dependencies.
type Checker struct {
	root    string
	module  string
	fset    *token.FileSet
	exports map[string]string // import path → export data file
	imp     types.Importer
}

// NewChecker builds the module's packages (go list -export) to read their
// export data, and those of the nested modules that hold public packages
// (the gonum package), whose dependencies the main module does not have.
func NewChecker(root string) (*Checker, error) {
	c := &Checker{root: root, fset: token.NewFileSet(), exports: map[string]string{}}
	mods, err := NestedModules(root)
	if err != nil {
		return nil, err
	}
	for _, mod := range append([]string{"."}, mods...) {
		if err := c.listExports(mod); err != nil {
			return nil, err
		}
	}
	c.imp = importer.ForCompiler(c.fset, "gc", func(path string) (io.ReadCloser, error) {
		f := c.exports[path]
		if f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	return c, nil
}

// listExports reads the export data of the packages of the module in
// dir (relative to the root) and of their dependencies; the main module's
// path is the root's.
func (c *Checker) listExports(dir string) error {
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export,Module", "./...")
	cmd.Dir = filepath.Join(c.root, dir)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("go list in %s: %v\n%s", dir, err, ee.Stderr)
		}
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath, Export string
			Module             *struct {
				Path string
				Main bool
			}
		}
		if err := dec.Decode(&p); err != nil {
			return err
		}
		if c.exports[p.ImportPath] == "" {
			c.exports[p.ImportPath] = p.Export
		}
		if p.Module != nil && p.Module.Main && dir == "." {
			c.module = p.Module.Path
		}
	}
	return nil
}

// Check type-checks the public package in dir (relative to the root), in
// its build without cgo: a cgo file's import "C" has no export data to
// check against, and a package that needs cgo builds without it too (the
// module builds with CGO_ENABLED=0).
func (c *Checker) Check(dir string) (*types.Package, error) {
	all, err := parseDir(c.fset, filepath.Join(c.root, dir))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, f := range all {
		if !importsC(f) {
			files = append(files, f)
		}
	}
	conf := types.Config{Importer: c.imp}
	return conf.Check(c.module+"/"+dir, c.fset, files, nil)
}

// importsC reports a cgo file.
func importsC(f *ast.File) bool {
	for _, im := range f.Imports {
		if im.Path.Value == `"C"` {
			return true
		}
	}
	return false
}

// internalPath reports whether an import path is internal to some module
// (has an "internal" element), so that users outside cannot import it.
func internalPath(path string) bool {
	for _, e := range strings.Split(path, "/") {
		if e == "internal" {
			return true
		}
	}
	return false
}

// InternalTypes lists every place an exported declaration of pkg names a
// type that users cannot name: a defined type (or alias) of an internal
// package, reached through function and method signatures, the types of
// exported variables, constants and struct fields, and the methods of
// exported interfaces. An alias declared in a public package stops the
// walk: that is how a public package exports an internal type (the form
// go doc shows is the alias's name). pkg's own types are never internal
// to it.
func InternalTypes(pkg *types.Package) []string {
	var out []string
	seen := map[string]bool{}
	report := func(where string, t types.Type) {
		s := where + ": " + types.TypeString(t, nil)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	var walk func(where string, t types.Type, depth int)
	walk = func(where string, t types.Type, depth int) {
		if depth > 20 {
			return
		}
		switch t := t.(type) {
		case *types.Alias:
			if p := t.Obj().Pkg(); p != nil && p != pkg && internalPath(p.Path()) {
				report(where, t)
			}
		case *types.Named:
			if p := t.Obj().Pkg(); p != nil && p != pkg && internalPath(p.Path()) {
				report(where, t)
			}
			if args := t.TypeArgs(); args != nil {
				for i := range args.Len() {
					walk(where, args.At(i), depth+1)
				}
			}
		case *types.Pointer:
			walk(where, t.Elem(), depth+1)
		case *types.Slice:
			walk(where, t.Elem(), depth+1)
		case *types.Array:
			walk(where, t.Elem(), depth+1)
		case *types.Map:
			walk(where, t.Key(), depth+1)
			walk(where, t.Elem(), depth+1)
		case *types.Chan:
			walk(where, t.Elem(), depth+1)
		case *types.Signature:
			for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
				for i := range tup.Len() {
					walk(where, tup.At(i).Type(), depth+1)
				}
			}
		case *types.Struct:
			for i := range t.NumFields() {
				if f := t.Field(i); f.Exported() {
					walk(where+"."+f.Name(), f.Type(), depth+1)
				}
			}
		case *types.Interface:
			for i := range t.NumExplicitMethods() {
				if m := t.ExplicitMethod(i); m.Exported() {
					walk(where+"."+m.Name(), m.Type(), depth+1)
				}
			}
			for i := range t.NumEmbeddeds() {
				walk(where, t.EmbeddedType(i), depth+1)
			}
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		where := pkg.Name() + "." + name
		switch obj := obj.(type) {
		case *types.TypeName:
			if obj.IsAlias() {
				continue // the sanctioned way to export a type (see above)
			}
			named, ok := obj.Type().(*types.Named)
			if !ok {
				continue
			}
			walk(where, named.Underlying(), 0)
			for i := range named.NumMethods() {
				if m := named.Method(i); m.Exported() {
					walk(where+"."+m.Name(), m.Type(), 0)
				}
			}
		default:
			walk(where, obj.Type(), 0)
		}
	}
	sort.Strings(out)
	return out
}
