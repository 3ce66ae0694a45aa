package usm

import (
	"slices"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/errkind"
)

// NDArray is an n-dimensional array of T that owns its memory, as dpctl's
// usm_ndarray and gonum's mat.Dense do: one value holds the allocation,
// the queue its work runs on and its layout, and one Close gives it all
// back. Empty allocates one on a Device; Adopt takes over an Array
// another library produced (a dpnp array from pybridge, a DLPack tensor).
//
// Slice, Reshape and Transpose are views: NDArrays over the same memory
// with another layout, which need no Close of their own and are closed
// with the array they came from. Elements, At, Set, CopyTo and CopyFrom
// read and write it from Go (device memory through its backend's
// copies), Arg passes it to a kernel, and Array describes it to the
// lower-level API (dlpack.Export, pybridge's ArrayObject).
//
// Close is idempotent: the first waits for the work queued on the
// array's queue, then gives the memory back (a DLPack export still
// holding it keeps it until its consumer lets go). A closed array, and
// every view of it, refuses every use with an error matching ErrClosed;
// bad input (an index out of range, a slice of the wrong length, a
// layout a view cannot have) is an error, never a panic.
//
// Methods are safe for concurrent use, and each holds the memory for its
// call: a Close on another goroutine returns the memory only when the
// call is done. What outlives a call and aliases the memory (the slices
// of Elements and Raw, a kernel's run) is valid until Close: a program
// closes an array after the goroutines that use its slices are done, and
// after the kernels that use it on other queues than its own completed.
type NDArray[T Element] struct {
	arr    Array    // layout and binding; arr.Owner is st's owner
	st     *storage // shared with the views
	root   bool     // Close gives the memory back (Empty, Adopt); else a view
	closed atomic.Bool
}

// storage is what an array and its views share: one reference to the
// memory, the queue the memory's work runs on and the work on it nobody
// has waited for. It is where an array's pending work lives: every
// access waits for the pending events (WrittenBy's) and on the queue
// (where kernels launched through the array's Queue run), and close
// waits for both before the memory goes.
type storage struct {
	release func() error // drops the reference the array holds: Allocation.Free, or the adopted Owner's Release
	queue   Queue
	pending *Pending // the array's and every view's Array.Pending
	closed  atomic.Bool
}

// close waits for the memory's work and drops the array's reference, once.
func (s *storage) close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	err := s.pending.Wait()
	if s.queue != nil {
		if werr := s.queue.Wait(); err == nil {
			err = werr
		}
	}
	if s.release != nil {
		if e := s.release(); err == nil {
			err = e
		}
	}
	return err
}

// Empty allocates an array of T of the given shape (C order) on device d,
// in memory of the given kind, bound to d's default queue. Its elements
// are what the backend's memory holds (the cpu backend's are zero):
// write them (CopyFrom, Elements, a kernel) before reading. A negative
// extent is an ErrValue error, a size that does not fit an ErrOverflow
// one, a kind the device does not allocate (Device.USM) its backend's
// error. Close gives the memory back.
func Empty[T Element](d Device, kind Kind, shape ...int64) (*NDArray[T], error) {
	const op = "usm.Empty"
	if d.backend == nil {
		return nil, errkind.New(errkind.Value, op, "the zero Device names no device (Registry.Device gives one)")
	}
	t := typeFor[T]()
	n, err := elementCount(shape)
	if err != nil {
		return nil, err
	}
	size, ok := mulCheck(n, int64(t.Size()))
	if !ok || uint64(size) > uint64(^uintptr(0)) {
		return nil, overflow("size in bytes")
	}
	al, ok := d.backend.(Allocator)
	if !ok {
		return nil, errkind.New(errkind.NotSupported, op, "device "+d.String()+" allocates nothing")
	}
	alloc, err := al.Alloc(d.local, kind, uintptr(max(size, int64(t.Size()))))
	if err != nil {
		return nil, err
	}
	// Bound to d itself, whichever device the backend files host memory
	// under: host USM belongs to every device of its context.
	in := Interface{Shape: slices.Clone(shape), DType: t, Data: alloc.Pointer(), Syclobj: d.Selector, Version: Version1}
	arr, err := d.reg.Bind(in)
	if err != nil {
		_ = alloc.Free()
		return nil, err
	}
	arr.Owner = alloc
	arr.Pending = new(Pending)
	return &NDArray[T]{arr: *arr, st: &storage{release: alloc.Free, queue: arr.Queue, pending: arr.Pending}, root: true}, nil
}

