package dlpack_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/usm"
)

// A million export → import → release round trips leave the handle
// registry, C memory and the allocation exactly where they started.
func TestLeakMillionRoundTrips(t *testing.T) {
	n := 1_000_000
	if testing.Short() || raceEnabled {
		n = 100_000 // the race detector makes each trip ~20x slower
	}
	host := new(cpu.Backend)
	base := liveHostAllocations()
	reg := usm.NewRegistry(host)
	a, alloc := hostArray(t, reg, host, 3, 5)
	before := exportledger.Read()
	versions := []*dlpack.Version{nil, v(1, 0)}
	for i := range n {
		m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: versions[i&1]})
		if err != nil {
			t.Fatal(err)
		}
		tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		tn.Release()
	}
	after := exportledger.Read()
	assert.Equal(t, before.LiveExports, after.LiveExports)
	assert.Equal(t, before.LiveImports, after.LiveImports)
	assert.Equal(t, before.LiveCBlocks, after.LiveCBlocks)
	assert.Equal(t, before.LiveCBytes, after.LiveCBytes)
	assert.Equal(t, before.StrayDeletes, after.StrayDeletes)
	assert.Less(t, cmem.Snapshot().MappedBytes, int64(1<<20), "blocks are reused, not accumulated")
	require.NoError(t, alloc.Free())
	assert.Equal(t, base, liveHostAllocations())
}

// 16 goroutines export, import, re-export and release at once, sharing
// one allocation and each owning another.
func TestConcurrentConversions(t *testing.T) {
	host := new(cpu.Backend)
	base := liveHostAllocations()
	reg := usm.NewRegistry(host)
	shared, sharedAlloc := hostArray(t, reg, host, 64)
	const workers, iters = 16, 2000
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own, err := host.AllocHost(uintptr(4 * (w + 1)))
			if err != nil {
				errs <- err
				return
			}
			defer own.Free()
			mine, err := reg.NewArray(own, shared.DType, []int64{int64(w + 1)})
			if err != nil {
				errs <- err
				return
			}
			for i := range iters {
				arr := shared
				if i%2 == 1 {
					arr = mine
				}
				m, err := dlpack.Export(arr, dlpack.ExportOptions{MaxVersion: v(1, uint32(i%3))})
				if err != nil {
					errs <- err
					return
				}
				tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
				if err != nil {
					errs <- err
					return
				}
				m2, err := dlpack.Export(&tn.Array, dlpack.ExportOptions{MaxVersion: v(1, 0)})
				tn.Release()
				if err != nil {
					errs <- err
					return
				}
				m2.Delete()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.NoError(t, sharedAlloc.Free())
	assert.Zero(t, exportledger.Read().LiveExports)
	assert.Zero(t, exportledger.Read().LiveImports)
	assert.Equal(t, base, liveHostAllocations(), "every allocation returned")
}

// A consumer may call the deleter on a thread Go did not create. The
// test starts a pthread whose start routine is the deleter itself.
func TestDeleterOnForeignThread(t *testing.T) {
	libc, err := ffi.OpenLib(ffi.RTLDNow, "libc.so.6")
	testutil.Runtime(t, "libc", err)
	var create, join ffi.Fn
	require.NoError(t, libc.Resolve(ffi.Required(&create, "pthread_create"), ffi.Required(&join, "pthread_join")))

	host := new(cpu.Backend)
	base := liveHostAllocations()
	reg := usm.NewRegistry(host)
	a, alloc := hostArray(t, reg, host, 8)
	var exports []dlpack.Managed
	for _, max := range []*dlpack.Version{nil, v(1, 0)} {
		m, err := dlpack.Export(a, dlpack.ExportOptions{MaxVersion: max})
		require.NoError(t, err)
		exports = append(exports, m)
	}
	require.NoError(t, alloc.Free()) // from now on only the exports hold it
	for _, m := range exports {
		del := (*dlabi.ManagedTensor)(cmem.Ptr(m.Pointer())).Deleter
		if m.Versioned() {
			del = (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer())).Deleter
		}
		tid := cmem.Alloc(8)
		require.Zero(t, create.Call(tid, 0, del, m.Pointer()), "pthread_create")
		require.Zero(t, join.Call(*(*uintptr)(cmem.Ptr(tid)), 0), "pthread_join")
		cmem.Free(tid, 8)
	}
	assert.Zero(t, exportledger.Read().LiveExports)
	assert.Equal(t, base, liveHostAllocations(), "the deleter on the foreign thread released the memory")
}
