package pyapi

import (
	"runtime"

	"github.com/usmbridge/usmbridge/internal/cmem"
)

// Scalars: ints, floats and strs both ways, with the reads in memory of
// the layouts each minor version has (checked once, at Load).

func (a *API) LongFromInt64(v int64) uintptr {
	a.noPending("LongFromInt64")
	return a.longFromLongLong.Call1(uintptr(v))
}
func (a *API) LongFromUint64(v uint64) uintptr {
	a.noPending("LongFromUint64")
	return a.longFromULongLong.Call1(uintptr(v))
}

// Layout of int objects on 3.10 and 3.11 (PyLongObject): ob_size holds the
// number of 30-bit digits with the value's sign, the digits (uint32, least
// significant first) follow it. 3.12 replaced ob_size with lv_tag.
const (
	offLongDigits = 24
	longShift     = 30
)

// LongValue returns the value of an exact int (not a subclass, not bool)
// of at most two digits, |v| < 2**60, read from memory; ok is false for
// anything else, or when the layout was not verified (CheckRuntimeLayout),
// and the caller then uses LongAsInt64.
func (a *API) LongValue(o uintptr) (v int64, ok bool) {
	if !a.fastLongs || a.Type(o) != a.LongType {
		return 0, false
	}
	n := *(*int64)(cmem.Ptr(o + offObSize))
	switch n {
	case 0:
		return 0, true
	case 1, -1:
		v = int64(*(*uint32)(cmem.Ptr(o + offLongDigits)))
	case 2, -2:
		v = int64(*(*uint32)(cmem.Ptr(o + offLongDigits))) | int64(*(*uint32)(cmem.Ptr(o + offLongDigits + 4)))<<longShift
	default:
		return 0, false
	}
	if n < 0 {
		v = -v
	}
	return v, true
}

// CheckRuntimeLayout verifies the layouts that only objects can show, and
// enables the memory reads that passed: LongValue (checkLongLayout) and
// DictLen (ma_used follows the header, as ob_size does). Call it once, with
// the GIL, before the API is shared between goroutines.
func (a *API) CheckRuntimeLayout() {
	a.checkLongLayout()
	a.checkDictLayout()
	a.checkASCIILayout()
}

// Layout of str objects on 3.10 and 3.11 (PyASCIIObject): the state bit
// field after length and hash, then wstr; a compact ASCII str's
// characters, NUL-terminated, follow at offASCIIData (3.12 dropped wstr).
const (
	offStrLength    = 16
	offStrState     = 32
	offASCIIData    = 48
	strCompactASCII = 1<<5 | 1<<6 | 1<<7 // state.compact, .ascii, .ready
)

// ASCII returns the characters and length of an exact str that is compact
// ASCII, in place (valid while the str lives); ok is false for anything
// else, or when the layout was not verified, and the caller then uses
// UnicodeUTF8. For such a str, that is the pointer PyUnicode_AsUTF8
// returns.
func (a *API) ASCII(o uintptr) (data uintptr, n int, ok bool) {
	if !a.fastASCII || a.Type(o) != a.UnicodeType {
		return 0, 0, false
	}
	if *(*uint32)(cmem.Ptr(o + offStrState))&strCompactASCII != strCompactASCII {
		return 0, 0, false
	}
	return o + offASCIIData, int(*(*int64)(cmem.Ptr(o + offStrLength))), true
}

// checkASCIILayout enables ASCII on 3.10/3.11 if it agrees with
// PyUnicode_AsUTF8 on test strings, and declines a non-ASCII one.
func (a *API) checkASCIILayout() {
	a.fastASCII = false
	if !a.layout || a.minor < 10 || a.minor > 11 {
		return
	}
	a.fastASCII = true // tentatively, for ASCII below
	ok := true
	for _, c := range []struct {
		s     string
		ascii bool
	}{{"", true}, {"<f4", true}, {"opencl:cpu:0", true}, {"h\u00e9", false}, {"\u20ac", false}} {
		o := a.UnicodeFromString(c.s)
		if o == 0 {
			a.ErrClear()
			ok = false
			break
		}
		p, n, fast := a.ASCII(o)
		u := a.UnicodeUTF8(o)
		if u == 0 {
			a.ErrClear()
		}
		if fast != c.ascii || u == 0 || (fast && (p != u || n != len(c.s) || string(cmem.Bytes(p, uintptr(n))) != c.s)) {
			ok = false
		}
		a.decRef.Call1(o)
		if !ok {
			break
		}
	}
	a.fastASCII = ok
}

// FastASCII reports whether ASCII reads from memory.
func (a *API) FastASCII() bool { return a.fastASCII }

func (a *API) checkDictLayout() {
	a.fastDicts = false
	if !a.layout {
		return
	}
	d := a.DictNew()
	if d == 0 {
		a.ErrClear()
		return
	}
	defer a.decRef.Call1(d)
	ok := true
	for i, k := range []string{"a", "b", "c"} {
		if *(*int64)(cmem.Ptr(d + offObSize)) != int64(i) || a.Length(d) != i {
			ok = false
			break
		}
		if a.DictSetItemString(d, k, a.None) != 0 {
			a.ErrClear()
			ok = false
			break
		}
	}
	a.fastDicts = ok && *(*int64)(cmem.Ptr(d + offObSize)) == 3 && a.Length(d) == 3
}

// DictLen returns len(d) of a dict (the caller has checked the type).
func (a *API) DictLen(d uintptr) int {
	if a.fastDicts {
		return int(*(*int64)(cmem.Ptr(d + offObSize)))
	}
	return a.Length(d)
}