// Adopt makes an NDArray of a, taking over the reference to a.Owner that
// the caller holds (what pybridge's AsArray and dlpack.Import hand out):
// Close releases it, and the caller no longer does. a is copied, and
// stays the caller's. An element type other than T (or not in host byte
// order) is an ErrType or ErrBuffer error, memory already freed an
// ErrClosed one; on error the reference stays the caller's.
func Adopt[T Element](a *Array) (*NDArray[T], error) {
	const op = "usm.Adopt"
	if a == nil {
		return nil, errkind.New(errkind.Value, op, "nil array")
	}
	o, err := a.hold(op)
	if err != nil {
		return nil, err
	}
	release(o)
	if err := checkType[T](op, a); err != nil {
		return nil, err
	}
	x := &NDArray[T]{arr: *a, root: true}
	x.arr.Shape, x.arr.Strides = slices.Clone(a.Shape), slices.Clone(a.Strides)
	if x.arr.Pending == nil { // an adopted array's pending work stays its own
		x.arr.Pending = new(Pending)
	}
	x.st = &storage{queue: a.Queue, pending: x.arr.Pending}
	if owner := a.Owner; owner != nil {
		x.st.release = func() error { owner.Release(); return nil }
	}
	return x, nil
}

// open refuses a nil, zero or closed array.
func (x *NDArray[T]) open(op string) error {
	if x == nil || x.st == nil {
		return errkind.New(errkind.Value, op, "no array (a nil or zero NDArray; Empty and Adopt make them)")
	}
	if x.closed.Load() || x.st.closed.Load() {
		return &closedError{Op: op, Reason: "the array is closed"}
	}
	return nil
}

// use refuses a closed array, and holds the memory for one call.
func (x *NDArray[T]) use(op string) (Owner, error) {
	if err := x.open(op); err != nil {
		return nil, err
	}
	return x.arr.hold(op)
}

// Close gives the memory back: it waits for the work queued on the
// array's queue, then releases the allocation (or the adopted reference).
// The views of the array are closed with it. Close of a view closes that
// view only. A second Close does nothing and returns nil; the first
// returns the error of the wait or of the backend's free.
func (x *NDArray[T]) Close() error {
	if x == nil || x.st == nil || !x.closed.CompareAndSwap(false, true) {
		return nil
	}
	if !x.root {
		return nil
	}
	return x.st.close()
}

// Shape returns the array's extents (a copy); empty for a 0-d array, nil
// for a nil array. The layout answers after Close too: it is not memory.
func (x *NDArray[T]) Shape() []int64 {
	if x == nil {
		return nil
	}
	return slices.Clone(x.arr.Shape)
}

// Strides returns the array's strides in elements (a copy): element
// (i, j, …) is at element offset i·strides[0] + j·strides[1] + … from
// element 0.
func (x *NDArray[T]) Strides() []int64 {
	if x == nil {
		return nil
	}
	return slices.Clone(x.arr.EffectiveStrides())
}

// Queue returns the queue the array's memory is bound to: launch its
// kernels there, and every access, and Close, waits for them.
func (x *NDArray[T]) Queue() Queue {
	if x == nil {
		return nil
	}
	return x.arr.Queue
}

// WrittenBy records ev, the event of a kernel launched on the array's
// queue that writes it, as pending work of the array and of its views
// (Pending): each access, Close, and the Arrays that Array gives (to
// dlpack.Export, pybridge's ArrayObject) wait for it before they read.
// The caller still closes ev. Work submitted to an in-order queue after
// the kernel already follows it; an out-of-order queue (dpnp's) orders
// by events only, and a program that hands the array on without waiting
// says so here.
func (x *NDArray[T]) WrittenBy(ev Event) error {
	if err := x.open("usm.NDArray.WrittenBy"); err != nil {
		return err
	}
	return x.st.pending.Add(ev)
}

