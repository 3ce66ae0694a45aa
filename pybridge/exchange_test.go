package pybridge

import (
	"sync/atomic"
	"testing"

	"github.com/usmbridge/usmbridge/dlpack"
)

// exchangePy runs 8 Python threads that hand arrays and capsules to Go
// (TOGO) and consume, or drop unconsumed, the capsules Go exports to them
// (TOPY): a dropped capsule's destructor, a Go callback, then runs on a
// Python thread.
const exchangePy = `
import threading, queue
TOGO, TOPY = queue.Queue(256), queue.Queue(256)
STOP, ERRS, SEEN = threading.Event(), [], {"host": 0, "dev": 0, "drop": 0}
def exchange(k):
    try:
        i = 0
        while not STOP.is_set():
            i += 1
            made = dpt.arange(8, dtype="f4", sycl_queue=q) if k % 2 else np.arange(8.0)
            try:
                TOGO.put_nowait(made.__dlpack__() if i % 3 == 0 else made)
            except queue.Full:
                pass
            try:
                kind, cap = TOPY.get(timeout=0.005)
            except queue.Empty:
                continue
            if kind == "host":
                assert np.from_dlpack(Holder(cap)).shape == (8,)
            elif kind == "dev":
                assert dpt.from_dlpack(Holder(cap, xdev)).shape == (8,)
            SEEN[kind] += 1
            del cap  # "drop": never consumed, released here
    except Exception as e:
        ERRS.append(repr(e))
threads = [threading.Thread(target=exchange, args=(k,)) for k in range(8)]
for th in threads: th.start()
`

// 8 Python threads and 16 goroutines exchange arrays at once through
// every path (AsArray, FromDLPack, ImportCapsule, ToDLPack consumed by
// numpy and dpnp or dropped); run it with -race. Every counter returns to
// its baseline.
func TestConcurrentExchange(t *testing.T) {
	py, _ := withDpctl(t)
	run(t, py, holderPy+"import gc\nxdev = dpt.arange(1, sycl_queue=q).__dlpack_device__()")
	host := hostArray(t, 8)
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	before := readLiveCounters()
	run(t, py, exchangePy)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			run(t, py, "STOP.set()\nfor th in threads: th.join()")
		}
	}
	defer stop()
	kinds := []string{"host", "dev", "drop"}
	var capsules, arrays, suais atomic.Int64
	inParallel(t, 16, func(w int) error {
		for i := range rounds {
			err := py.Do(func(g *GIL) error {
				exp, kind := host, kinds[(w+i)%len(kinds)]
				if kind == "dev" {
					kind = "host" // unless a dpnp array arrives below
				}
				o, err := g.Eval("TOGO.get_nowait()")
				switch {
				case err != nil:
					g.ReleaseError(err) // queue.Empty: export only
				case g.objTypeName(o) == "PyCapsule":
					defer g.DecRef(o)
					tns, err := g.importCapsule(o, nil)
					if err != nil {
						return err
					}
					tns.Release()
					capsules.Add(1)
				default:
					defer g.DecRef(o)
					arrays.Add(1)
					tns, err := g.FromDLPack(o, FromDLPackOptions{})
					if err != nil {
						return err
					}
					defer tns.Release()
					if g.hasAttr(o, "__sycl_usm_array_interface__") {
						arr, err := g.AsArray(o, nil)
						if err != nil {
							return err
						}
						defer arr.Owner.Release()
						suais.Add(1)
						exp = arr
						if kind == "host" {
							kind = "dev" // numpy takes no device memory
						}
					}
				}
				c, err := g.ToDLPack(exp, dlpack.ExportOptions{MaxVersion: &dlpack.Version{Major: 1}})
				if err != nil {
					return err
				}
				defer g.DecRef(c)
				put, err := g.Eval("TOPY.put_nowait")
				if err != nil {
					return err
				}
				defer g.DecRef(put)
				r, err := g.call(put, []any{[]any{kind, c}}, nil)
				if err != nil {
					g.ReleaseError(err) // queue.Full: c is dropped here
					return nil
				}
				g.DecRef(r)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	stop()
	run(t, py, `
for qq in (TOGO, TOPY):
    while not qq.empty(): qq.get_nowait()
assert not ERRS, ERRS
assert all(SEEN.values()), SEEN
gc.collect()`)
	if capsules.Load() == 0 || arrays.Load() == 0 || suais.Load() == 0 {
		t.Errorf("Go imported %d capsules, %d arrays by DLPack, %d by SUAI: a path was not exercised", capsules.Load(), arrays.Load(), suais.Load())
	}
	t.Logf("Go imported %d capsules, %d arrays by DLPack, %d by SUAI; Python consumed %v", capsules.Load(), arrays.Load(), suais.Load(), evalGo(t, py, "SEEN"))
	before.expectBack(t)
}
