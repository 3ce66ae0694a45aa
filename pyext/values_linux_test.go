package pyext

import (
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/testutil"
)

// A *T outside Go's memory (here a page of its own; C memory is the same
// to Go) has no weak pointer: weak.Make ends the process for one ("fatal
// error: getWeakHandle on invalid pointer"), so the case runs in a child.
// Its closed record stays, and Go returning it after its object went is
// still refused.
func TestValuesForeignMemory(t *testing.T) {
	if !testutil.InChild("foreign") {
		testutil.RunChild(t, "foreign", time.Minute).Expect(t, 0, "--- PASS: TestValuesForeignMemory")
		return
	}
	mem, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer func() { _ = syscall.Munmap(mem) }()
	c := classFor[closing](t)
	v := (*closing)(unsafe.Pointer(&mem[0]))
	h, got := values.adopt(v, c)
	require.Equal(t, valueNew, got)
	require.NoError(t, dropValue(h))
	assert.Equal(t, 1, v.closes)
	_, got = values.adopt(v, c)
	assert.Equal(t, valueClosed, got)
	values.mu.Lock()
	delete(values.closed, valueKey{c, uintptr(unsafe.Pointer(v))})
	values.mu.Unlock()
}