// Array returns a new Array describing the memory, for the lower-level
// API (dlpack.Export, pybridge's ArrayObject, SUAI, ToDLPack). It holds
// no reference of its own: its Owner is the memory's, which an export
// retains, and once the memory is gone every use of it is refused
// (ErrClosed).
func (x *NDArray[T]) Array() (*Array, error) {
	o, err := x.use("usm.NDArray.Array")
	if err != nil {
		return nil, err
	}
	release(o)
	a := x.arr
	a.Shape, a.Strides = slices.Clone(x.arr.Shape), slices.Clone(x.arr.Strides)
	return &a, nil
}

// Elements waits for the array's queue and returns its elements as a []T
// over its memory, no copy: for a host-readable (host or shared USM),
// writable, C-contiguous array, as View. The slice is valid until the
// array is closed.
func (x *NDArray[T]) Elements() ([]T, error) {
	const op = "usm.NDArray.Elements"
	o, err := x.use(op)
	if err != nil {
		return nil, err
	}
	xs, err := view[T](op, &x.arr)
	release(o)
	return xs, err
}

// Raw waits for the array's queue and returns the elements it spans as
// one []T over its memory, from element 0 to the last one it touches,
// with the strides that index it: element (i, j, …) is data[i·strides[0]
// + j·strides[1] + …]. It is Elements for strided views (a column, a
// transpose) whose strides are not negative; a negative one (a reversed
// view) reaches below element 0 and is an ErrBuffer error, as are memory
// the host cannot read and a read-only array. The slice is valid until
// the array is closed.
func (x *NDArray[T]) Raw() (data []T, strides []int64, err error) {
	const op = "usm.NDArray.Raw"
	o, err := x.use(op)
	if err != nil {
		return nil, nil, err
	}
	data, strides, err = raw[T](op, &x.arr)
	release(o)
	return data, strides, err
}

func raw[T Element](op string, a *Array) ([]T, []int64, error) {
	if err := checkType[T](op, a); err != nil {
		return nil, nil, err
	}
	if err := checkHost(op, a); err != nil {
		return nil, nil, err
	}
	if a.ReadOnly {
		return nil, nil, accessErr(errkind.Buffer, op, "the array is read-only; read it with At or CopyTo")
	}
	strides := slices.Clone(a.EffectiveStrides())
	for i, s := range strides {
		if s < 0 && a.Shape[i] > 1 {
			return nil, nil, accessErr(errkind.Buffer, op, "stride "+strconv.FormatInt(s, 10)+" of dimension "+strconv.Itoa(i)+" reaches below element 0; read the array with At or CopyTo")
		}
		if a.Shape[i] <= 1 {
			strides[i] = max(s, 0) // never followed: any non-negative value
		}
	}
	p := a.ElementPointer()
	if al := unsafe.Alignof(*new(T)); p%al != 0 {
		return nil, nil, accessErr(errkind.Buffer, op, "element 0 at "+hex(p)+" is not aligned to "+strconv.Itoa(int(al))+" bytes")
	}
	if err := a.Wait(); err != nil {
		return nil, nil, err
	}
	w, _ := a.Window() // checked by checkType
	if w.Empty() {
		return []T{}, strides, nil
	}
	isz := int64(a.DType.Size())
	n := (w.Hi - a.Offset*isz) / isz // from element 0 to the end of the window
	if a.DType == dtype.Bool {
		for i, b := range cmem.Bytes(p, uintptr(n)) {
			if b > 1 {
				return nil, nil, accessErr(errkind.Value, op, "byte "+strconv.Itoa(i)+" past element 0 is "+strconv.Itoa(int(b))+", not a Go bool (0 or 1); read the array with CopyTo")
			}
		}
	}
	return unsafe.Slice((*T)(cmem.Ptr(p)), n), strides, nil
}

// At waits for the array's queue and returns the element at index (one
// entry per dimension), for host-readable memory of any layout.
func (x *NDArray[T]) At(index ...int64) (T, error) {
	const op = "usm.NDArray.At"
	o, err := x.use(op)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := at[T](op, &x.arr, index)
	release(o)
	return v, err
}

// Set waits for the array's queue and writes v at index, for
// host-readable, writable memory of any layout.
func (x *NDArray[T]) Set(v T, index ...int64) error {
	const op = "usm.NDArray.Set"
	o, err := x.use(op)
	if err != nil {
		return err
	}
	err = setAt(op, &x.arr, v, index)
	release(o)
	return err
}

