package pyext

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// stubMember matches a member of a class in a stub: a method's name,
// parameters and result (properties are methods under @property), or a
// class variable's name and type.
var stubMember = regexp.MustCompile(`(?m)def (\w+)\(([^)]*)\)\s*->\s*([^:]+):|^\s+(\w+): (ClassVar\[[^\]]*\])`)

// arrayMembers is the Array class of a stub, member by member (docstrings
// and comments aside), whitespace made single spaces.
func arrayMembers(t *testing.T, stub string) []string {
	t.Helper()
	i := strings.Index(stub, "\nclass Array:")
	require.GreaterOrEqual(t, i, 0, "the stub has no Array class")
	body := stub[i+1:]
	if end := regexp.MustCompile(`\n\S`).FindStringIndex(body[1:]); end != nil {
		body = body[:end[0]+1]
	}
	body = regexp.MustCompile(`(?s)""".*?"""`).ReplaceAllString(body, "")
	body = regexp.MustCompile(`(?m)#.*$`).ReplaceAllString(body, "")
	var out []string
	for _, m := range stubMember.FindAllStringSubmatch(body, -1) {
		out = append(out, strings.Join(strings.Fields(strings.Join(m[1:], " ")), " "))
	}
	return out
}

// The usmbridge package's stub (python/usmbridge/__init__.pyi, written by
// hand: the package binds its names lazily) declares the same Array as the
// stub every pyext module gets, member by member: the Array is one type.
func TestPackageStubArray(t *testing.T) {
	pyi, err := os.ReadFile(filepath.Join(testutil.ModuleRoot(), "python", "usmbridge", "__init__.pyi"))
	require.NoError(t, err)
	want := arrayMembers(t, stubHeader)
	require.NotEmpty(t, want)
	assert.Contains(t, want, "dtype self Union[np.dtype[Any], str]", "the parse reads the members' types")
	assert.Equal(t, want, arrayMembers(t, string(pyi)))
}