// checkLongLayout enables LongValue on 3.10/3.11 if, for test ints made
// with PyLong_FromLongLong, it reads what PyLong_AsLongLong returns (a
// build with 15-bit digits, for one, fails at 2**30).
func (a *API) checkLongLayout() {
	a.fastLongs = false
	if !a.layout || a.minor < 10 || a.minor > 11 {
		return
	}
	a.fastLongs = true // tentatively, for LongValue below
	ok := true
	for _, c := range []struct {
		v    int64
		fast bool // must be read from memory (at most two digits)
	}{
		{0, true}, {1, true}, {-1, true}, {1<<30 - 1, true}, {1 << 30, true}, {-(1 << 40), true},
		{1<<60 - 1, true}, {-(1<<60 - 1), true}, {1 << 60, false}, {-(1 << 62) - 5, false},
	} {
		o := a.LongFromInt64(c.v)
		if o == 0 {
			a.ErrClear()
			ok = false
			break
		}
		got, fast := a.LongValue(o)
		want := a.LongAsInt64(o)
		a.decRef.Call1(o)
		if fast != c.fast || (fast && got != want) || want != c.v {
			ok = false
			break
		}
	}
	a.fastLongs = ok
}

// FastLongs and FastDicts report whether LongValue and DictLen read from
// memory.
func (a *API) FastLongs() bool { return a.fastLongs }
func (a *API) FastDicts() bool { return a.fastDicts }

// UnicodeUTF8 is PyUnicode_AsUTF8: a pointer to the UTF-8 of a str, valid
// while the str lives, or 0 with an error set.
func (a *API) UnicodeUTF8(o uintptr) uintptr {
	a.noPending("UnicodeUTF8")
	return a.unicodeAsUTF8.Call1(o)
}

// LongAsInt64 returns -1 with an error set on failure.
func (a *API) LongAsInt64(o uintptr) int64 {
	a.noPending("LongAsInt64")
	return int64(a.longAsLongLong.Call1(o))
}
func (a *API) LongAsUint64(o uintptr) uint64 {
	a.noPending("LongAsUint64")
	return uint64(a.longAsULongLong.Call1(o))
}
func (a *API) NumberIndex(o uintptr) uintptr {
	a.noPending("NumberIndex")
	return a.numberIndex.Call1(o)
}

// IndexCheck reports whether o's type has __index__ (PyIndex_Check); it
// runs no Python code.
func (a *API) IndexCheck(o uintptr) bool {
	a.noPending("IndexCheck")
	return a.indexCheck.Call1(o) != 0
}

// LongAsInt64Overflow is PyLong_AsLongLongAndOverflow: the value of an int
// (or the result of __index__, which it calls on other objects), with
// overflow -1 or +1, and no exception set, when it is outside int64. An
// error (from __index__) is -1 with overflow 0 and the exception set. On
// an int or int subclass it runs no Python code.
func (a *API) LongAsInt64Overflow(o uintptr) (v int64, overflow int) {
	a.noPending("LongAsInt64Overflow")
	// The out-parameter lives in C memory: the call may run Python code
	// that enters Go again and moves this goroutine's stack.
	blk := cmem.Alloc(8)
	defer cmem.Free(blk, 8)
	*(*int32)(cmem.Ptr(blk)) = 0
	v = int64(a.longAsLongLongAndOverflow.Call2(o, blk))
	return v, int(*(*int32)(cmem.Ptr(blk)))
}
func (a *API) BoolFromLong(v bool) uintptr {
	a.noPending("BoolFromLong")
	if v {
		return a.boolFromLong.Call1(1)
	}
	return a.boolFromLong.Call1(0)
}
func (a *API) FloatFromDouble(v float64) uintptr {
	a.noPending("FloatFromDouble")
	return a.floatFromDouble(v)
}
func (a *API) FloatAsDouble(o uintptr) float64 {
	a.noPending("FloatAsDouble")
	return a.floatAsDouble(o)
}

func (a *API) UnicodeFromString(s string) uintptr {
	a.noPending("UnicodeFromString")
	b := cstr(s)
	r := a.unicodeFromStringAndSize.Call2(p(b), uintptr(len(s)))
	runtime.KeepAlive(b)
	return r
}

// UnicodeAsString copies the UTF-8 of a str (or str subclass), every
// character of it, NULs included; ok is false with an error set on failure
// (a lone surrogate). It runs no Python code.
func (a *API) UnicodeAsString(o uintptr) (string, bool) {
	c, n, ok := a.UnicodeUTF8AndSize(o)
	if !ok {
		return "", false
	}
	return string(cmem.Bytes(c, uintptr(n))), true
}

// UnicodeUTF8AndSize returns the UTF-8 of a str in place (valid while the
// str lives) and its length in bytes: from memory for a compact ASCII str
// (see ASCII), else PyUnicode_AsUTF8AndSize. ok is false with an error set
// on failure.
func (a *API) UnicodeUTF8AndSize(o uintptr) (data uintptr, n int, ok bool) {
	a.noPending("UnicodeUTF8AndSize")
	if c, n, ok := a.ASCII(o); ok {
		return c, n, true
	}
	blk := cmem.Alloc(8)
	defer cmem.Free(blk, 8)
	c := a.unicodeAsUTF8AndSize.Call2(o, blk)
	if c == 0 {
		return 0, 0, false
	}
	return c, int(*(*int64)(cmem.Ptr(blk))), true
}
