package hugepage

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// madvHugepage is MADV_HUGEPAGE from <linux/mman.h>.
const madvHugepage = 14

func advise(lo, n uintptr) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, lo, n, madvHugepage); errno != 0 {
		return errno
	}
	return nil
}

// Advised reports whether the mapping that holds addr carries the
// MADV_HUGEPAGE advice ("hg" in its VmFlags in /proc/self/smaps): what
// the kernel recorded, whether or not it has huge pages free to follow
// it. For tests.
func Advised(addr uintptr) (bool, error) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return false, err
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(f[0], "-"); ok && !strings.HasSuffix(f[0], ":") {
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= l && uint64(addr) < h
			continue
		}
		if in && f[0] == "VmFlags:" {
			return slices.Contains(f[1:], "hg"), nil
		}
	}
	return false, errors.New("hugepage: no mapping holds 0x" + strconv.FormatUint(uint64(addr), 16))
}
