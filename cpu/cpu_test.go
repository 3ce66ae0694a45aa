package cpu_test

import (
	"os"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/internal/hugepage"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

func TestAllocQueryFree(t *testing.T) {
	before := cpu.Live()
	b := new(cpu.Backend)
	a, err := b.AllocHost(100)
	require.NoError(t, err)
	assert.Equal(t, usm.KindHost, a.Kind())
	assert.EqualValues(t, 100, a.Size())
	assert.Zero(t, a.Pointer()%4096, "page aligned")
	assert.Len(t, a.Bytes(), 100)
	for _, p := range []uintptr{a.Pointer(), a.Pointer() + 1, a.Pointer() + 99} {
		info := b.QueryPointer(p)
		assert.Equal(t, usm.PointerInfo{Kind: usm.KindHost, Device: 0, Base: a.Pointer(), Size: 100}, info, "%#x", p)
	}
	for _, p := range []uintptr{0, a.Pointer() - 1, a.Pointer() + 100, uintptr(unsafe.Pointer(&err))} {
		assert.Equal(t, usm.KindUnknown, b.QueryPointer(p).Kind, "%#x", p)
	}
	n, bytes := cpu.Stats(b)
	assert.Equal(t, 1, n)
	assert.EqualValues(t, 100, bytes)
	assert.Equal(t, map[string]int64{"allocations": before["allocations"] + 1, "bytes": before["bytes"] + 100}, cpu.Live())
	require.NoError(t, a.Free())
	assert.Equal(t, usm.KindUnknown, b.QueryPointer(a.Pointer()).Kind, "freed memory is unknown")
	assert.ErrorIs(t, a.Free(), usm.ErrValue, "double free")
	n, bytes = cpu.Stats(b)
	assert.Zero(t, n)
	assert.Zero(t, bytes)
	assert.Equal(t, before, cpu.Live())
}

func TestZeroSizeAllocationHasAPointer(t *testing.T) {
	b := new(cpu.Backend)
	a, err := b.AllocHost(0)
	require.NoError(t, err)
	defer a.Free()
	require.NotZero(t, a.Pointer())
	assert.Equal(t, usm.KindHost, b.QueryPointer(a.Pointer()).Kind)
	assert.Nil(t, a.Bytes())
}

func TestManyAllocationsStaySorted(t *testing.T) {
	b := new(cpu.Backend)
	var as []*usm.Allocation
	for i := range 64 {
		a, err := b.AllocHost(uintptr(1 + i*100))
		require.NoError(t, err)
		as = append(as, a)
	}
	for i, a := range as {
		assert.Equal(t, a.Pointer(), b.QueryPointer(a.Pointer()+a.Size()-1).Base, "allocation %d", i)
	}
	for i := 0; i < len(as); i += 2 {
		require.NoError(t, as[i].Free())
	}
	for i, a := range as {
		want := usm.KindHost
		if i%2 == 0 {
			want = usm.KindUnknown
		}
		assert.Equal(t, want, b.QueryPointer(a.Pointer()).Kind, "allocation %d", i)
	}
	for i := 1; i < len(as); i += 2 {
		require.NoError(t, as[i].Free())
	}
}

func TestBadInput(t *testing.T) {
	b := new(cpu.Backend)
	_, err := b.Alloc(1, usm.KindHost, 8)
	assert.ErrorIs(t, err, usm.ErrValue)
	_, err = b.Alloc(0, usm.KindHost, 1<<60)
	assert.ErrorIs(t, err, usm.ErrMemory)
	assert.ErrorIs(t, b.Copy(0, 8, 8), usm.ErrValue)
	assert.NoError(t, b.Copy(0, 0, 0), "empty copy")
	_, err = b.Queue(3)
	assert.ErrorIs(t, err, usm.ErrValue)
}

func TestCopyAndQueue(t *testing.T) {
	b := new(cpu.Backend)
	a, err := b.AllocHost(16)
	require.NoError(t, err)
	defer a.Free()
	copy(a.Bytes(), "abcdefghijklmnop")
	require.NoError(t, b.Copy(a.Pointer()+2, a.Pointer(), 8)) // overlapping, like memmove
	assert.Equal(t, "ababcdefghklmnop", string(a.Bytes()))
	q, err := b.Queue(0)
	require.NoError(t, err)
	assert.NoError(t, q.Wait())
}

// A copy that starts in an allocation must end in it: the backend knows
// every extent it handed out (4 bytes past a 64-byte allocation were
// written, 2**40 faulted). Written as a user's package writes it, through
// Default and a pointer it relates (p+4, p): go1.26 stopped compiling such
// a caller of an inlined Copy (internal compiler error, cmem.Move).
func TestCopyStaysInItsAllocation(t *testing.T) {
	host := cpu.Default()
	a, err := host.AllocHost(64)
	require.NoError(t, err)
	defer a.Free()
	p := a.Pointer()
	require.NoError(t, host.Copy(p+4, p, 32))
	require.NoError(t, host.Copy(p, p+32, 32), "up to the last byte")
	for _, c := range []struct{ dst, src, n uintptr }{
		{p + 4, p, 64}, // dst runs past the end
		{p, p + 4, 64}, // src runs past the end
		{p + 4, p, 1 << 40},
		{p + 63, p, 2}, // the last byte and one past it
	} {
		err := host.Copy(c.dst, c.src, c.n)
		require.ErrorIs(t, err, usm.ErrValue, "%+v", c)
		assert.Contains(t, err.Error(), "overrun the allocation")
	}
}

func TestDevicesAndSelector(t *testing.T) {
	b := new(cpu.Backend)
	assert.Equal(t, syclobj.Host, b.Name())
	reg := usm.NewRegistry(b)
	for _, s := range []string{"host", "host:host", "host:host:0", "*:host", "0"} {
		got, dev, err := reg.Select(syclobj.MustParseSelector(s))
		require.NoError(t, err, s)
		assert.Equal(t, usm.Backend(b), got)
		assert.Zero(t, dev)
	}
	_, _, err := reg.Select(syclobj.MustParseSelector("gpu"))
	assert.ErrorIs(t, err, usm.ErrValue)
	assert.Contains(t, err.Error(), "usmbridge host")
}

func TestConcurrentAllocQuery(t *testing.T) {
	b := new(cpu.Backend)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				a, err := b.AllocHost(uintptr(64 + i))
				if err != nil {
					errs <- err
					return
				}
				if info := b.QueryPointer(a.Pointer() + 10); info.Base != a.Pointer() {
					errs <- assert.AnError
				}
				if err := a.Free(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n, _ := cpu.Stats(b)
	assert.Zero(t, n)
}

func BenchmarkQueryPointer(b *testing.B) {
	be := new(cpu.Backend)
	var as []*usm.Allocation
	for range 1000 {
		a, err := be.AllocHost(256)
		require.NoError(b, err)
		as = append(as, a)
	}
	b.Cleanup(func() {
		for _, a := range as {
			_ = a.Free()
		}
	})
	p := as[500].Pointer() + 17
	b.ReportAllocs()
	for b.Loop() {
		if be.QueryPointer(p).Kind != usm.KindHost {
			b.Fatal("lost")
		}
	}
}

// TestLargeAllocationsAskForHugePages: from hugepage.Threshold on, the
// mapping carries MADV_HUGEPAGE (NumPy's rule); below it, it does not.
func TestLargeAllocationsAskForHugePages(t *testing.T) {
	if _, err := hugepage.Advised(uintptr(unsafe.Pointer(&t))); err != nil {
		t.Skip("the kernel's advice cannot be read here: ", err)
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("kernel without transparent huge pages: ", err)
	}
	b := new(cpu.Backend)
	for _, c := range []struct {
		size uintptr
		want bool
	}{
		{hugepage.Threshold - 4096, false},
		{hugepage.Threshold, true},
		{64 << 20, true},
	} {
		a, err := b.AllocHost(c.size)
		require.NoError(t, err)
		lo, n := hugepage.Span(a.Pointer(), c.size)
		probe := a.Pointer() + c.size/2
		if c.want {
			require.NotZero(t, n, "a mapping of %d bytes holds a whole huge page", c.size)
			probe = lo
		}
		got, err := hugepage.Advised(probe)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%d bytes", c.size)
		a.Bytes()[c.size-1] = 1 // the memory is usable either way
		require.NoError(t, a.Free())
	}
}

// The host backend runs no kernels: its queue has no BuildProgram, and a
// caller who asks gets a clear usm.ErrNotSupported error.
func TestNoKernels(t *testing.T) {
	q, err := cpu.Default().Queue(0)
	require.NoError(t, err)
	_, err = usm.BuildProgram(q, usm.ProgramSource{OpenCLC: "kernel void k(void) {}"})
	require.ErrorIs(t, err, usm.ErrNotSupported)
	assert.ErrorContains(t, err, "the host backend's queue (package cpu) cannot build kernels: kernels are built for a queue of the opencl, levelzero or dpctl backend")
}
