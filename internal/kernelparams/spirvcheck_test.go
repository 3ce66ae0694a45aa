package kernelparams

import (
	"encoding/binary"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
)

// tinyWords is a small SPIR-V module written by hand, which the tests
// and fuzz targets have without the SPIR-V tools:
//
//	kernel void k(global int *p) {}
//
// Its instructions begin at tinyStarts.
var tinyWords = []uint32{
	spvMagic, 0x00010000, 0, 8, 0,
	2<<16 | 17, 4, // OpCapability Addresses
	2<<16 | 17, 6, // OpCapability Kernel
	3<<16 | 14, 2, 2, // OpMemoryModel Physical64 OpenCL
	4<<16 | 15, 6, 3, 'k', // OpEntryPoint Kernel %3 "k"
	2<<16 | 19, 1, // %1 = OpTypeVoid
	4<<16 | 21, 5, 32, 0, // %5 = OpTypeInt 32 0
	4<<16 | 32, 6, 5, 5, // %6 = OpTypePointer CrossWorkgroup %5
	4<<16 | 33, 2, 1, 6, // %2 = OpTypeFunction %1 %6
	5<<16 | 54, 1, 3, 0, 2, // %3 = OpFunction %1 None %2
	3<<16 | 55, 6, 7, // %7 = OpFunctionParameter %6
	2<<16 | 248, 4, // %4 = OpLabel
	1<<16 | 253, // OpReturn
	1<<16 | 56,  // OpFunctionEnd
}

var tinyStarts = []int{5, 7, 9, 12, 16, 18, 22, 26, 30, 35, 38, 40, 41}

func tiny() []byte { return encode(tinyWords, binary.LittleEndian) }

func encode(ws []uint32, order binary.ByteOrder) []byte {
	b := make([]byte, 4*len(ws))
	for i, w := range ws {
		order.PutUint32(b[4*i:], w)
	}
	return b
}

// tinyWith is tiny with word i set to w.
func tinyWith(i int, w uint32) []byte { return edited(map[int]uint32{i: w}) }

// edited is tiny with each word i of words set to words[i].
func edited(words map[int]uint32) []byte {
	ws := append([]uint32(nil), tinyWords...)
	for i, w := range words {
		ws[i] = w
	}
	return encode(ws, binary.LittleEndian)
}

func TestTiny(t *testing.T) {
	assert.Equal(t, map[string][]Kind{"k": {Global}}, FromSPIRV(tiny()))
	var starts []int
	for at := 5; at < len(tinyWords); at += int(tinyWords[at] >> 16) {
		starts = append(starts, at)
	}
	assert.Equal(t, tinyStarts, starts)
}

// Modules the tools make, and tiny, pass, unchanged and uncopied.
func TestCheckSPIRVAccepts(t *testing.T) {
	accepts := func(t *testing.T, m []byte) {
		got, err := CheckSPIRV("op", m)
		require.NoError(t, err)
		assert.Same(t, &m[0], &got[0], "little-endian, so the module itself")
	}
	accepts(t, tiny())
	t.Run("kernels.cl", func(t *testing.T) { accepts(t, testutil.SPIRV(t)) })
	t.Run("spaces", func(t *testing.T) { accepts(t, testutil.CompileSPIRV(t, SpacesSource)) })
	t.Run("features", func(t *testing.T) { accepts(t, testutil.CompileSPIRV(t, featuresSource)) })
}

// featuresSource uses much of OpenCL C, so that its module holds many
// kinds of instructions: calls, loops, a switch, atomics, barriers,
// vectors, doubles, images, printf, constants of each width.
const featuresSource = `
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
constant double table[4] = {1.0, 2.5, -3.0, 4.25};
typedef struct { char c; short s; long l; double d; uint4 v; } mixed;
static float helper(float x, int n) {
    float acc = 0;
    for (int i = 0; i < n; i++) acc += native_sin(x * i) / (i + 1);
    return acc;
}
kernel void features(global float *out, global volatile int *counter, local float *tmp, mixed m,
                     read_only image2d_t im, sampler_t smp, global double *d, ulong big, char small) {
    size_t g = get_global_id(0), l = get_local_id(0);
    tmp[l] = helper(out[g], (int)(big & 7));
    barrier(CLK_LOCAL_MEM_FENCE);
    switch (small) {
    case 1: out[g] += tmp[0]; break;
    case 7: out[g] -= m.v.x + m.s; break;
    default: out[g] = (float)table[g & 3] + m.d + m.l;
    }
    float4 px = read_imagef(im, smp, (int2)(g, 0));
    out[g] += dot(px, (float4)(1.0f, 0.5f, 0.25f, 0.125f));
    d[g] = fma(d[g], table[1], (double)big);
    if (atomic_inc(counter) == 0) printf("first of %d: %f\n", (int)get_global_size(0), out[g]);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
}
`

