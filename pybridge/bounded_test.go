package pybridge

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A caller's string of 100 kB (a class's name, a capsule's, a SUAI's
// filter string) is quoted at most 200 bytes of it at a time, as CPython's
// "%.200s" quotes: messages quoted them whole.
func TestQuotedStringsBounded(t *testing.T) {
	py := embedded(t)
	reg, _ := hostRegistry(t, py)
	run(t, py, `import ctypes
BIG = 'x' * 100000
Big = type('T' * 100000, (), {})
CAPNAME = b'c' * 100000
_buf = ctypes.create_string_buffer(8)
ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
bigcap = ctypes.pythonapi.PyCapsule_New(ctypes.addressof(_buf), CAPNAME, None)
`)
	for _, c := range []struct{ name, expr, says string }{
		{"a class's name", "Big()", "argument of type __main__." + strings.Repeat("T", 191) + "... (100009 bytes) does not expose"},
		{"a capsule's name", "bigcap", `a capsule named "` + strings.Repeat("c", 200) + `"... (100000 bytes)`},
		{"a filter string", "S(base(syclobj=BIG))", `filter selector "` + strings.Repeat("x", 200) + `"... (100000 bytes)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, py.Do(func(g *GIL) error {
				o := eval(t, g, c.expr)
				defer g.DecRef(o)
				var err error
				if c.expr == "bigcap" {
					_, err = g.ImportCapsule(o, reg)
				} else {
					_, err = g.AsArray(o, reg)
				}
				require.Error(t, err)
				msg := err.Error()
				if len(msg) > 2000 { // not asserted with testify, which would print it all
					t.Fatalf("a message of %d bytes: %.400s...", len(msg), msg)
				}
				assert.Contains(t, msg, c.says)
				return nil
			}))
		})
	}
}
