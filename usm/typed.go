package usm

import (
	"iter"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"unsafe"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Element is the set of Go types typed access maps to element types: bool ↔
// dtype.Bool, intN ↔ dtype.IntN, uintN ↔ dtype.UintN, float32, float64,
// complex64 and complex128 ↔ the dtype of the same name. Named types with
// these underlying types are accepted. A bool byte other than 0 reads as
// true. int, uint and uintptr are not: their width is not part of their
// name. float16, bfloat16, complex32 and the float8 types have no Go type;
// such arrays are reached as bytes through Array.Bytes, and typed access
// refuses them (ErrType, naming the array's dtype).
type Element interface {
	~bool | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~float32 | ~float64 | ~complex64 | ~complex128
}

// accessError reports why typed access to an array was refused: a Go type
// that does not match the element type (ErrType), a byte-swapped one, memory
// the host cannot read, a layout View cannot express or a read-only array
// asked to be written (ErrBuffer), or an index or slice length that does
// not fit the array (ErrValue). It is unexported: a caller tells the
// refusals apart by kind (errors.Is), and Op and Reason are only the
// message.
type accessError struct {
	Op     string // "usm.View", "usm.At", ...
	Reason string
	kind   *errkind.Kind
}

func (e *accessError) Error() string        { return e.Op + ": " + e.Reason }
func (e *accessError) Is(target error) bool { return target == error(e.kind) }

func accessErr(k *errkind.Kind, op, reason string) error {
	return &accessError{Op: op, Reason: reason, kind: k}
}

// typeFor is the element type of T: a switch on its kind, not a map
// lookup, since every typed access asks (a map lookup cost as much as the
// rest of a small View's checks).
func typeFor[T Element]() dtype.Type {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Bool:
		return dtype.Bool
	case reflect.Int8:
		return dtype.Int8
	case reflect.Int16:
		return dtype.Int16
	case reflect.Int32:
		return dtype.Int32
	case reflect.Int64:
		return dtype.Int64
	case reflect.Uint8:
		return dtype.Uint8
	case reflect.Uint16:
		return dtype.Uint16
	case reflect.Uint32:
		return dtype.Uint32
	case reflect.Uint64:
		return dtype.Uint64
	case reflect.Float32:
		return dtype.Float32
	case reflect.Float64:
		return dtype.Float64
	case reflect.Complex64:
		return dtype.Complex64
	case reflect.Complex128:
		return dtype.Complex128
	}
	return dtype.Type{} // unreachable: Element admits no other kind
}

// checkType refuses a T that is not the array's element type and a
// byte-swapped element type (Go values are in host order), then validates
// the layout so later offset arithmetic cannot overflow, and, where the
// backend knows the allocation's extent, that the layout stays inside it
// (an Array's fields are the caller's to change after NewArray).
func checkType[T Element](op string, a *Array) error {
	want := typeFor[T]()
	got := a.DType
	if got.Native() != want {
		return accessErr(errkind.Type, op, "Go type "+reflect.TypeFor[T]().String()+" is "+want.String()+", the array's dtype is "+got.String())
	}
	if !got.IsNative() {
		return accessErr(errkind.Buffer, op, "the array's dtype is "+got.String()+"; Go values are in the host's byte order")
	}
	return a.CheckExtent()
}

func checkHost(op string, a *Array) error {
	if !a.Memory.Kind.HostAccessible() {
		return accessErr(errkind.Buffer, op, a.Memory.Kind.String()+" memory is not host-accessible; copy it with usm.CopyToSlice")
	}
	return nil
}

