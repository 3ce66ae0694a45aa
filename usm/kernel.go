package usm

import (
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/usmbridge/usmbridge/dtype"
	"github.com/usmbridge/usmbridge/internal/errkind"
)

// Kernels: computing on a queue's device from Go (RATIONALE.md, "Kernels
// on the array's own queue"). A queue whose runtime compiles programs has
// a BuildProgram method (found by name, as Order finds OrderBefore): the
// queues of the opencl, levelzero and dpctl backends do; the host backend's
// does not, its arrays are computed on with slices (View).

// ProgramSource is what a program is built from: OpenCL C source or a
// SPIR-V module (exactly one of the two), and the build options the
// runtime's compiler takes (clBuildProgram's, zeModuleCreate's).
type ProgramSource struct {
	OpenCLC string
	SPIRV   []byte
	Options string
}

// Check reports a source that is neither or both of OpenCL C and SPIR-V,
// or whose OpenCL C or options hold a NUL byte (every runtime takes them
// as C strings): ErrValue.
func (s ProgramSource) Check() error {
	const op = "usm.BuildProgram"
	switch {
	case s.OpenCLC == "" && len(s.SPIRV) == 0:
		return errkind.New(errkind.Value, op, "the program has neither OpenCL C source nor SPIR-V")
	case s.OpenCLC != "" && len(s.SPIRV) != 0:
		return errkind.New(errkind.Value, op, "the program has both OpenCL C source and SPIR-V; give one")
	case strings.IndexByte(s.OpenCLC, 0) >= 0:
		return errkind.New(errkind.Value, op, "the OpenCL C source holds a NUL byte")
	case strings.IndexByte(s.Options, 0) >= 0:
		return errkind.New(errkind.Value, op, "the options hold a NUL byte")
	}
	return nil
}

// programBuilder is implemented by queues that build programs for their
// context and device. BuildProgram returns the program src builds there,
// building it the first time only: a program is kept per (context,
// device, source, options) until it or its context is closed, so a
// caller may ask for it on every call. A failed build is a *BuildError.
type programBuilder interface {
	BuildProgram(src ProgramSource) (Program, error)
}

// BuildProgram returns the program src builds for q's context and device
// (built once, then kept: see Program). A queue whose runtime runs no
// kernels (the host backend's), or no queue (nil, the Queue of an array
// in host memory), is an ErrNotSupported error, and a failed build a
// *BuildError carrying the compiler's log.
func BuildProgram(q Queue, src ProgramSource) (Program, error) {
	if err := src.Check(); err != nil {
		return nil, err
	}
	pb, ok := q.(programBuilder)
	if !ok {
		return nil, errkind.New(errkind.NotSupported, "usm.BuildProgram", noKernels(q))
	}
	return pb.BuildProgram(src)
}

// noKernels says why q builds no programs, and what does. A queue names
// itself with a String method, else by its Go type.
func noKernels(q Queue) string {
	const builders = "kernels are built for a queue of the opencl, levelzero or dpctl backend; " +
		"memory the host reads is computed on in Go (View, CopyToSlice)"
	if q == nil {
		return "no queue was given (nil; an array in host memory has none): " + builders
	}
	what := "a queue of type " + typeName(q)
	if s, ok := q.(interface{ String() string }); ok {
		what = s.String()
	}
	return what + " cannot build kernels: " + builders
}

// Program is a program built for one context and device: a backend's
// (opencl, levelzero, dpctl). It is shared by every BuildProgram of the
// same source and options on that context and device, and kept until
// Close, or until its context is closed: Close releases it for every
// holder (their kernels' launches then fail), and the next BuildProgram
// builds it again. Close is idempotent.
type Program interface {
	// Kernel returns the kernel of that name, made once per program.
	Kernel(name string) (*Kernel, error)
	// Close releases the program and its kernels.
	Close() error
}

// BuildError is a build that failed: the runtime's error (Err) and the
// compiler's log. It matches ErrValue.
type BuildError struct {
	Op  string // the runtime's entry point: "clBuildProgram", "zeModuleCreate", ...
	Log string
	Err error
}

