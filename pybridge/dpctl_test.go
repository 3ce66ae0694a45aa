package pybridge

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/internal/hugepage"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// asArray binds the object a Python expression yields.
func asArray(t *testing.T, py *Python, expr string) (*usm.Array, error) {
	t.Helper()
	var arr *usm.Array
	err := py.Do(func(g *GIL) error {
		o, err := g.Eval(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		defer g.DecRef(o)
		arr, err = g.AsArray(o, nil)
		return err
	})
	return arr, err
}

func TestDpctlDevicesMatchDpctl(t *testing.T) {
	py, d := withDpctl(t)
	n := evalGo(t, py, "len(dpctl.get_devices())").(int64)
	if int(n) != len(d.Devices()) {
		t.Fatalf("dpctl sees %d devices, Go %d", n, len(d.Devices()))
	}
	id := evalGo(t, py, "q.sycl_device.get_device_id()").(int64)
	run(t, py, "xd = dpt.arange(4, sycl_queue=q)")
	arr, err := asArray(t, py, "xd")
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Owner.Release()
	if arr.DLDevice != (dlabi.Device{Type: dlabi.OneAPI, ID: int32(id)}) {
		t.Fatalf("DLDevice %v, dpctl says id %d", arr.DLDevice, id)
	}
	if got := evalGo(t, py, "list(xd.__dlpack_device__())"); !equalAny(got, []any{int64(14), id}) {
		t.Fatalf("__dlpack_device__ %v", got)
	}
}

// Every syclobj form dpctl accepts, on the same allocation.
func TestSUAISyclobjForms(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, `
x = dpt.arange(10, dtype='f4', sycl_queue=q, usm_type='shared')
base = x.__sycl_usm_array_interface__
class View:
    def __init__(self, so): self.so = so
    @property
    def __sycl_usm_array_interface__(self):
        d = dict(base); d["syclobj"] = self.so() if callable(self.so) else self.so
        return d
class Duck:
    def __init__(self, o): self.o = o
    def _get_capsule(self): return self.o._get_capsule()
ptr = base["data"][0]
`)
	ptr := uintptr(evalGo(t, py, "ptr").(int64))
	for _, form := range []string{
		"View(q)", "View(q.sycl_context)", "View('opencl:cpu')", "View(lambda: q._get_capsule())",
		"View(lambda: q.sycl_context._get_capsule())", "View(Duck(q))", "View(Duck(q.sycl_context))",
	} {
		arr, err := asArray(t, py, form)
		if err != nil {
			t.Errorf("%s: %v", form, err)
			continue
		}
		if arr.Data != ptr || arr.Memory.Kind != usm.KindShared || arr.Device != 0 || arr.DType != dtype.Float32 {
			t.Errorf("%s: %+v", form, arr)
		}
		if err := arr.Wait(); err != nil {
			t.Errorf("%s: wait: %v", form, err)
		}
		arr.Owner.Release()
	}
	// A capsule in the dict is single-use: the second parse sees used_*.
	run(t, py, "cap = q._get_capsule(); once = View(cap)")
	if _, err := asArray(t, py, "once"); err != nil {
		t.Fatal(err)
	}
	if n := evalGo(t, py, "repr(cap)").(string); !contains(n, `"used_SyclQueueRef"`) {
		t.Fatalf("capsule not renamed: %s", n)
	}
	if _, err := asArray(t, py, "once"); !errors.Is(err, usm.ErrValue) {
		t.Fatalf("second parse: %v, want ValueError", err)
	}
	// A pointer that is not USM of the context, and a bad filter string.
	for _, bad := range []string{"View(q)", "View('level_zero:gpu')", "View(42)"} {
		code := "b2 = " + bad + "; b2.so = b2.so; bad_d = dict(base); bad_d['data'] = (__import__('numpy').zeros(4).ctypes.data, False)"
		run(t, py, code)
		run(t, py, "class Bad:\n    __sycl_usm_array_interface__ = None\nBad.__sycl_usm_array_interface__ = dict(bad_d, syclobj=b2.so)")
		if _, err := asArray(t, py, "Bad()"); !errors.Is(err, usm.ErrValue) {
			t.Errorf("%s with a host pointer: %v, want ValueError", bad, err)
		}
	}
}

