package main

import (
	"errors"
	"fmt"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/usm"
)

// These examples are docs/go.md's "Embedding Python": TestMain runs them
// where $USMBRIDGE_PYTHON has numpy (and, for Example_dpctl, dpctl), or
// where USMBRIDGE_REQUIRE asks for Python.

// A NumPy array read from Go without a copy: FromDLPack is the array API's
// from_dlpack, with Go as the consumer.
func Example_fromDLPack() {
	py, err := pybridge.Embed("") // $USMBRIDGE_PYTHON's libpython, else python3's
	if err != nil {
		fmt.Println(err)
		return
	}
	err = py.Do(func(g *pybridge.GIL) error { // the GIL, on a locked OS thread
		if err := g.Exec("import numpy as np\nx = np.arange(6, dtype='f4').reshape(2, 3)"); err != nil {
			return err
		}
		x, err := g.Eval("x")
		if err != nil {
			return err
		}
		defer g.DecRef(x)
		t, err := g.FromDLPack(x, pybridge.FromDLPackOptions{})
		if err != nil {
			return err
		}
		defer t.Release() // gives the tensor back to NumPy's deleter
		xs, err := usm.View[float32](&t.Array)
		fmt.Println(t.Shape, t.DType, t.DLDevice, xs)
		return err
	})
	if err != nil {
		fmt.Println(err) // a Python exception is a *pybridge.Exception
	}
	// Output: [2 3] float32 (kDLCPU, 0) [0 1 2 3 4 5]
}

// Go memory handed to NumPy without a copy: ToDLPack makes the capsule a
// producer's __dlpack__ returns.
func Example_toDLPack() {
	py, err := pybridge.Embed("")
	if err != nil {
		fmt.Println(err)
		return
	}
	host := cpu.Default()
	alloc, _ := host.AllocHost(4 * 8)
	defer alloc.Free() // the memory stays until NumPy's array lets go of it too
	arr, _ := usm.NewRegistry(host).NewArray(alloc, dtype.Float64, []int64{4})
	xs, _ := usm.View[float64](arr)

	err = py.Do(func(g *pybridge.GIL) error {
		c, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
		if err != nil {
			return err
		}
		defer g.DecRef(c)
		if err := g.SetMain("cap", c); err != nil {
			return err
		}
		// Consumers take producers, not capsules: a minimal one.
		return g.Exec("import numpy as np\n" +
			"class Producer:\n" +
			"    def __dlpack__(self, **kw): return cap\n" +
			"    def __dlpack_device__(self): return (1, 0)\n" +
			"y = np.from_dlpack(Producer())\n" +
			"y[:] = [1.5, 2.5, 3.5, 4.5]\n" +
			"del y, cap")
	})
	fmt.Println(xs, err) // NumPy wrote into Go's memory
	// Output: [1.5 2.5 3.5 4.5] <nil>
}

// A Go array in Python as an array: ArrayObject makes a NumPy array over
// Go's host memory (a dpnp usm_ndarray for USM), which every consumer
// takes as it takes NumPy's own.
func Example_arrayObject() {
	py, err := pybridge.Embed("")
	if err != nil {
		fmt.Println(err)
		return
	}
	dev, _ := usm.NewRegistry(cpu.Default()).Device("host")
	x, _ := usm.Empty[float64](dev, usm.KindHost, 3)
	defer x.Close() // NumPy's array keeps the memory while it lives
	_ = x.CopyFrom([]float64{1, 2, 3})
	arr, _ := x.Array() // the array as the lower-level API takes it

	err = py.Do(func(g *pybridge.GIL) error {
		a, err := g.ArrayObject(arr) // numpy.ndarray for host memory, usm_ndarray for USM
		if err != nil {
			return err
		}
		defer g.DecRef(a)
		if err := g.SetMain("a", a); err != nil {
			return err
		}
		if err := g.Exec("a *= 10"); err != nil {
			return err
		}
		r, err := g.Eval("f'{type(a).__name__} {a.sum()}'")
		if err != nil {
			return err
		}
		defer g.DecRef(r)
		s, err := g.String(r)
		fmt.Println(s)
		if err != nil {
			return err
		}
		return g.Exec("del a")
	})
	out := make([]float64, 3)
	_ = x.CopyTo(out)
	fmt.Println(out, err)
	// Output:
	// ndarray 60.0
	// [10 20 30] <nil>
}

// A dpnp array on a SYCL device read through its
// __sycl_usm_array_interface__, and USM allocated from Go through the
// SYCL runtime dpctl loaded.
func Example_dpctl() {
	py, err := pybridge.Embed("")
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := py.Dpctl() // imports dpctl; its SYCL runtime as a usm.Backend (*dpctl.Backend)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = py.Do(func(g *pybridge.GIL) error {
		if err := g.Exec("import dpnp\nx = dpnp.arange(4, dtype='f4', device='opencl:cpu')"); err != nil {
			return err
		}
		x, err := g.Eval("x")
		if err != nil {
			return err
		}
		defer g.DecRef(x)
		arr, err := g.AsArray(x, nil) // nil: dpctl's registry; its Owner holds x
		if err != nil {
			return err
		}
		y, err := usm.Adopt[float32](arr) // takes the Owner's reference over
		if err != nil {
			arr.Owner.Release()
			return err
		}
		defer y.Close() // lets x go
		out := make([]float32, 4)
		err = y.CopyTo(out) // device USM: copied by the array's queue
		fmt.Println(arr.Memory.Kind, arr.DLDevice.Type, out)
		return err
	})
	if err != nil {
		fmt.Println(err)
	}

	dev, err := d.Registry().Device("opencl:cpu") // a device of dpctl's SYCL runtime
	if err != nil {
		fmt.Println(err)
		return
	}
	z, err := usm.Empty[int32](dev, usm.KindShared, 4) // in the memory dpnp's arrays use
	if err != nil {
		fmt.Println(err)
		return
	}
	defer z.Close()
	za, _ := z.Array()
	fmt.Println(za.Memory.Kind, za.DLDevice.Type)
	// Output:
	// device kDLOneAPI [0 1 2 3]
	// shared kDLOneAPI
}

// Go values into Python, as SetMain (and FromGo) convert them; other
// types are a TypeError.
func Example_setMain() {
	py, err := pybridge.Embed("")
	if err != nil {
		fmt.Println(err)
		return
	}
	err = py.Do(func(g *pybridge.GIL) error {
		v := map[string]any{"shape": []int64{2, 3}, "name": "x", "scale": 0.5, "ok": true, "raw": []byte("ab"), "none": nil}
		if err := g.SetMain("v", v); err != nil {
			return err
		}
		r, err := g.Eval("repr(v)")
		if err != nil {
			return err
		}
		defer g.DecRef(r)
		s, err := g.String(r)
		if err != nil {
			return err
		}
		fmt.Println(s)

		err = g.SetMain("w", float32(1.5)) // float64 only
		fmt.Println(errors.Is(err, usm.ErrType), usm.PythonException(err))
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// {'name': 'x', 'none': None, 'ok': True, 'raw': (97, 98), 'scale': 0.5, 'shape': (2, 3)}
	// true TypeError
}
