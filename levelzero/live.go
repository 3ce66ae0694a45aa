package levelzero

import "github.com/usmbridge/usmbridge/internal/live"

// counters count the objects this package created and has not closed.
// Objects wrapped from a SYCL runtime are not counted: they are not ours
// to close.
var counters = live.NewSet("levelzero", "contexts", "queues", "pools", "events", "allocations", "ipc_mappings",
	"programs", "kernels", "launches")

var (
	liveContexts    = counters.Counter("contexts")
	liveQueues      = counters.Counter("queues") // immediate command lists
	livePools       = counters.Counter("pools")
	liveEvents      = counters.Counter("events")
	liveAllocations = counters.Counter("allocations")
	liveIPC         = counters.Counter("ipc_mappings")
	livePrograms    = counters.Counter("programs") // modules
	liveKernels     = counters.Counter("kernels")
	liveLaunches    = counters.Counter("launches") // launch events not yet closed
)

// Live returns how many objects made through this package are alive, by
// kind: "contexts", "queues", "pools", "events", "allocations",
// "ipc_mappings", "programs" (modules), "kernels" and "launches" (launch
// events not yet closed). A program (or test) that closed everything it
// made sees only zeros.
func Live() map[string]int64 { return counters.Snapshot() }