func TestSUAIReadOnlyFlag(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, `
m = dpctl.memory.MemoryUSMShared(64, queue=q)
class RO:
    def __init__(self, x): self.x = x
    @property
    def __sycl_usm_array_interface__(self):
        d = dict(self.x.__sycl_usm_array_interface__); d["data"] = (d["data"][0], True); return d
xr = RO(dpt.ones(4, sycl_queue=q))
`)
	if v := evalGo(t, py, "m.__sycl_usm_array_interface__['data'][1]"); v != true {
		t.Fatalf("dpctl.memory reports %v (expected its inverted True)", v)
	}
	arr, err := asArray(t, py, "m")
	if err != nil {
		t.Fatal(err)
	}
	if arr.ReadOnly {
		t.Fatal("dpctl.memory object must be writable")
	}
	arr.Owner.Release()
	arr, err = asArray(t, py, "xr")
	if err != nil {
		t.Fatal(err)
	}
	if !arr.ReadOnly {
		t.Fatal("data[1] True must mean read-only")
	}
	arr.Owner.Release()
}

func TestSUAILayouts(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, `
y = dpt.reshape(dpt.arange(24, dtype='i8', sycl_queue=q), (4, 6))
views = {"neg": y[::-1, ::2], "col": y[:, 3], "zero_d": y[1, 2], "empty": y[:0], "T": y.T}
`)
	for _, c := range []struct {
		name            string
		shape, strides  []int64
		offset          int64
		nilStrides      bool
		elementPtrDelta int64
	}{
		{"neg", []int64{4, 3}, []int64{-6, 2}, 18, false, 18},
		{"col", []int64{4}, []int64{6}, 3, false, 3},
		{"zero_d", []int64{}, nil, 8, true, 8},
		{"empty", []int64{0, 6}, nil, 0, true, 0},
		{"T", []int64{6, 4}, []int64{1, 6}, 0, false, 0},
	} {
		arr, err := asArray(t, py, "views['"+c.name+"']")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !equalAny(toAny(arr.Shape), toAny(c.shape)) || arr.Offset != c.offset ||
			(!c.nilStrides && !equalAny(toAny(arr.Strides), toAny(c.strides))) {
			t.Errorf("%s: shape %v strides %v offset %d", c.name, arr.Shape, arr.Strides, arr.Offset)
		}
		arr.Owner.Release()
	}
}

func TestSUAITypestrKinds(t *testing.T) {
	py, _ := withDpctl(t)
	for _, ts := range []string{"b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"} {
		run(t, py, "tx = dpt.zeros(3, dtype='"+ts+"', sycl_queue=q)")
		arr, err := asArray(t, py, "tx")
		if err != nil {
			t.Errorf("%s: %v", ts, err)
			continue
		}
		if got, err := arr.DType.Typestr(); err != nil || got.String() != "|"+ts {
			t.Errorf("%s: typestr %v, %v", ts, got, err)
		}
		arr.Owner.Release()
	}
}

// dpnp.tensor → Go (DLPack, zero copy) → dpnp.tensor (DLPack, zero copy).
func TestDpctlDLPackRoundTripKeepsPointer(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, holderPy+"src = dpt.arange(12, dtype='f8', sycl_queue=q)[::-3]")
	err := py.Do(func(g *GIL) error {
		src, _ := g.Eval("src")
		defer g.DecRef(src)
		tns, err := g.FromDLPack(src, FromDLPackOptions{})
		if err != nil {
			return err
		}
		defer tns.Release()
		if tns.Memory.Kind != usm.KindDevice || tns.DLDevice.Type != dlabi.OneAPI || tns.Strides[0] != -3 {
			t.Errorf("imported %+v", tns.Array)
		}
		for _, mv := range []*dlpack.Version{nil, {Major: 1}, {Major: 2}} {
			c, err := g.ToDLPack(&tns.Array, dlpack.ExportOptions{MaxVersion: mv})
			if err != nil {
				return err
			}
			if err := g.SetMain("cap", c); err != nil {
				return err
			}
			g.DecRef(c)
			if err := g.Exec("back = dpt.from_dlpack(Holder(cap, src.__dlpack_device__()))\nassert (dpt.asnumpy(back) == dpt.asnumpy(src)).all()\nsame = back.__sycl_usm_array_interface__['data'][0] + back.__sycl_usm_array_interface__['offset']*8 == src.__sycl_usm_array_interface__['data'][0] + src.__sycl_usm_array_interface__['offset']*8\ndel back, cap"); err != nil {
				return err
			}
			if s, _ := g.Eval("same"); s.p != g.api().True {
				t.Errorf("max_version %v: pointer changed", mv)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := exportledger.Read(); s.LiveExports != 0 {
		t.Fatalf("leaked exports: %+v", s)
	}
}

// Device USM allocated by Go through dpctl, exported with dl_device=(1, 0).
func TestDpctlExportToCPU(t *testing.T) {
	py, d := withDpctl(t)
	run(t, py, holderPy)
	alloc, err := d.Alloc(0, usm.KindDevice, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer alloc.Free()
	host := make([]float64, 4)
	for i := range host {
		host[i] = float64(i) + 0.5
	}
	if err := d.Copy(alloc.Pointer(), addr(host), 32); err != nil {
		t.Fatal(err)
	}
	arr, err := d.Registry().NewArray(alloc, dtype.Float64, []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := arr.Syclobj.(syclobj.Selector); !ok {
		t.Fatalf("syclobj %v", arr.Syclobj)
	}
	cpu := dlabi.Device{Type: dlabi.CPU}
	v1 := &dlpack.Version{Major: 1}
	err = py.Do(func(g *GIL) error {
		if _, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: v1, Device: &cpu, Copy: dlpack.CopyNever}); !errors.Is(err, usm.ErrBuffer) {
			t.Errorf("copy=False: %v, want BufferError", err)
		}
		for _, cm := range []dlpack.CopyMode{dlpack.CopyIfNeeded, dlpack.CopyAlways} {
			c, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: v1, Device: &cpu, Copy: cm})
			if err != nil {
				return err
			}
			g.SetMain("cap", c)
			g.DecRef(c)
			if err := g.Exec("h = np.from_dlpack(Holder(cap, (1, 0)))\nassert h.tolist() == [0.5, 1.5, 2.5, 3.5], h\ndel h, cap"); err != nil {
				return err
			}
		}
		// And the same array as kDLOneAPI to dpnp, zero copy.
		c, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: v1})
		if err != nil {
			return err
		}
		g.SetMain("cap", c)
		g.DecRef(c)
		g.SetMain("want_ptr", int64(alloc.Pointer()))
		return g.Exec("z = dpt.from_dlpack(Holder(cap, (14, 0)))\nassert z.usm_type == 'device' and z.__sycl_usm_array_interface__['data'][0] == want_ptr\nassert dpt.asnumpy(z).tolist() == [0.5, 1.5, 2.5, 3.5]\ndel z, cap")
	})
	if err != nil {
		t.Fatal(err)
	}
}

