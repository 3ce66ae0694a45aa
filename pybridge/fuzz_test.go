package pybridge

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/exportledger"
	"github.com/usmbridge/usmbridge/usm"
)

// fuzzPrelude defines the hostile constructors a fuzz program is made of.
// The program never contains Python source of its own: fuzzProgram only
// chooses among these names and small integer arguments.
const fuzzPrelude = `
import ctypes, gc, numpy as np
KEEP = []
EXC = [ValueError, TypeError, OverflowError, ZeroDivisionError, KeyError, BufferError]
class IntSub(int):  # an int subclass whose str() and repr() lie
    def __str__(self): return "7"
    __repr__ = __str__
class RaiseIndex:
    def __init__(self, k): self.k = k
    def __index__(self): raise EXC[self.k % len(EXC)]("fuzz")
    def __int__(self): raise EXC[self.k % len(EXC)]("fuzz")
class BadIndex:  # __index__ returns a non-int
    def __index__(self): return 1.5
class TupleSub(tuple): pass
class ListSub(list):
    def __len__(self): return 3  # lies
class DictSub(dict):
    def __getitem__(self, k):
        v = dict.__getitem__(self, k)
        dict.__setitem__(self, k, None)  # the next read finds something else
        return v
class BadLen:
    def __init__(self, k): self.k = k
    def __len__(self):
        if self.k % 2: raise EXC[self.k % len(EXC)]("len")
        return 3
    def __getitem__(self, i): raise IndexError(i)
    def __iter__(self): raise TypeError("no")
class EqRaiser:  # collides with "shape"; once armed, comparing raises
    armed = False
    def __eq__(self, o):
        if self.armed: raise ValueError("eq")
        return NotImplemented
    def __hash__(self): return hash("shape")
    def __index__(self): return 1
def eqkey(d):
    e = EqRaiser(); k = {e: 1}; k.update(d); e.armed = True; return k
class Clearer:  # clears the container it sits in when read as an int
    def __init__(self, c): self.c = c
    def __index__(self):
        c = self.c
        if isinstance(c, dict): c.clear()
        else: del c[:]
        return 1
def mutlist(items):
    l = list(items); l.append(Clearer(l)); return l
def selflist():
    l = [1]; l.append(l); return l
def selfdict():
    d = {}; d["shape"] = d; d["data"] = d; return d
def mutdict(d):
    d = dict(d); d["offset"] = Clearer(d); return d
class S:  # the SUAI as a plain attribute
    def __init__(self, d): self.__sycl_usm_array_interface__ = d
class P:  # a property that builds a new dict on every read
    def __init__(self, f): self.f = f
    @property
    def __sycl_usm_array_interface__(self): return self.f()
class R:  # a property that raises
    def __init__(self, k): self.k = k
    @property
    def __sycl_usm_array_interface__(self): raise EXC[self.k % len(EXC)]("attr")
def capsule(name):
    # a capsule with a given name around a live 8-byte buffer
    buf = ctypes.create_string_buffer(8); KEEP.append(buf)
    ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
    ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return ctypes.pythonapi.PyCapsule_New(ctypes.addressof(buf), name, None)
def tensor(versioned, major, ndim, code, bits, lanes, devtype, devid, byte_offset, data, shape, strides, flags):
    # a DLManagedTensor(Versioned) with valid pointers (64 extents each,
    # DLPack's maximum ndim) and hostile values, no deleter
    sh = (ctypes.c_int64 * 64)(*shape); st = (ctypes.c_int64 * 64)(*strides)
    mem = ctypes.create_string_buffer(256)
    t = ctypes.create_string_buffer(96); KEEP.extend([sh, st, mem, t])
    p = ctypes.addressof(t); off = 0
    if versioned:
        ctypes.c_uint32.from_address(p).value = major
        ctypes.c_uint64.from_address(p + 24).value = flags
        off = 32
    ctypes.c_void_p.from_address(p + off).value = ctypes.addressof(mem) + data if data >= 0 else 0
    ctypes.c_int32.from_address(p + off + 8).value = devtype
    ctypes.c_int32.from_address(p + off + 12).value = devid
    ctypes.c_int32.from_address(p + off + 16).value = ndim
    ctypes.c_uint8.from_address(p + off + 20).value = code
    ctypes.c_uint8.from_address(p + off + 21).value = bits
    ctypes.c_uint16.from_address(p + off + 22).value = lanes
    ctypes.c_void_p.from_address(p + off + 24).value = ctypes.addressof(sh)
    ctypes.c_void_p.from_address(p + off + 32).value = ctypes.addressof(st) if strides else 0
    ctypes.c_uint64.from_address(p + off + 40).value = byte_offset
    ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
    ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return ctypes.pythonapi.PyCapsule_New(p, b"dltensor_versioned" if versioned else b"dltensor", None)
class DL:  # a DLPack producer; mode picks the __dlpack__ signature
    def __init__(self, cap, dev, mode): self.cap, self.dev, self.mode = cap, dev, mode
    def __dlpack__(self, *a, **kw):
        if self.mode == 1 and kw: raise TypeError("old signature")
        if self.mode == 2: raise EXC[len(kw) % len(EXC)]("dlpack")
        return self.cap()
    def __dlpack_device__(self): return self.dev()
`

