package pybridge

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// nativeOpenCL opens the opencl backend (after dpctl: one ICD loader) and
// returns a registry of it with the index of its first device with real
// USM (Intel's CPU runtime) and of its first with SVM only (PoCL, whose
// device allocations come back shared).
func nativeOpenCL(t *testing.T) (ob *opencl.Backend, reg *usm.Registry, usmDev, svmDev int) {
	t.Helper()
	ob, err := opencl.New()
	testutil.Runtime(t, testutil.IntelOpenCL, err)
	usmDev, svmDev = -1, -1
	for i := range ob.Devices() {
		a, err := ob.Alloc(i, usm.KindDevice, 64)
		if err != nil {
			continue
		}
		switch {
		case a.Kind() == usm.KindDevice && usmDev < 0:
			usmDev = i
		case a.Kind() == usm.KindShared && svmDev < 0:
			svmDev = i
		}
		require.NoError(t, a.Free())
	}
	if usmDev < 0 {
		testutil.Runtime(t, testutil.IntelOpenCL, errkind.New(errkind.NotAvailable, "test", "no OpenCL device with cl_intel_unified_shared_memory"))
	}
	if svmDev < 0 {
		testutil.Runtime(t, testutil.PoCL, errkind.New(errkind.NotAvailable, "test", "no OpenCL device with SVM only"))
	}
	return ob, usm.NewRegistry(ob), usmDev, svmDev
}

// ramp allocates n float32 of kind on device dev through reg's backend and
// fills them with 0..n-1.
func ramp(t *testing.T, ob *opencl.Backend, reg *usm.Registry, dev int, kind usm.Kind, n int) *usm.Array {
	t.Helper()
	a, err := ob.Alloc(dev, kind, uintptr(4*n))
	require.NoError(t, err)
	arr, err := reg.NewArray(a, dtype.Float32, []int64{int64(n)})
	require.NoError(t, err)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	require.NoError(t, usm.CopyFromSlice(arr, v))
	return arr
}

// setSUAI puts arr's SUAI (GIL.SUAI) in __main__ as suai, and an object
// w whose __sycl_usm_array_interface__ it is.
func setSUAI(t *testing.T, py *Python, arr *usm.Array) error {
	t.Helper()
	return py.Do(func(g *GIL) error {
		o, err := g.SUAI(arr, Object{})
		if err != nil {
			return err
		}
		defer g.DecRef(o)
		if err := g.SetMain("suai", o); err != nil {
			return err
		}
		return g.Exec("class W:\n    @property\n    def __sycl_usm_array_interface__(self): return suai\nw = W()")
	})
}

// USM of the opencl backend reaches dpnp.tensor without a copy: its SUAI
// names a queue on a SYCL context made from the native context, dpctl
// reads the memory in place, and what dpnp writes on that queue Go reads
// after waiting on the array's own queue, the native queue under it.
// Before, the SUAI named device 0, whose default context does not know
// the pointer, and dpctl refused it.
func TestSUAINativeOpenCL(t *testing.T) {
	py, _ := withDpctl(t)
	ob, reg, dev, _ := nativeOpenCL(t)
	defer ob.Close()
	for _, kind := range []usm.Kind{usm.KindShared, usm.KindDevice, usm.KindHost} {
		t.Run(kind.String(), func(t *testing.T) {
			arr := ramp(t, ob, reg, dev, kind, 1<<16)
			require.NoError(t, setSUAI(t, py, arr))
			run(t, py, `
so = suai['syclobj']
assert isinstance(so, dpctl.SyclQueue), so
assert so.sycl_device == q.sycl_device and so.sycl_context != q.sycl_context
mem = dpctl.memory.as_usm_memory(w)
assert mem._pointer == suai['data'][0], "no copy"
x = dpt.usm_ndarray(suai['shape'], dtype='f4', buffer=mem)
assert x.usm_type == '`+kind.String()+`'
assert (dpt.asnumpy(x) == np.arange(1 << 16, dtype='f4')).all()
for _ in range(8):
    x += 1
del x, mem, w, so, suai
`)
			got := make([]float32, 1<<16)
			require.NoError(t, usm.CopyToSlice(got, arr)) // waits on the native queue only
			for i, v := range got {
				if v != float32(i+8) {
					t.Fatalf("element %d is %v after dpnp's writes, want %v", i, v, i+8)
				}
			}
			require.NoError(t, arr.Owner.(*usm.Allocation).Free())
		})
	}
}

