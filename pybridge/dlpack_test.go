package pybridge

import (
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/usm"
)

const holderPy = `
import numpy as np, sys
class Holder:
    def __init__(self, cap, dev=(1, 0)): self.cap, self.dev = cap, dev
    def __dlpack__(self, **kw): return self.cap
    def __dlpack_device__(self): return self.dev
class Old:
    def __init__(self, a): self.a = a
    def __dlpack__(self, stream=None): return self.a.__dlpack__()
    def __dlpack_device__(self): return self.a.__dlpack_device__()
`

func TestNumpyDLPackImport(t *testing.T) {
	py := embedded(t)
	run(t, py, holderPy+"a = np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::-2]\nro = np.arange(3.0); ro.flags.writeable = False")
	err := py.Do(func(g *GIL) error {
		for _, expr := range []string{"a", "Old(a)", "np.array(2.5, dtype=np.float32)", "np.zeros((0, 3))", "ro"} {
			x, _ := g.Eval(expr)
			tns, err := g.FromDLPack(x, FromDLPackOptions{})
			g.DecRef(x)
			if err != nil {
				t.Errorf("%s: %v", expr, err)
				continue
			}
			if expr == "a" && (tns.Strides[1] != -2 || tns.Shape[0] != 3 || tns.Version.Major != 1) {
				t.Errorf("a: %+v", tns.Array)
			}
			if expr == "Old(a)" && tns.Version.Major != 0 {
				t.Errorf("legacy producer: version %v", tns.Version)
			}
			if expr == "ro" && !tns.ReadOnly {
				t.Errorf("read-only flag lost")
			}
			tns.Release()
		}
		// A capsule consumed twice, and a capsule of another kind.
		c, _ := g.Eval("a.__dlpack__(max_version=(1, 0))")
		defer g.DecRef(c)
		tns, err := g.importCapsule(c, nil)
		if err != nil {
			return err
		}
		tns.Release()
		if _, err := g.importCapsule(c, nil); !errors.Is(err, usm.ErrValue) {
			t.Errorf("second consumption: %v, want ValueError", err)
		}
		q, _ := g.Eval("__import__('datetime').datetime_CAPI")
		defer g.DecRef(q)
		if _, err := g.importCapsule(q, nil); !errors.Is(err, usm.ErrType) {
			t.Errorf("wrong capsule: %v, want TypeError", err)
		}
		n, _ := g.Eval("42")
		defer g.DecRef(n)
		if _, err := g.FromDLPack(n, FromDLPackOptions{}); !errors.Is(err, usm.ErrAttribute) {
			t.Errorf("no __dlpack__: %v, want AttributeError", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hostArray is a Go-owned float32 array on the cpu backend.
func hostArray(t testing.TB, shape ...int64) *usm.Array {
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	reg := usm.NewRegistry(cpu.Default())
	alloc, err := cpu.Default().AllocHost(uintptr(n * 4))
	if err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		vals := unsafe.Slice((*float32)(unsafe.Pointer(&alloc.Bytes()[0])), n)
		for i := range vals {
			vals[i] = float32(i)
		}
	}
	arr, err := reg.NewArray(alloc, dtype.Float32, shape)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = alloc.Free() })
	return arr
}

func TestExportToNumpy(t *testing.T) {
	py := embedded(t)
	run(t, py, holderPy)
	arr := hostArray(t, 2, 3)
	err := py.Do(func(g *GIL) error {
		for _, mv := range []*dlpack.Version{nil, {Major: 0, Minor: 8}, {Major: 1}, {Major: 2}} {
			c, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: mv})
			if err != nil {
				return err
			}
			g.SetMain("cap", c)
			g.DecRef(c)
			name := evalGo(t, py, "repr(cap).split('\"')[1]").(string)
			want := "dltensor"
			if mv != nil && mv.Major >= 1 {
				want = "dltensor_versioned"
			}
			if name != want {
				t.Errorf("max_version %v: capsule %q", mv, name)
			}
			if err := g.Exec("h = np.from_dlpack(Holder(cap))\nassert h.tolist() == [[0, 1, 2], [3, 4, 5]], h\nassert repr(cap).split('\"')[1].startswith('used_')\ndel h, cap"); err != nil {
				return err
			}
		}
		// An unconsumed capsule releases the tensor through its destructor.
		c, err := g.ToDLPack(arr, dlpack.ExportOptions{})
		if err != nil {
			return err
		}
		g.DecRef(c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := exportledger.Read(); s.LiveExports != 0 {
		t.Fatalf("exports alive after the capsules died: %+v", s)
	}
}

// A copy (copy=True) of host memory no backend knows, a NumPy array's, is
// made in the host backend's memory: ToDLPack names it as dlpack.Export's
// HostAllocator, which refuses the copy without one.
func TestExportCopyOfNumpyMemory(t *testing.T) {
	py := embedded(t)
	run(t, py, holderPy+"src = np.arange(6.0).reshape(2, 3)[:, ::-1]")
	before := cpu.Live()["allocations"]
	err := py.Do(func(g *GIL) error {
		src, err := g.Eval("src")
		if err != nil {
			return err
		}
		defer g.DecRef(src)
		tns, err := g.FromDLPack(src, FromDLPackOptions{})
		if err != nil {
			return err
		}
		defer tns.Release()
		if tns.Backend != nil {
			t.Fatalf("NumPy memory has backend %v", tns.Backend)
		}
		c, err := g.ToDLPack(&tns.Array, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}, Copy: dlpack.CopyAlways})
		if err != nil {
			return err
		}
		if got := cpu.Live()["allocations"]; got != before+1 {
			t.Errorf("host allocations %d, want %d: the copy is the host backend's", got, before+1)
		}
		g.SetMain("cap", c)
		g.DecRef(c)
		return g.Exec("h = np.from_dlpack(Holder(cap))\nassert h.tolist() == [[2, 1, 0], [5, 4, 3]], h\nassert h.ctypes.data != src.ctypes.data\ndel h, cap")
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := cpu.Live()["allocations"]; got != before {
		t.Errorf("host allocations %d after the copy died, want %d", got, before)
	}
}

// 10^5 exports consumed by numpy and 10^5 numpy capsules consumed by Go:
// every deleter runs once and reference counts return to baseline.
func TestNoLeaks(t *testing.T) {
	py := embedded(t)
	run(t, py, holderPy+"src = np.arange(8.0)")
	arr := hostArray(t, 8)
	n := 100000
	if testing.Short() {
		n = 10000
	}
	before := exportledger.Read()
	var base, after int
	v1 := &dlpack.Version{Major: 1}
	err := py.Do(func(g *GIL) error {
		src, _ := g.Eval("src")
		defer g.DecRef(src)
		fn, _ := g.Eval("lambda c: np.from_dlpack(Holder(c))")
		defer g.DecRef(fn)
		base = g.refCount(src)
		for i := range n {
			c, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: v1})
			if err != nil {
				return err
			}
			h, err := g.call(fn, []any{c}, nil)
			g.DecRef(c)
			if err != nil {
				return err
			}
			g.DecRef(h)
			tns, err := g.FromDLPack(src, FromDLPackOptions{})
			if err != nil {
				return err
			}
			tns.Release()
			if i == 0 && g.refCount(src) != base {
				t.Errorf("refcount after one round: %d, want %d", g.refCount(src), base)
			}
		}
		after = g.refCount(src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := exportledger.Read()
	if after != base || s.LiveExports != before.LiveExports || s.LiveImports != before.LiveImports || s.StrayDeletes != before.StrayDeletes {
		t.Fatalf("after %d rounds: refcount %d (base %d), stats %+v (before %+v)", n, after, base, s, before)
	}
	_ = dlabi.CPU
}

// A panic inside the capsule destructor (a Go callback Python calls while
// deallocating) is recovered, counted and logged; the tensor is leaked.
// Past that frame it would abort the interpreter, so the case runs in a
// child process.
func TestCapsuleDestructorPanicIsCounted(t *testing.T) {
	if testutil.InChild("capsule-panic") {
		py := embedded(t)
		arr := hostArray(t, 2)
		err := py.Do(func(g *GIL) error {
			c, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
			if err != nil {
				return err
			}
			before := exportledger.Read()
			boundary.InjectPanic("pybridge capsule destructor")
			g.DecRef(c) // Python deallocates it: the destructor panics
			after := exportledger.Read()
			if after.Panics != before.Panics+1 || after.LiveExports != before.LiveExports {
				t.Errorf("before %+v after %+v", before, after)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Log("capsule destructor panic counted")
		return
	}
	testutil.RunChild(t, "capsule-panic", time.Minute).Expect(t, 0, "capsule destructor panic counted",
		"Go panic in pybridge capsule destructor: injected panic")
}