func (e *BuildError) Error() string {
	s := e.Op + ": the program does not build"
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Log != "" {
		s += "\n" + e.Log
	}
	return s
}

// Unwrap returns the runtime's error.
func (e *BuildError) Unwrap() error { return e.Err }

// Is matches ErrValue: the source (or its options) is what is wrong.
func (e *BuildError) Is(target error) bool { return target == ErrValue }

// Range is the index space of a launch: Global work-items in Dims (1 to
// 3) dimensions, in work-groups of Local items per dimension, or of a size
// the runtime chooses when Local is all zero. NDRange and WithLocal make
// one; Kernel.Launch refuses one no runtime launches (ErrValue): 0 or more
// than 3 dimensions, extents below 0 or of 2^31 and more, work-group
// extents that do not divide the global ones.
type Range struct {
	Dims   int
	Global [3]int
	Local  [3]int
}

// NDRange returns the range of 1 to 3 global extents, in work-groups the
// runtime chooses.
func NDRange(global ...int) Range {
	r := Range{Dims: len(global)}
	copy(r.Global[:], global)
	return r
}

// WithLocal returns r with work-groups of the given extents, one per
// dimension.
func (r Range) WithLocal(local ...int) Range {
	r.Local = [3]int{}
	copy(r.Local[:], local)
	if len(local) != r.Dims {
		r.Local[2] = -1 // Check refuses it
	}
	return r
}

// InGroupsOf returns r in work-groups of the given extents, one per
// dimension, with each global extent rounded up to a multiple of its
// work-group's: the range for n items when n need not divide into
// groups (NDRange(1000).InGroupsOf(64) is 1024 items in 16 groups). The
// items past the extent given exist: the kernel skips them, as in
//
//	size_t i = get_global_id(0);
//	if (i >= n) return; // n, the array's length, passed as a scalar
//
// Launch refuses negative extents, and rounded extents of 2^31 or more
// (ErrValue); extents all 0 leave the groups to the runtime, as
// WithLocal's do.
func (r Range) InGroupsOf(local ...int) Range {
	r = r.WithLocal(local...)
	if len(local) != r.Dims {
		return r // WithLocal marked it: Launch refuses it
	}
	for i := range min(r.Dims, 3) {
		if l, g := r.Local[i], r.Global[i]; l > 0 && g > 0 && g%l != 0 {
			r.Global[i] = g + l - g%l
		}
	}
	return r
}

// HasLocal reports whether work-group extents were given.
func (r Range) HasLocal() bool { return r.Local != [3]int{} }

// empty reports whether the range holds no work-item.
func (r Range) empty() bool {
	for i := range r.Dims {
		if r.Global[i] == 0 {
			return true
		}
	}
	return false
}

// check reports a range no runtime launches (ErrValue): 1 to 3
// dimensions, extents ≥ 0 (and below 2^31 per dimension), work-group
// extents that divide the global ones.
func (r Range) check() error {
	bad := func(s string) error { return errkind.New(errkind.Value, "usm.Kernel.Launch", s) }
	if r.Dims < 1 || r.Dims > 3 {
		return bad("a range has 1 to 3 dimensions, got " + strconv.Itoa(r.Dims))
	}
	for i := range 3 {
		g, l := r.Global[i], r.Local[i]
		if i >= r.Dims {
			if g != 0 || l != 0 {
				return bad("extents given past the range's " + strconv.Itoa(r.Dims) + " dimensions")
			}
			continue
		}
		if g < 0 || g > math.MaxInt32 {
			return bad("global extent " + strconv.Itoa(g) + " out of range [0, 2^31)")
		}
		if r.HasLocal() && (l <= 0 || g%l != 0) {
			return bad("work-group extent " + strconv.Itoa(l) + " does not divide the global extent " + strconv.Itoa(g))
		}
	}
	return nil
}

