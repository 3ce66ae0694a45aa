package ffi

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

func TestOpenLibNamesEveryCandidate(t *testing.T) {
	_, err := OpenLib(RTLDNow|RTLDLocal, "libusmbridge-missing.so.1", "libalso-missing.so.7")
	var le *LibraryError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Equal(t, []string{"libusmbridge-missing.so.1", "libalso-missing.so.7"}, le.Tried)
	assert.ErrorIs(t, err, errkind.NotAvailable)
	assert.ErrorContains(t, err, "libalso-missing.so.7")

	l, err := OpenLib(RTLDNow|RTLDLocal, "libusmbridge-missing.so.1", "libc.so.6")
	require.NoError(t, err)
	assert.Equal(t, "libc.so.6", l.Name())
}

// Resolve reports every missing required symbol in one error, sets what it
// found, and records absent optional ones instead of failing.
func TestResolve(t *testing.T) {
	l, err := OpenLib(RTLDNow|RTLDLocal, "libc.so.6")
	require.NoError(t, err)
	var strlen, missing1, missing2, getpid, missing3 Fn
	err = l.Resolve(
		Required(&strlen, "strlen"),
		Required(&missing1, "usmbridge_no_such_symbol_1"),
		Optional(&getpid, "getpid"),
		Optional(&missing3, "usmbridge_no_such_symbol_3"),
		Required(&missing2, "usmbridge_no_such_symbol_2"),
	)
	var ms *MissingSymbolsError
	require.True(t, errors.As(err, &ms), "%v", err)
	assert.Equal(t, "libc.so.6", ms.Library)
	assert.Equal(t, []string{"usmbridge_no_such_symbol_1", "usmbridge_no_such_symbol_2"}, ms.Symbols)
	assert.ErrorIs(t, err, errkind.NotAvailable, "an unusable library is no library")
	assert.EqualError(t, err, "libc.so.6 lacks usmbridge_no_such_symbol_1, usmbridge_no_such_symbol_2")
	assert.True(t, strlen.Present())
	assert.True(t, getpid.Present())
	assert.False(t, missing1.Present())
	assert.False(t, missing3.Present())
	assert.Equal(t, []string{"usmbridge_no_such_symbol_3"}, l.Absent())

	s := []byte("usmbridge\x00")
	assert.EqualValues(t, 9, strlen.Call(uintptr(unsafe.Pointer(&s[0]))))

	require.NoError(t, l.Resolve(Required(&strlen, "strlen")), "a complete table resolves")
	_, err = l.Lookup("usmbridge_no_such_symbol_1")
	assert.Error(t, err)
}

func TestFnRegister(t *testing.T) {
	l, err := OpenLib(RTLDNow|RTLDLocal, "libc.so.6")
	require.NoError(t, err)
	abs, err := l.Lookup("abs")
	require.NoError(t, err)
	var cabs func(int32) int32
	abs.Register(&cabs)
	require.NotNil(t, cabs)
	assert.EqualValues(t, 7, cabs(-7))
	var none func(int32) int32
	Fn(0).Register(&none)
	assert.Nil(t, none, "an absent optional entry point stays nil")
}

// A variable resolves to its address; a missing one is as required as a
// missing function.
func TestRequiredVar(t *testing.T) {
	l, err := OpenLib(RTLDNow|RTLDLocal, "libc.so.6")
	require.NoError(t, err)
	var environ, missing uintptr
	var getenv Fn
	err = l.Resolve(RequiredVar(&environ, "environ"), Required(&getenv, "getenv"), RequiredVar(&missing, "usmbridge_no_such_var"))
	var ms *MissingSymbolsError
	require.True(t, errors.As(err, &ms), "%v", err)
	assert.Equal(t, []string{"usmbridge_no_such_var"}, ms.Symbols)
	p, err := l.Lookup("environ")
	require.NoError(t, err)
	assert.Equal(t, uintptr(p), environ)
	assert.True(t, getenv.Present())
	assert.Zero(t, missing)
}

