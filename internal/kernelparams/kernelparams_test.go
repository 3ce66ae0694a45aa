package kernelparams

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// The kernels of internal/testutil/testdata/kernels.cl, compiled to SPIR-V
// by scripts/spirv.sh, read as their OpenCL C declares them.
func TestFromSPIRVKernelsCL(t *testing.T) {
	got := FromSPIRV(testutil.SPIRV(t))
	assert.Equal(t, map[string][]Kind{
		"saxpy":     {Value, Global, Value, Global, Value},
		"iota2d":    {Global, Value, Value},
		"fill":      {Global, Value},
		"scale_add": {Global, Value, Value},
		"empty":     {},
	}, got)
}

// Every address space and a struct passed by value, compiled by the same
// tools (the opencl backend's test holds these against what the OpenCL
// runtimes say of the same source).
func TestFromSPIRVSpaces(t *testing.T) {
	got := FromSPIRV(testutil.CompileSPIRV(t, SpacesSource))
	assert.Equal(t, SpacesKinds, got)
}

// SpacesSource declares a parameter of each kind; SpacesKinds is what
// they are.
const SpacesSource = `
typedef struct { float a; int b[5]; } pair;
kernel void spaces(global float* y, constant float* c, local float* tmp, float v, pair p, float4 w, global const int* restrict r) {
    tmp[0] = v + p.a + w.x + p.b[2] + r[0];
    y[get_global_id(0)] = c[0] + tmp[0];
}
kernel void images(read_only image2d_t im, sampler_t s, global float4* out, int k, write_only image2d_t w) {
    out[0] = read_imagef(im, s, (int2)(0, k));
    write_imagef(w, (int2)(0, 0), out[0]);
}
`

var SpacesKinds = map[string][]Kind{
	"spaces": {Global, Global, Local, Value, Value, Value, Global},
	"images": {Opaque, Opaque, Global, Value, Opaque},
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		k       Kind
		pointer bool
		refused string
	}{
		{Unknown, false, ""}, {Unknown, true, ""},
		{Value, false, ""}, {Value, true, ""},
		{Global, true, ""}, {Global, false, "is a pointer to __global or __constant memory; got a scalar"},
		{Local, true, "is __local memory"}, {Local, false, "is __local memory"},
		{Opaque, true, "is an image, a sampler, a pipe or a queue"}, {Opaque, false, "is an image, a sampler, a pipe or a queue"},
	} {
		err := Check("op", "k", 3, c.k, c.pointer)
		if c.refused == "" {
			assert.NoError(t, err, "%v pointer=%v", c.k, c.pointer)
			continue
		}
		require.Error(t, err)
		assert.ErrorIs(t, err, errkind.Value)
		assert.ErrorContains(t, err, `argument 3 of kernel "k" `+c.refused)
	}
}

// A module FromSPIRV cannot read gives no kernels, or what it read
// before the damage; it never panics (FuzzFromSPIRV).
func TestFromSPIRVDamaged(t *testing.T) {
	mod := testutil.SPIRV(t)
	assert.Nil(t, FromSPIRV(nil))
	assert.Nil(t, FromSPIRV(mod[:19]))
	assert.Nil(t, FromSPIRV(mod[:len(mod)-1]), "not whole words")
	bad := append([]byte{}, mod...)
	bad[0] ^= 1
	assert.Nil(t, FromSPIRV(bad), "no magic")
	// Big-endian words read the same.
	be := make([]byte, len(mod))
	for i := 0; i < len(mod); i += 4 {
		binary.BigEndian.PutUint32(be[i:], binary.LittleEndian.Uint32(mod[i:]))
	}
	assert.Equal(t, FromSPIRV(mod), FromSPIRV(be))
	// An instruction of word count 0 ends the reading.
	cut := append([]byte{}, mod...)
	binary.LittleEndian.PutUint32(cut[20:], 0)
	assert.NotPanics(t, func() { FromSPIRV(cut) })
}

// FuzzFromSPIRV holds CheckSPIRV and the reader to each other on any
// bytes (agree); FuzzSPIRVMalformed makes malformed modules on purpose.
func FuzzFromSPIRV(f *testing.F) {
	if mod, err := testutil.SPIRVOrErr(); err == nil {
		f.Add(mod)
		f.Add(mod[:len(mod)/2])
	}
	hdr := []byte{0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}
	f.Add(hdr)
	f.Add(append(append([]byte{}, hdr...), 0x0F, 0, 5, 0, 6, 0, 0, 0, 1, 0, 0, 0, 'k', 0, 0, 0, 0, 0, 0, 0))
	f.Add(tiny())
	f.Fuzz(agree)
}
