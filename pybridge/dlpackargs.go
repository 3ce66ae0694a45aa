package pybridge

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/pyapi"
	"github.com/usmbridge/usmbridge/usm"
)

// parseDLPackArgs validates __dlpack__'s keywords for an array on device
// dev (its __dlpack_device__) as the array API, NumPy and dpctl do:
// max_version and dl_device are None or 2-tuples of integers (TypeError
// otherwise; an exception an item's __index__ raises propagates), copy is
// None or read as NumPy reads it (copyFlag). Integers are read by value, never truncated: a dl_device
// whose type or id does not fit DLPack's int32 is a device nobody supports
// (BufferError); a max_version beyond uint32 asks for any version (it is
// capped), and a negative one is a ValueError.
//
// stream follows the array's device (RATIONALE.md, "__dlpack__'s
// stream", has the reasons):
//   - kDLCPU (and any device other than kDLOneAPI): only None, as NumPy;
//     anything else is errHostStream, with the class the process's NumPy
//     raises (RuntimeError up to NumPy 2.4, ValueError from 2.5 on).
//   - kDLOneAPI: None (the export waits on the array's queue); -1, the
//     array API's "no synchronization" (ExportOptions.NoSync; the consumer
//     owns the ordering); a dpctl.SyclQueue (dpctl's convention,
//     ExportOptions.Stream: the queue is ordered after the array's queue
//     on the device, and the export returns without waiting; where the
//     two cannot be ordered on the device, the array's queue is waited
//     on). With a kDLCPU dl_device
//     any stream but None is a ValueError, as dpctl. Any other integer is a
//     ValueError (SYCL has no integer stream convention, and a raw
//     sycl::queue* cannot be validated); a bool or any other object is the
//     TypeError dpctl raises.
//
// Callers that parse only dl_device and copy (an import) pass a nil stream;
// dev is then not looked at.
func (g *GIL) parseDLPackArgs(dev dlpack.Device, stream, maxVersion, dlDevice, copyArg Object) (dlpack.ExportOptions, error) {
	var o dlpack.ExportOptions
	mv, ok, err := g.dlpackPair(maxVersion, "max_version", "integers `(major, minor)`")
	if err != nil {
		return o, err
	}
	if ok {
		var v [2]uint32
		for i, x := range mv {
			switch {
			case x.overflow < 0 || (x.overflow == 0 && x.v < 0):
				return o, errkind.New(errkind.Value, "__dlpack__", "max_version out of range: "+g.reprOf(maxVersion))
			case x.overflow > 0 || x.v > math.MaxUint32:
				v[i] = math.MaxUint32
			default:
				v[i] = uint32(x.v)
			}
		}
		o.MaxVersion = &dlpack.Version{Major: v[0], Minor: v[1]}
	}
	dd, ok, err := g.dlpackPair(dlDevice, "dl_device", "`(device_type, device_id)`")
	if err != nil {
		return o, err
	}
	if ok {
		for _, x := range dd {
			if x.overflow != 0 || x.v != int64(int32(x.v)) {
				return o, errkind.New(errkind.Buffer, "__dlpack__", "unsupported device requested: "+g.reprOf(dlDevice)+" (DLPack device types and ids are 32-bit)")
			}
		}
		o.Device = &dlpack.Device{Type: dlpack.DeviceType(dd[0].v), ID: int32(dd[1].v)}
	}
	if !copyArg.isNil() && !g.isNone(copyArg) {
		c, err := g.copyFlag(copyArg)
		if err != nil {
			return o, err
		}
		o.Copy = dlpack.CopyNever
		if c {
			o.Copy = dlpack.CopyAlways
		}
	}
	if !stream.isNil() && !g.isNone(stream) {
		noSync, err := g.dlpackStream(dev, stream, o.Device)
		if err != nil {
			return o, err
		}
		o.NoSync = noSync
		if !noSync {
			o.Stream = g.streamQueue(stream)
		}
	}
	return o, nil
}

