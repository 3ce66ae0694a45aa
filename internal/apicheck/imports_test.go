package apicheck

import (
	"go/parser"
	"go/token"
	"io/fs"
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