func toAny(s []int64) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// With stream=None dpctl's __dlpack__ does not wait for its queue, so the
// importer passes a stream: for a producer whose in-order queue it knows
// (x.sycl_queue, a dpnp array's) that very queue, to which the array is
// then bound, so copying through the array's queue sees a large fill the
// producer still had running; for a producer on an out-of-order queue, or
// one that hides its queue, dpctl's in-order queue of the device, which
// the producer orders after its own, so Go's own queue of the device sees
// the fill. (On an out-of-order queue a copy submitted after the fill may
// run before it: binding to such a queue failed this test.)
func TestFromDLPackWaitsForProducerQueue(t *testing.T) {
	py, d := withDpctl(t)
	const n = 1 << 22
	run(t, py, "class HidesQueue:\n    def __init__(self, x): self.x = x\n"+
		"    def __dlpack__(self, **kw): return self.x.__dlpack__(**kw)\n"+
		"    def __dlpack_device__(self): return self.x.__dlpack_device__()\n"+
		"q_in_order = dpctl.SyclQueue(q.sycl_device, property='in_order')\n")
	own, err := d.Queue(0)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, queue, expr string
		bound             bool // to the producer's queue, not dpctl's of the device
	}{
		{"in-order queue", "q_in_order", "x_sync", true},
		{"out-of-order queue", "q", "x_sync", false},
		{"hidden queue", "q_in_order", "HidesQueue(x_sync)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 3 {
				run(t, py, "x_sync = dpt.full((1 << 22,), 7.0, dtype='f4', sycl_queue="+tc.queue+")")
				var tns *dlpack.Tensor
				require.NoError(t, py.Do(func(g *GIL) error {
					x, err := g.Eval(tc.expr)
					if err != nil {
						return err
					}
					defer g.DecRef(x)
					tns, err = g.FromDLPack(x, FromDLPackOptions{})
					return err
				}))
				if tc.bound {
					assert.NotSame(t, own, tns.Queue, "bound to dpctl's queue of the device, not the producer's")
				} else {
					assert.Same(t, own, tns.Queue, "not bound to dpctl's queue of the device")
				}
				host := make([]float32, n)
				require.NoError(t, tns.Queue.(interface {
					Copy(dst, src, n uintptr) error
				}).Copy(uintptr(unsafe.Pointer(&host[0])), tns.ElementPointer(), n*4))
				tns.Release()
				for i, v := range host {
					if v != 7 {
						t.Fatalf("element %d = %v before the producer's fill finished", i, v)
					}
				}
			}
		})
	}
}