// Arg is one kernel argument: a scalar (Scalar), an array (ArrayArg,
// NDArray.Arg) or a raw USM pointer (Pointer). Its value is copied when
// the kernel is launched.
type Arg struct {
	bits uint64
	dt   dtype.Type // the scalar's type; zero for a pointer
	ptr  bool
	arr  kernelArray // an array, resolved to the address of its element 0 at launch
}

// kernelArray is an array passed to a kernel: Launch asks it for the
// address of element 0, holding its memory for the launch (hold's
// reference, released once the launch is submitted), and refuses the
// launch if it cannot (memory freed, an array closed or read-only).
type kernelArray interface {
	kernelArg(op string) (ptr uintptr, held Owner, err error)
}

// ArrayArg is an array argument: the kernel's `global T *` receives the
// address of the array's element 0 (ElementPointer) when it is launched,
// and indexes the array as its strides say (a kernel written for
// C-contiguous arrays is passed C-contiguous ones). Launch refuses, before
// anything is submitted, an array whose memory has been freed (ErrClosed)
// and a read-only one (ErrBuffer: a kernel argument cannot say
// read-only; a kernel that only reads it may take usm.Pointer of its
// ElementPointer). The memory must stay alive until the kernel completes
// (see Kernel.Launch).
func ArrayArg(a *Array) Arg { return Arg{ptr: true, arr: a} }

func (a *Array) kernelArg(op string) (uintptr, Owner, error) {
	o, err := a.hold(op)
	if err != nil {
		return 0, nil, err
	}
	if a.ReadOnly {
		release(o)
		return 0, nil, errkind.New(errkind.Buffer, op, "the array is read-only, and a kernel argument cannot say so")
	}
	if _, err := a.Window(); err != nil { // ElementPointer's sum cannot overflow
		release(o)
		return 0, nil, wrapLayout(err)
	}
	return a.ElementPointer(), o, nil
}

// Scalar is a scalar kernel argument of T's C type (int is int64, uint
// uint64).
func Scalar[T int8 | int16 | int32 | int64 | int | uint8 | uint16 | uint32 | uint64 | uint | float32 | float64](v T) Arg {
	switch x := any(v).(type) {
	case int8:
		return Arg{bits: uint64(uint8(x)), dt: dtype.Int8}
	case int16:
		return Arg{bits: uint64(uint16(x)), dt: dtype.Int16}
	case int32:
		return Arg{bits: uint64(uint32(x)), dt: dtype.Int32}
	case int64:
		return Arg{bits: uint64(x), dt: dtype.Int64}
	case int:
		return Arg{bits: uint64(x), dt: dtype.Int64}
	case uint8:
		return Arg{bits: uint64(x), dt: dtype.Uint8}
	case uint16:
		return Arg{bits: uint64(x), dt: dtype.Uint16}
	case uint32:
		return Arg{bits: uint64(x), dt: dtype.Uint32}
	case uint64:
		return Arg{bits: x, dt: dtype.Uint64}
	case uint:
		return Arg{bits: uint64(x), dt: dtype.Uint64}
	case float32:
		return Arg{bits: uint64(math.Float32bits(x)), dt: dtype.Float32}
	case float64:
		return Arg{bits: math.Float64bits(x), dt: dtype.Float64}
	}
	panic("unreachable")
}

// Pointer is a USM pointer argument (a `global T *` of OpenCL C). The
// backend checks that it is memory of the kernel's context before it
// submits anything.
func Pointer(p uintptr) Arg { return Arg{bits: uint64(p), ptr: true} }

// IsPointer reports whether a is a pointer argument (an array's included).
func (a Arg) IsPointer() bool { return a.ptr }

// DType is a scalar argument's type (the zero Type for a pointer).
func (a Arg) DType() dtype.Type { return a.dt }

// Size is the argument's size in bytes, as the kernel receives it.
func (a Arg) Size() int {
	if a.ptr {
		return 8
	}
	return a.dt.Size()
}

// Bits is the value: the pointer, or the scalar's bytes in the low Size
// bytes (little-endian, as it is passed). An array argument's pointer is
// known at launch only: what a backend's Launcher receives is resolved.
func (a Arg) Bits() uint64 { return a.bits }

