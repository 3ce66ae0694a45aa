package usm

import (
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
)

// DLDevice is DLPack's DLDevice: a device type (kDLCPU, kDLOneAPI) and a
// device id. It is the same type as dlpack.Device, which also names the
// device types; usm, below package dlpack, names it for its own API.
type DLDevice = dlabi.Device

// Array is an Interface bound to the memory it describes: which backend owns
// the pointer, what kind of USM it is, which queue to wait on and who keeps
// the memory alive.
type Array struct {
	Interface
	Backend  Backend     // owning backend; nil for plain host memory no backend knows
	Memory   PointerInfo // what the backend knows about Data
	Device   int         // backend-local device the array is on; -1 if none
	Queue    Queue       // waited on before the memory is handed out; may be nil
	Owner    Owner       // keeps the memory alive; nil if the caller guarantees it
	DLDevice DLDevice    // the DLPack device of the memory
	// Pending is the work on Queue that writes the memory and that nobody
	// has waited for (a launch that returned before its kernel ended);
	// shared by the array's copies, nil when there is none.
	Pending *Pending
}

// Hold retains the array's Owner for one use of its memory, and returns
// it, to be released when the use ends; nil, and no error, when the array
// has no Owner (its memory is the caller's to keep alive). An array whose
// memory has been freed is an error matching ErrClosed: every accessor of
// this package (View, At, Values, CopyToSlice, CopyFromSlice, Bytes,
// SUAI), dlpack's exports and kernel arguments ask Hold first, so that a
// stale array never reads or writes memory that has gone back to its
// backend, or been handed out again.
//
// The reference held is what keeps a Free on another goroutine from
// returning the memory during the call: the memory goes when the call
// releases it. What a call returns that aliases the memory (View's slice)
// holds no reference of its own; see View.
func (a *Array) Hold() (Owner, error) { return a.hold("usm.Array.Hold") }

func (a *Array) hold(op string) (o Owner, err error) {
	if o = a.Owner; o != nil && !o.Retain() {
		o, err = nil, errFreed(op)
	}
	return o, err
}

// errFreed is hold's refusal, out of line so that hold inlines.
func errFreed(op string) error {
	return &closedError{Op: op, Reason: "the array's memory has been freed"}
}

// release drops a reference hold took.
func release(o Owner) {
	if o != nil {
		o.Release()
	}
}

// Wait waits for the array's pending work (Pending), then for its queue,
// if it has one.
func (a *Array) Wait() error {
	if a.Pending != nil {
		if err := a.Pending.Wait(); err != nil {
			return err
		}
	}
	if a.Queue == nil {
		return nil
	}
	return a.Queue.Wait()
}

// SUAI synchronises the array's queue and returns a fresh
// __sycl_usm_array_interface__ dict, as dpctl's usm_ndarray does. Only USM
// has one: an array on a DLPack device other than kDLOneAPI (the host
// backend's memory, plain host memory) gets an ErrAttribute error, the
// AttributeError Python raises for the missing attribute, since no SYCL
// consumer can create a device from a "host" syclobj (RATIONALE.md, "Host
// memory has no SUAI"). Such arrays travel through DLPack as kDLCPU. An
// element type SUAI has no typestring for is Map's usm.ErrBuffer error.
func (a *Array) SUAI() (map[string]any, error) {
	o, err := a.hold("__sycl_usm_array_interface__")
	if err != nil {
		return nil, err
	}
	m, err := a.suai()
	release(o)
	return m, err
}

// suai is SUAI of an array whose memory is held.
func (a *Array) suai() (map[string]any, error) {
	if a.DLDevice.Type != dlabi.OneAPI {
		return nil, errkind.New(errkind.Attribute, "__sycl_usm_array_interface__", "the array is not USM (it lives on "+a.DLDevice.String()+"); exchange it through DLPack")
	}
	m, err := a.Map()
	if err != nil {
		return nil, err
	}
	if err := a.Wait(); err != nil {
		return nil, err
	}
	return m, nil
}

// CheckExtent rejects an array whose byte window leaves the allocation its
// pointer belongs to, when the backend reports that allocation's extent:
// an *ExtentError gives both ranges.
func (a *Array) CheckExtent() error {
	w, err := a.Window()
	if err != nil {
		return wrapLayout(err)
	}
	if w.Empty() || !a.Memory.HasExtent() {
		return nil
	}
	lo, okLo := addOffset(a.Data, w.Lo)
	hi, okHi := addOffset(a.Data, w.Hi)
	base, end := a.Memory.Base, a.Memory.Base+a.Memory.Size
	if !okLo || !okHi || lo < base || hi > end || end < base {
		return &ExtentError{Window: [2]uintptr{lo, hi}, Allocation: [2]uintptr{base, end}}
	}
	return nil
}

// addOffset returns p+off and whether it stayed within the address space.
func addOffset(p uintptr, off int64) (uintptr, bool) {
	if off < 0 {
		d := uintptr(-off)
		return p - d, d <= p
	}
	q := p + uintptr(off)
	return q, q >= p
}

// Bytes waits on the array's queue and returns the bytes it touches (its
// Window) as a slice, for host-accessible memory. Element 0 is at index
// Offset·itemsize − Window().Lo. Device memory is a usm.ErrBuffer error,
// freed memory an ErrClosed one. The slice is valid as View's is.
func (a *Array) Bytes() ([]byte, error) {
	o, err := a.hold("usm.Array.Bytes")
	if err != nil {
		return nil, err
	}
	b, err := a.bytes()
	release(o)
	return b, err
}

// bytes is Bytes of an array whose memory is held.
func (a *Array) bytes() ([]byte, error) {
	if !a.Memory.Kind.HostAccessible() {
		return nil, errkind.New(errkind.Buffer, "usm.Array.Bytes", a.Memory.Kind.String()+" memory is not host-accessible")
	}
	w, err := a.Window()
	if err != nil {
		return nil, wrapLayout(err)
	}
	if err := a.Wait(); err != nil {
		return nil, err
	}
	if w.Empty() {
		return []byte{}, nil
	}
	return cmem.Bytes(a.Data+uintptr(w.Lo), uintptr(w.Len())), nil
}