// copyFlag reads a copy keyword that is not None as NumPy's copy
// converter does, so both peers' consumers and producers agree with us on
// what they pass: a str is a ValueError (copy="never" is not a bool), and
// anything else is its truth value, so numpy.True_ is True and an
// exception bool() raises (the ValueError of a many-element array)
// propagates as itself.
func (g *GIL) copyFlag(c Object) (bool, error) {
	if g.api().HasFlag(c.p, pyapi.TPFlagsUnicodeSubclass) {
		return false, errkind.New(errkind.Value, "__dlpack__", "`copy` must be True, False or None, got the string "+g.reprOf(c))
	}
	return g.truth(c.p)
}

// noSyncStream is the stream value of the array API's "producer must not
// perform any synchronization": __dlpack__(stream=-1), what mpi4py asks of
// every non-CPU producer.
const noSyncStream = -1

// streamQueue returns the dpctl.SyclQueue stream (checked by dlpackStream)
// as a queue that dlpack.Export can order after the array's: borrowed,
// valid while the caller holds stream (for the __dlpack__ call). nil, so
// that Export waits on the host instead, if its ref cannot be read.
func (g *GIL) streamQueue(stream Object) usm.Queue {
	ty := g.dpctlTypes()
	if ty.queueRef == 0 {
		return nil
	}
	ref := ty.queueRef.Call1(stream.p)
	if ref == 0 {
		return nil
	}
	d, err := g.dpctlUnderGIL()
	if err != nil {
		return nil
	}
	return d.UnsafeBorrowQueue(ref)
}

// errHostStream is parseDLPackArgs's error for a stream other than None
// on an array that is not kDLOneAPI. It has no error kind, so Python sees a
// RuntimeError: the exception NumPy up to 2.4 raises for the same call.
// NumPy 2.5 raises ValueError instead; hostStreamError gives the class of
// the NumPy the process has.
var errHostStream = errors.New("__dlpack__: only stream=None is supported for an array on a device without streams (kDLCPU)")

// valueError is an error of kind errkind.Value with the text and chain of
// the error it holds.
type valueError struct{ error }

func (e valueError) Is(target error) bool { return target == errkind.Value }

func (e valueError) Unwrap() error { return e.error }

// hostStreamError is errHostStream as the process's NumPy raises it for
// the same call (RATIONALE.md, "__dlpack__'s stream"): a ValueError, which
// still matches errHostStream, when the numpy in sys.modules is 2.5 or
// later; else (NumPy up to 2.4, or no numpy imported) the RuntimeError.
func (g *GIL) hostStreamError() error {
	if g.numpyAtLeast(2, 5) {
		return valueError{errHostStream}
	}
	return errHostStream
}

