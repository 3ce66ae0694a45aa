package pyext

import (
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/usm"
)

// Array is an array argument whose elements are T: a view of the caller's
// memory, without a copy, valid for the call. Python may pass anything
// usmbridge reads: a NumPy array or any buffer-protocol object (host
// memory), a DLPack producer or capsule (versioned or legacy), an object
// with __sycl_usm_array_interface__ (dpnp, dpctl), a producer with the
// DLPack C exchange API, or an Array of this module. Its element type must
// be T (a TypeError names the parameter otherwise), and the parameter's
// constraints (NDim, Shape, CContiguous, FContiguous, Writable, Memory)
// must hold (ValueError, or TypeError for the memory kind).
//
// The view lives as long as the call: after the function returns, its
// methods see an empty array (and Keep refuses). Keep returns a view that
// lives until it is released. A slice from Slice aliases the memory and must
// not be used after the call either (unless kept). The Array may be used
// from goroutines the function starts, while the call runs.
//
// An Array is an AnyArray whose element type is known: its layout, USM
// view, Keep, Device and Given are AnyArray's, and Slice gives its
// elements as a []T.
type Array[T usm.Element] struct {
	AnyArray
}

// AnyArray is an array argument of any element type (see Array): the
// same view, without typed access to its elements (As gives it).
type AnyArray struct {
	a   *arg
	gen uint32
}

// arg is an array argument as the Go function sees it.
type arg struct {
	arr     usm.Array // the view; Shape and Strides point into C memory during the call
	gen     uint32    // bumped when the call ends: older Arrays see nothing
	index   int32     // the argument's position
	frame   *frame
	none    bool
	decoded bool           // arr holds this call's view (decodeArray)
	dl      dlabi.DataType // arr's element type as DLPack names it
	held    *keptArg       // the Owner of its kept views, made by the first Keep
	view    *usm.Array     // what USM returns during the call, made on first use
	// dims holds an imported arr's shape and strides (importObject) when
	// they fit; reused by the next call, as arr is.
	dims [8]int64
}

// with runs fn on the view of a live argument under its frame's lock (nil
// for None, a stale Array or the zero Array), so that the end of the call
// cannot change the view under a goroutine reading it. fn copies out what
// it returns.
func (a *arg) with(gen uint32, fn func(*arg)) {
	if a == nil || a.frame == nil {
		fn(nil)
		return
	}
	c := a.frame
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.gen != gen || a.none {
		fn(nil)
		return
	}
	fn(a)
}

// isNone reports whether the argument was None or omitted.
func (a *arg) isNone() bool { return a == nil || a.none }

func (a *arg) shape(gen uint32) (out []int64) {
	a.with(gen, func(a *arg) {
		if a != nil {
			out = append([]int64{}, a.arr.Shape...)
		}
	})
	return out
}

func (a *arg) strides(gen uint32) (out []int64) {
	a.with(gen, func(a *arg) {
		if a != nil {
			out = append([]int64{}, a.arr.EffectiveStrides()...)
		}
	})
	return out
}

// len and sliceOf lock the frame themselves, without with's closure and
// defer: a host loop asks for them on every call (examples/saxpy), and
// neither can panic while the lock is held.
func (a *arg) len(gen uint32) (n int) {
	if a == nil || a.frame == nil {
		return 0
	}
	c := a.frame
	c.mu.Lock()
	if a.gen == gen && !a.none {
		n = lenOf(&a.arr)
	}
	c.mu.Unlock()
	return n
}

// usm is the argument's view as a *usm.Array of the call, made on first use
// with shape and strides of its own: no later call writes it.
func (a *arg) usm(gen uint32) (out *usm.Array) {
	a.with(gen, func(a *arg) {
		if a != nil {
			if a.view == nil {
				a.view = cloneView(&a.arr)
			}
			out = a.view
		}
	})
	return out
}