// EventSource is what a backend's events live in: a table of native
// events, each named by an id the source gave out (NewEvent). The ids of
// released events must find nothing, so that an Event released once (or
// a copy of it) never reaches the runtime again.
type EventSource interface {
	// WaitEvent returns when the event has completed (an error for an id
	// that names no live event).
	WaitEvent(id uint64) error
	// ReleaseEvent releases the event, once: an id that names no live
	// event does nothing.
	ReleaseEvent(id uint64) error
}

// Event is a launch's completion. It is a small value: copies name the
// same event. Wait returns when the launch has completed; Close releases
// the native event, once (the zero Event is complete, and Close of it
// does nothing). A launch's results are ordered on its queue whether or
// not anyone waits on its event, so an event that is not needed is
// closed at once.
type Event struct {
	src EventSource
	id  uint64
}

// NewEvent is how a backend hands out an event of src.
func NewEvent(src EventSource, id uint64) Event { return Event{src: src, id: id} }

// Source returns the event's source and id, for the backend that made it
// (nil for the zero Event).
func (e Event) Source() (EventSource, uint64) { return e.src, e.id }

// Wait returns when the event's launch has completed.
func (e Event) Wait() error {
	if e.src == nil {
		return nil
	}
	return e.src.WaitEvent(e.id)
}

// eventStatus is implemented by event sources that tell, without
// waiting, whether an event's launch has completed (dpctl's
// DPCTLEvent_GetCommandExecutionStatus, OpenCL's clGetEventInfo). An id
// that names no live event is reported done: its holder waited for it,
// or let it go.
type eventStatus interface {
	EventDone(id uint64) (bool, error)
}

// Done reports, without waiting, whether the event's launch has
// completed: the zero Event has, and so has a released one (its holder
// waited for it, or let it go). A source that cannot tell is an
// ErrNotSupported error: wait instead.
func (e Event) Done() (bool, error) {
	if e.src == nil {
		return true, nil
	}
	s, ok := e.src.(eventStatus)
	if !ok {
		return false, errkind.New(errkind.NotSupported, "usm.Event.Done", "the event's source cannot say whether it is done without a wait")
	}
	return s.EventDone(e.id)
}

// Close releases the event; later calls (on any copy) do nothing.
func (e Event) Close() error {
	if e.src == nil {
		return nil
	}
	return e.src.ReleaseEvent(e.id)
}

// Launcher is a backend's kernel, as Kernel drives it: Kernel has checked
// the range and the argument count, and passes slices of its own that are
// valid for the call. Launch submits the kernel to q after the events of
// after (those of other runtimes are the backend's to wait for on the
// host), and checks every pointer argument first: nothing is submitted
// when one is not USM of the kernel's context, or when q is not a queue
// of that context and device (ErrValue). Close releases the native kernel.
// Kernel calls Launch and Close under one mutex, never two at a time and
// never Launch after a Close that succeeded, so a Launcher needs no lock
// of its own for its kernel's state or against its own Close.
type Launcher interface {
	Launch(q Queue, r Range, after []Event, args []Arg) (Event, error)
	Close() error
}

// Kernel is a kernel of a Program, launched on any queue of the
// program's context and device. Its methods are safe for concurrent use;
// launches of one kernel are serialised. A launch allocates nothing once
// the kernel has seen its largest list of events.
type Kernel struct {
	name  string
	nargs int
	l     Launcher

	mu     sync.Mutex
	closed bool
	args   []Arg
	held   []Owner // what array arguments hold during a launch
	after  []Event
}

// NewKernel is how a backend hands out a kernel of nargs arguments.
func NewKernel(name string, nargs int, l Launcher) *Kernel {
	return &Kernel{name: name, nargs: nargs, l: l, args: make([]Arg, nargs), held: make([]Owner, nargs)}
}

// NumArgs is the number of arguments the kernel takes.
func (k *Kernel) NumArgs() int { return k.nargs }