// A call of a C function of three integer arguments (memcmp of two empty
// ranges): through purego's SyscallN without cgo, through the C
// trampoline with it (RATIONALE.md, "Native calls through cgo when cgo is
// on"); run it in both modes to compare.
func BenchmarkCall(b *testing.B) {
	l, err := OpenLib(RTLDNow|RTLDLocal, "libc.so.6")
	require.NoError(b, err)
	var memcmp Fn
	require.NoError(b, l.Resolve(Required(&memcmp, "memcmp")))
	var x [8]byte
	p := uintptr(unsafe.Pointer(&x[0]))
	b.ReportAllocs()
	for b.Loop() {
		memcmp.Call(p, p, 0)
	}
}

// Every argument reaches the callee in both modes: snprintf of the last
// of fifteen is how a C function sees it.
func TestCallPassesFifteenArguments(t *testing.T) {
	l, err := OpenLib(RTLDNow|RTLDLocal, "libc.so.6")
	require.NoError(t, err)
	var snprintf Fn
	require.NoError(t, l.Resolve(Required(&snprintf, "snprintf")))
	buf := make([]byte, 64)
	f := []byte("%lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu\x00")
	n := snprintf.Call(uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(unsafe.Pointer(&f[0])),
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
	assert.Equal(t, "1 2 3 4 5 6 7 8 9 10 11 12", string(buf[:n]))
}

// CallN passes its arguments as Call does, and with cgo allocates
// nothing (Call's variadic slice escapes: one allocation per call).
func TestCallN(t *testing.T) {
	l, err := OpenLib(RTLDNow|RTLDLocal, "libc.so.6")
	require.NoError(t, err)
	var snprintf, memcmp Fn
	require.NoError(t, l.Resolve(Required(&snprintf, "snprintf"), Required(&memcmp, "memcmp")))
	buf := make([]byte, 64)
	f := []byte("%lu %lu %lu %lu %lu %lu %lu\x00")
	n := snprintf.Call10(uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(unsafe.Pointer(&f[0])), 1, 2, 3, 4, 5, 6, 7)
	assert.Equal(t, "1 2 3 4 5 6 7", string(buf[:n]))
	x := []byte("ab")
	assert.Zero(t, memcmp.Call3(uintptr(unsafe.Pointer(&x[0])), uintptr(unsafe.Pointer(&x[0])), 2))
	if cgoEnabled {
		p := uintptr(unsafe.Pointer(&x[0]))
		assert.Zero(t, testing.AllocsPerRun(100, func() { memcmp.Call3(p, p, 2) }))
	}
}

// Status6Each calls row by row and stops at the first nonzero status,
// saying where (memcmp: 0 for equal bytes); with cgo it allocates
// nothing.
func TestStatus6Each(t *testing.T) {
	l, err := OpenLib(RTLDNow|RTLDLocal, "libc.so.6")
	require.NoError(t, err)
	var memcmp Fn
	require.NoError(t, l.Resolve(Required(&memcmp, "memcmp")))
	a, b := []byte("ab"), []byte("ac")
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	rows := [MaxStatusCalls][6]uintptr{{pa, pb, 1}, {pa, pa, 2}, {pa, pb, 2}, {pa, pb, 1}}
	at, s := memcmp.Status6Each(&rows, 4)
	assert.Equal(t, 2, at, "the first nonzero status is the third row's")
	assert.Less(t, s, int32(0), "memcmp(\"ab\", \"ac\", 2) is negative")
	at, s = memcmp.Status6Each(&rows, 2)
	assert.Equal(t, 2, at)
	assert.Zero(t, s)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	if cgoEnabled {
		assert.Zero(t, testing.AllocsPerRun(100, func() { memcmp.Status6Each(&rows, 2) }))
	}
	assert.Panics(t, func() { memcmp.Status6Each(&rows, MaxStatusCalls+1) })
}

// StatusSeq makes each row's own call in turn and stops at the first
// nonzero status, saying where: memcmp's 0 for equal bytes, then
// strncmp's nonzero for different ones, and the row after it is never
// called (abort). With cgo it allocates nothing. A row without a function
// panics, and names the row.
func TestStatusSeq(t *testing.T) {
	l, err := OpenLib(RTLDNow|RTLDLocal, "libc.so.6")
	require.NoError(t, err)
	var memcmp, strncmp, abort Fn
	require.NoError(t, l.Resolve(Required(&memcmp, "memcmp"), Required(&strncmp, "strncmp"), Required(&abort, "abort")))
	a, b := []byte("ab\x00"), []byte("ac\x00")
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	calls := []StatusCall{
		{Fn: memcmp, Args: [6]uintptr{pa, pb, 1}},
		{Fn: strncmp, Args: [6]uintptr{pa, pa, 3}},
		{Fn: strncmp, Args: [6]uintptr{pb, pa, 3}},
		{Fn: abort},
	}
	at, s := StatusSeq(calls)
	assert.Equal(t, 2, at, "the first nonzero status is the third call's")
	assert.Greater(t, s, int32(0), "strncmp(\"ac\", \"ab\") is positive")
	at, s = StatusSeq(calls[:2])
	assert.Equal(t, 2, at)
	assert.Zero(t, s)
	at, s = StatusSeq(nil)
	assert.Zero(t, at)
	assert.Zero(t, s)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	if cgoEnabled {
		assert.Zero(t, testing.AllocsPerRun(100, func() { StatusSeq(calls[:2]) }))
	}
	assert.PanicsWithValue(t, "ffi.StatusSeq: call 1 has no function", func() {
		StatusSeq([]StatusCall{{Fn: memcmp, Args: [6]uintptr{pa, pa, 1}}, {}})
	})
}

// Call0Then calls the second function only when the first returned
// nonzero, and gives both results.
func TestCall0Then(t *testing.T) {
	l, err := OpenLib(RTLDNow|RTLDLocal, "libc.so.6")
	require.NoError(t, err)
	var getpid, getppid, schedYield Fn
	require.NoError(t, l.Resolve(Required(&getpid, "getpid"), Required(&getppid, "getppid"), Required(&schedYield, "sched_yield")))
	f, g := getpid.Call0Then(getppid)
	assert.Equal(t, int32(os.Getpid()), f)
	assert.Equal(t, uintptr(os.Getppid()), g)
	f, g = schedYield.Call0Then(getpid) // sched_yield returns 0: getpid is not called
	assert.Zero(t, f)
	assert.Zero(t, g)
}

// Call1Use hands the handle f made to use (and then release), and calls
// neither when f made none: strdup's copy goes to putenv, which getenv
// then finds; getenv of a missing variable makes no handle, and abort is
// not called.
func TestCall1Use(t *testing.T) {
	l, err := OpenLib(RTLDNow|RTLDLocal, "libc.so.6")
	require.NoError(t, err)
	var strdup, putenv, strlen, getenv, abort Fn
	require.NoError(t, l.Resolve(Required(&strdup, "strdup"), Required(&putenv, "putenv"), Required(&strlen, "strlen"),
		Required(&getenv, "getenv"), Required(&abort, "abort")))
	set, name, missing := []byte("USMBRIDGE_CALL1USE_TEST=yes\x00"), []byte("USMBRIDGE_CALL1USE_TEST\x00"), []byte("USMBRIDGE_NO_SUCH_VARIABLE\x00")
	h := strdup.Call1Use(putenv, strlen, uintptr(unsafe.Pointer(&set[0]))) // putenv keeps the copy
	require.NotZero(t, h)
	assert.NotZero(t, getenv.Call1(uintptr(unsafe.Pointer(&name[0]))), "use ran with the handle")
	assert.Zero(t, getenv.Call1Use(abort, abort, uintptr(unsafe.Pointer(&missing[0]))))
}
