//go:build cgo

package pyext

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
)

// hostile is a producer's tensor as fuzz input describes it: every field of
// DLManagedTensor(Versioned) the import reads.
type hostile struct {
	versioned          bool
	major, minor       uint32
	flags              uint64
	data               uintptr
	device             dlabi.Device
	ndim               int32
	dtype              dlabi.DataType
	byteOffset         uint64
	nullShape, nullStr bool
	shape, strides     []int64
}

// hostileHeader is the fixed part of the encoding, then int64 extents and
// strides.
const hostileHeader = 1 + 4 + 4 + 8 + 8 + 4 + 4 + 4 + 1 + 1 + 2 + 8 + 1

func decodeHostile(in []byte) (h hostile, ok bool) {
	if len(in) < hostileHeader {
		return h, false
	}
	le := binary.LittleEndian
	h.versioned = in[0]&1 == 1
	h.nullShape, h.nullStr = in[0]&2 != 0, in[0]&4 != 0
	h.major, h.minor = le.Uint32(in[1:]), le.Uint32(in[5:])
	h.flags = le.Uint64(in[9:])
	h.data = uintptr(le.Uint64(in[17:]))
	h.device = dlabi.Device{Type: dlabi.DeviceType(int32(le.Uint32(in[25:]))), ID: int32(le.Uint32(in[29:]))}
	h.ndim = int32(le.Uint32(in[33:]))
	h.dtype = dlabi.DataType{Code: dlabi.TypeCode(in[37]), Bits: in[38], Lanes: le.Uint16(in[39:])}
	h.byteOffset = le.Uint64(in[41:])
	rest := in[hostileHeader:]
	n := 0
	if h.ndim > 0 {
		n = int(min(h.ndim, maxNdim))
	}
	vals := make([]int64, 2*n)
	for i := range vals {
		if len(rest) >= 8 {
			vals[i] = int64(le.Uint64(rest))
			rest = rest[8:]
		}
	}
	h.shape, h.strides = vals[:n], vals[n:]
	return h, true
}

func (h hostile) encode() []byte {
	le := binary.LittleEndian
	b := []byte{0}
	if h.versioned {
		b[0] |= 1
	}
	if h.nullShape {
		b[0] |= 2
	}
	if h.nullStr {
		b[0] |= 4
	}
	b = le.AppendUint32(b, h.major)
	b = le.AppendUint32(b, h.minor)
	b = le.AppendUint64(b, h.flags)
	b = le.AppendUint64(b, uint64(h.data))
	b = le.AppendUint32(b, uint32(h.device.Type))
	b = le.AppendUint32(b, uint32(h.device.ID))
	b = le.AppendUint32(b, uint32(h.ndim))
	b = append(b, byte(h.dtype.Code), h.dtype.Bits)
	b = le.AppendUint16(b, h.dtype.Lanes)
	b = le.AppendUint64(b, h.byteOffset)
	b = append(b, 0)
	for _, v := range append(append([]int64(nil), h.shape...), h.strides...) {
		b = le.AppendUint64(b, uint64(v))
	}
	return b
}

// build writes the tensor in C memory (no deleter: neither import calls
// one); free releases it.
func (h hostile) build() (p uintptr, free func()) {
	n := len(h.shape)
	size := unsafe.Sizeof(dlabi.ManagedTensorVersioned{}) + uintptr(16*n+16)
	p = cmem.Alloc(size)
	dims := p + unsafe.Sizeof(dlabi.ManagedTensorVersioned{})
	d := unsafe.Slice((*int64)(cmem.Ptr(dims)), 2*n+2)
	copy(d, h.shape)
	copy(d[n:], h.strides)
	t := dlabi.Tensor{Data: h.data, Device: h.device, Ndim: h.ndim, DType: h.dtype, ByteOffset: h.byteOffset}
	if !h.nullShape {
		t.Shape = dims
	}
	if !h.nullStr {
		t.Strides = dims + uintptr(8*n)
	}
	if h.versioned {
		*(*dlabi.ManagedTensorVersioned)(cmem.Ptr(p)) = dlabi.ManagedTensorVersioned{
			Version: dlabi.Version{Major: h.major, Minor: h.minor}, Flags: h.flags, DLTensor: t}
	} else {
		*(*dlabi.ManagedTensor)(cmem.Ptr(p)) = dlabi.ManagedTensor{DLTensor: t}
	}
	return p, func() { cmem.Free(p, size) }
}