func sliceOf[T usm.Element](a *arg, gen uint32) []T {
	if a == nil || a.frame == nil {
		return nil
	}
	c := a.frame
	c.mu.Lock()
	p, n, ok := a.hostSpan(gen)
	pending := a.arr.Pending
	c.mu.Unlock()
	if ok && pending != nil && pending.Wait() != nil { // the work the function recorded on it (WrittenBy)
		return nil
	}
	switch {
	case !ok:
		return nil
	case n == 0:
		return []T{}
	}
	return unsafe.Slice((*T)(cmem.Ptr(p)), n)
}

// hostSpan is the lowest element's address and the element count of a
// live argument the host reads as one run of memory (C or Fortran
// order); ok false for anything else. The caller holds the frame's lock.
func (a *arg) hostSpan(gen uint32) (p uintptr, n int, ok bool) {
	if a.gen != gen || a.none || !a.arr.Memory.Kind.HostAccessible() {
		return 0, 0, false
	}
	st := a.arr.EffectiveStrides()
	if !isContiguous(a.arr.Shape, st, false) && !isContiguous(a.arr.Shape, st, true) {
		return 0, 0, false
	}
	return lowest(&a.arr), lenOf(&a.arr), true
}

// Slice returns the elements as a []T over the caller's memory, in memory
// order, when the memory is host-accessible (host memory, USM host or
// shared) and contiguous (C or Fortran order): for a C-contiguous array
// element (i, j) of an n-column array is Slice()[i*n+j]. It is nil for
// device memory (use USM and usm.CopyToSlice) and for strided arrays. A
// read-only array's slice must not be written. It waits for the work
// the function recorded on the argument (WrittenBy) first; nil if that
// wait fails.
func (x Array[T]) Slice() []T { return sliceOf[T](x.a, x.gen) }

// IsNone reports whether the argument was None (or omitted) for an Optional
// parameter.
func (x AnyArray) IsNone() bool { return x.a.isNone() }

// Shape returns the extents (a copy; nil after the call).
func (x AnyArray) Shape() []int64 { return x.a.shape(x.gen) }

// Strides returns the strides in elements (a copy; nil after the call).
func (x AnyArray) Strides() []int64 { return x.a.strides(x.gen) }

// Len returns the number of elements (0 after the call).
func (x AnyArray) Len() int { return x.a.len(x.gen) }

// USM returns the view as a *usm.Array: its pointer, device and queue for
// USM (Data, Memory, DLDevice, Queue), shape and strides. It describes the
// memory for the call; nil after it.
func (x AnyArray) USM() *usm.Array { return x.a.usm(x.gen) }

// Keep returns the view as a *usm.Array that stays valid after the call:
// its Owner holds the caller's memory until released (Owner.Release, from
// any goroutine). Each Keep is a reference of its own: an argument kept
// twice is held until both are released, and an argument kept and returned
// is held by both. It takes no GIL, so a goroutine of the call may keep an
// argument while the call runs. Nil and an error for None or after the
// call.
func (x AnyArray) Keep() (*usm.Array, error) { return keep(x.a, x.gen) }

// WrittenBy records ev, the event of a kernel the function launched on
// the argument's queue (USM().Queue) that writes the argument, as its
// pending work, with a reference of its own (the function still closes
// ev). When the call returns, the work is waited for, or, for a function
// defined with NoWait, handed to the argument's readers: dpnp's
// operations on its queue (dpctl.utils.SequentialOrderManager), and the
// host readers of the views Keep gives, which wait for it (their
// usm.Array's Pending), whether kept before or after. An error for None,
// after the call, or when the event cannot be recorded.
func (x AnyArray) WrittenBy(ev usm.Event) error { return x.a.writtenBy(x.gen, ev) }

func (a *arg) writtenBy(gen uint32, ev usm.Event) error {
	const op = "pyext.Array.WrittenBy"
	if a == nil || a.frame == nil {
		return errkind.New(errkind.Value, op, "the array is not an argument of a call")
	}
	c := a.frame
	c.mu.Lock()
	if a.gen != gen {
		c.mu.Unlock()
		return errkind.New(errkind.Value, op, "the call that received the array has returned")
	}
	if a.none {
		c.mu.Unlock()
		return errkind.New(errkind.Value, op, "the argument is None")
	}
	p := a.pending()
	c.mu.Unlock()
	return p.Add(ev)
}