// fuzzTypestrs are typestr values a program can pick (valid, odd, hostile).
var fuzzTypestrs = []string{`"|u1"`, `"<f4"`, `"<f8"`, `"|b1"`, `"<c8"`, `"|f4\x00junk"`, `""`, `"<f3"`, `">i4"`, `"|V8"`, `b"|u1"`}

// fuzzProgram decodes fuzz input into Python expressions built only from
// fuzzPrelude's constructors: a byte stream read as a sequence of choices
// (0 once it runs out, so every input decodes to some program).
type fuzzProgram struct {
	b     []byte
	nodes int
}

func (p *fuzzProgram) next() int {
	if len(p.b) == 0 {
		return 0
	}
	c := p.b[0]
	p.b = p.b[1:]
	return int(c)
}

func (p *fuzzProgram) int64() string {
	switch c := p.next(); c % 8 {
	case 0:
		return "0"
	case 1:
		return "-1"
	case 2:
		return "1 << 62"
	case 3:
		return "-(1 << 63)"
	case 4:
		return strconv.Itoa(p.next())
	default:
		return strconv.Itoa(c - 128)
	}
}

// value is one field value or container item.
func (p *fuzzProgram) value(depth int) string {
	p.nodes++
	if depth > 4 || p.nodes > 40 {
		return strconv.Itoa(p.next() % 9)
	}
	c := p.next()
	switch c % 24 {
	case 0:
		return strconv.Itoa(p.next() % 9)
	case 1:
		return "10**5000" // over 4300 digits
	case 2:
		return "-(10**" + strconv.Itoa(18+p.next()%3) + ")"
	case 3:
		return []string{"True", "False"}[p.next()%2]
	case 4:
		return "IntSub(" + strconv.Itoa(p.next()%9) + ")"
	case 5:
		return "RaiseIndex(" + strconv.Itoa(p.next()) + ")"
	case 6:
		return "BadIndex()"
	case 7, 8:
		return "(" + p.items(depth) + ",)"
	case 9:
		return "[" + p.items(depth) + "]"
	case 10:
		return "TupleSub((" + p.items(depth) + ",))"
	case 11:
		return "ListSub([" + p.items(depth) + "])"
	case 12:
		return "selflist()"
	case 13:
		return "selfdict()"
	case 14:
		return "mutlist([" + p.items(depth) + "])"
	case 15:
		return "None"
	case 16:
		return fuzzTypestrs[p.next()%len(fuzzTypestrs)]
	case 17:
		return "1.5"
	case 18:
		return "BadLen(" + strconv.Itoa(p.next()) + ")"
	case 19:
		return "(PTR + " + strconv.Itoa(p.next()-128) + ")"
	case 20:
		return "EqRaiser()"
	case 21:
		return "object()"
	case 22:
		return "{" + p.value(depth+1) + ": " + p.value(depth+1) + "}"
	default:
		return "np.int64(" + strconv.Itoa(p.next()%9) + ")"
	}
}

func (p *fuzzProgram) items(depth int) string {
	n := p.next() % 5
	s := make([]string, 0, n+1)
	s = append(s, p.value(depth+1))
	for range n {
		s = append(s, p.value(depth+1))
	}
	return strings.Join(s, ", ")
}