// View waits on the array's queue and returns its elements as a []T that
// aliases the array's memory: no copy. The array must be host-accessible,
// writable, C-contiguous (after NumPy's relaxed rules) and of element type
// T in host byte order, and its first element must be aligned for T; a
// bool array must hold only bytes 0 and 1 when viewed. Anything else is an
// error naming what was wrong: ErrType for a T that is not the element type,
// ErrBuffer for memory or a layout View cannot serve, ErrValue for a bool
// byte that is neither 0 nor 1, ErrClosed for memory that has been freed.
// For read-only or strided arrays use Values, At or CopyToSlice.
//
// The slice holds no reference to the memory: it is valid until the
// array's Owner lets the memory go (Allocation.Free, when no export holds
// it). A Free on another goroutine while the slice is in use frees the
// memory under it, which no check can see; a program that shares the
// memory across goroutines holds a reference for as long as the slice is
// used (Hold, then Release), or uses an NDArray, whose slices are valid
// until its Close.
func View[T Element](a *Array) ([]T, error) {
	const op = "usm.View"
	o, err := a.hold(op)
	if err != nil {
		return nil, err
	}
	// Released by hand, not deferred: a defer that is not open-coded
	// costs as much as the rest of a small View (callgrind).
	xs, err := view[T](op, a)
	release(o)
	return xs, err
}

// view is View of an array whose memory is held.
func view[T Element](op string, a *Array) ([]T, error) {
	if err := checkType[T](op, a); err != nil {
		return nil, err
	}
	if err := checkHost(op, a); err != nil {
		return nil, err
	}
	if a.ReadOnly {
		return nil, accessErr(errkind.Buffer, op, "the array is read-only; read it with usm.Values, usm.At or usm.CopyToSlice")
	}
	if !isCContiguous(a.Shape, a.Strides) {
		return nil, accessErr(errkind.Buffer, op, "strides "+ints(a.Strides)+" of shape "+ints(a.Shape)+" are not C-contiguous; use usm.Values, usm.At or usm.CopyToSlice")
	}
	p := a.ElementPointer()
	if al := unsafe.Alignof(*new(T)); p%al != 0 {
		return nil, accessErr(errkind.Buffer, op, "element 0 at "+hex(p)+" is not aligned to "+strconv.Itoa(int(al))+" bytes")
	}
	if err := a.Wait(); err != nil {
		return nil, err
	}
	n, _ := elementCount(a.Shape) // checked by checkType
	if n == 0 {
		return []T{}, nil
	}
	if a.DType == dtype.Bool {
		// An aliased byte other than 0 or 1 would be an invalid Go bool.
		for i, x := range cmem.Bytes(p, uintptr(n)) {
			if x > 1 {
				return nil, accessErr(errkind.Value, op, "element "+strconv.Itoa(i)+" holds byte "+strconv.Itoa(int(x))+", not a Go bool (0 or 1); read the array with usm.CopyToSlice")
			}
		}
	}
	return unsafe.Slice((*T)(cmem.Ptr(p)), n), nil
}

// At waits on the array's queue and returns the element at index (one
// entry per dimension, none for a 0-d array), for host-accessible arrays of
// any layout and element type T. Each call waits; to read many elements
// use Values or CopyToSlice.
func At[T Element](a *Array, index ...int64) (T, error) {
	const op = "usm.At"
	o, err := a.hold(op)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := at[T](op, a, index)
	release(o)
	return v, err
}

// at is At of an array whose memory is held.
func at[T Element](op string, a *Array, index []int64) (T, error) {
	var v T
	if err := checkType[T](op, a); err != nil {
		return v, err
	}
	if err := checkHost(op, a); err != nil {
		return v, err
	}
	el, err := elementAt(op, a, index)
	if err != nil {
		return v, err
	}
	if err := a.Wait(); err != nil {
		return v, err
	}
	load(&v, a.Data, el*int64(a.DType.Size()))
	return v, nil
}

// elementAt is the element offset (from Data) of the element at index, of
// an array whose layout checkType validated.
func elementAt(op string, a *Array, index []int64) (int64, error) {
	if len(index) != len(a.Shape) {
		return 0, accessErr(errkind.Value, op, strconv.Itoa(len(index))+" indices for an array of "+strconv.Itoa(len(a.Shape))+" dimensions")
	}
	el := a.Offset
	for i, x := range index {
		if x < 0 || x >= a.Shape[i] {
			return 0, accessErr(errkind.Value, op, "index "+strconv.FormatInt(x, 10)+" is out of bounds for dimension "+strconv.Itoa(i)+" of extent "+strconv.FormatInt(a.Shape[i], 10))
		}
		s := int64(1)
		if a.Strides != nil {
			s = a.Strides[i]
		} else {
			for _, e := range a.Shape[i+1:] {
				s *= max(e, 1)
			}
		}
		el += x * s // within the validated window: no overflow
	}
	return el, nil
}

