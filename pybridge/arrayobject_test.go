package pybridge

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/usm"
)

// A Go array put into Python by ArrayObject is a NumPy array over the same
// memory (host memory): NumPy's own functions take it as it is, writes on
// either side are seen by the other, the read-only flag is NumPy's, and
// the memory outlives Go's Free until the array goes.
func TestArrayObjectHost(t *testing.T) {
	py := embedded(t)
	arr := hostArray(t, 2, 3)
	vals, err := usm.View[float32](arr)
	require.NoError(t, err)
	ro := *arr
	ro.ReadOnly = true
	require.NoError(t, py.Do(func(g *GIL) error {
		o, err := g.ArrayObject(arr)
		if err != nil {
			return err
		}
		defer g.DecRef(o)
		r, err := g.ArrayObject(&ro)
		if err != nil {
			return err
		}
		defer g.DecRef(r)
		if err := g.SetMain("ao", o); err != nil {
			return err
		}
		return g.SetMain("ao_ro", r)
	}))
	run(t, py, `
import numpy as np
assert type(ao) is np.ndarray and ao.shape == (2, 3) and ao.dtype == np.float32, (type(ao), ao)
assert ao.tolist() == [[0, 1, 2], [3, 4, 5]]
ao[1, 2] = 50
assert not ao_ro.flags.writeable and ao_ro.__array_interface__["data"][0] == ao.__array_interface__["data"][0]
`)
	assert.Equal(t, float32(50), vals[5], "NumPy wrote into Go's memory")
	vals[0] = -1
	assert.Equal(t, -1.0, evalGo(t, py, "float(ao[0, 0])"), "NumPy sees Go's write")
	// Go lets go of its allocation: NumPy's arrays keep the memory.
	live := cpu.Live()["allocations"]
	require.NoError(t, arr.Owner.(*usm.Allocation).Free())
	assert.Equal(t, live, cpu.Live()["allocations"], "freed under NumPy's arrays")
	assert.Equal(t, -1.0, evalGo(t, py, "float(ao[0, 0])"))
	run(t, py, "del ao, ao_ro\nimport gc; gc.collect()")
	assert.Equal(t, live-1, cpu.Live()["allocations"], "the memory outlived the arrays")
}

// For USM, the array is a dpnp.tensor.usm_ndarray over the same memory,
// on the array's device.
func TestArrayObjectUSM(t *testing.T) {
	py, d := withDpctl(t)
	alloc, err := d.Alloc(0, usm.KindShared, 32)
	require.NoError(t, err)
	defer alloc.Free()
	arr, err := d.Registry().NewArray(alloc, dtype.Float64, []int64{4})
	require.NoError(t, err)
	vals, err := usm.View[float64](arr)
	require.NoError(t, err)
	for i := range vals {
		vals[i] = float64(i)
	}
	require.NoError(t, py.Do(func(g *GIL) error {
		o, err := g.ArrayObject(arr)
		if err != nil {
			return err
		}
		defer g.DecRef(o)
		return g.SetMain("au", o)
	}))
	run(t, py, `
import dpnp.tensor as dpt
assert type(au).__name__ == "usm_ndarray", type(au)
assert au.__sycl_usm_array_interface__["data"][0] == `+itoaPtr(arr.Data)+`
assert dpt.asnumpy(au).tolist() == [0, 1, 2, 3]
au[1] = 10
`)
	require.NoError(t, arr.Wait())
	run(t, py, "au.sycl_queue.wait(); del au")
	assert.Equal(t, 10.0, vals[1])
}

func itoaPtr(p uintptr) string { return strconv.FormatUint(uint64(p), 10) }

// USM the opencl backend allocated on Intel's runtime becomes a
// usm_ndarray over the same memory, as its SUAI does: DLPack, which dpnp's
// from_dlpack imports, names a device only, and dpnp takes a pointer only
// in that device's default SYCL context, which does not know this memory
// (the BufferError "Data pointer in DLPack is not bound to default sycl
// context" before). Strides of either sign and read-only views keep their
// layout and flag; the memory stays until the Python array goes.
func TestArrayObjectNativeOpenCL(t *testing.T) {
	py, _ := withDpctl(t)
	ob, reg, dev, _ := nativeOpenCL(t)
	defer ob.Close()
	for _, kind := range []usm.Kind{usm.KindShared, usm.KindDevice, usm.KindHost} {
		t.Run(kind.String(), func(t *testing.T) {
			arr := ramp(t, ob, reg, dev, kind, 12)
			alloc := arr.Owner.(*usm.Allocation)
			rev := *arr // x.reshape(3, 4)[::-1, 1::2], read-only
			rev.Shape, rev.Strides, rev.Offset, rev.ReadOnly = []int64{3, 2}, []int64{-4, 2}, 9, true
			require.NoError(t, py.Do(func(g *GIL) error {
				for name, a := range map[string]*usm.Array{"ax": arr, "ar": &rev} {
					o, err := g.ArrayObject(a)
					if err != nil {
						return err
					}
					err = g.SetMain(name, o)
					g.DecRef(o)
					if err != nil {
						return err
					}
				}
				return nil
			}))
			require.NoError(t, alloc.Free()) // the Python arrays hold the memory
			assert.True(t, alloc.Live())
			run(t, py, `
import dpnp.tensor as dpt
assert type(ax).__name__ == "usm_ndarray", type(ax)
assert ax.usm_type == "`+kind.String()+`", ax.usm_type
assert ax.__sycl_usm_array_interface__["data"][0] == `+itoaPtr(arr.Data)+`, "no copy"
assert dpt.asnumpy(ax).tolist() == list(range(12))
assert dpt.asnumpy(ar).tolist() == [[9, 11], [5, 7], [1, 3]], dpt.asnumpy(ar)
assert not ar.flags.writable and ax.flags.writable
ax[0] = 100
ax.sycl_queue.wait()
assert dpt.asnumpy(ar)[2].tolist() == [1, 3]
assert int(dpt.asnumpy(ax)[0]) == 100
del ax, ar
import gc; gc.collect()
`)
			assert.False(t, alloc.Live(), "the memory went with the Python arrays")
		})
	}
}

// Memory no SYCL context can reach (PoCL's SVM) is refused with the
// ValueError that says which allocation will do, and nothing is left held.
func TestArrayObjectNativeRefused(t *testing.T) {
	py, _ := withDpctl(t)
	ob, reg, _, dev := nativeOpenCL(t)
	defer ob.Close()
	arr := ramp(t, ob, reg, dev, usm.KindShared, 4)
	alloc := arr.Owner.(*usm.Allocation)
	err := py.Do(func(g *GIL) error {
		o, err := g.ArrayObject(arr)
		if err == nil {
			g.DecRef(o)
		}
		return err
	})
	require.ErrorIs(t, err, usm.ErrValue)
	assert.Equal(t, "ValueError", usm.PythonException(err))
	assert.Contains(t, err.Error(), "allocate it through dpctl")
	require.NoError(t, alloc.Free())
	assert.False(t, alloc.Live(), "nothing held the memory")
}
