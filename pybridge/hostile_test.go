package pybridge

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/usm"
)

// hostRegistry returns a registry of a fresh host backend and the address
// of a 256-byte allocation in it, bound to PTR in __main__ with the
// suaiClass prelude (S, base).
func hostRegistry(t *testing.T, py *Python) (*usm.Registry, uintptr) {
	t.Helper()
	host := new(cpu.Backend)
	alloc, err := host.AllocHost(256)
	require.NoError(t, err)
	t.Cleanup(func() { _ = alloc.Free() })
	run(t, py, "PTR = "+strconv.FormatUint(uint64(alloc.Pointer()), 10)+"\n"+suaiClass)
	return usm.NewRegistry(host), alloc.Pointer()
}

// asArrayResult binds obj (a Python expression) with reg and describes the
// outcome: "ok" and the array, or the exception's class.
func asArrayResult(t *testing.T, py *Python, reg *usm.Registry, expr string) (string, *usm.Array) {
	t.Helper()
	var res string
	var arr *usm.Array
	require.NoError(t, py.Do(func(g *GIL) error {
		o := eval(t, g, expr)
		defer g.DecRef(o)
		a, err := g.AsArray(o, reg)
		if err != nil {
			res = exceptionName(err)
			return nil
		}
		a.Owner.Release()
		res, arr = "ok", a
		return nil
	}))
	return res, arr
}

// Hostile objects that never crashed, but were read wrongly: numbers read
// through str(), exceptions swallowed or replaced, flags dropped.
func TestSUAIHostileValues(t *testing.T) {
	py := embedded(t)
	reg, ptr := hostRegistry(t, py)
	run(t, py, `
class Liar(int):  # an int whose str() lies
    def __str__(self): return "4"
    __repr__ = __str__
class LyingIndex(int):  # read by value: its __index__ is not called
    def __index__(self): return 99
class Idx:
    def __init__(self, v): self.v = v
    def __index__(self): return self.v
class Raises:
    def __index__(self): raise ZeroDivisionError("from __index__")
class NotInt:
    def __index__(self): return "3"
class BadBool:
    def __bool__(self): raise ArithmeticError("from __bool__")
class LenLies(list):
    def __len__(self): return 5
    def __getitem__(self, i): return 7
    def __iter__(self): return iter([7, 7, 7])
class TupleLies(tuple):
    def __len__(self): return 1
    def __getitem__(self, i): return 9
class StrSub(str): pass
class Collider:  # a key that collides with "data" and, once armed, cannot be compared
    armed = False
    def __hash__(self): return hash("data")
    def __eq__(self, other):
        if Collider.armed: raise ArithmeticError("from __eq__")
        return False
class D(dict): pass
def colliding():
    d = D()
    d[Collider()] = 1  # first: looking "data" up meets it first
    d.update(base())
    Collider.armed = True
    return d
huge = 10 ** 5000  # more than 4300 digits: str() of it raises
reads = []
class Counting:
    @property
    def __sycl_usm_array_interface__(self):
        reads.append(1)
        return base()
`)
	for _, c := range []struct {
		name, obj string
		want      string // "ok" or the exception's class
		check     func(t *testing.T, a *usm.Array)
	}{
		// Ints by value, never through str().
		{"huge int subclass with lying str", `S(base(shape=(Liar(2**70),)))`, "OverflowError", nil},
		{"huge int subclass offset", `S(base(offset=Liar(2**64 + 1)))`, "OverflowError", nil},
		{"int subclass with lying __index__", `S(base(shape=(LyingIndex(3),)))`, "ok", func(t *testing.T, a *usm.Array) {
			assert.Equal(t, []int64{3}, a.Shape)
		}},
		{"more than 4300 digits in shape", `S(base(shape=(huge,)))`, "OverflowError", nil},
		{"more than 4300 digits in offset", `S(base(offset=-huge))`, "OverflowError", nil},
		{"more than 4300 digits as pointer", `S(base(data=(huge, False)))`, "OverflowError", nil},
		{"pointer above 2**63 through __index__", `S(base(data=(Idx(2**64 - 1), False), shape=(0,)))`, "ValueError", nil},
		{"pointer 2**64", `S(base(data=(2**64, False)))`, "OverflowError", nil},
		{"negative pointer through __index__", `S(base(data=(Idx(-8), False)))`, "OverflowError", nil},
		{"pointer through __index__", `S(base(data=(Idx(PTR), False)))`, "ok", func(t *testing.T, a *usm.Array) {
			assert.Equal(t, ptr, a.Data)
		}},
		// bool is an int, as in dpctl.
		{"bools for ints", `S(base(version=True, offset=False, shape=(True, 2), strides=(2, True)))`, "ok", func(t *testing.T, a *usm.Array) {
			assert.Equal(t, []int64{1, 2}, a.Shape)
			assert.Equal(t, []int64{2, 1}, a.Strides)
			assert.Equal(t, int64(0), a.Offset)
		}},
		{"version False", `S(base(version=False))`, "ValueError", nil},
		{"read-only flag as an int", `S(base(data=(PTR, 7)))`, "ok", func(t *testing.T, a *usm.Array) {
			assert.True(t, a.ReadOnly)
		}},
		// Exceptions raised by the value's own code propagate as they are.
		{"raising __index__", `S(base(shape=(Raises(),)))`, "ZeroDivisionError", nil},
		{"raising __index__ in offset", `S(base(offset=Raises()))`, "ZeroDivisionError", nil},
		{"__index__ returning a str", `S(base(shape=(NotInt(),)))`, "TypeError", nil},
		{"raising __bool__ of read-only flag", `S(base(data=(PTR, BadBool())))`, "ArithmeticError", nil},
		{"raising __eq__ of a colliding key", `S(colliding())`, "ArithmeticError", nil},
		// Wrong types.
		{"float in shape", `S(base(shape=(2.0,)))`, "TypeError", nil},
		{"str in shape", `S(base(shape=("2",)))`, "TypeError", nil},
		{"numpy int in shape", `S(base(shape=(__import__("numpy").int64(3),)))`, "ok", nil},
		{"numpy float in shape", `S(base(shape=(__import__("numpy").float64(3),)))`, "TypeError", nil},
		{"typestr with a NUL", `S(base(typestr="<f4\x00junk"))`, "ValueError", nil},
		{"typestr str subclass", `S(base(typestr=StrSub("<f4")))`, "ok", nil},
		{"syclobj str subclass", `S(base(syclobj=StrSub("host")))`, "ValueError", nil},
		{"syclobj with a NUL", `S(base(syclobj="host\x00"))`, "ValueError", nil},
		// Subclasses are read by their storage, as the C API reads them.
		{"list subclass with lying __len__", `S(base(shape=LenLies([2, 3])))`, "ok", func(t *testing.T, a *usm.Array) {
			assert.Equal(t, []int64{2, 3}, a.Shape)
		}},
		{"tuple subclass with lying __len__", `S(base(shape=TupleLies((2, 3))))`, "ok", func(t *testing.T, a *usm.Array) {
			assert.Equal(t, []int64{2, 3}, a.Shape)
		}},
		{"data list subclass", `S(base(data=LenLies([PTR, True])))`, "ok", func(t *testing.T, a *usm.Array) {
			assert.True(t, a.ReadOnly)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, arr := asArrayResult(t, py, reg, c.obj)
			require.Equal(t, c.want, got)
			if c.check != nil {
				c.check(t, arr)
			}
		})
	}
	// The attribute is read once per array.
	run(t, py, "reads.clear()")
	got, _ := asArrayResult(t, py, reg, "Counting()")
	require.Equal(t, "ok", got)
	assert.EqualValues(t, 1, evalGo(t, py, "len(reads)"))
}