// A big-endian module is the same module: it passes, as its little-endian
// twin, which reads the same.
func TestCheckSPIRVBigEndian(t *testing.T) {
	be := encode(tinyWords, binary.BigEndian)
	le, err := CheckSPIRV("op", be)
	require.NoError(t, err)
	assert.Equal(t, tiny(), le)
	assert.Equal(t, FromSPIRV(be), FromSPIRV(le))

	be[4*tinyStarts[3]] = 0 // OpEntryPoint's word count, high byte first
	be[4*tinyStarts[3]+1] = 0
	_, err = CheckSPIRV("op", be)
	assert.ErrorContains(t, err, "word 12: an instruction (opcode 15) has a word count of 0")
}

// Each malformation, with the word it is at and what the message says.
func TestCheckSPIRVRefuses(t *testing.T) {
	ep := tinyStarts[3] // OpEntryPoint
	for _, c := range []struct {
		name   string
		module []byte
		word   int
		says   string
	}{
		{"empty", nil, 0, "the module is 0 bytes long; SPIR-V is 4-byte words, at least the 5 of its header"},
		{"header cut", tiny()[:16], 0, "the module is 16 bytes long"},
		{"not whole words", tiny()[:len(tiny())-1], 0, "is 167 bytes long"},
		{"magic", tinyWith(0, 0x12345678), 0, "0x12345678 is not SPIR-V's magic number 0x07230203 (in either byte order)"},
		{"version 2.0", tinyWith(1, 0x00020000), 1, "version 0x00020000 is not a SPIR-V version 1.x (0x0001mm00)"},
		{"version's low byte", tinyWith(1, 0x00010001), 1, "version 0x00010001 is not"},
		{"version's high byte", tinyWith(1, 0x01010000), 1, "version 0x01010000 is not"},
		{"huge bound", tinyWith(3, 0xFFFFFFFF), 3, "the id bound 4294967295 is past SPIR-V's limit of 4194303"},
		{"bound past the limit", tinyWith(3, maxIDBound+1), 3, "the id bound 4194304 is past"},
		{"schema 1", tinyWith(4, 1), 4, "schema 1 is not 0, the only one SPIR-V defines"},
		{"word count 0", tinyWith(5, 17), 5, "an instruction (opcode 17) has a word count of 0; it counts at least its first word"},
		{"word count 0, opcode 0", tinyWith(5, 0), 5, "an instruction (opcode 0) has a word count of 0"},
		{"word count 0, last", tinyWith(tinyStarts[12], 56), tinyStarts[12], "has a word count of 0"},
		{"past the end", tinyWith(tinyStarts[12], 2<<16|56), tinyStarts[12], "an instruction (opcode 56) of 2 words runs past the module's end at word 42"},
		{"far past the end", tinyWith(tinyStarts[3], 0xFFFF<<16|15), tinyStarts[3], "of 65535 words runs past the module's end at word 42"},
		{"cut", tiny()[:4*(tinyStarts[8]+2)], tinyStarts[8], "an instruction (opcode 54) of 5 words runs past the module's end at word 32"},
		{"unknown opcode", tinyWith(tinyStarts[11], 1<<16|0x7777), tinyStarts[11], "opcode 30583 is not one of SPIR-V (grammar 1.6 revision 7, with its extensions)"},
		{"short", tinyWith(tinyStarts[6], 2<<16|32), tinyStarts[6], "OpTypePointer of 2 words is short: it takes at least 4"},
		{"id past the bound", tinyWith(tinyStarts[9]+2, 8), tinyStarts[9] + 2, "<id> 8 of OpFunctionParameter of 3 words at word 35 is not from 1 to below the id bound 8"},
		{"id far past the bound", tinyWith(ep+2, 5000), ep + 2, "<id> 5000 of OpEntryPoint of 4 words at word 12 is not from 1 to below the id bound 8"},
		{"id 0", tinyWith(tinyStarts[4]+1, 0), tinyStarts[4] + 1, "<id> 0 of OpTypeVoid"},
		{"result type past the bound", tinyWith(tinyStarts[8]+1, 9), tinyStarts[8] + 1, "<id> 9 of OpFunction"},
		{"bound 0", tinyWith(3, 0), tinyStarts[3] + 2, "<id> 3 of OpEntryPoint of 4 words at word 12 is not from 1 to below the id bound 0"},
		// tiny's OpEntryPoint names its function before OpFunction
		// defines it: a use may come first, but a definition must be.
		{"<id> nothing defines", edited(map[int]uint32{3: 9, tinyStarts[7] + 2: 8}), tinyStarts[7] + 2, "<id> 8 of OpTypeFunction at word 26 is the Result <id> of no instruction"},
		{"a function nothing defines", edited(map[int]uint32{3: 9, ep + 2: 8}), ep + 2, "<id> 8 of OpEntryPoint at word 12 is the Result <id> of no instruction"},
		{"string without its NUL", tinyWith(ep+3, 'k'|'e'<<8|'r'<<16|'n'<<24), ep + 3, "the literal string of OpEntryPoint of 4 words at word 12 does not end (with a NUL byte) within the instruction"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, at, detail := checkSPIRV(c.module)
			assert.Equal(t, c.word, at)
			assert.Contains(t, detail, c.says)
			got, err := CheckSPIRV("opencl.Queue.BuildProgram", c.module)
			assert.Nil(t, got)
			require.ErrorIs(t, err, errkind.Value)
			msg := errkind.Message(err)
			assert.True(t, strings.HasPrefix(msg, "malformed SPIR-V module: word "+strconv.Itoa(c.word)+": "), msg)
			assert.NotContains(t, msg, "BuildProgram", "a Python user reads no Go function")
			assert.NotContains(t, msg, "kernelparams")
		})
	}
}

