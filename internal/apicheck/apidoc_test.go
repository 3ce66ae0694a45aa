package apicheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// ParseAPIDoc reads package sections only, every name of a row's first
// column, and the heading's count.
func TestParseAPIDoc(t *testing.T) {
	doc, err := ParseAPIDoc(strings.NewReader(strings.Join([]string{
		"# title", "| `NotAPackage` | x |",
		"## cpu (3)", "text `Prose`", "| export | who |", "|---|---|",
		"| `New`, `Backend.Alloc` | users, see `Other` |", "| `Live` | leaks |",
		"## What moved (issue 14)", "| `usm.Copier` | gone |",
		"## usm (0)",
	}, "\n")))
	require.NoError(t, err)
	assert.Equal(t, APIDoc{
		"cpu": {Count: 3, Exports: []string{"New", "Backend.Alloc", "Live"}},
		"usm": {Count: 0},
	}, doc)
	_, err = ParseAPIDoc(strings.NewReader("## cpu (1)\n## cpu (1)\n"))
	assert.ErrorContains(t, err, "two sections")
}

// docs/api.md lists every export of every public package, once, with its
// user, and nothing else: an export added or removed without the file
// fails here, as does a stale count.
func TestAPIDoc(t *testing.T) {
	root := testutil.ModuleRoot()
	f, err := os.Open(filepath.Join(root, "docs", "api.md"))
	require.NoError(t, err)
	defer f.Close()
	doc, err := ParseAPIDoc(f)
	require.NoError(t, err)
	pkgs, err := Public(root)
	require.NoError(t, err)
	for _, p := range pkgs {
		s, err := Measure(filepath.Join(root, p))
		require.NoError(t, err)
		sec, ok := doc[p]
		if !ok {
			t.Errorf("docs/api.md has no section \"## %s (%d)\"", p, s.Count())
			continue
		}
		delete(doc, p)
		want := append(slices.Clone(s.Decls), s.Methods...)
		var missing, extra, twice []string
		seen := map[string]bool{}
		for _, n := range sec.Exports {
			if seen[n] {
				twice = append(twice, n)
			}
			seen[n] = true
			if !slices.Contains(want, n) {
				extra = append(extra, n)
			}
		}
		for _, n := range want {
			if !seen[n] {
				missing = append(missing, n)
			}
		}
		assert.Empty(t, missing, "%s: exports docs/api.md does not list", p)
		assert.Empty(t, extra, "%s: names docs/api.md lists that the package does not export", p)
		assert.Empty(t, twice, "%s: names docs/api.md lists twice", p)
		assert.Equal(t, s.Count(), sec.Count, "%s: the count in docs/api.md's heading", p)
	}
	for p := range doc {
		t.Errorf("docs/api.md has a section for %s, which is not a public package", p)
	}
}