// ToGo reads ints by value and bounds nesting.
func TestToGoBounds(t *testing.T) {
	py := embedded(t)
	run(t, py, `
class Liar(int):
    def __str__(self): return "4"
deep = []
for _ in range(100): deep = [deep]
shallow = []
for _ in range(63): shallow = [shallow]
shared = [1]
`)
	for _, c := range []struct{ expr, want string }{
		{"Liar(2**70)", "OverflowError"},
		{"-Liar(2**70)", "OverflowError"},
		{"Liar(2**64 - 1)", "ok"},
		{"10 ** 5000", "OverflowError"},
		{"deep", "ValueError"},
		{"shallow", "ok"},
		{"[shared, shared, (shared,)]", "ok"}, // shared, not cyclic
		{"'a\\x00b'", "ok"},
	} {
		var got string
		require.NoError(t, py.Do(func(g *GIL) error {
			o := eval(t, g, c.expr)
			defer g.DecRef(o)
			_, err := g.goValue(o)
			got = "ok"
			if err != nil {
				got = exceptionName(err)
			}
			return nil
		}))
		assert.Equal(t, c.want, got, c.expr)
	}
	assert.Equal(t, uint64(1<<64-1), evalGo(t, py, "Liar(2**64 - 1)"))
	assert.Equal(t, "a\x00b", evalGo(t, py, "'a\\x00b'"))
}

// Keywords and dicts from Go maps reach Python in the same (sorted) order
// every time.
func TestCallKeywordOrder(t *testing.T) {
	py := embedded(t)
	run(t, py, "def kwnames(**kw): return ','.join(kw)\ndef keys(d): return ','.join(d)")
	kw := map[string]any{}
	for _, k := range []string{"max_version", "dl_device", "copy", "stream", "a", "z", "m", "b", "y", "c"} {
		kw[k] = nil
	}
	require.NoError(t, py.Do(func(g *GIL) error {
		fn, keys := eval(t, g, "kwnames"), eval(t, g, "keys")
		defer g.DecRef(fn)
		defer g.DecRef(keys)
		for range 20 {
			r, err := g.call(fn, nil, kw)
			require.NoError(t, err)
			s, _ := g.String(r)
			g.DecRef(r)
			assert.Equal(t, "a,b,c,copy,dl_device,m,max_version,stream,y,z", s)
			r, err = g.call(keys, []any{kw}, nil)
			require.NoError(t, err)
			s, _ = g.String(r)
			g.DecRef(r)
			assert.Equal(t, "a,b,c,copy,dl_device,m,max_version,stream,y,z", s)
		}
		return nil
	}))
}