// Where no SYCL context can be made from the native one (PoCL's device
// has no USM in SYCL), the SUAI is refused with the ValueError dpctl
// raises for a pointer outside the syclobj's context, saying why and what
// to do instead. Before, the dict named device 0, and dpctl refused it
// with its own message.
func TestSUAINativeRefused(t *testing.T) {
	py, _ := withDpctl(t)
	ob, reg, _, dev := nativeOpenCL(t)
	defer ob.Close()
	arr := ramp(t, ob, reg, dev, usm.KindShared, 4)
	defer arr.Owner.(*usm.Allocation).Free()
	err := setSUAI(t, py, arr)
	require.ErrorIs(t, err, usm.ErrValue)
	for _, s := range []string{"native OpenCL context", "cannot see", "not among SYCL's OpenCL devices with USM", "allocate it through dpctl", "pyext.Empty"} {
		assert.Contains(t, err.Error(), s)
	}
	assert.NotContains(t, err.Error(), "pybridge.", "the message speaks of the array, not of Go")
}

// stubL0 is a Level Zero backend whose one device's memory is whatever
// was registered with NewAllocation: on this machine no SYCL runtime has
// a Level Zero device, so the rule is checked with memory whose answer is
// known.
type stubL0 struct{ base, size uintptr }

func (*stubL0) Name() syclobj.Backend { return syclobj.LevelZero }
func (*stubL0) Devices() []syclobj.Device {
	return []syclobj.Device{{Backend: syclobj.LevelZero, Type: syclobj.GPU, Name: "stub"}}
}

func (s *stubL0) QueryPointer(p uintptr) usm.PointerInfo {
	if p >= s.base && p < s.base+s.size {
		return usm.PointerInfo{Kind: usm.KindShared, Device: 0, Base: s.base, Size: s.size}
	}
	return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
}

// Level Zero memory gets no SYCL context of its own: its SUAI names its
// device's position, and only where that device's default context knows
// the pointer. Memory no SYCL context knows is refused; memory it knows
// (as Intel's GPU driver answers for another context's allocations, and
// as dpctl's own memory stands in for here) is not: a consumer accepts
// it, so refusing would break what works.
func TestSUAINativeLevelZero(t *testing.T) {
	py, d := withDpctl(t)
	pos := -1
	for i, dv := range d.Devices() {
		if dv.Backend == syclobj.OpenCL && dv.Type == syclobj.CPU {
			pos = i
			break
		}
	}
	require.GreaterOrEqual(t, pos, 0)
	sycl, err := d.Alloc(pos, usm.KindShared, 64)
	require.NoError(t, err)
	defer sycl.Free()
	host := cmem.Alloc(64) // memory no SYCL context knows
	defer cmem.Free(host, 64)
	for _, c := range []struct {
		name  string
		ptr   uintptr
		known bool
	}{
		{"unknown to SYCL", host, false},
		{"known to the default context", sycl.Pointer(), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &stubL0{base: c.ptr, size: 64}
			a := usm.NewAllocation(s, c.ptr, 64, usm.KindShared, 0, func() error { return nil })
			defer a.Free()
			// One device before it in the stub's registry, so that its
			// kDLOneAPI id is dpctl's position of the OpenCL CPU device.
			regs := []usm.Backend{s}
			for range pos {
				regs = append([]usm.Backend{&stubL0{}}, regs...)
			}
			arr, err := usm.NewRegistry(regs...).NewArray(a, dtype.Uint8, []int64{64})
			require.NoError(t, err)
			require.EqualValues(t, pos, arr.DLDevice.ID)
			err = setSUAI(t, py, arr)
			if !c.known {
				require.ErrorIs(t, err, usm.ErrValue)
				for _, s := range []string{"native Level Zero context", "made from native OpenCL contexts only", "pyext.Empty"} {
					assert.Contains(t, err.Error(), s)
				}
				return
			}
			require.NoError(t, err)
			run(t, py, "assert suai['syclobj'] == '"+strconv.Itoa(pos)+"', suai\nassert dpctl.memory.as_usm_memory(w)._pointer == suai['data'][0]\ndel w, suai")
		})
	}
}