// goImportHost is Go's verdict on the tensor at p: dlpack.Import without a
// registry (host memory), then dlpack.Export's form of the array, which is
// what the Array's exports hand out.
func goImportHost(p uintptr, versioned bool) (v view, shape, strides []int64, ok bool) {
	t, err := dlpack.Import(dlpack.UnsafeManaged(p, versioned), dlpack.ImportOptions{KeepOnError: true})
	if err != nil {
		return view{}, nil, nil, false
	}
	defer t.Release() // the tensor has no deleter
	m, err := dlpack.Export(&t.Array, dlpack.ExportOptions{MaxVersion: &dlpack.ProducerVersion, NoSync: true})
	if err != nil {
		return view{}, nil, nil, false
	}
	defer m.Delete()
	mt := (*dlabi.ManagedTensorVersioned)(cmem.Ptr(m.Pointer()))
	v.t, v.flags = mt.DLTensor, mt.Flags&dlabi.FlagReadOnly
	n := int(v.t.Ndim)
	if n > 0 {
		shape = append(shape, unsafe.Slice((*int64)(cmem.Ptr(v.t.Shape)), n)...)
		strides = append(strides, unsafe.Slice((*int64)(cmem.Ptr(v.t.Strides)), n)...)
	}
	return v, shape, strides, true
}