// numpyAtLeast reports whether sys.modules holds a numpy whose __version__
// is major.minor or later. It imports nothing; a numpy whose version it
// cannot read counts as older.
func (g *GIL) numpyAtLeast(major, minor int) bool {
	a := g.api()
	sys, err := g.importModule("sys")
	if err != nil {
		g.ReleaseError(err)
		return false
	}
	defer g.DecRef(sys)
	mods, err := g.getAttr(sys, "modules")
	if err != nil {
		g.ReleaseError(err)
		return false
	}
	defer g.DecRef(mods)
	np := a.DictGetItemString(mods.p, "numpy")
	if np == 0 {
		return false
	}
	a.IncRef(np) // the attribute lookup may run a module __getattr__
	defer a.DecRef(np)
	v, err := g.getAttr(Object{np}, "__version__")
	if err != nil {
		g.ReleaseError(err)
		return false
	}
	defer g.DecRef(v)
	s, ok := a.UnicodeAsString(v.p)
	if !ok {
		a.ErrClear()
		return false
	}
	// "2.4.6", "2.5.0rc1", "2.6.0.dev0+git...": the first two fields.
	f := strings.SplitN(s, ".", 3)
	if len(f) < 2 {
		return false
	}
	lead := func(s string) (int, error) { // the digits s starts with
		i := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return strconv.Atoi(s[:i])
	}
	vmajor, err1 := lead(f[0])
	vminor, err2 := lead(f[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return vmajor > major || vmajor == major && vminor >= minor
}

// dlpackStream applies parseDLPackArgs's stream rules to a stream that is
// not None; noSync is true for -1 on a kDLOneAPI array.
func (g *GIL) dlpackStream(dev dlpack.Device, stream Object, dlDevice *dlpack.Device) (noSync bool, err error) {
	if !dlabi.AcceptsNoSync(dev) {
		return false, g.hostStreamError()
	}
	if dlDevice != nil && dlDevice.Type == dlpack.CPU {
		return false, errkind.New(errkind.Value, "__dlpack__", "`stream` must be `None` when `dl_device` is of type `kDLCPU`")
	}
	a := g.api()
	if a.HasFlag(stream.p, pyapi.TPFlagsLongSubclass) && a.Type(stream.p) != a.BoolType {
		x, overflow, err := g.longValue(stream.p)
		if err != nil {
			return false, err
		}
		if overflow == 0 && x == noSyncStream {
			return true, nil
		}
		return false, errkind.New(errkind.Value, "__dlpack__", "an integer stream for a kDLOneAPI array must be -1 (no synchronization), got "+g.reprOf(stream)+"; pass a dpctl.SyclQueue to order a queue after the array's work")
	}
	ty := g.dpctlTypes()
	isQueue := 0
	if ty.queue != 0 {
		// isinstance reads the stream's __class__: what that raises is
		// the caller's, as dpctl's isinstance check would raise it.
		if isQueue = a.IsInstance(stream.p, ty.queue); isQueue < 0 {
			return false, g.fetch("stream")
		}
	}
	if isQueue == 0 {
		return false, errkind.New(errkind.Type, "__dlpack__", "stream argument type was expected to be dpctl.SyclQueue, got "+g.objTypeName(stream)+" instead")
	}
	return false, nil
}

// dlpackInt is an integer keyword item: its value, or the sign of a value
// outside int64.
type dlpackInt struct {
	v        int64
	overflow int
}

// dlpackPair reads the keyword v, None or a 2-tuple of integers; ok is
// false for None (or absent). The tuple belongs to the caller, and a
// tuple's items cannot be replaced, so they live while __index__ runs.
func (g *GIL) dlpackPair(v Object, what, form string) (r [2]dlpackInt, ok bool, err error) {
	if v.isNil() || g.isNone(v) {
		return r, false, nil
	}
	a := g.api()
	bad := func() error {
		return errkind.New(errkind.Type, "__dlpack__", "`__dlpack__` expects `"+what+"` to be a 2-tuple of "+form+", instead got "+g.reprOf(v))
	}
	if !a.HasFlag(v.p, pyapi.TPFlagsTupleSubclass) || a.SeqSize(v.p) != 2 {
		return r, false, bad()
	}
	for i := range r {
		x, of, err := g.intValue(a.TupleItem(v.p, i))
		var re *usm.ReadError
		if errors.As(err, &re) {
			return r, false, bad()
		}
		if err != nil {
			return r, false, err
		}
		r[i] = dlpackInt{x, of}
	}
	return r, true, nil
}

// DLPackOptions reads __dlpack__'s keywords for an array on dev, with the
// array API's rules and exceptions (and dpctl's for streams): stream None,
// -1 (no synchronization, kDLOneAPI arrays only) or a dpctl.SyclQueue;
// max_version and dl_device 2-tuples of ints; copy None, True or False.
// NULL Objects are keywords not given.
func (g *GIL) DLPackOptions(dev dlpack.Device, stream, maxVersion, dlDevice, copyArg Object) (dlpack.ExportOptions, error) {
	return g.parseDLPackArgs(dev, stream, maxVersion, dlDevice, copyArg)
}