// Values waits on the array's queue and returns an iterator over the
// elements of a host-accessible array of element type T in C (row-major)
// order, for any layout: strided, negative strides, 0-d (one element) or
// empty. The iterator reads the memory when it runs, holding the array's
// Owner while it does, so the array must stay unchanged by devices until
// it is done; an iterator run once the memory has been freed yields no
// element (Values itself then returns ErrClosed).
func Values[T Element](a *Array) (iter.Seq[T], error) {
	const op = "usm.Values"
	o, err := a.hold(op)
	if err != nil {
		return nil, err
	}
	seq, err := values[T](op, a)
	release(o)
	return seq, err
}

// values is Values of an array whose memory is held.
func values[T Element](op string, a *Array) (iter.Seq[T], error) {
	if err := checkType[T](op, a); err != nil {
		return nil, err
	}
	if err := checkHost(op, a); err != nil {
		return nil, err
	}
	if err := a.Wait(); err != nil {
		return nil, err
	}
	// The iterator keeps its own layout: changing a's fields later does
	// not redirect it.
	shape, strides := slices.Clone(a.Shape), slices.Clone(a.EffectiveStrides())
	isz, data, offset, owner := int64(a.DType.Size()), a.Data, a.Offset, a.Owner
	return func(yield func(T) bool) {
		if owner != nil {
			if !owner.Retain() {
				return
			}
			defer owner.Release()
		}
		forEachElement(shape, strides, offset, func(el int64) bool {
			var v T
			load(&v, data, el*isz)
			return yield(v)
		})
	}, nil
}

// CopyToSlice waits on the array's queue and copies its elements, in C
// order, into dst, which must have exactly as many elements as the array.
// Host-accessible memory is read directly; other memory through the owning
// backend's Copy method: one copy for a contiguous array, and for a strided
// one either one copy of the bytes it spans (when they are at most a few times
// its elements) or one copy per contiguous run of elements.
func CopyToSlice[T Element](dst []T, a *Array) error {
	return copySlice("usm.CopyToSlice", a, dst, false)
}

// CopyFromSlice copies src, in C order, into the array's elements, after
// waiting on the array's queue so no queued work still uses them. src must
// have exactly as many elements as the array, and the array must not be
// read-only. Bytes between strided elements are never written: device
// memory is written through the owning backend's Copy method one
// contiguous run at a time.
func CopyFromSlice[T Element](a *Array, src []T) error {
	return copySlice("usm.CopyFromSlice", a, src, true)
}

// stagingSlack is how many times larger than its elements a strided
// array's window may be for CopyToSlice to fetch the whole window from
// device memory in one copy.
const stagingSlack = 4

func copySlice[T Element](op string, a *Array, s []T, toArray bool) error {
	o, err := a.hold(op)
	if err != nil {
		return err
	}
	err = copyHeld(op, a, s, toArray)
	release(o)
	return err
}

