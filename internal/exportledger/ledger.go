// Package exportledger is the export record package dlpack shares with C
// code that replays its exports without calling Go (the Python extension
// module's __dlpack__ fast path and its DLPack C exchange API,
// pybridge/ext). It is internal: a Go user of dlpack reads the counts
// through dlpack.Live; the module's tests read them as a Stats.
package exportledger

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
)

// Ledger is the export record dlpack shares with C code that replays
// dlpack.Export without calling Go (the Python extension's __dlpack__ fast path
// and its DLPack C exchange API, pybridge/ext): one set of counters and the
// two block states, kept in C memory so that C reads and updates them
// directly. Go's own exports count in the same fields, so Read (and
// dlpack.Live) is the one place that says what is live, whichever side made the tensor.
//
// Its layout is C's ub_ledger (pybridge/ext/ext.h); pybridge/ext's layout
// test holds the two together.
type Ledger struct {
	// LiveMagic and FreeMagic are the states of a block C hands out: a
	// deleter finding anything but LiveMagic in its block counts a stray
	// delete and frees nothing (a second call, or a pointer never
	// exported).
	LiveMagic, FreeMagic uint64
	LiveExports          int64 // Go's exported tensors whose deleter has not run (atomic)
	StrayDeletes         int64 // deleter calls that named no live tensor (atomic)
	// ExchangeExports counts the tensors C handed out through the DLPack
	// C exchange API (managed_tensor_from_py_object_no_sync), so a test
	// can prove a consumer took that path (atomic).
	ExchangeExports int64
	// ReplayedLive counts C's replayed exports whose deleter has not run.
	// C changes it only while it holds the Python GIL, so it needs no
	// read-modify-write instruction: a relaxed load and a relaxed store,
	// where an atomic add (a locked instruction, two per export) cost
	// ~15 ns of the ~150 ns numpy.from_dlpack takes (RATIONALE.md, "The
	// Python package is an extension module with a C half"). Go only reads
	// it (atomic).
	ReplayedLive int64
}

// ExchangeExports returns Ledger.ExchangeExports.
func ExchangeExports() int64 { return atomic.LoadInt64(&Shared().ExchangeExports) }

// The block states, in one place: "ubblock1" and "ubbfree1".
const (
	blockLive = 0x7562626c6f636b31
	blockFree = 0x7562626672656531
)

// Shared is the process's Ledger, in process-lifetime C memory: C keeps
// its address for ever.
var Shared = sync.OnceValue(func() *Ledger {
	l := (*Ledger)(cmem.Ptr(cmem.Permanent(unsafe.Sizeof(Ledger{}))))
	l.LiveMagic, l.FreeMagic = blockLive, blockFree
	return l
})

// Addr returns the address of the process's Ledger, for C code that
// replays exports.
func Addr() uintptr { return uintptr(unsafe.Pointer(Shared())) }

// ReplayBlocks fills out with blocks of size bytes of C memory, each
// stamped FreeMagic at magicOffset, for C code that replays exports: the
// memory is dlpack's (cmem), and the caller keeps the blocks for reuse for
// as long as the process lives (they stay counted as live C blocks). It
// returns how many it filled; fewer than len(out) only when memory ran
// out.
func ReplayBlocks(out []uintptr, size, magicOffset uintptr) int {
	if magicOffset+8 > size {
		return 0
	}
	for i := range out {
		p := cmem.Alloc(size)
		if p == 0 {
			return i
		}
		*(*uint64)(cmem.Ptr(p + magicOffset)) = blockFree
		out[i] = p
	}
	return len(out)
}

// AddLive counts Go's exports made (n > 0) or ended (n < 0).
func AddLive(n int64) { atomic.AddInt64(&Shared().LiveExports, n) }

// AddStray counts a deleter call that named no live tensor.
func AddStray() { atomic.AddInt64(&Shared().StrayDeletes, 1) }

// liveImports counts dlpack's imported tensors not yet released.
var liveImports atomic.Int64

// AddImports counts dlpack's imports made (n > 0) or released (n < 0).
func AddImports(n int64) { liveImports.Add(n) }

// Stats are the process-wide DLPack counters for leak checks, read at
// once: dlpack.Live gives them to users as a map, and the module's tests
// compare them field by field.
type Stats struct {
	LiveExports  int   // exported tensors whose deleter has not run (Go's and those C replayed)
	LiveCBlocks  int64 // blocks of C memory held by usmbridge (exports)
	LiveCBytes   int64
	StrayDeletes int64 // deleter calls that named no live tensor (ignored)
	LiveImports  int64 // imported tensors not yet released
	// Panics counts Go panics recovered where C calls usmbridge (DLPack
	// deleters, Python capsule destructors, the extension module's
	// entry points), process-wide. Each was logged; a deleter that
	// panicked leaked its tensor. Anything but 0 is a bug to report.
	Panics int64
}

// Read returns the current counters.
func Read() Stats {
	l := Shared()
	c := cmem.Snapshot()
	return Stats{LiveExports: int(atomic.LoadInt64(&l.LiveExports) + atomic.LoadInt64(&l.ReplayedLive)), LiveCBlocks: c.LiveBlocks, LiveCBytes: c.LiveBytes,
		StrayDeletes: atomic.LoadInt64(&l.StrayDeletes), LiveImports: liveImports.Load(), Panics: boundary.Panics()}
}