// The modules that stopped Intel's OpenCL runtime (internal/testutil) are
// refused where they are malformed.
func TestCheckSPIRVRuntimeStoppers(t *testing.T) {
	for _, c := range testutil.MalformedSPIRV(t) {
		_, at, detail := checkSPIRV(c.Module)
		assert.NotEmpty(t, detail, c.Name)
		assert.Equal(t, c.Word, at, "%s: %s", c.Name, detail)
	}
}

// agree holds CheckSPIRV and FromSPIRV's reader to each other on module:
// neither panics; a module CheckSPIRV accepts is one the reader reads to
// the end, and reads as the little-endian module CheckSPIRV returns; one
// the reader stops in is refused, at a word of the module.
func agree(t *testing.T, module []byte) {
	kinds, bad := readSPIRV(module)
	for name, ks := range kinds {
		for _, k := range ks {
			if k > Opaque {
				t.Fatalf("kernel %q: kind %d", name, k)
			}
		}
	}
	le, at, detail := checkSPIRV(module)
	if detail != "" {
		if le != nil || at < 0 || at >= max(len(module)/4, 1) {
			t.Fatalf("refused at word %d of %d (%s), returning %d bytes", at, len(module)/4, detail, len(le))
		}
		return
	}
	if bad >= 0 {
		t.Fatalf("CheckSPIRV accepts a module the reader stops in at word %d", bad)
	}
	if len(le) != len(module) || binary.LittleEndian.Uint32(le) != spvMagic {
		t.Fatalf("CheckSPIRV returned %d bytes, not the module's %d in little-endian words", len(le), len(module))
	}
	leKinds, leBad := readSPIRV(le)
	if leBad >= 0 || !reflect.DeepEqual(kinds, leKinds) {
		t.Fatalf("the little-endian module reads otherwise: %v (stops at %d), not %v", leKinds, leBad, kinds)
	}
}