// copyHeld is copySlice of an array whose memory is held.
func copyHeld[T Element](op string, a *Array, s []T, toArray bool) error {
	if err := checkType[T](op, a); err != nil {
		return err
	}
	if toArray && a.ReadOnly {
		return accessErr(errkind.Buffer, op, "the array is read-only")
	}
	n, _ := elementCount(a.Shape)
	if int64(len(s)) != n {
		return accessErr(errkind.Value, op, "the slice has "+strconv.Itoa(len(s))+" elements, the array "+strconv.FormatInt(n, 10))
	}
	var cp copier
	if !a.Memory.Kind.HostAccessible() {
		var ok bool
		if cp, ok = a.Backend.(copier); !ok {
			return accessErr(errkind.NotSupported, op, a.Memory.Kind.String()+" memory is not host-accessible and its backend cannot copy")
		}
	}
	if err := a.Wait(); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	isz := int64(a.DType.Size())
	var done int64 // elements of s already copied
	var err error
	// The Go side is addressed as bytes; pinned so that a native copier
	// may write into it.
	goBytes := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), n*isz)
	var pin runtime.Pinner
	if cp != nil {
		pin.Pin(&s[0])
		defer pin.Unpin()
	}
	// Reading a strided array from device memory in one copy of its
	// window, then gathering on the host, beats a copy per short run when
	// the window is not much larger than the elements. Writes never do
	// this: the bytes between elements are not the array's to write.
	var stage []byte
	var w Window
	if cp != nil && !toArray && !isCContiguous(a.Shape, a.Strides) {
		w, _ = a.Window() // checked by checkType
		if w.Len()/stagingSlack <= n*isz {
			stage = make([]byte, w.Len())
			pin.Pin(&stage[0])
			lo, _ := addOffset(a.Data, w.Lo)
			if err := cp.Copy(uintptr(unsafe.Pointer(&stage[0])), lo, uintptr(len(stage))); err != nil {
				return err
			}
		}
	}
	forEachRun(a.Shape, a.EffectiveStrides(), a.Offset, func(el, elems int64) bool {
		arr, _ := addOffset(a.Data, el*isz)
		g := goBytes[done*isz : (done+elems)*isz]
		done += elems
		switch {
		case stage != nil:
			copy(g, stage[el*isz-w.Lo:])
		case cp == nil && toArray:
			copy(cmem.Bytes(arr, uintptr(len(g))), g)
		case cp == nil:
			copy(g, cmem.Bytes(arr, uintptr(len(g))))
		case toArray:
			err = cp.Copy(arr, uintptr(unsafe.Pointer(&g[0])), uintptr(len(g)))
		default:
			err = cp.Copy(uintptr(unsafe.Pointer(&g[0])), arr, uintptr(len(g)))
		}
		return err == nil
	})
	if err == nil && !toArray && a.DType == dtype.Bool {
		normalizeBools(goBytes)
	}
	return err
}

// normalizeBools makes every byte a valid Go bool: a producer's bool array
// may hold any nonzero byte for true, and a Go bool must be 0 or 1.
func normalizeBools(b []byte) {
	for i, x := range b {
		if x > 1 {
			b[i] = 1
		}
	}
}

// load reads one element at byte offset off from data (off may be
// negative), bytewise so that misaligned elements are read correctly.
func load[T Element](v *T, data uintptr, off int64) {
	p, _ := addOffset(data, off)
	b := unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
	copy(b, cmem.Bytes(p, unsafe.Sizeof(*v)))
	if reflect.TypeFor[T]().Kind() == reflect.Bool {
		normalizeBools(b)
	}
}

// forEachElement calls fn with the element offset (from Data, in elements)
// of every element in C order until fn returns false. The layout must have
// been validated (Window succeeded), so no sum overflows.
func forEachElement(shape, strides []int64, offset int64, fn func(el int64) bool) {
	forEachRunOf(shape, strides, offset, len(shape), func(el, _ int64) bool { return fn(el) })
}

// forEachRun calls fn with the element offset and length of every
// contiguous run of elements in C order: the trailing dimensions that are
// C-contiguous among themselves form one run.
func forEachRun(shape, strides []int64, offset int64, fn func(el, elems int64) bool) {
	k := len(shape)
	want := int64(1)
	for k > 0 && (shape[k-1] == 1 || strides[k-1] == want) {
		want *= shape[k-1]
		k--
	}
	forEachRunOf(shape, strides, offset, k, fn)
}

// forEachRunOf iterates the first k dimensions in C order; each position
// is a run of the product of the remaining extents.
func forEachRunOf(shape, strides []int64, offset int64, k int, fn func(el, elems int64) bool) {
	elems := int64(1)
	for _, s := range shape {
		if s == 0 {
			return
		}
	}
	for _, s := range shape[k:] {
		elems *= s
	}
	idx := make([]int64, k)
	el := offset
	for {
		if !fn(el, elems) {
			return
		}
		// Odometer: advance the last of the first k dimensions.
		d := k - 1
		for ; d >= 0; d-- {
			idx[d]++
			el += strides[d]
			if idx[d] < shape[d] {
				break
			}
			el -= strides[d] * shape[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

func ints(xs []int64) string {
	if xs == nil {
		return "None"
	}
	s := "("
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += strconv.FormatInt(x, 10)
	}
	return s + ")"
}
