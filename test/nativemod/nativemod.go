// Package nativemod is an extension module whose arrays are USM of
// usmbridge's native OpenCL backend, not of dpctl's runtime, for the test
// of how SYCL consumers (dpnp, dpctl) take them (test/native_test.go and
// RATIONALE.md, "Native allocations and SYCL consumers").
package nativemod

import (
	"sync"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/pybridge"
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/usm"
)

// Module defines nativemod.
func Module(m *pyext.Module) error {
	m.Doc("Arrays in USM of usmbridge's native OpenCL backend.")
	pyext.Func3R(m, "ramp", "0, 1, ..., n-1 as float32 in native OpenCL memory of the given USM kind, on the first device with real USM (memory='usm': Intel's CPU runtime) or with SVM only (memory='svm': PoCL).",
		ramp, pyext.P("n"), pyext.P("kind", pyext.Default("shared")), pyext.P("memory", pyext.Default("usm")))
	pyext.Func1R(m, "values", "x's elements, read by Go after waiting on x's queue.", values, pyext.P("x", pyext.NDim(1)))
	pyext.Func0R(m, "live", "The opencl package's live counts.", live)
	pyext.Func0(m, "close", "Close the backend (ramp opens another).", closeBackend)
	return nil
}

var state struct {
	sync.Mutex
	b        *opencl.Backend
	reg      *usm.Registry
	usm, svm int // first device of each memory, -1 if none
}

// backend opens the backend if none is open.
func backend() error {
	if state.b != nil {
		return nil
	}
	b, err := opencl.New()
	if err != nil {
		return err
	}
	state.b, state.reg, state.usm, state.svm = b, usm.NewRegistry(b), -1, -1
	for i := range b.Devices() {
		a, err := b.Alloc(i, usm.KindDevice, 64)
		if err != nil {
			continue
		}
		if a.Kind() == usm.KindDevice && state.usm < 0 {
			state.usm = i
		} else if a.Kind() == usm.KindShared && state.svm < 0 {
			state.svm = i
		}
		if err := a.Free(); err != nil {
			return err
		}
	}
	return nil
}

func ramp(n int, kind, memory string) (*usm.Array, error) {
	state.Lock()
	defer state.Unlock()
	if err := backend(); err != nil {
		return nil, err
	}
	dev := map[string]int{"usm": state.usm, "svm": state.svm}[memory]
	k := map[string]usm.Kind{"shared": usm.KindShared, "device": usm.KindDevice, "host": usm.KindHost}[kind]
	if dev < 0 || k == usm.KindUnknown {
		return nil, pyext.ValueError("no %s device for %s memory", memory, kind)
	}
	a, err := state.b.Alloc(dev, k, uintptr(4*max(n, 1)))
	if err != nil {
		return nil, err
	}
	arr, err := state.reg.NewArray(a, dtype.Float32, []int64{int64(n)})
	if err != nil {
		_ = a.Free()
		return nil, err
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	if err := usm.CopyFromSlice(arr, v); err != nil {
		_ = a.Free()
		return nil, err
	}
	return arr, nil
}

func values(x pyext.Array[float32]) ([]float32, error) {
	v := make([]float32, x.Len())
	return v, usm.CopyToSlice(v, x.USM())
}

func live() (pybridge.Object, error) {
	m := map[string]any{}
	for k, v := range opencl.Live() {
		m[k] = v
	}
	var o pybridge.Object
	err := pyext.Python().Do(func(g *pybridge.GIL) error {
		var err error
		o, err = g.FromGo(m)
		return err
	})
	return o, err
}

func closeBackend() error {
	state.Lock()
	defer state.Unlock()
	if state.b == nil {
		return nil
	}
	if err := state.b.Close(); err != nil {
		return pyext.ValueError("closing the backend: %v", err)
	}
	state.b = nil
	return nil
}
