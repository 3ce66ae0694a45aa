package opencl

import "github.com/usmbridge/usmbridge/internal/live"

// counters are the process's live OpenCL objects and allocations made
// through this package.
var counters = live.NewSet("opencl", "contexts", "queues", "allocations", "programs", "kernels", "events")

var (
	liveContexts    = counters.Counter("contexts")
	liveQueues      = counters.Counter("queues")
	liveAllocations = counters.Counter("allocations")
	livePrograms    = counters.Counter("programs")
	liveKernels     = counters.Counter("kernels")
	liveEvents      = counters.Counter("events") // launch events not yet closed
)

// Live returns how many objects made through this package are alive, by
// kind: "contexts", "queues", "allocations" (USM or SVM), "programs",
// "kernels" and "events" (of launches, until closed). A
// program (or test) that closed everything it made sees only zeros,
// except for the context and queue references lent to SYCL for good
// (dpctl's Backend.InteropQueue), which stay live and counted.
func Live() map[string]int64 { return counters.Snapshot() }
