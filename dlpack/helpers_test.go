package dlpack_test

import (
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// TestMain fails the package if anything exported, imported or allocated
// by the tests is still alive at the end (cilium/ebpf-style leak check).
func TestMain(m *testing.M) {
	code := m.Run()
	s := exportledger.Read()
	host := cpu.Live() // every host backend of the process
	n, bytes := host["allocations"], host["bytes"]
	if code == 0 && (s.LiveExports != 0 || s.LiveImports != 0 || s.LiveCBlocks != foreignLive.Load() || n != 0) {
		fmt.Fprintf(os.Stderr, "leak: %+v, foreign blocks %d, cpu allocations %d (%d bytes)\n", s, foreignLive.Load(), n, bytes)
		code = 99
	}
	os.Exit(code)
}

// hostArray allocates a float32 array of the given shape on b, filled with
// 0, 1, 2, ... in memory order, and returns it bound in reg.
func hostArray(t testing.TB, reg *usm.Registry, b usm.Allocator, shape ...int64) (*usm.Array, *usm.Allocation) {
	t.Helper()
	n, err := elementCount(shape)
	require.NoError(t, err)
	alloc, err := b.Alloc(0, usm.KindHost, uintptr(n*4))
	require.NoError(t, err)
	if bs := alloc.Bytes(); len(bs) > 0 {
		f := unsafe.Slice((*float32)(unsafe.Pointer(&bs[0])), n)
		for i := range f {
			f[i] = float32(i)
		}
	}
	a, err := reg.NewArray(alloc, dtype.Float32, shape)
	require.NoError(t, err)
	return a, alloc
}

// readF32 reads element idx (in elements from element 0) of a tensor.
func readF32(p uintptr, idx int64) float32 {
	return *(*float32)(cmem.Ptr(p + uintptr(idx*4)))
}

// fakeSYCL is a SYCL-like backend for export/import tests: one GPU device
// whose memory is host memory from a cpu backend, reported with a chosen
// USM kind, and a queue that counts waits.
type fakeSYCL struct {
	host  *cpu.Backend
	mu    sync.Mutex
	kinds map[uintptr]usm.Kind
	waits atomic.Int64
}

func newFakeSYCL() *fakeSYCL { return &fakeSYCL{host: new(cpu.Backend), kinds: map[uintptr]usm.Kind{}} }

func (f *fakeSYCL) Name() syclobj.Backend { return syclobj.OpenCL }
func (f *fakeSYCL) Devices() []syclobj.Device {
	return []syclobj.Device{{Backend: syclobj.OpenCL, Type: syclobj.GPU, Name: "fake gpu"}}
}

func (f *fakeSYCL) QueryPointer(p uintptr) usm.PointerInfo {
	info := f.host.QueryPointer(p)
	if info.Kind == usm.KindUnknown {
		return info
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k, ok := f.kinds[info.Base]
	if !ok {
		return usm.PointerInfo{Kind: usm.KindUnknown, Device: -1}
	}
	info.Kind = k
	return info
}

func (f *fakeSYCL) Alloc(dev int, kind usm.Kind, size uintptr) (*usm.Allocation, error) {
	inner, err := f.host.AllocHost(size)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.kinds[inner.Pointer()] = kind
	f.mu.Unlock()
	return usm.NewAllocation(f, inner.Pointer(), size, kind, dev, func() error {
		f.mu.Lock()
		delete(f.kinds, inner.Pointer())
		f.mu.Unlock()
		return inner.Free()
	}), nil
}

func (f *fakeSYCL) Copy(dst, src, n uintptr) error { return f.host.Copy(dst, src, n) }

func (f *fakeSYCL) Queue(int) (usm.Queue, error) { return (*countingQueue)(&f.waits), nil }

type countingQueue atomic.Int64

func (q *countingQueue) Wait() error { (*atomic.Int64)(q).Add(1); return nil }

// --- foreign producers ---

// foreignDeletes counts calls of the foreign deleter per tensor id, and
// foreignLive the blocks foreign tensors still hold.
var (
	foreignMu      sync.Mutex
	foreignDeletes = map[uintptr]int{}
	foreignLive    atomic.Int64
	nextForeignID  atomic.Uintptr
)

// foreignDeleterPtr is a real C function pointer (a purego callback, not
// one of dlpack's own), so importing through it exercises the SyscallN path.
var foreignDeleterPtr = ffi.NewCallback(func(self uintptr) {
	id := ctxOf(self)
	foreignMu.Lock()
	foreignDeletes[id]++
	foreignMu.Unlock()
	cmem.Free(self, foreignSize)
	foreignLive.Add(-1)
})

const foreignSize = 4096

// foreignIDs maps a block to its id, so the deleter needs no layout.
var foreignIDs sync.Map

func ctxOf(self uintptr) uintptr {
	v, _ := foreignIDs.Load(self)
	id, _ := v.(uintptr)
	return id
}

// foreign describes a hostile or well-formed producer tensor.
type foreign struct {
	versioned  bool
	major      uint32
	minor      uint32
	flags      uint64
	data       uintptr
	device     dlpack.Device
	ndim       int32
	dtype      dlabi.DataType
	shape      []int64 // nil: NULL pointer
	strides    []int64 // nil: NULL pointer
	byteOffset uint64
	noDeleter  bool
}

// build writes f into one C block with shape and strides behind the struct
// and returns it with its id.
func (f foreign) build(t testing.TB) (dlpack.Managed, uintptr) {
	t.Helper()
	require.LessOrEqual(t, 80+8*(len(f.shape)+len(f.strides)), foreignSize)
	block := cmem.Alloc(foreignSize)
	require.NotZero(t, block)
	foreignLive.Add(1)
	id := nextForeignID.Add(1)
	foreignIDs.Store(block, id)
	arrays := block + 80
	put := func(v []int64) uintptr {
		if v == nil {
			return 0
		}
		p := arrays
		copy(unsafe.Slice((*int64)(cmem.Ptr(p)), max(len(v), 1)), v)
		arrays += uintptr(8 * max(len(v), 1))
		return p
	}
	tn := dlabi.Tensor{Data: f.data, Device: f.device, Ndim: f.ndim, DType: f.dtype,
		Shape: put(f.shape), Strides: put(f.strides), ByteOffset: f.byteOffset}
	del := foreignDeleterPtr
	if f.noDeleter {
		del = 0
	}
	if f.versioned {
		*(*dlabi.ManagedTensorVersioned)(cmem.Ptr(block)) = dlabi.ManagedTensorVersioned{
			Version: dlpack.Version{Major: f.major, Minor: f.minor}, ManagerCtx: id, Deleter: del, Flags: f.flags, DLTensor: tn}
	} else {
		*(*dlabi.ManagedTensor)(cmem.Ptr(block)) = dlabi.ManagedTensor{DLTensor: tn, ManagerCtx: id, Deleter: del}
	}
	return dlpack.UnsafeManaged(block, f.versioned), id
}

func deletesOf(id uintptr) int {
	foreignMu.Lock()
	defer foreignMu.Unlock()
	return foreignDeletes[id]
}

// freeUndeleted releases a foreign block whose deleter must not run (tests
// of KeepOnError, or a tensor with a NULL deleter).
func freeUndeleted(m dlpack.Managed) {
	cmem.Free(m.Pointer(), foreignSize)
	foreignLive.Add(-1)
}

func benchHostBuf(b *testing.B) uintptr {
	p := cmem.Alloc(64)
	b.Cleanup(func() { cmem.Free(p, 64) })
	return p
}

// elementCount is the number of elements of shape, an error if it
// overflows int64 or a dimension is negative.
func elementCount(shape []int64) (int64, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 || (d > 0 && n > math.MaxInt64/d) {
			return 0, fmt.Errorf("shape %v: no element count", shape)
		}
		n *= d
	}
	return n, nil
}