// suaiDict is a dict literal of SUAI fields: each is left out, valid, or
// a fuzz value.
func (p *fuzzProgram) suaiDict() string {
	fields := []struct{ key, good string }{
		{"data", "(PTR, False)"}, {"shape", "(4,)"}, {"strides", "None"}, {"typestr", `"|u1"`},
		{"version", "1"}, {"syclobj", `"host"`}, {"offset", "0"},
	}
	var s []string
	for _, f := range fields {
		switch p.next() % 4 {
		case 0:
		case 1:
			s = append(s, `"`+f.key+`": `+p.value(0))
		default:
			s = append(s, `"`+f.key+`": `+f.good)
		}
	}
	d := "{" + strings.Join(s, ", ") + "}"
	switch p.next() % 6 {
	case 1:
		return "DictSub(" + d + ")"
	case 2:
		return "mutdict(" + d + ")"
	case 3:
		return "eqkey(" + d + ")"
	}
	return d
}

// suai is an object that carries (or fails to carry) a SUAI.
func (p *fuzzProgram) suai() string {
	switch c := p.next(); c % 8 {
	case 0, 1, 2:
		return "S(" + p.suaiDict() + ")"
	case 3, 4:
		return "P(lambda: " + p.suaiDict() + ")"
	case 5:
		return "R(" + strconv.Itoa(p.next()) + ")"
	case 6:
		return "S(" + p.value(0) + ")"
	default:
		return p.value(0)
	}
}

// capsule is what a __dlpack__ returns.
func (p *fuzzProgram) capsule() string {
	switch p.next() % 8 {
	case 0:
		return p.value(2)
	case 1:
		return `capsule(` + []string{`b"dltensor_versionedX"`, `b"used_dltensor"`, `None`, `b"dltensor_"`, `b"used_dltensor_versioned"`}[p.next()%5] + `)`
	case 2:
		return "np.arange(" + strconv.Itoa(p.next()%9) + ".0).__dlpack__()"
	default:
		versioned := p.next() % 2
		major := []int{1, 0, 2, 255}[p.next()%4]
		ndim := []int{1, 2, 0, 3, -1, 64, 65, 1 << 30}[p.next()%8]
		code := []int{2, 0, 1, 4, 5, 6, 200}[p.next()%7]
		bits := []int{32, 8, 16, 64, 0, 1, 7}[p.next()%7]
		lanes := []int{1, 0, 4, 65535}[p.next()%4]
		devtype := []int{1, 14, 2, 3, -1, 1 << 30}[p.next()%6]
		devid := []int{0, 1, -1, 1 << 30}[p.next()%4]
		byteOffset := []string{"0", "4", "256", "1 << 63", "(1 << 64) - 1"}[p.next()%5]
		data := []int{0, -1, 8, 255, 1}[p.next()%5]
		shape := []string{"4", "2", p.int64(), "0"}
		strides := []string{"1", p.int64(), "-1"}
		return "tensor(" + strings.Join([]string{strconv.Itoa(versioned), strconv.Itoa(major), strconv.Itoa(ndim),
			strconv.Itoa(code), strconv.Itoa(bits), strconv.Itoa(lanes), strconv.Itoa(devtype), strconv.Itoa(devid),
			byteOffset, strconv.Itoa(data), "[" + strings.Join(shape, ", ") + "]", "[" + strings.Join(strides, ", ") + "]",
			strconv.Itoa(p.next())}, ", ") + ")"
	}
}

// producer is a __dlpack__ producer.
func (p *fuzzProgram) producer() string {
	var dev string
	switch p.next() % 4 {
	case 0:
		dev = "(1, 0)"
	case 1:
		dev = "(14, 0)"
	default:
		dev = p.value(1)
	}
	return "DL(lambda: " + p.capsule() + ", lambda: " + dev + ", " + strconv.Itoa(p.next()%3) + ")"
}

// fuzzEntry names the entry point a program drives.
var fuzzEntries = []string{"AsArray", "ParseSUAI", "FromDLPack", "parseDLPackArgs", "ImportCapsule"}