// __dlpack__'s keywords are read by value: a device that DLPack's int32
// cannot name is unsupported (BufferError), not truncated to another one.
func TestParseDLPackArgsIntegers(t *testing.T) {
	py := embedded(t)
	run(t, py, `
class Idx:
    def __init__(self, v): self.v = v
    def __index__(self): return self.v
class Raises:
    def __index__(self): raise ZeroDivisionError("from __index__")
`)
	for _, c := range []struct {
		maxVersion, dlDevice string
		want                 string
		mv                   *dlpack.Version
		dev                  *dlpack.Device
	}{
		{"None", "(1, 2**32)", "BufferError", nil, nil},
		{"None", "(2**32 + 1, 0)", "BufferError", nil, nil},
		{"None", "(1, -2**31 - 1)", "BufferError", nil, nil},
		{"None", "(1, 2**70)", "BufferError", nil, nil},
		{"None", "(1, 10**5000)", "BufferError", nil, nil},
		{"None", "(14, 2**31 - 1)", "ok", nil, &dlpack.Device{Type: 14, ID: math.MaxInt32}},
		{"None", "(True, Idx(3))", "ok", nil, &dlpack.Device{Type: 1, ID: 3}},
		{"None", "(1, Raises())", "ZeroDivisionError", nil, nil},
		{"None", "(1, 0.0)", "TypeError", nil, nil},
		{"None", "(1,)", "TypeError", nil, nil},
		{"(1, 0)", "None", "ok", &dlpack.Version{Major: 1}, nil},
		{"(2**40, 0)", "None", "ok", &dlpack.Version{Major: math.MaxUint32}, nil},
		{"(1, 2**70)", "None", "ok", &dlpack.Version{Major: 1, Minor: math.MaxUint32}, nil},
		{"(-1, 0)", "None", "ValueError", nil, nil},
		{"(1, -2**70)", "None", "ValueError", nil, nil},
		{"(Idx(1), Idx(2))", "None", "ok", &dlpack.Version{Major: 1, Minor: 2}, nil},
		{"(Raises(), 0)", "None", "ZeroDivisionError", nil, nil},
		{"('1', 0)", "None", "TypeError", nil, nil},
	} {
		name := fmt.Sprintf("max_version=%s dl_device=%s", c.maxVersion, c.dlDevice)
		require.NoError(t, py.Do(func(g *GIL) error {
			mv, dd := eval(t, g, c.maxVersion), eval(t, g, c.dlDevice)
			defer g.DecRef(mv)
			defer g.DecRef(dd)
			o, err := g.parseDLPackArgs(dlpack.Device{}, Object{}, mv, dd, Object{})
			if c.want != "ok" {
				assert.Equal(t, c.want, exceptionName(err), "%s: %v", name, err)
				return nil
			}
			require.NoError(t, err, name)
			assert.Equal(t, c.mv, o.MaxVersion, name)
			assert.Equal(t, c.dev, o.Device, name)
			return nil
		}))
	}
}

// addressof_ref (how a SyclQueue's ref is read when dpctl's C API is
// missing) gives the bound method back: it holds a reference to the queue,
// which leaked on every read.
func TestAddressofRefReleasesTheMethod(t *testing.T) {
	py := embedded(t)
	run(t, py, `
class FakeQueue:
    def addressof_ref(self): return 0x1000
class Raising:
    def addressof_ref(self): raise KeyError("from addressof_ref")
fake, raising = FakeQueue(), Raising()
`)
	require.NoError(t, py.Do(func(g *GIL) error {
		for _, c := range []struct{ expr, want string }{{"fake", "ok"}, {"raising", "KeyError"}} {
			o := eval(t, g, c.expr)
			before := g.refCount(o)
			for range 10 {
				ref, err := g.addressofRef(o.p)
				got := "ok"
				if err != nil {
					got = exceptionName(err)
					g.ReleaseError(err) // its traceback holds the raising frame, and so o
				} else {
					assert.Equal(t, uintptr(0x1000), ref)
				}
				assert.Equal(t, c.want, got, c.expr)
				assert.Zero(t, g.api().ErrOccurred(), "%s: no exception left set", c.expr)
			}
			assert.Equal(t, before, g.refCount(o), "%s: references leaked", c.expr)
			g.DecRef(o)
		}
		return nil
	}))
}
