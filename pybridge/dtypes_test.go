package pybridge

import (
	"errors"
	"testing"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/usm"
)

// withJax returns the test interpreter with jax (CPU only) imported as jax
// and jnp, numpy as np, and holderPy's producers in __main__.
func withJax(t *testing.T) *Python {
	t.Helper()
	py := embedded(t)
	err := py.Do(func(g *GIL) error {
		if err := g.Exec("import os\nos.environ.setdefault('JAX_PLATFORMS', 'cpu')\nimport jax, jax.numpy as jnp"); err != nil {
			return errkind.Wrap(errkind.NotAvailable, "test", "jax (requirements-test.txt)", err)
		}
		return g.Exec(holderPy)
	})
	testutil.Runtime(t, testutil.Python, err)
	return py
}

// writableCopy copies an imported host array into memory of the host
// backend: a writable array of the same dtype, shape and bytes, which a
// consumer that reads only legacy tensors (jax) may take.
func writableCopy(t *testing.T, a *usm.Array) *usm.Array {
	t.Helper()
	src, err := a.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	alloc, err := cpu.Default().AllocHost(uintptr(max(len(src), 1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = alloc.Free() })
	copy(alloc.Bytes(), src)
	out, err := usm.NewRegistry(cpu.Default()).NewArray(alloc, a.DType, a.Shape)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Item 8 of issue 25: jax's bfloat16 (and its float8, bool, complex64) and
// NumPy's bool and complex64 come in through FromDLPack with their DLPack
// dtype, are refused by SUAI where dpctl has no typestr, and go back to
// their producer's library with equal values. jax exports only legacy
// tensors, so its arrays arrive read-only, and it reads only legacy tensors,
// which cannot carry read-only: the imported array is refused (as NumPy
// refuses it), and a writable copy of it goes back.
func TestDtypesThroughJaxAndNumpy(t *testing.T) {
	py := withJax(t)
	cases := []struct {
		name     string
		src      string // the producer's array, bound to x
		dt       dtype.Type
		typestr  string // SUAI's, or "" for a BufferError
		consumer string // the producer library's from_dlpack
	}{
		{"jax bfloat16", "jnp.arange(4, dtype=jnp.bfloat16) / 3", dtype.Bfloat16, "", "jnp.from_dlpack"},
		{"jax float8_e4m3fn", "jnp.arange(4, dtype=jnp.float8_e4m3fn)", dtype.Float8E4M3FN, "", "jax.dlpack.from_dlpack"},
		{"jax bool", "jnp.array([True, False, True, True])", dtype.Bool, "|b1", "jnp.from_dlpack"},
		{"jax complex64", "jnp.arange(4, dtype=jnp.complex64) * (1 + 2j)", dtype.Complex64, "|c8", "jnp.from_dlpack"},
		{"numpy bool", "np.array([True, False, True, True])", dtype.Bool, "|b1", "np.from_dlpack"},
		{"numpy complex64", "(np.arange(4) * (1 + 2j)).astype(np.complex64)", dtype.Complex64, "|c8", "np.from_dlpack"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run(t, py, "x = "+c.src)
			fromJax := c.consumer != "np.from_dlpack"
			err := py.Do(func(g *GIL) error {
				x, err := g.Eval("x")
				if err != nil {
					return err
				}
				defer g.DecRef(x)
				tns, err := g.FromDLPack(x, FromDLPackOptions{})
				if err != nil {
					return err
				}
				defer tns.Release()
				if tns.DType != c.dt || tns.DType.Size()*4 != int(must(tns.Window()).Len()) {
					t.Errorf("dtype %v (window %v), want %v", tns.DType, must(tns.Window()), c.dt)
				}
				if tns.ReadOnly != fromJax {
					t.Errorf("read-only %v: jax's legacy tensors are read-only, NumPy's versioned writable ones are not", tns.ReadOnly)
				}
				suai, err := tns.Map()
				switch {
				case c.typestr == "" && (!errors.Is(err, usm.ErrBuffer) || err.Error() != "DLPack dtype "+c.dt.String()+" (code "+itoa(int(must(c.dt.DataType()).Code))+", "+itoa(int(must(c.dt.DataType()).Bits))+" bits) has no __sycl_usm_array_interface__ typestr"):
					t.Errorf("SUAI of %v: %v, want the BufferError naming the DLPack dtype", c.dt, err)
				case c.typestr != "" && (err != nil || suai["typestr"] != c.typestr):
					t.Errorf("SUAI typestr %v, %v; want %s", suai["typestr"], err, c.typestr)
				}

				back := &tns.Array
				mv := &dlpack.ProducerVersion
				if fromJax {
					// jax asks for a legacy tensor, which cannot say
					// read-only: refused, as NumPy refuses it.
					if _, err := g.ToDLPack(back, dlpack.ExportOptions{}); !errors.Is(err, usm.ErrBuffer) {
						t.Errorf("legacy export of a read-only import: %v, want a BufferError", err)
					}
					back, mv = writableCopy(t, back), nil
				}
				cp, err := g.ToDLPack(back, dlpack.ExportOptions{MaxVersion: mv})
				if err != nil {
					return err
				}
				g.SetMain("cap", cp)
				g.DecRef(cp)
				check := "y = " + c.consumer + "(Holder(cap))\n" +
					"assert y.dtype == x.dtype, (y.dtype, x.dtype)\n" +
					"assert y.shape == x.shape and (np.asarray(y) == np.asarray(x)).all(), (y, x)\n"
				if !fromJax {
					check += "assert np.shares_memory(y, x)\n"
				}
				return g.Exec(check + "del y, cap")
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	run(t, py, "del x")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
