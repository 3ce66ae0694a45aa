package hugepage

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpan(t *testing.T) {
	const M = 1 << 20
	for _, c := range []struct {
		name          string
		addr, size    uintptr
		wantLo, wantN uintptr
	}{
		{"below threshold", 0x40000000, 4*M - 1, 0, 0},
		{"aligned, 4 MiB", 0x40000000, 4 * M, 0x40000000, 4 * M},
		{"unaligned start and end", 0x40000000 + 4096, 8 * M, 0x40000000 + 2*M, 6 * M},
		{"no whole huge page inside", 0x40000000 + 4096, 4 * M, 0x40000000 + 2*M, 2 * M},
		{"wraps the address space", ^uintptr(0) - 3*M, 4 * M, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			lo, n := Span(c.addr, c.size)
			assert.Equal(t, c.wantLo, lo)
			assert.Equal(t, c.wantN, n)
			if n > 0 {
				assert.Zero(t, lo%Size)
				assert.GreaterOrEqual(t, lo, c.addr)
				assert.LessOrEqual(t, lo+n, c.addr+c.size)
			}
		})
	}
}

// TestAdvise maps memory and checks what the kernel recorded for it: the
// advice on the aligned interior of a large range, none on the pages
// around it that the range only partly covers, none on a small range.
func TestAdvise(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MADV_HUGEPAGE is Linux's")
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("kernel without transparent huge pages: ", err)
	}
	m, err := syscall.Mmap(-1, 0, 16<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	require.NoError(t, err)
	defer syscall.Munmap(m)
	base := uintptr(unsafe.Pointer(&m[0]))
	aligned := (base + Size - 1) &^ (Size - 1)
	if aligned+2*Size+Threshold > base+uintptr(len(m)) {
		t.Fatal("mapping too small to hold the test's ranges")
	}

	require.NoError(t, Advise(aligned+4096, Threshold-4096)) // below Threshold: nothing
	got, err := Advised(aligned + Size)
	require.NoError(t, err)
	assert.False(t, got, "a range below Threshold is not advised")

	start := aligned + Size - 4096 // one page before a huge page boundary
	require.NoError(t, Advise(start, Threshold+4096+4096))
	for _, c := range []struct {
		addr uintptr
		want bool
	}{
		{start, false},         // the partly covered huge page before
		{aligned + Size, true}, // the first whole huge page
		{aligned + Size + Threshold - 1, true},
		{aligned + Size + Threshold, false}, // the partly covered one after
	} {
		got, err := Advised(c.addr)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "0x%x (huge page boundary 0x%x)", c.addr, aligned+Size)
	}
}
