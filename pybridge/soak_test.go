package pybridge

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/usm"
)

// soakRounds is how many round trips of every path TestSoak makes: 10^6
// with USMBRIDGE_SOAK=1 (minutes; not for CI), 2·10^4 otherwise.
func soakRounds() int {
	if os.Getenv("USMBRIDGE_SOAK") == "1" {
		return 1_000_000
	}
	return 20_000
}

// soakMaxGrowth is the RSS growth TestSoak allows between the end of
// warm-up (10% of the rounds) and the end, beyond what dpnp's own
// from_dlpack grows by (soakControl): over 0.9·n rounds it catches a leak
// of about 230 bytes per round at the default n, and of 5 bytes per round
// at 10^6. Reference counts and live counters catch any leaked object or
// tensor exactly.
const soakMaxGrowth = 4 << 20

// rss is the process's resident set size in bytes, after Go and Python
// have given back what they can.
func rss(t *testing.T, g *GIL) int64 {
	t.Helper()
	if err := g.Exec("gc.collect()"); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm: RSS is not measured here")
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// liveCounters are the counters that must come back to where they were
// once every array and capsule of a test is gone.
type liveCounters struct {
	stats exportledger.Stats
	held  int64 // Python exceptions Go holds
}

func readLiveCounters() liveCounters {
	return liveCounters{exportledger.Read(), heldExceptions.Load()}
}

func (before liveCounters) expectBack(t *testing.T) {
	t.Helper()
	now := readLiveCounters()
	s, b := now.stats, before.stats
	if s.LiveExports != b.LiveExports || s.LiveImports != b.LiveImports || s.LiveCBlocks != b.LiveCBlocks ||
		s.StrayDeletes != b.StrayDeletes || s.Panics != b.Panics {
		t.Errorf("counters %+v, were %+v", s, b)
	}
	// Earlier tests' exceptions may be collected meanwhile: only growth
	// is this test's.
	if now.held > before.held {
		t.Errorf("%d Python exceptions held, were %d", now.held, before.held)
	}
}

// soakControl is the same number of rounds of dpnp consuming its own
// array's capsule (no usmbridge involved), measured as TestSoak measures:
// dpnp.tensor.from_dlpack (dpctl 0.22.1, dpnp 0.20.0) grows RSS by about
// 30 bytes per call by itself, which is not ours to bound.
const soakControl = `
def soak_control(n):
    for i in range(n):
        if i == n // 10:
            gc.collect(); warm = int(open("/proc/self/statm").read().split()[1])
        y = dpt.from_dlpack(Holder(x.__dlpack__(max_version=(1, 0)), xdev))
        del y
    gc.collect()
    return (int(open("/proc/self/statm").read().split()[1]) - warm) * PAGE
`

// TestSoak makes soakRounds round trips of every public path between Go
// and Python: SUAI ingest of a dpnp array (AsArray) and its DLPack
// re-export consumed by dpnp; a Go host array exported to numpy
// (ToDLPack + numpy.from_dlpack); from_dlpack of a numpy array and of a
// dpnp array into Go (FromDLPack); a capsule imported by ImportCapsule.
// RSS stays within soakMaxGrowth after warm-up; reference counts and live
// counters end where they began.
func TestSoak(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, holderPy+"import gc\nx = dpt.arange(16, dtype='f4', sycl_queue=q)\nsrc = np.arange(8.0)\nxdev = x.__dlpack_device__()\nPAGE = "+strconv.Itoa(os.Getpagesize())+soakControl)
	host := hostArray(t, 8)
	n := soakRounds()
	v1 := &dlpack.Version{Major: 1}
	before := readLiveCounters()
	var warm, end, control int64
	var baseX, baseSrc, afterX, afterSrc int
	start := time.Now()
	var warmAt, elapsed time.Duration
	err := py.Do(func(g *GIL) error {
		x, src := eval(t, g, "x"), eval(t, g, "src")
		defer g.DecRef(x)
		defer g.DecRef(src)
		toNumpy := eval(t, g, "lambda c: np.from_dlpack(Holder(c))")
		defer g.DecRef(toNumpy)
		toDpt := eval(t, g, "lambda c: dpt.from_dlpack(Holder(c, xdev))")
		defer g.DecRef(toDpt)
		srcDLPack, err := g.getAttr(src, "__dlpack__")
		if err != nil {
			return err
		}
		defer g.DecRef(srcDLPack)
		baseX, baseSrc = g.refCount(x), g.refCount(src)
		export := func(arr *usm.Array, consumer Object) error {
			c, err := g.ToDLPack(arr, dlpack.ExportOptions{MaxVersion: v1})
			if err != nil {
				return err
			}
			h, err := g.call(consumer, []any{c}, nil)
			g.DecRef(c)
			if err != nil {
				return err
			}
			g.DecRef(h)
			return nil
		}
		for i := range n {
			if i == n/10 {
				warm, warmAt = rss(t, g), time.Since(start)
			}
			// SUAI ingest of a dpnp array, re-exported to dpnp by DLPack.
			arr, err := g.AsArray(x, nil)
			if err != nil {
				return err
			}
			err = export(arr, toDpt)
			arr.Owner.Release()
			if err != nil {
				return err
			}
			// A Go array to numpy.
			if err := export(host, toNumpy); err != nil {
				return err
			}
			// numpy and dpnp arrays to Go.
			for _, o := range []Object{src, x} {
				tns, err := g.FromDLPack(o, FromDLPackOptions{})
				if err != nil {
					return err
				}
				tns.Release()
			}
			// A capsule to Go.
			c, err := g.call(srcDLPack, nil, nil)
			if err != nil {
				return err
			}
			tns, err := g.importCapsule(c, nil)
			g.DecRef(c)
			if err != nil {
				return err
			}
			tns.Release()
		}
		elapsed = time.Since(start)
		end = rss(t, g)
		ctl := eval(t, g, "soak_control("+strconv.Itoa(n)+")")
		defer g.DecRef(ctl)
		if control, err = g.toInt(ctl); err != nil {
			return err
		}
		afterX, afterSrc = g.refCount(x), g.refCount(src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rounds × 6 paths in %v (warm-up %v); RSS %.1f MiB at 10%%, %.1f MiB at the end; dpnp alone grew %.1f MiB",
		n, elapsed.Round(time.Millisecond), warmAt.Round(time.Millisecond), float64(warm)/(1<<20), float64(end)/(1<<20), float64(control)/(1<<20))
	if end-warm > control+soakMaxGrowth {
		t.Errorf("RSS grew %.1f MiB after warm-up (bound: dpnp's own %.1f MiB + %d MiB)", float64(end-warm)/(1<<20), float64(control)/(1<<20), soakMaxGrowth>>20)
	}
	if afterX != baseX || afterSrc != baseSrc {
		t.Errorf("reference counts x %d (was %d), src %d (was %d)", afterX, baseX, afterSrc, baseSrc)
	}
	before.expectBack(t)
}