// CopyTo waits for the array's queue and copies its elements, in C order,
// into dst, which has exactly as many: any memory and layout (device
// memory through its backend), as CopyToSlice.
func (x *NDArray[T]) CopyTo(dst []T) error {
	const op = "usm.NDArray.CopyTo"
	o, err := x.use(op)
	if err != nil {
		return err
	}
	err = copyHeld(op, &x.arr, dst, false)
	release(o)
	return err
}

// CopyFrom copies src, in C order, into the array's elements, after
// waiting for its queue: any memory and layout, as CopyFromSlice.
func (x *NDArray[T]) CopyFrom(src []T) error {
	const op = "usm.NDArray.CopyFrom"
	o, err := x.use(op)
	if err != nil {
		return err
	}
	err = copyHeld(op, &x.arr, src, true)
	release(o)
	return err
}

// Arg is the array as a kernel argument: the kernel's `global T *`
// receives the address of element 0 (see ArrayArg). A closed array is
// refused by the launch, before anything is submitted (ErrClosed).
func (x *NDArray[T]) Arg() Arg { return Arg{ptr: true, arr: x} }

func (x *NDArray[T]) kernelArg(op string) (uintptr, Owner, error) {
	o, err := x.use(op)
	if err != nil {
		return 0, nil, err
	}
	if x.arr.ReadOnly {
		release(o)
		return 0, nil, errkind.New(errkind.Buffer, op, "the array is read-only, and a kernel argument cannot say so")
	}
	return x.arr.ElementPointer(), o, nil
}

// view returns a view of x with the given layout, checked against x's
// memory (the layout rules of the parser: Window, CheckExtent).
func (x *NDArray[T]) view(op string, shape, strides []int64, offset int64) (*NDArray[T], error) {
	o, err := x.use(op)
	if err != nil {
		return nil, err
	}
	defer release(o)
	v := &NDArray[T]{arr: x.arr, st: x.st}
	v.arr.Shape, v.arr.Strides, v.arr.Offset = shape, strides, offset
	if err := v.arr.CheckExtent(); err != nil {
		return nil, err
	}
	return v, nil
}

// Slice returns the view of dimension dim's indices start, start+step, …
// below stop (0 ≤ start ≤ stop ≤ extent), for a step of 1 or more; a
// negative step walks the same range [start, stop) down from its last
// index: Slice(d, 0, n, -1) reverses dimension d, as x[::-1] does. The
// other dimensions are as they are.
func (x *NDArray[T]) Slice(dim int, start, stop, step int64) (*NDArray[T], error) {
	const op = "usm.NDArray.Slice"
	if err := x.open(op); err != nil { // before the layout is read; view holds the memory
		return nil, err
	}
	shape, strides := slices.Clone(x.arr.Shape), slices.Clone(x.arr.EffectiveStrides())
	if dim < 0 || dim >= len(shape) {
		return nil, errkind.New(errkind.Value, op, "dimension "+strconv.Itoa(dim)+" of an array of "+strconv.Itoa(len(shape))+" dimensions")
	}
	n := shape[dim]
	if start < 0 || start > stop || stop > n {
		return nil, errkind.New(errkind.Value, op, "["+strconv.FormatInt(start, 10)+", "+strconv.FormatInt(stop, 10)+") is not a range of dimension "+strconv.Itoa(dim)+" of extent "+strconv.FormatInt(n, 10))
	}
	if step == 0 {
		return nil, errkind.New(errkind.Value, op, "step 0")
	}
	mag := step
	if mag < 0 {
		mag = -mag // step ≠ MinInt64 below: its magnitude does not fit, and no extent needs it
	}
	if mag <= 0 {
		return nil, errkind.New(errkind.Value, op, "step "+strconv.FormatInt(step, 10)+" has no magnitude that fits")
	}
	count := (stop - start + mag - 1) / mag
	first := start
	if step < 0 {
		first = stop - 1
	}
	offset := x.arr.Offset
	if count > 0 {
		d, ok1 := mulCheck(first, strides[dim])
		o, ok2 := addCheck(offset, d)
		s, ok3 := mulCheck(strides[dim], step)
		if !ok1 || !ok2 || !ok3 {
			return nil, overflow("slice")
		}
		offset, strides[dim] = o, s
	}
	shape[dim] = count
	return x.view(op, shape, strides, offset)
}