// pending is the argument's pending work, made on first use and shared
// by its USM view and every view Keep gives; the caller holds the
// frame's lock.
func (a *arg) pending() *usm.Pending {
	if a.arr.Pending == nil {
		a.arr.Pending = new(usm.Pending)
	}
	if a.view != nil {
		a.view.Pending = a.arr.Pending
	}
	return a.arr.Pending
}

// Device returns where the argument lives, with its queue (Host for host
// memory and for None): EmptyLike and Empty of it make arrays that combine
// with it. After the call it is the zero Device, which Empty refuses.
func (x AnyArray) Device() Device { return x.a.device(x.gen) }

// DType returns the argument's element type (the zero Type for None or
// after the call).
func (x AnyArray) DType() dtype.Type { return x.a.dtype(x.gen) }

// As returns x as an Array of element type T, the same view without a
// copy (read-only memory stays read-only), and whether its element type is
// T: one Python function over several element types, with a switch on
// DType or a chain of As.
func As[T usm.Element](x AnyArray) (Array[T], bool) {
	want := dtypeOf[T]()
	got := x.a.dtype(x.gen)
	dt, err := got.DataType()
	if err != nil || dt != want {
		return Array[T]{}, false
	}
	return Array[T]{x}, true
}

// Given returns the argument itself, the very object the caller passed,
// as a function's result: NumPy's out= convention, f(x, out=y) is y. None
// for an omitted or None argument.
func (x AnyArray) Given() Result { return Result{given: x.a, gen: x.gen, kind: resultGiven} }

// Result is a result chosen when the function runs: an argument as given
// (Given), or a new Array (NewArray), or None (the zero Result). A function
// with an out= parameter returns out.Given() when the caller passed one,
// NewArray of what it allocated otherwise.
type Result struct {
	kind  int
	given *arg
	gen   uint32
	arr   *usm.Array
}

const (
	resultNone = iota
	resultGiven
	resultArray
)

// NewArray is a Result that returns arr as a new Array (as a *usm.Array
// result does: the Array takes over arr's Owner reference). An array a Go
// value keeps past the call (a class's state: a Keep of an argument, an
// allocation of its own) is Owner.Retain()ed first, so that the value and
// the Array each hold a reference.
func NewArray(arr *usm.Array) Result {
	if arr == nil {
		return Result{}
	}
	return Result{kind: resultArray, arr: arr}
}

// device is where the argument lives: Host for None, and the zero Device,
// which Empty refuses, after the call (a stale view allocating on the
// host would hide the mistake).
func (a *arg) device(gen uint32) Device {
	if a == nil || a.frame == nil {
		return Device{}
	}
	c := a.frame
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case a.gen != gen:
		return Device{}
	case a.none:
		return Host
	}
	return deviceOfArray(&a.arr)
}

func (a *arg) dtype(gen uint32) (t dtype.Type) {
	a.with(gen, func(a *arg) {
		if a != nil {
			t = a.arr.DType
		}
	})
	return t
}

func lenOf(a *usm.Array) int {
	if a == nil {
		return 0
	}
	n := 1
	for _, s := range a.Shape {
		n *= int(s)
	}
	return n
}

// lowest is the address of the lowest element of a contiguous array.
func lowest(a *usm.Array) uintptr {
	p := a.ElementPointer()
	for i, s := range a.EffectiveStrides() {
		if s < 0 && a.Shape[i] > 1 {
			p -= uintptr(-s * (a.Shape[i] - 1) * int64(a.DType.Size()))
		}
	}
	return p
}