// SYCL's get_pointer_type throws in a context without USM, through
// libDPCTLSyclInterface's C ABI, which would abort the process. Such
// contexts (PoCL 3.1 as dpctl sees it) must give errors instead.
func TestDeviceWithoutUSMIsRefusedNotCrashed(t *testing.T) {
	py, d := withDpctl(t)
	run(t, py, `
no_usm = [dv for dv in dpctl.get_devices() if not dv.has_aspect_usm_device_allocations
          and not dv.has_aspect_usm_host_allocations and not dv.has_aspect_usm_shared_allocations]
`)
	if n, _ := evalGo(t, py, "len(no_usm)").(int64); n == 0 {
		testutil.Runtime(t, testutil.PoCL, errkind.New(errkind.NotAvailable, "test", "dpctl sees no device without USM (PoCL supplies one)"))
	}
	var goVar int64
	assert.Equal(t, usm.KindUnknown, d.QueryPointer(uintptr(unsafe.Pointer(&goVar))).Kind, "a Go pointer is unknown in every context")

	x := evalGo(t, py, "(lambda a: a.__sycl_usm_array_interface__['data'][0])(dpt.arange(4, sycl_queue=q))")
	for _, syclobj := range []string{"dpctl.SyclQueue(no_usm[0])", "dpctl.SyclQueue(no_usm[0]).sycl_context"} {
		run(t, py, "class NoUSM:\n    pass\nobj_no_usm = NoUSM()\nobj_no_usm.__sycl_usm_array_interface__ = dict(data=("+
			strconv.FormatInt(x.(int64), 10)+", False), shape=(4,), typestr='<i8', version=1, syclobj="+syclobj+")")
		err := py.Do(func(g *GIL) error {
			o, err := g.Eval("obj_no_usm")
			if err != nil {
				return err
			}
			defer g.DecRef(o)
			_, err = g.AsArray(o, nil)
			return err
		})
		require.ErrorIs(t, err, usm.ErrValue, syclobj)
		assert.Contains(t, err.Error(), "USM", syclobj)
	}
}

// USM Go allocates through dpctl on a CPU device (the copies __dlpack__
// makes) carries MADV_HUGEPAGE from 4 MiB on, as the opencl backend's.
func TestDpctlCPUAllocationsAskForHugePages(t *testing.T) {
	if _, err := hugepage.Advised(uintptr(unsafe.Pointer(&t))); err != nil {
		t.Skip("the kernel's advice cannot be read here: ", err)
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("kernel without transparent huge pages: ", err)
	}
	_, d := withDpctl(t)
	checked := 0
	for i, dev := range d.Devices() {
		if dev.Type != syclobj.CPU {
			continue
		}
		for _, kind := range []usm.Kind{usm.KindHost, usm.KindShared, usm.KindDevice} {
			const size = 8<<20 + 4096
			alloc, err := d.Alloc(i, kind, size)
			if err != nil {
				t.Logf("%v %v: %v", dev, kind, err)
				continue
			}
			lo, n := hugepage.Span(alloc.Pointer(), size)
			if n == 0 {
				t.Fatalf("no whole huge page in %d bytes", size)
			}
			for _, p := range []uintptr{lo, lo + n - 1} {
				got, err := hugepage.Advised(p)
				if err != nil {
					t.Fatal(err)
				}
				if !got {
					t.Errorf("%v %v USM at 0x%x: not advised", dev, kind, p)
				}
			}
			checked++
			if err := alloc.Free(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no CPU device allocated USM")
	}
}

// A device without the aspect for a kind of USM (PoCL's CPU device has
// none) is refused with ErrNotSupported. Asked anyway, the SYCL runtime
// aborts the process, so the case runs in a child.
func TestDpctlAllocWithoutTheAspectIsRefused(t *testing.T) {
	if testutil.InChild("dpctl-alloc-no-aspect") {
		_, d := withDpctl(t)
		refused := 0
		for i, dev := range d.Devices() {
			for _, kind := range []usm.Kind{usm.KindHost, usm.KindShared, usm.KindDevice} {
				alloc, err := d.Alloc(i, kind, 64)
				if err == nil {
					alloc.Free()
					continue
				}
				if !errors.Is(err, usm.ErrNotSupported) {
					t.Errorf("%v %v: %v, want ErrNotSupported", dev, kind, err)
				}
				refused++
			}
		}
		if refused == 0 {
			t.Skip("every device allocates every kind of USM here")
		}
		t.Logf("%d allocations refused", refused)
		return
	}
	c := testutil.RunChild(t, "dpctl-alloc-no-aspect", time.Minute)
	if strings.Contains(c.Output, "--- SKIP") {
		t.Skip("every device allocates every kind of USM here")
	}
	c.Expect(t, 0, "allocations refused")
}