// Reshape returns the view of a C-contiguous array with another shape of
// as many elements; one extent may be -1, inferred from the others. A
// strided array (a column, a transpose) cannot be reshaped without a copy
// and is an ErrValue error, as is a shape of another element count.
func (x *NDArray[T]) Reshape(shape ...int64) (*NDArray[T], error) {
	const op = "usm.NDArray.Reshape"
	if err := x.open(op); err != nil {
		return nil, err
	}
	if !isCContiguous(x.arr.Shape, x.arr.Strides) {
		return nil, errkind.New(errkind.Value, op, "strides "+ints(x.arr.Strides)+" of shape "+ints(x.arr.Shape)+" are not C-contiguous: a reshape would need a copy")
	}
	have, _ := elementCount(x.arr.Shape) // validated when the array was made
	shape = slices.Clone(shape)
	infer := -1
	known := int64(1)
	for i, s := range shape {
		switch {
		case s == -1 && infer < 0:
			infer = i
		case s < 0:
			return nil, errkind.New(errkind.Value, op, "extent "+strconv.FormatInt(s, 10)+" in shape "+ints(shape))
		default:
			var ok bool
			if known, ok = mulCheck(known, s); !ok {
				return nil, overflow("element count")
			}
		}
	}
	if infer >= 0 {
		if known == 0 || have%known != 0 {
			return nil, errkind.New(errkind.Value, op, "shape "+ints(shape)+" cannot hold "+strconv.FormatInt(have, 10)+" elements")
		}
		shape[infer] = have / known
		known = have
	}
	if known != have {
		return nil, errkind.New(errkind.Value, op, "shape "+ints(shape)+" holds "+strconv.FormatInt(known, 10)+" elements, the array "+strconv.FormatInt(have, 10))
	}
	return x.view(op, shape, nil, x.arr.Offset)
}

// Transpose returns the view with its dimensions permuted: dimension i of
// the view is dimension axes[i] of x. No axes reverses them (the matrix
// transpose of a 2-d array). axes that are not a permutation of 0..ndim-1
// are an ErrValue error.
func (x *NDArray[T]) Transpose(axes ...int) (*NDArray[T], error) {
	const op = "usm.NDArray.Transpose"
	if err := x.open(op); err != nil {
		return nil, err
	}
	nd := len(x.arr.Shape)
	if len(axes) == 0 {
		axes = make([]int, nd)
		for i := range axes {
			axes[i] = nd - 1 - i
		}
	}
	if len(axes) != nd {
		return nil, errkind.New(errkind.Value, op, strconv.Itoa(len(axes))+" axes for an array of "+strconv.Itoa(nd)+" dimensions")
	}
	st := x.arr.EffectiveStrides()
	shape, strides := make([]int64, nd), make([]int64, nd)
	seen := make([]bool, nd)
	for i, a := range axes {
		if a < 0 || a >= nd || seen[a] {
			return nil, errkind.New(errkind.Value, op, "axes "+strconv.Quote(intsOf(axes))+" are not a permutation of the "+strconv.Itoa(nd)+" dimensions")
		}
		seen[a] = true
		shape[i], strides[i] = x.arr.Shape[a], st[a]
	}
	return x.view(op, shape, strides, x.arr.Offset)
}

func intsOf(xs []int) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += strconv.Itoa(x)
	}
	return s
}

// setAt writes v at index, of an array whose memory is held.
func setAt[T Element](op string, a *Array, v T, index []int64) error {
	if err := checkType[T](op, a); err != nil {
		return err
	}
	if err := checkHost(op, a); err != nil {
		return err
	}
	if a.ReadOnly {
		return accessErr(errkind.Buffer, op, "the array is read-only")
	}
	el, err := elementAt(op, a, index)
	if err != nil {
		return err
	}
	if err := a.Wait(); err != nil {
		return err
	}
	p, _ := addOffset(a.Data, el*int64(a.DType.Size()))
	b := unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))
	copy(cmem.Bytes(p, unsafe.Sizeof(v)), b)
	return nil
}
