package usm

import (
	"math"
	"strconv"

	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Overflow-checked int64 arithmetic. Layout math runs on untrusted shapes
// and strides, so every product and sum is checked.

func mulCheck(a, b int64) (int64, bool) {
	// Factors inside ±2^31 cannot overflow: most shapes and strides, which
	// then skip the division below (it costs more than all the rest of a
	// small array's layout math).
	if uint64(a)+1<<31 < 1<<32 && uint64(b)+1<<31 < 1<<32 {
		return a * b, true
	}
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return c, true
}

func addCheck(a, b int64) (int64, bool) {
	c := a + b
	if (c > a) != (b > 0) {
		return 0, false
	}
	return c, true
}

func overflow(what string) error {
	return errkind.New(errkind.Overflow, "usm layout", what+" overflows int64")
}

// elementCount returns the number of elements of an array of the given
// shape: 1 for a 0-d array, 0 if any extent is 0. Negative extents and
// products beyond int64 (counting zero extents as 1) are errors.
func elementCount(shape []int64) (int64, error) {
	n := int64(1)
	zero := false
	for i, s := range shape {
		if s < 0 {
			return 0, errkind.New(errkind.Value, "usm layout", "shape["+strconv.Itoa(i)+"] = "+strconv.FormatInt(s, 10)+" is negative")
		}
		if s == 0 {
			// Still multiply by 1: strides of an empty array are computed
			// from the other extents, so their product must fit too.
			zero, s = true, 1
		}
		var ok bool
		if n, ok = mulCheck(n, s); !ok {
			return 0, overflow("element count")
		}
	}
	if zero {
		return 0, nil
	}
	return n, nil
}

// cStrides returns the C-contiguous (row-major) element strides of shape.
// Extents of 0 count as 1, so the result is defined for empty arrays. It
// assumes elementCount(shape) succeeded.
func cStrides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= max(shape[i], 1)
	}
	return st
}

// fStrides returns the Fortran-contiguous (column-major) element strides.
func fStrides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	acc := int64(1)
	for i := range shape {
		st[i] = acc
		acc *= max(shape[i], 1)
	}
	return st
}

// isCContiguous reports whether elements addressed by strides (nil means C
// order) are laid out in row-major order without gaps. Dimensions of extent
// 1 may have any stride, and empty arrays are contiguous, as in NumPy.
func isCContiguous(shape, strides []int64) bool {
	if strides == nil {
		return true
	}
	return contiguous(shape, strides, len(shape)-1, -1)
}

// isFContiguous reports whether the elements are laid out in column-major
// order without gaps (same relaxed rules as isCContiguous).
func isFContiguous(shape, strides []int64) bool {
	if strides == nil {
		// C order: F-contiguous only if at most one extent exceeds 1.
		big := 0
		for _, s := range shape {
			if s == 0 {
				return true
			}
			if s > 1 {
				big++
			}
		}
		return big <= 1
	}
	return contiguous(shape, strides, 0, 1)
}

func contiguous(shape, strides []int64, start, step int) bool {
	if len(strides) != len(shape) {
		return false
	}
	for _, s := range shape {
		if s == 0 {
			return true
		}
	}
	want := int64(1)
	for i := start; i >= 0 && i < len(shape); i += step {
		if shape[i] == 1 {
			continue
		}
		if strides[i] != want {
			return false
		}
		want *= shape[i]
	}
	return true
}

// Window is a byte range relative to an array's data pointer: Lo is the
// lowest byte touched and Hi one past the highest. An empty array touches
// no byte and has Lo == Hi.
type Window struct{ Lo, Hi int64 }

// Len returns Hi-Lo.
func (w Window) Len() int64 { return w.Hi - w.Lo }

// Empty reports whether no byte is touched.
func (w Window) Empty() bool { return w.Lo == w.Hi }

func (w Window) String() string {
	return "[" + strconv.FormatInt(w.Lo, 10) + ", " + strconv.FormatInt(w.Hi, 10) + ")"
}

// byteWindow returns the bytes an array touches, relative to its data
// pointer: the element with all-zero indices is at offset·itemsize, negative
// strides reach below it. strides nil means C-contiguous; a 0-d array
// touches one item at the offset; a size-0 array touches nothing (an empty
// window at the offset). All arithmetic is overflow-checked, and Len of the
// result fits in int64.
func byteWindow(shape, strides []int64, offset int64, itemsize int) (Window, error) {
	if strides != nil && len(strides) != len(shape) {
		return Window{}, errkind.New(errkind.Value, "usm layout", "strides has "+strconv.Itoa(len(strides))+" entries for "+strconv.Itoa(len(shape))+" dimensions")
	}
	if itemsize <= 0 {
		return Window{}, errkind.New(errkind.Value, "usm layout", "itemsize "+strconv.Itoa(itemsize)+" is not positive")
	}
	n, err := elementCount(shape)
	if err != nil {
		return Window{}, err
	}
	isz := int64(itemsize)
	// The array's size in bytes, count·itemsize, must fit too: a stride of
	// 0 lets a window of one element hold more elements than an int64 of
	// bytes counts (nbytes, a buffer's len, dpctl's nbytes).
	if _, ok := mulCheck(n, isz); !ok {
		return Window{}, overflow("size in bytes")
	}
	base, ok := mulCheck(offset, isz)
	if !ok {
		return Window{}, overflow("offset·itemsize")
	}
	if n == 0 {
		return Window{Lo: base, Hi: base}, nil
	}
	// Element displacements, in elements, relative to element 0.
	var lo, hi int64
	if strides == nil {
		hi = n - 1
	} else {
		for i, s := range shape {
			d, ok := mulCheck(strides[i], s-1)
			if !ok {
				return Window{}, overflow("stride·(extent-1)")
			}
			if d < 0 {
				lo, ok = addCheck(lo, d)
			} else {
				hi, ok = addCheck(hi, d)
			}
			if !ok {
				return Window{}, overflow("displacement")
			}
		}
	}
	loB, ok1 := mulCheck(lo, isz)
	hiB, ok2 := mulCheck(hi, isz)
	if !ok1 || !ok2 {
		return Window{}, overflow("displacement·itemsize")
	}
	loB, ok1 = addCheck(loB, base)
	hiB, ok2 = addCheck(hiB, base)
	if !ok1 || !ok2 {
		return Window{}, overflow("window")
	}
	hiB, ok = addCheck(hiB, isz)
	if !ok {
		return Window{}, overflow("window")
	}
	// The length must fit too (dpctl's nbytes is a Py_ssize_t).
	if hiB-loB < 0 {
		return Window{}, overflow("window length")
	}
	return Window{Lo: loB, Hi: hiB}, nil
}
