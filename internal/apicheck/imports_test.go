package apicheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// purego is imported by internal/ffi only (the depguard rule of
// .golangci.yml, checked here too so that it holds where golangci-lint is
// not installed): one loader, one call convention, one handle discipline.
func TestPuregoOnlyInFFI(t *testing.T) {
	root := testutil.ModuleRoot()
	var importers []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir // another module (a build's copy of the Go source, say)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.Dir(rel) == "internal/ffi" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "github.com/ebitengine/purego" || strings.HasPrefix(p, "github.com/ebitengine/purego/") {
				importers = append(importers, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(importers) > 0 {
		t.Errorf("purego imported outside internal/ffi: %v", importers)
	}
}

// The three layers of the module's packages (README.md, "Packages"): the
// protocol core, the backends, and the Python boundary. A package depends
// on packages of its own layer or below, and on internal packages: the
// core on no backend and nothing of Python, a backend on nothing of
// Python. A new public package fails TestLayers until it is placed here.
const (
	coreLayer = iota
	backendLayer
	pythonLayer
)

var layerOf = map[string]int{
	"typestr": coreLayer, "dtype": coreLayer, "syclobj": coreLayer, "usm": coreLayer, "dlpack": coreLayer,
	"gonum": coreLayer, // usm's arrays as gonum's matrices: a module of its own (RATIONALE.md, "gonum in a module of its own")
	"cpu":   backendLayer, "opencl": backendLayer, "levelzero": backendLayer, "dpctl": backendLayer,
	"pybridge": pythonLayer, "pyext": pythonLayer, "python/ext": pythonLayer, "test/extmod": pythonLayer, "python/bench/benchmod": pythonLayer,
	"test/nativemod": pythonLayer, "test/hostilemod": pythonLayer,
}

var layerNames = [...]string{"the protocol core", "the backends", "the Python boundary"}

// testOnly are internal packages that only tests import (checked below):
// they may import the public packages whose tests they serve.
var testOnly = map[string]bool{"internal/testutil": true, "internal/testutil/stale": true}

// moduleDeps is Deps in both cgo modes (pyext's cgo files import more
// than its pure-Go ones).
func moduleDeps(t *testing.T) map[string]map[string][]string {
	t.Helper()
	out := map[string]map[string][]string{}
	for _, cgo := range []bool{false, true} {
		deps, err := Deps(testutil.ModuleRoot(), cgo)
		if err != nil {
			t.Fatal(err)
		}
		out["CGO_ENABLED="+map[bool]string{false: "0", true: "1"}[cgo]] = deps
	}
	return out
}

// Nothing under internal/ depends on a package above it: internal
// packages are the layers' shared parts (errors, native calls, C memory,
// the DLPack ABI), never a way around a public package's API.
func TestInternalImportsNothingAbove(t *testing.T) {
	for mode, deps := range moduleDeps(t) {
		for pkg, ds := range deps {
			if !IsInternal(pkg) || testOnly[pkg] {
				continue
			}
			for _, d := range ds {
				if !IsInternal(d) {
					t.Errorf("%s: internal package %s depends on public package %s", mode, pkg, d)
				}
			}
		}
	}
}

// The test-only internal packages are imported by tests alone.
func TestTestOnlyPackagesStayInTests(t *testing.T) {
	for mode, deps := range moduleDeps(t) {
		for pkg, ds := range deps {
			for _, d := range ds {
				if testOnly[d] {
					t.Errorf("%s: %s depends on %s, which only tests may import", mode, pkg, d)
				}
			}
		}
	}
}

// Each public package depends only on its own layer and those below:
// dlpack, usm, syclobj, typestr and dtype on no backend and no Python
// package; cpu, opencl, levelzero and dpctl on no Python package.
func TestLayers(t *testing.T) {
	for mode, deps := range moduleDeps(t) {
		for pkg, ds := range deps {
			if IsInternal(pkg) || pkg == "test" || strings.HasPrefix(pkg, "examples/") {
				continue
			}
			layer, ok := layerOf[pkg]
			if !ok {
				t.Errorf("package %s has no layer (layerOf)", pkg)
				continue
			}
			for _, d := range ds {
				if IsInternal(d) {
					continue
				}
				if dl, ok := layerOf[d]; !ok || dl > layer {
					t.Errorf("%s: %s (%s) depends on %s (%s)", mode, pkg, layerNames[layer], d, layerName(d))
				}
			}
		}
	}
}

func layerName(pkg string) string {
	if l, ok := layerOf[pkg]; ok {
		return layerNames[l]
	}
	return "no layer"
}
