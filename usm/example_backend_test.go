package usm_test

import (
	"errors"
	"fmt"
	"sync"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// poolBackend is a backend written outside this module: one host device
// whose memory it carves out of the host backend's allocations (a real one
// would call its runtime). It hands its memory out with usm.NewAllocation
// and answers QueryPointer for it.
type poolBackend struct {
	mu   sync.Mutex
	live map[uintptr]*usm.Allocation // by base
}

func (p *poolBackend) Name() syclobj.Backend { return syclobj.Host }

func (p *poolBackend) Devices() []syclobj.Device {
	return []syclobj.Device{{Backend: syclobj.Host, Type: syclobj.HostDevice, Name: "pool"}}
}

func (p *poolBackend) QueryPointer(ptr uintptr) usm.PointerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	for base, a := range p.live {
		if ptr >= base && ptr < base+a.Size() {
			return usm.PointerInfo{Kind: usm.KindHost, Device: 0, Base: base, Size: a.Size()}
		}
	}
	return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
}

func (p *poolBackend) Alloc(device int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	if device != 0 || kind != usm.KindHost {
		return nil, errors.New("pool: host memory of device 0 only")
	}
	mem, err := cpu.Default().AllocHost(size)
	if err != nil {
		return nil, err
	}
	base := mem.Pointer()
	a := usm.NewAllocation(p, base, size, usm.KindHost, 0, func() error {
		p.mu.Lock()
		delete(p.live, base)
		p.mu.Unlock()
		return mem.Free() // called once, when the last reference goes
	})
	p.mu.Lock()
	p.live[base] = a
	p.mu.Unlock()
	return a, nil
}

func ExampleNewAllocation() {
	pool := &poolBackend{live: map[uintptr]*usm.Allocation{}}
	reg := usm.NewRegistry(pool)
	alloc, err := pool.Alloc(0, usm.KindHost, 64)
	if err != nil {
		panic(err)
	}
	arr, err := reg.NewArray(alloc, dtype.Float32, []int64{16})
	if err != nil {
		panic(err)
	}
	fmt.Println(arr.Syclobj, arr.Memory.Kind, arr.Memory.Size)

	// A SUAI dict of a pointer inside that memory binds to the backend,
	// with the allocation as the owner that keeps the memory alive.
	m, err := arr.Map()
	if err != nil {
		panic(err)
	}
	m["data"] = []any{alloc.Pointer() + 16, false}
	m["shape"] = []any{4}
	view, err := reg.Parse(m)
	if err != nil {
		panic(err)
	}
	fmt.Println(view.Backend == usm.Backend(pool), view.Owner == usm.Owner(alloc))

	_ = alloc.Free()
	fmt.Println(alloc.Live())
	// Output:
	// host:host:0 host 64
	// true true
	// false
}

// record is a SUAI dict from another source (a wire format, another
// language's objects) as a reader of usm.Fields sees it.
type record struct {
	ptr     uint64
	shape   []int64
	typestr string
	sel     string
}

func (r record) Int(key string) (int64, bool, error) {
	if key == "version" {
		return 1, true, nil
	}
	return 0, false, nil // no offset
}

func (r record) Data() (uint64, bool, error) { return r.ptr, false, nil }

func (r record) Syclobj() (syclobj.Obj, error) {
	sel, err := syclobj.ParseSelector(r.sel)
	if err != nil {
		return nil, &usm.ReadError{Kind: usm.ErrValue, Found: "str", Err: err}
	}
	return sel, nil
}

func (r record) Len(key string) (int, bool, error) {
	if key == "shape" {
		return len(r.shape), true, nil
	}
	return 0, false, nil // no strides: C order
}

func (r record) Elem(key string, i int) (int64, error) { return r.shape[i], nil }

func (r record) Typestr() (string, error) { return r.typestr, nil }

func ExampleParseFields() {
	in, err := usm.ParseFields(record{ptr: 0x10000, shape: []int64{2, 3}, typestr: "<f4", sel: "opencl:gpu"})
	if err != nil {
		panic(err)
	}
	fmt.Println(in.Shape, in.DType, in.Syclobj)

	_, err = usm.ParseFields(record{ptr: 0x10000, shape: []int64{2}, typestr: "<f4", sel: "gpu:opencl"})
	var me *usm.MalformedError
	fmt.Println(errors.As(err, &me), me.Field, usm.PythonException(err))
	// Output:
	// [2 3] float32 opencl:gpu
	// true syclobj ValueError
}