// Launch submits the kernel over r to q, a queue of the kernel's context
// and device, after the events of after, with args, and returns its event.
// Work submitted to q after it sees the kernel's results (on an in-order
// queue; a SYCL queue that is out of order orders by events only). A
// wrong number of arguments, a range no runtime takes, a pointer that is
// not USM of the kernel's context, a queue of another context or device,
// a closed queue or kernel, an array argument whose memory is gone
// (ErrClosed) or that is read-only: each is an error before anything is
// submitted, and so is a scalar for a pointer parameter where the runtime
// says what each parameter is (docs/go.md, "Kernels"). An empty range
// submits nothing: after's events are waited for and the zero Event is
// returned. So is it for a launch done by the time Launch returns (on a
// synchronous Level Zero list), which needs no event of the runtime.
//
// Array arguments are held until the kernel is submitted; the memory must
// stay until it completes: an NDArray's Close waits on its queue first,
// so a kernel launched on that queue (NDArray.Queue) is covered, and
// memory freed otherwise is freed after the event or the queue is waited
// for.
func (k *Kernel) Launch(q Queue, r Range, after []Event, args ...Arg) (Event, error) {
	const op = "usm.Kernel.Launch"
	if err := r.check(); err != nil {
		return Event{}, err
	}
	if len(args) != k.nargs {
		return Event{}, errkind.New(errkind.Value, op, "kernel "+errkind.Quote(k.name)+" takes "+strconv.Itoa(k.nargs)+" arguments, got "+strconv.Itoa(len(args)))
	}
	if q == nil {
		return Event{}, errkind.New(errkind.Value, op, "no queue")
	}
	if r.empty() {
		k.mu.Lock()
		closed := k.closed
		k.mu.Unlock()
		if closed { // a closed kernel launches nothing, however little
			return Event{}, errkind.New(errkind.Value, op, "kernel "+errkind.Quote(k.name)+" is closed")
		}
		for i, a := range args { // refused as a launch would refuse them
			if a.arr == nil {
				continue
			}
			_, o, err := a.arr.kernelArg(op)
			if err != nil {
				return Event{}, argErr(op, k.name, i, err)
			}
			release(o)
		}
		for _, e := range after {
			if err := e.Wait(); err != nil {
				return Event{}, err
			}
		}
		return Event{}, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return Event{}, errkind.New(errkind.Value, op, "kernel "+errkind.Quote(k.name)+" is closed")
	}
	copy(k.args, args)
	held := false // array arguments hold their memory until the submit
	for i, a := range k.args {
		if a.arr == nil {
			continue
		}
		p, o, err := a.arr.kernelArg(op)
		if err != nil {
			k.releaseHeld()
			clear(k.args) // no array stays reachable from the kernel
			return Event{}, argErr(op, k.name, i, err)
		}
		k.held[i], held = o, true
		k.args[i] = Arg{bits: uint64(p), ptr: true}
	}
	var ev Event
	var err error
	if len(after) == 0 { // no copy of none: copying Events costs a typedslicecopy even then
		ev, err = k.l.Launch(q, r, nil, k.args)
	} else {
		k.after = append(k.after[:0], after...)
		ev, err = k.l.Launch(q, r, k.after, k.args)
		clear(k.after)
	}
	if held {
		k.releaseHeld()
	}
	return ev, err
}

// argErr is err, of its own kind, as the refusal of argument i.
func argErr(op, kernel string, i int, err error) error {
	return errkind.Wrap(errkind.Of(err), op, "argument "+strconv.Itoa(i)+" of kernel "+errkind.Quote(kernel), errkind.HideKind(err))
}

// releaseHeld drops the references array arguments took for a launch;
// k.mu is held.
func (k *Kernel) releaseHeld() {
	for i, o := range k.held {
		if o != nil {
			o.Release()
			k.held[i] = nil
		}
	}
}

// Close releases the kernel, after a launch in progress; later launches
// fail. A second Close does nothing. A program hands out one Kernel per
// name (Program.Kernel), so Close ends the name for every holder until the
// program is built again; a program's own Close closes its kernels.
func (k *Kernel) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	if err := k.l.Close(); err != nil {
		return err
	}
	k.closed = true
	return nil
}