// FuzzSPIRVMalformed makes malformed modules from tiny or the module of
// kernels.cl with edits of the kinds that stop runtimes, and holds
// CheckSPIRV and the reader to each other on them (agree). An edit is 9
// bytes: an operation and two little-endian words a and b (see edit);
// the corpus (testdata/fuzz) has one of each kind.
func FuzzSPIRVMalformed(f *testing.F) {
	bases := [][]byte{tiny()}
	if m, err := testutil.SPIRVOrErr(); err == nil {
		bases = append(bases, m)
	}
	f.Fuzz(func(t *testing.T, base byte, edits []byte) {
		m := bases[int(base)%len(bases)]
		ws := make([]uint32, len(m)/4)
		for i := range ws {
			ws[i] = binary.LittleEndian.Uint32(m[4*i:])
		}
		var starts []int
		for at := 5; at < len(ws); at += int(ws[at] >> 16) {
			starts = append(starts, at)
		}
		var order binary.ByteOrder = binary.LittleEndian
		cut := -1 // bytes to keep, -1 all
		for ; len(edits) >= 9; edits = edits[9:] {
			op, a, b := edits[0], binary.LittleEndian.Uint32(edits[1:]), binary.LittleEndian.Uint32(edits[5:])
			ws, order, cut = edit(ws, starts, order, cut, op, a, b)
		}
		out := encode(ws, order)
		if cut >= 0 && cut < len(out) {
			out = out[:cut]
		}
		agree(t, out)
	})
}

// edit applies one edit to the words ws of a module whose instructions
// began at starts (instruction a is starts[a % len(starts)]), before
// edits that may have cut it: an edit of a word no longer there does
// nothing.
func edit(ws []uint32, starts []int, order binary.ByteOrder, cut int, op byte, a, b uint32) ([]uint32, binary.ByteOrder, int) {
	set := func(i int, f func(uint32) uint32) {
		if i < len(ws) {
			ws[i] = f(ws[i])
		}
	}
	in := starts[int(a%uint32(len(starts)))]
	switch op % 10 {
	case 0: // word count 0, opcode kept
		set(in, func(w uint32) uint32 { return w & 0xFFFF })
	case 1: // word count b, running past the end or short
		set(in, func(w uint32) uint32 { return w&0xFFFF | b<<16 })
	case 2: // opcode b: unknown, or another instruction's
		set(in, func(w uint32) uint32 { return w&^0xFFFF | b&0xFFFF })
	case 3: // operand word a>>16 of instruction a&0xFFFF set to b: an <id> past the bound, 0, a string without its NUL
		at := starts[int(a&0xFFFF)%len(starts)]
		if at < len(ws) {
			if n := int(ws[at] >> 16); n > 1 {
				set(at+1+int(a>>16)%(n-1), func(uint32) uint32 { return b })
			}
		}
	case 4: // header word a%5 set to b: magic, version, generator, bound (huge, small), schema
		set(int(a%5), func(uint32) uint32 { return b })
	case 5: // the module cut to a words
		ws = ws[:int(a)%(len(ws)+1)]
	case 6: // the module cut to a bytes: not whole words
		cut = int(a) % (4*len(ws) + 1)
	case 7: // word b appended
		ws = append(ws, b)
	case 8: // the other byte order
		if order == binary.LittleEndian {
			order = binary.BigEndian
		} else {
			order = binary.LittleEndian
		}
	case 9: // any word a set to b
		if len(ws) > 0 {
			ws[int(a)%len(ws)] = b
		}
	}
	return ws, order, cut
}

// Two kernels of one name (FuzzFromSPIRV found the kinds then depended on
// the order of a map): their parameters are what both say, either way
// round.
func TestFromSPIRVOneNameTwice(t *testing.T) {
	ep := tinyStarts[3]
	other := []uint32{4<<16 | 15, 6, 4, 'k'} // OpEntryPoint Kernel %4 "k": a function of no parameters
	for _, at := range []int{ep, ep + 4} {
		ws := append(append(append([]uint32(nil), tinyWords[:at]...), other...), tinyWords[at:]...)
		for range 20 {
			assert.Equal(t, map[string][]Kind{"k": {Unknown}}, FromSPIRV(encode(ws, binary.LittleEndian)))
		}
	}
	assert.Equal(t, []Kind{Global, Unknown, Unknown}, agreed([]Kind{Global, Value}, []Kind{Global, Local, Opaque}))
}

// CheckSPIRV runs once per build (a kept program is looked up without
// it), on the module of kernels.cl here: its cost beside the build it
// guards.
func BenchmarkCheckSPIRV(b *testing.B) {
	m, err := testutil.SPIRVOrErr()
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(int64(len(m)))
	for b.Loop() {
		if _, err := CheckSPIRV("bench", m); err != nil {
			b.Fatal(err)
		}
	}
}
