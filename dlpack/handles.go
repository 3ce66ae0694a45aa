package dlpack

import (
	"sync"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/usm"
)

// Every exported tensor is one block of C memory (struct, shape, strides)
// plus one slot in this registry. manager_ctx holds the slot's handle: an
// index and a generation, never a Go pointer. Two static deleters (legacy
// and versioned layouts) serve every tensor of the process, because purego
// callbacks are a fixed, never-freed resource.

type slot struct {
	gen   uint32
	inUse bool
	block uintptr
	size  uintptr
	owner usm.Owner
}

var handles struct {
	mu    sync.Mutex
	slots []slot
	free  []uint32
}

// Live exports and stray deletes (deleter calls whose handle was not live:
// a second call, or a pointer we never exported; they are ignored) are
// counted in internal/exportledger, which Live reads.

func register(block, size uintptr, owner usm.Owner) uintptr {
	handles.mu.Lock()
	var i uint32
	if n := len(handles.free); n > 0 {
		i = handles.free[n-1]
		handles.free = handles.free[:n-1]
	} else {
		handles.slots = append(handles.slots, slot{})
		i = uint32(len(handles.slots) - 1)
	}
	s := &handles.slots[i]
	s.gen++
	s.inUse, s.block, s.size, s.owner = true, block, size, owner
	exportledger.AddLive(1)
	h := uintptr(s.gen)<<32 | uintptr(i+1)
	handles.mu.Unlock()
	return h
}

// unregister frees the slot named by h if it is live and belongs to block,
// and returns what it held.
func unregister(h, block uintptr) (slot, bool) {
	i := uint32(h&0xffffffff) - 1
	gen := uint32(h >> 32)
	handles.mu.Lock()
	defer handles.mu.Unlock()
	if int(i) >= len(handles.slots) {
		return slot{}, false
	}
	s := &handles.slots[i]
	if !s.inUse || s.gen != gen || s.block != block {
		return slot{}, false
	}
	got := *s
	s.inUse, s.block, s.owner = false, 0, nil
	handles.free = append(handles.free, i)
	exportledger.AddLive(-1)
	return got, true
}

// deleteExported is the body of both deleters. It is safe on any thread,
// and a repeated call for the same tensor is ignored (unless the block was
// reused by a new export in between, which no deleter contract allows).
func deleteExported(self uintptr, ctxOffset uintptr) {
	if self == 0 {
		return
	}
	ctx := (*uintptr)(unsafe.Add(cmem.Ptr(self), ctxOffset))
	s, ok := unregister(*ctx, self)
	if !ok {
		exportledger.AddStray()
		return
	}
	*ctx = 0
	cmem.Free(s.block, s.size)
	if s.owner != nil {
		s.owner.Release()
	}
}

const (
	legacyCtxOffset    = unsafe.Offsetof(dlabi.ManagedTensor{}.ManagerCtx)
	versionedCtxOffset = unsafe.Offsetof(dlabi.ManagedTensorVersioned{}.ManagerCtx)
)

// deleterBoundary names the deleters for boundary.Recover and InjectPanic.
const deleterBoundary = "dlpack deleter"

// legacyDeleter and versionedDeleter are what consumers call. A panic must
// not unwind through C: it is recovered, counted and logged, and the
// tensor is then leaked rather than freed from an unknown state.
func legacyDeleter(self uintptr) {
	defer boundary.Recover(deleterBoundary, nil)
	boundary.Check(deleterBoundary)
	deleteExported(self, legacyCtxOffset)
}

func versionedDeleter(self uintptr) {
	defer boundary.Recover(deleterBoundary, nil)
	boundary.Check(deleterBoundary)
	deleteExported(self, versionedCtxOffset)
}

// The C entry points, created on first export (through the process's
// callback gate, if a host program installed one).
var deleterPtrs = sync.OnceValues(func() (legacy, versioned uintptr) {
	return boundary.Callback(legacyDeleter), boundary.Callback(versionedDeleter)
})

// Live returns the process-wide DLPack counts for leak checks, as cpu,
// opencl and levelzero give theirs: "exports" (tensors Export handed out
// whose deleter has not run), "imports" (imported Tensors not yet released), "c_blocks" and
// "c_bytes" (the C memory usmbridge holds for exports), and two counts
// since the process started that are 0 in a correct program:
// "stray_deletes" (deleter calls that named no live tensor, such as a
// consumer's second call; ignored) and "panics" (Go panics recovered where
// C calls usmbridge: DLPack deleters, Python capsule destructors, an
// extension module's entry points; each was logged, and a deleter that
// panicked leaked its tensor). A program that released everything sees
// only zeros.
func Live() map[string]int64 {
	s := exportledger.Read()
	return map[string]int64{
		"exports": int64(s.LiveExports), "imports": s.LiveImports,
		"c_blocks": s.LiveCBlocks, "c_bytes": s.LiveCBytes,
		"stray_deletes": s.StrayDeletes, "panics": s.Panics,
	}
}