// documentedError reports whether err is what the boundary may return: a
// Python exception (propagated or raised for the object) or an error of
// one of usm's kinds, or errHostStream (NumPy's RuntimeError for a stream on
// a host array).
func documentedError(err error) bool {
	var e *Exception
	if errors.As(err, &e) {
		return true
	}
	for _, k := range []error{usm.ErrValue, usm.ErrType, usm.ErrBuffer, usm.ErrAttribute, usm.ErrNotSupported, usm.ErrOverflow, usm.ErrMemory, errHostStream} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// FuzzBoundary builds hostile Python objects from fuzz input (see
// fuzzProgram) and hands them to every Python-facing entry point: AsArray,
// ParseSUAI, FromDLPack, parseDLPackArgs and ImportCapsule. Whatever the
// object, the process lives, no Go panic escapes, the result is success or
// a documented error, and reference counts and live counters are back at
// their baseline once Go has let go.
func FuzzBoundary(f *testing.F) {
	// The seed corpus, testdata/fuzz/FuzzBoundary, has one input per
	// hostile class, named after it.
	py := embedded(f)
	host := new(cpu.Backend)
	alloc, err := host.AllocHost(256)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = alloc.Free() })
	reg := usm.NewRegistry(host)
	if err := py.Do(func(g *GIL) error {
		return g.Exec("PTR = " + strconv.FormatUint(uint64(alloc.Pointer()), 10) + "\n" + fuzzPrelude)
	}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p := &fuzzProgram{b: in}
		entry := fuzzEntries[p.next()%len(fuzzEntries)]
		var exprs []string
		switch entry {
		case "AsArray", "ParseSUAI":
			exprs = []string{p.suai()}
		case "FromDLPack":
			exprs = []string{p.producer()}
		case "parseDLPackArgs":
			for range 4 {
				exprs = append(exprs, p.value(0))
			}
		case "ImportCapsule":
			exprs = []string{p.capsule()}
		}
		before := exportledger.Read()
		var sentinels [3]int
		err := py.Do(func(g *GIL) error {
			refs := func() [3]int {
				var r [3]int
				for i, name := range []string{"IntSub", "DL", "S"} {
					o, err := g.Eval(name)
					if err != nil {
						t.Fatal(err)
					}
					r[i] = g.refCount(o) - 1
					g.DecRef(o)
				}
				return r
			}
			// A reference Go let go of in an earlier run (an *Exception
			// the garbage collector queued) was dropped on entry to Do;
			// what it kept alive may be a cycle: collect it before counting.
			if err := g.Exec("gc.collect()"); err != nil {
				return err
			}
			sentinels = refs()
			objs := make([]Object, len(exprs))
			for i, e := range exprs {
				o, err := g.Eval(e)
				if err != nil {
					// The constructor itself refused (an __index__ raising in
					// a tuple literal is fine; it is not the boundary's).
					for _, o := range objs[:i] {
						g.DecRef(o)
					}
					t.Logf("constructing %s: %v", e, err)
					g.ReleaseError(err)
					return nil
				}
				objs[i] = o
			}
			var err error
			switch entry {
			case "AsArray":
				var a *usm.Array
				if a, err = g.AsArray(objs[0], reg); err == nil {
					a.Owner.Release()
				}
			case "ParseSUAI":
				_, err = g.parseSUAI(objs[0])
			case "FromDLPack":
				var tn *dlpack.Tensor
				if tn, err = g.FromDLPack(objs[0], FromDLPackOptions{Registry: reg}); err == nil {
					tn.Release()
				}
			case "parseDLPackArgs":
				// The stream rules differ by the array's device: both are fuzzed.
				_, err = g.parseDLPackArgs(dlpack.Device{Type: dlpack.CPU}, objs[0], objs[1], objs[2], objs[3])
				if _, e := g.parseDLPackArgs(dlpack.Device{Type: dlpack.OneAPI}, objs[0], objs[1], objs[2], objs[3]); e != nil && !documentedError(e) {
					t.Errorf("parseDLPackArgs(kDLOneAPI; %s): undocumented error %T: %v", strings.Join(exprs, "; "), e, e)
				}
			case "ImportCapsule":
				var tn *dlpack.Tensor
				if tn, err = g.importCapsule(objs[0], reg); err == nil {
					tn.Release()
				}
			}
			t.Logf("%s(%s): %v", entry, strings.Join(exprs, "; "), err)
			if err != nil {
				if !documentedError(err) {
					t.Errorf("%s(%s): undocumented error %T: %v", entry, strings.Join(exprs, "; "), err, err)
				}
				g.ReleaseError(err)
			}
			for _, o := range objs {
				g.DecRef(o)
			}
			if err := g.Exec("KEEP.clear(); gc.collect()"); err != nil {
				return err
			}
			if after := refs(); after != sentinels {
				t.Errorf("%s(%s): class reference counts %v, were %v", entry, strings.Join(exprs, "; "), after, sentinels)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s(%s): %v", entry, strings.Join(exprs, "; "), err)
		}
		after := exportledger.Read()
		if after.LiveExports != before.LiveExports || after.LiveImports != before.LiveImports || after.Panics != before.Panics || after.LiveCBlocks != before.LiveCBlocks {
			t.Fatalf("%s(%s): counters %+v, were %+v", entry, strings.Join(exprs, "; "), after, before)
		}
	})
}
