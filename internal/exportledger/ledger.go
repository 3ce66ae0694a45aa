// Package exportledger holds dlpack's process-wide counts: the tensors
// exported and imported that are still live, and the deleter calls that
// named no live tensor. dlpack updates them; a Go user reads them through
// dlpack.Live, as a map like every package's; the module's tests read them
// here as a Stats, so that a misspelt key cannot make a leak check pass
// (RATIONALE.md, "Leak counts are maps").
package exportledger

import (
	"sync/atomic"

	"github.com/usmbridge/usmbridge/internal/boundary"
	"github.com/usmbridge/usmbridge/internal/cmem"
)

var (
	liveExports  atomic.Int64 // exported tensors whose deleter has not run
	strayDeletes atomic.Int64 // deleter calls that named no live tensor
	liveImports  atomic.Int64 // imported tensors not yet released
)

// AddLive counts exports made (n > 0) or ended (n < 0).
func AddLive(n int64) { liveExports.Add(n) }

// AddStray counts a deleter call that named no live tensor.
func AddStray() { strayDeletes.Add(1) }

// AddImports counts imports made (n > 0) or released (n < 0).
func AddImports(n int64) { liveImports.Add(n) }

// Stats are the process-wide DLPack counters for leak checks, read at
// once: dlpack.Live gives them to users as a map, and the module's tests
// compare them field by field.
type Stats struct {
	LiveExports  int   // exported tensors whose deleter has not run
	LiveCBlocks  int64 // blocks of C memory held by usmbridge (exports)
	LiveCBytes   int64
	StrayDeletes int64 // deleter calls that named no live tensor (ignored)
	LiveImports  int64 // imported tensors not yet released
	// Panics counts Go panics recovered where C calls usmbridge (DLPack
	// deleters, Python capsule destructors, an extension module's entry
	// points), process-wide. Each was logged; a deleter that panicked
	// leaked its tensor. Anything but 0 is a bug to report.
	Panics int64
}

// Read returns the current counters.
func Read() Stats {
	c := cmem.Snapshot()
	return Stats{LiveExports: int(liveExports.Load()), LiveCBlocks: c.LiveBlocks, LiveCBytes: c.LiveBytes,
		StrayDeletes: strayDeletes.Load(), LiveImports: liveImports.Load(), Panics: boundary.Panics()}
}
