package dlpack_test

import (
	"encoding/binary"
	"testing"

	"github.com/usmbridge/usmbridge/cpu"
	"github.com/usmbridge/usmbridge/dlpack"
	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/dlabi"
	"github.com/usmbridge/usmbridge/usm"
)

// FuzzImport builds producer tensors from fuzz input — any version, ndim,
// dtype, device, byte_offset, data pointer, shape and strides — and checks
// that Import never crashes, never reads past the arrays it was given,
// keeps the producer's dtype, imports a legacy tensor read-only, and calls
// the deleter exactly once whether it accepts or refuses.
func FuzzImport(f *testing.F) {
	// header: versioned, major, ndim, code, bits, lanes, devType, devID,
	// dataSel, byteOffset, stridesNull; then int64 extents and strides.
	seed := func(versioned, major uint8, ndim int32, code, bits uint8, lanes uint16, devType, devID int32, dataSel uint8, byteOffset uint64, stridesNull bool, vals ...int64) []byte {
		b := []byte{versioned, major}
		b = binary.LittleEndian.AppendUint32(b, uint32(ndim))
		b = append(b, code, bits)
		b = binary.LittleEndian.AppendUint16(b, lanes)
		b = binary.LittleEndian.AppendUint32(b, uint32(devType))
		b = binary.LittleEndian.AppendUint32(b, uint32(devID))
		b = append(b, dataSel)
		b = binary.LittleEndian.AppendUint64(b, byteOffset)
		if stridesNull {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	f.Add(seed(1, 1, 2, 2, 32, 1, 1, 0, 1, 0, false, 4, 8, 8, 1))
	f.Add(seed(0, 0, 1, 0, 8, 1, 1, 0, 1, 3, true, 5))
	f.Add(seed(1, 2, 1, 2, 32, 1, 1, 0, 1, 0, false, 4, 1))
	f.Add(seed(1, 1, -1, 2, 32, 1, 1, 0, 1, 0, false))
	f.Add(seed(1, 1, 1<<30, 2, 32, 1, 1, 0, 1, 0, false))
	f.Add(seed(1, 1, 3, 2, 32, 1, 1, 0, 0, 0, true))
	f.Add(seed(1, 1, 2, 2, 32, 1, 1, 0, 1, 0, false, 1<<62, 1<<62, 1, 1))
	f.Add(seed(1, 1, 1, 4, 16, 1, 1, 0, 1, 0, false, 2, 1))
	f.Add(seed(1, 1, 1, 200, 32, 1, 1, 0, 1, 0, false, 2, 1))
	f.Add(seed(1, 1, 1, 2, 32, 4, 1, 0, 1, 0, false, 2, 1))
	f.Add(seed(1, 1, 1, 2, 32, 1, 14, 0, 2, 0, false, 16, 1))
	f.Add(seed(1, 1, 1, 2, 32, 1, 14, 0, 2, 0, false, 17, -1))
	f.Add(seed(1, 1, 1, 2, 32, 1, 2, 0, 1, 0, false, 2, 1))
	f.Add(seed(1, 1, 1, 2, 32, 1, 1, 0, 3, 1<<63, false, 2, -1))
	// Every DLPack 1.1 type code, at its own width and at one it lacks;
	// the sub-byte codes as PyTorch writes float4 (two lanes).
	for code := uint8(0); code <= 17; code++ {
		f.Add(seed(1, 1, 1, code, 8, 1, 1, 0, 1, 0, false, 16, 1))
		f.Add(seed(0, 0, 1, code, 16, 1, 1, 0, 1, 0, false, 8, 1))
	}
	f.Add(seed(1, 1, 1, 5, 32, 1, 1, 0, 1, 0, false, 8, 1))
	f.Add(seed(1, 1, 1, 17, 4, 2, 1, 0, 1, 0, false, 8, 1))
	f.Add(seed(1, 1, 1, 15, 6, 1, 1, 0, 1, 0, false, 8, 1))

	sycl := newFakeSYCL()
	host := new(cpu.Backend)
	reg := usm.NewRegistry(sycl, host)
	dev, err := sycl.Alloc(0, usm.KindShared, 64)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = dev.Free() })
	hostBuf := cmem.Alloc(256)
	f.Cleanup(func() { cmem.Free(hostBuf, 256) })

	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 28 {
			return
		}
		fo := foreign{
			versioned: in[0]&1 == 1,
			major:     uint32(in[1]),
			ndim:      int32(binary.LittleEndian.Uint32(in[2:])),
			dtype:     dlabi.DataType{Code: dlabi.TypeCode(in[6]), Bits: in[7], Lanes: binary.LittleEndian.Uint16(in[8:])},
			device:    dlpack.Device{Type: dlpack.DeviceType(int32(binary.LittleEndian.Uint32(in[10:]))), ID: int32(binary.LittleEndian.Uint32(in[14:]))},
		}
		switch in[18] % 4 {
		case 1:
			fo.data = hostBuf
		case 2:
			fo.data = dev.Pointer()
		case 3:
			fo.data = ^uintptr(0) - 64
		}
		fo.byteOffset = binary.LittleEndian.Uint64(in[19:])
		stridesNull := in[27]&1 == 1
		rest := in[28:]
		var vals []int64
		for len(rest) >= 8 && len(vals) < 2*dlabi.MaxNdim {
			vals = append(vals, int64(binary.LittleEndian.Uint64(rest)))
			rest = rest[8:]
		}
		// Give Import arrays of exactly ndim entries when ndim is sane, so
		// any read past them would be a bug; otherwise NULL or short ones
		// (Import must refuse those without reading).
		if fo.ndim >= 0 && int(fo.ndim) <= dlabi.MaxNdim {
			n := int(fo.ndim)
			fo.shape = make([]int64, n)
			copy(fo.shape, vals)
			if !stridesNull {
				fo.strides = make([]int64, n)
				if len(vals) > n {
					copy(fo.strides, vals[n:])
				}
			}
			if n > 0 && len(vals) == 0 {
				fo.shape = nil // NULL shape with ndim > 0
			}
		}
		m, id := fo.build(t)
		tn, err := dlpack.Import(m, dlpack.ImportOptions{Registry: reg})
		if err != nil {
			if deletesOf(id) != 1 {
				t.Fatalf("refused import called the deleter %d times: %v", deletesOf(id), err)
			}
			if usm.PythonException(err) == "RuntimeError" {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		if _, werr := tn.Window(); werr != nil {
			t.Fatalf("accepted a tensor with an invalid layout: %v", werr)
		}
		if dt, derr := tn.DType.DataType(); derr != nil || dt != fo.dtype {
			t.Fatalf("accepted dtype %v as %v (%v, %v)", fo.dtype, tn.DType, dt, derr)
		}
		if !fo.versioned && !tn.ReadOnly {
			t.Fatal("a legacy tensor, which cannot say it is writable, imported writable")
		}
		if deletesOf(id) != 0 {
			t.Fatal("deleter ran before release")
		}
		tn.Release()
		if deletesOf(id) != 1 {
			t.Fatalf("release called the deleter %d times", deletesOf(id))
		}
	})
}
