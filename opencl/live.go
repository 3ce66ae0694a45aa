package opencl

import "github.com/usmbridge/usmbridge/internal/live"

// counters are the process's live OpenCL objects and allocations made
// through this package.
var counters = live.NewSet("opencl", "contexts", "queues", "events", "allocations")

var (
	liveContexts    = counters.Counter("contexts")
	liveQueues      = counters.Counter("queues")
	liveEvents      = counters.Counter("events")
	liveAllocations = counters.Counter("allocations")
)

// Counts are the process's live OpenCL objects and allocations made
// through this package, for leak checks.
type Counts struct {
	Contexts, Queues, Events, Allocations int64
}

// Live returns the current counts. A program (or test) that released
// everything it made sees all zeros.
func Live() Counts {
	return Counts{
		Contexts:    liveContexts.Load(),
		Queues:      liveQueues.Load(),
		Events:      liveEvents.Load(),
		Allocations: liveAllocations.Load(),
	}
}