// isContiguous reports whether the elements are laid out without gaps in C
// (fortran false) or Fortran order, NumPy's relaxed rules: extents of 1
// may have any stride, and an empty array is contiguous.
func isContiguous(shape, strides []int64, fortran bool) bool {
	for _, s := range shape {
		if s == 0 {
			return true
		}
	}
	want := int64(1)
	for k := range shape {
		i := len(shape) - 1 - k
		if fortran {
			i = k
		}
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

// arrayType is implemented by Array[T] and AnyArray: the element type the
// parameter wants (zero for any) and how the decoder makes one.
type arrayType interface {
	wants() (dlabi.DataType, string)
	maker() any // func(*arg, uint32) Self
}

func (Array[T]) wants() (dlabi.DataType, string) {
	return dtypeOf[T](), reflect.TypeFor[T]().String()
}

func (Array[T]) maker() any {
	return func(a *arg, gen uint32) Array[T] { return Array[T]{AnyArray{a, gen}} }
}

func (AnyArray) wants() (dlabi.DataType, string) { return dlabi.DataType{}, "" }

func (AnyArray) maker() any {
	return func(a *arg, gen uint32) AnyArray { return AnyArray{a, gen} }
}

// dtypeOf is the DLPack dtype of a Go element type.
func dtypeOf[T usm.Element]() dlabi.DataType {
	k := reflect.TypeFor[T]().Kind()
	size := uint8(reflect.TypeFor[T]().Size() * 8)
	switch k {
	case reflect.Bool:
		return dlabi.DataType{Code: dlabi.Bool, Bits: 8, Lanes: 1}
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return dlabi.DataType{Code: dlabi.Int, Bits: size, Lanes: 1}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return dlabi.DataType{Code: dlabi.UInt, Bits: size, Lanes: 1}
	case reflect.Float32, reflect.Float64:
		return dlabi.DataType{Code: dlabi.Float, Bits: size, Lanes: 1}
	}
	return dlabi.DataType{Code: dlabi.Complex, Bits: size, Lanes: 1}
}

// dtypeName names a DLPack dtype as NumPy and the array API do.
func dtypeName(dt dlabi.DataType) string {
	bits := strconv.Itoa(int(dt.Bits))
	var s string
	switch dt.Code {
	case dlabi.Bool:
		s = "bool"
	case dlabi.Int:
		s = "int" + bits
	case dlabi.UInt:
		s = "uint" + bits
	case dlabi.Float:
		s = "float" + bits
	case dlabi.Bfloat:
		s = "bfloat" + bits
	case dlabi.Complex:
		s = "complex" + bits
	default:
		s = strings.TrimPrefix(dt.Code.String(), "kDL")
		s = strings.ToLower(s[:1]) + s[1:]
	}
	if dt.Lanes != 1 {
		s += "x" + strconv.Itoa(int(dt.Lanes))
	}
	return s
}

// MemoryKind is where an array's memory lives, for the Memory constraint.
type MemoryKind uint8

const (
	HostMemory MemoryKind = 1 << iota // host memory that is not USM (NumPy's, usmbridge's cpu backend)
	USMHost                           // SYCL USM host allocations
	USMShared                         // SYCL USM shared allocations
	USMDevice                         // SYCL USM device allocations
)

// HostAccessible is memory the host can read and write directly.
const HostAccessible = HostMemory | USMHost | USMShared

// AnyUSM is SYCL USM of any kind.
const AnyUSM = USMHost | USMShared | USMDevice

func (k MemoryKind) String() string {
	var parts []string
	for _, x := range []struct {
		k MemoryKind
		s string
	}{{HostMemory, "host memory"}, {USMHost, "USM host"}, {USMShared, "USM shared"}, {USMDevice, "USM device"}} {
		if k&x.k != 0 {
			parts = append(parts, x.s)
		}
	}
	return strings.Join(parts, " or ")
}

// memoryKind is the kind of an array's memory.
func memoryKind(a *usm.Array) MemoryKind {
	if a.DLDevice.Type != dlabi.OneAPI {
		return HostMemory
	}
	switch a.Memory.Kind {
	case usm.KindHost:
		return USMHost
	case usm.KindShared:
		return USMShared
	case usm.KindDevice:
		return USMDevice
	}
	return 0
}

// constraints are an array parameter's options.
type constraints struct {
	ndim      int // -1: any
	shape     []int64
	cContig   bool
	fContig   bool
	writable  bool
	memory    MemoryKind // 0: any
	ndimSet   bool
	shapeSet  bool
	memorySet bool
}

func (c *constraints) any() bool {
	return c.ndimSet || c.shapeSet || c.cContig || c.fContig || c.writable || c.memorySet
}

// NDim requires n dimensions.
func NDim(n int) ParamOption {
	return optionFunc(func(s *paramSpec) error {
		if n < 0 || n > maxNdim {
			return errkind.New(errkind.Value, "pyext.NDim", "ndim "+strconv.Itoa(n)+" is outside 0.."+strconv.Itoa(maxNdim))
		}
		s.array.ndim, s.array.ndimSet = n, true
		return nil
	})
}

// Shape requires these extents; -1 accepts any extent in its place. It
// implies NDim(len(dims)).
func Shape(dims ...int64) ParamOption {
	return optionFunc(func(s *paramSpec) error {
		s.array.shape, s.array.shapeSet = append([]int64(nil), dims...), true
		s.array.ndim, s.array.ndimSet = len(dims), true
		return nil
	})
}

// CContiguous requires C (row-major) order without gaps.
func CContiguous() ParamOption {
	return optionFunc(func(s *paramSpec) error { s.array.cContig = true; return nil })
}

// FContiguous requires Fortran (column-major) order without gaps.
func FContiguous() ParamOption {
	return optionFunc(func(s *paramSpec) error { s.array.fContig = true; return nil })
}

// Writable requires memory the function may write: a read-only array (a
// read-only NumPy array, a legacy DLPack tensor, a SUAI with data[1] True)
// is refused.
func Writable() ParamOption {
	return optionFunc(func(s *paramSpec) error { s.array.writable = true; return nil })
}

// Memory requires memory of one of the kinds (HostMemory, USMHost,
// USMShared, USMDevice, or the unions HostAccessible and AnyUSM).
func Memory(kinds MemoryKind) ParamOption {
	return optionFunc(func(s *paramSpec) error {
		if kinds == 0 {
			return errkind.New(errkind.Value, "pyext.Memory", "no memory kind")
		}
		s.array.memory, s.array.memorySet = kinds, true
		return nil
	})
}

// check applies the constraints to an argument's array: nil, or the error
// naming the parameter of function fn.
func (c *constraints) check(fn, param string, a *usm.Array) error {
	if c.ndimSet && len(a.Shape) != c.ndim {
		return argErr(errkind.Value, fn, param, "must have "+strconv.Itoa(c.ndim)+" dimension"+plural(c.ndim)+", got "+strconv.Itoa(len(a.Shape)))
	}
	if c.shapeSet {
		for i, want := range c.shape {
			if want >= 0 && a.Shape[i] != want {
				return argErr(errkind.Value, fn, param, "must have shape "+shapeString(c.shape)+", got "+shapeString(a.Shape))
			}
		}
	}
	st := a.EffectiveStrides()
	if c.cContig && !isContiguous(a.Shape, st, false) {
		return argErr(errkind.Value, fn, param, "must be C-contiguous")
	}
	if c.fContig && !isContiguous(a.Shape, st, true) {
		return argErr(errkind.Value, fn, param, "must be Fortran-contiguous")
	}
	if c.writable && a.ReadOnly {
		return argErr(errkind.Value, fn, param, "must be writable, got a read-only array")
	}
	if c.memorySet && memoryKind(a)&c.memory == 0 {
		got := memoryKind(a).String()
		if got == "" {
			got = "memory of unknown kind"
		}
		return argErr(errkind.Type, fn, param, "must be in "+c.memory.String()+", got "+got)
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func shapeString(s []int64) string {
	parts := make([]string, len(s))
	for i, x := range s {
		if x < 0 {
			parts[i] = "any"
		} else {
			parts[i] = strconv.FormatInt(x, 10)
		}
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// ArgumentError is a wrong argument of a function Python called: the
// message names the function and the parameter, as CPython's do.
type ArgumentError struct {
	Func, Param string
	Reason      string
	kind        *errkind.Kind
	Err         error
}

func (e *ArgumentError) Error() string {
	s := e.Func + "() argument '" + e.Param + "' " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ArgumentError) Is(target error) bool { return target == error(e.kind) }
func (e *ArgumentError) Unwrap() error        { return errkind.HideKind(e.Err) }

func argErr(k *errkind.Kind, fn, param, reason string) error {
	return &ArgumentError{Func: fn, Param: param, Reason: reason, kind: k}
}
