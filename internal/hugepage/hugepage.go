package hugepage

// Threshold is the smallest allocation Advise advises: 4 MiB, NumPy's
// threshold for madvise(MADV_HUGEPAGE).
const Threshold = 4 << 20

// Size is the huge page size the advice is aligned to (x86-64 and arm64
// with 4 KiB base pages: a PMD, 2 MiB).
const Size = 2 << 20

// Span returns the part of [addr, addr+size) that Advise advises: the
// 2 MiB-aligned pages wholly inside it, or n == 0 when there are none or
// size is below Threshold.
func Span(addr, size uintptr) (lo, n uintptr) {
	if size < Threshold || addr+size < addr {
		return 0, 0
	}
	lo = (addr + Size - 1) &^ (Size - 1)
	hi := (addr + size) &^ (Size - 1)
	if hi <= lo {
		return 0, 0
	}
	return lo, hi - lo
}

// Advise asks for huge pages for the memory at [addr, addr+size), which
// the caller allocated and owns, if size is at least Threshold (see
// Span). Its error is the kernel's (EINVAL without THP support); callers
// that only want faster memory ignore it, since the allocation is valid
// either way.
func Advise(addr, size uintptr) error {
	lo, n := Span(addr, size)
	if n == 0 {
		return nil
	}
	return advise(lo, n)
}
