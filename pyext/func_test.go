package pyext

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// KeywordOnly is Python's *: the parameter and every one after it are
// keyword-only, whether or not they say so themselves, so a required
// parameter may follow an optional keyword-only one (docs/extensions.md's
// table). The import once refused P("n") after a KeywordOnly parameter.
func TestKeywordOnlyIsPythonsStar(t *testing.T) {
	m := &Module{name: "m"}
	Func3(m, "f", "", func(x Array[float32], out Array[float32], n int) error { return nil },
		P("x"), P("out", Optional(), KeywordOnly()), P("n"))
	require.NoError(t, m.err())
	require.Len(t, m.funcs, 1)
	f := m.funcs[0]
	assert.Zero(t, f.params[0].flags&fKwOnly, "x comes before the *")
	assert.NotZero(t, f.params[1].flags&fKwOnly)
	assert.NotZero(t, f.params[2].flags&fKwOnly, "n comes after the *")
	assert.Equal(t, "f(x, *, out=None, n)\n--\n\n", f.doc)
}