// FuzzHostImport feeds the same hostile DLPack tensors to the C half's
// import (dlimport.c) and to dlpack.Import, and holds them equal: both
// take the tensor or neither does, and when they do, the same layout —
// data pointer, byte_offset, device, ndim, dtype, shape, strides and the
// read-only flag of the form dlpack.Export gives the array. C's import is
// a repetition of Go's rules for speed; this is what keeps it one rule.
func FuzzHostImport(f *testing.F) {
	buf := cmem.Alloc(4096) // a real host buffer for tensors that need one
	defer cmem.Free(buf, 4096)
	for _, h := range hostileSeeds(buf) {
		f.Add(h.encode())
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		h, ok := decodeHostile(in)
		if !ok {
			return
		}
		p, free := h.build()
		defer free()
		gv, gs, gst, gok := goImportHost(p, h.versioned)
		cv, cs, cst, cok := cImportHost(p, h.versioned)
		if gok != cok {
			t.Fatalf("Go takes the tensor: %v, C: %v (%+v)", gok, cok, h)
		}
		if !gok {
			return
		}
		cv.t.Shape, cv.t.Strides, gv.t.Shape, gv.t.Strides = 0, 0, 0, 0
		if gv.t != cv.t || gv.flags != cv.flags {
			t.Fatalf("the layouts differ:\n Go %+v flags %d\n  C %+v flags %d\n(%+v)", gv.t, gv.flags, cv.t, cv.flags, h)
		}
		if !equalInts(gs, cs) || !equalInts(gst, cst) {
			t.Fatalf("shape/strides differ: Go %v %v, C %v %v (%+v)", gs, gst, cs, cst, h)
		}
	})
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// hostileSeeds are tensors that each field's rule decides: a mutant of
// either import that ignores a field takes one the other refuses, or makes
// another layout, on at least one of them (the mutation checks in
// RATIONALE.md, "One host import, held to Go's").
func hostileSeeds(buf uintptr) []hostile {
	f32 := dlabi.DataType{Code: dlabi.Float, Bits: 32, Lanes: 1}
	cpu := dlabi.Device{Type: dlabi.CPU}
	ok := hostile{versioned: true, major: 1, minor: 2, data: buf, device: cpu, ndim: 2, dtype: f32,
		shape: []int64{3, 4}, strides: []int64{4, 1}}
	with := func(fn func(h *hostile)) hostile {
		h := ok
		h.shape, h.strides = append([]int64(nil), ok.shape...), append([]int64(nil), ok.strides...)
		fn(&h)
		return h
	}
	return []hostile{
		ok,
		with(func(h *hostile) { h.versioned = false }),                                             // legacy: read-only
		with(func(h *hostile) { h.major = 2 }),                                                     // version
		with(func(h *hostile) { h.major = 0 }),                                                     // version
		with(func(h *hostile) { h.flags = dlabi.FlagReadOnly }),                                    // flags
		with(func(h *hostile) { h.flags = dlabi.FlagIsCopied | dlabi.FlagReadOnly | 1<<40 }),       // flags
		with(func(h *hostile) { h.dtype = dlabi.DataType{Code: dlabi.Float, Bits: 64, Lanes: 1} }), // dtype: another layout
		with(func(h *hostile) { h.dtype = dlabi.DataType{Code: dlabi.Float, Bits: 12, Lanes: 1} }), // dtype refused
		with(func(h *hostile) { h.dtype = dlabi.DataType{Code: dlabi.Float, Bits: 32, Lanes: 4} }), // lanes
		with(func(h *hostile) { h.dtype = dlabi.DataType{Code: 200, Bits: 32, Lanes: 1} }),         // code
		with(func(h *hostile) { h.dtype = dlabi.DataType{Code: dlabi.OpaqueHandle, Bits: 64, Lanes: 1} }),
		with(func(h *hostile) { h.ndim = -1 }),          // ndim
		with(func(h *hostile) { h.ndim = maxNdim + 1 }), // ndim
		with(func(h *hostile) { h.ndim = 1; h.shape, h.strides = []int64{3}, []int64{1} }),
		with(func(h *hostile) { h.ndim = 0; h.shape, h.strides = nil, nil }),
		with(func(h *hostile) { h.nullShape = true }),                                              // shape NULL
		with(func(h *hostile) { h.shape[0] = -1 }),                                                 // shape
		with(func(h *hostile) { h.shape[0] = 0 }),                                                  // shape: empty
		with(func(h *hostile) { h.shape = []int64{1 << 62, 1 << 62} }),                             // shape overflows
		with(func(h *hostile) { h.ndim = 1; h.shape, h.strides = []int64{1<<61 + 1}, []int64{0} }), // count fits, bytes do not
		with(func(h *hostile) { h.nullStr = true }),                                                // strides NULL: C order
		with(func(h *hostile) { h.strides = []int64{1, 3} }),                                       // strides: another layout
		with(func(h *hostile) { h.strides = []int64{-4, 1} }),                                      // negative: data moves
		with(func(h *hostile) { h.strides = []int64{1 << 62, 1} }),                                 // strides overflow
		with(func(h *hostile) { h.ndim = 1; h.shape, h.strides = []int64{2}, []int64{1 << 62} }),   // bytes overflow
		with(func(h *hostile) { h.ndim = 1; h.shape, h.strides = []int64{2}, []int64{-1 << 62} }),  // below overflows
		with(func(h *hostile) { h.shape, h.nullStr = []int64{1 << 32, 1 << 32}, true }),            // the count overflows, not an extent
		with(func(h *hostile) { // the window's length overflows, not its ends
			h.dtype = dlabi.DataType{Code: dlabi.Int, Bits: 8, Lanes: 1}
			h.shape, h.strides = []int64{2, 2}, []int64{1 << 62, -(1<<62 + 1)}
		}),
		with(func(h *hostile) { h.byteOffset = 16 }),                               // byte_offset
		with(func(h *hostile) { h.byteOffset = 1 << 63 }),                          // byte_offset wraps
		with(func(h *hostile) { h.data = 0 }),                                      // NULL data
		with(func(h *hostile) { h.data = 0; h.shape[0] = 0 }),                      // NULL data, empty
		with(func(h *hostile) { h.data = 1<<56 - 8 }),                              // above user space
		with(func(h *hostile) { h.data = ^uintptr(0) - 8 }),                        // wraps
		with(func(h *hostile) { h.device = dlabi.Device{Type: dlabi.CPU, ID: 1} }), // device id
		with(func(h *hostile) { h.device = dlabi.Device{Type: dlabi.OneAPI} }),     // device type
		with(func(h *hostile) { h.device = dlabi.Device{Type: dlabi.CUDA} }),       // device type
		with(func(h *hostile) { h.dtype = dlabi.DataType{Code: dlabi.Bool, Bits: 8, Lanes: 1} }),
		with(func(h *hostile) { h.dtype = dlabi.DataType{Code: dlabi.Complex, Bits: 128, Lanes: 1} }),
	}
}
