package apicheck

import (
	"path/filepath"
	"testing"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// TestExportCount prints the export count of every public package
// (go test -v -run TestExportCount ./internal/apicheck).
func TestExportCount(t *testing.T) {
	root := testutil.ModuleRoot()
	pkgs, err := Public(root)
	if err != nil {
		t.Fatal(err)
	}
	total, fields := 0, 0
	for _, p := range pkgs {
		s, err := Measure(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-10s %3d (decls %3d, methods %3d; fields %3d)", p, s.Count(), len(s.Decls), len(s.Methods), len(s.Fields))
		total += s.Count()
		fields += len(s.Fields)
	}
	t.Logf("total      %3d (fields %d)", total, fields)
}
