package opencl

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/internal/cmem"
	"github.com/usmbridge/usmbridge/internal/kernelparams"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
	"github.com/usmbridge/usmbridge/usm"
)

var kernelSrc = usm.ProgramSource{OpenCLC: testutil.KernelSource()}

// floats allocates n float32 of shared memory (SVM on PoCL) on r's device
// and returns them as a slice over the memory; the allocation is freed
// when the test ends.
func floats(t *testing.T, r rt, n int) (uintptr, []float32) {
	t.Helper()
	return testutil.SharedFloats(t, r.b, r.local, n)
}

// TestKernelSaxpy builds the OpenCL C source once per context and device,
// launches saxpy over strided views and iota2d over a 2-D range with
// work-groups, and checks every element the kernels wrote (and those they
// must not have).
func TestKernelSaxpy(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		p1, err := usm.BuildProgram(r.q, kernelSrc)
		require.NoError(t, err)
		p2, err := usm.BuildProgram(r.q, kernelSrc)
		require.NoError(t, err)
		assert.Same(t, p1, p2, "built once per context, device, source and options")
		k, err := p1.Kernel("saxpy")
		require.NoError(t, err)
		k2, err := p1.Kernel("saxpy")
		require.NoError(t, err)
		assert.Same(t, k, k2)
		assert.Equal(t, 5, k.NumArgs())

		const n = 1000
		xp, x := floats(t, r, 2*n)
		yp, y := floats(t, r, 3*n)
		for i := range x {
			x[i] = float32(i)
		}
		for i := range y {
			y[i] = 1
		}
		// x with stride 2, y with stride -3 from its last element.
		ev, err := k.Launch(r.q, usm.NDRange(n), nil, usm.Scalar(float32(2)), usm.Pointer(xp), usm.Scalar(int64(2)),
			usm.Pointer(yp+uintptr(3*n-1)*4), usm.Scalar(int64(-3)))
		require.NoError(t, err)
		require.NoError(t, ev.Wait())
		require.NoError(t, ev.Close())
		require.NoError(t, ev.Close(), "a second Close does nothing")
		for i := range y {
			want := float32(1)
			if (3*n-1-i)%3 == 0 {
				want = 1 + 2*x[2*((3*n-1-i)/3)]
			}
			if y[i] != want {
				t.Fatalf("y[%d] = %v, want %v", i, y[i], want)
			}
		}

		ip, err := r.b.Alloc(r.local, usm.KindShared, 8*6*4)
		require.NoError(t, err)
		defer ip.Free()
		out := unsafe.Slice((*int32)(cmem.Ptr(ip.Pointer())), 8*6)
		ki, err := p1.Kernel("iota2d")
		require.NoError(t, err)
		ev, err = ki.Launch(r.q, usm.NDRange(8, 6).WithLocal(4, 3), nil, usm.Pointer(ip.Pointer()), usm.Scalar(int32(8)), usm.Scalar(int32(7)))
		require.NoError(t, err)
		require.NoError(t, r.q.Wait(), "the launch is ordered on its queue")
		require.NoError(t, ev.Close())
		for j := range 6 {
			for i := range 8 {
				require.EqualValues(t, 1000*j+i+7, out[j*8+i])
			}
		}
	})
}

// TestKernelSPIRV builds the same kernels from SPIR-V that scripts/spirv.sh
// made from the OpenCL C source, where the device takes SPIR-V.
func TestKernelSPIRV(t *testing.T) {
	spv := testutil.SPIRV(t)
	each(t, func(t *testing.T, r rt) {
		if il, _ := lib(); r.name == testutil.PoCL && il != nil {
			if v, _ := il.DeviceInfoString(r.dev.id, clapi.DeviceILVersion); !strings.Contains(v, "SPIR-V") {
				_, err := usm.BuildProgram(r.q, usm.ProgramSource{SPIRV: spv})
				require.Error(t, err, "a device without SPIR-V (CL_DEVICE_IL_VERSION %q) refuses it", v)
				var cl *Error
				require.True(t, errors.As(err, &cl), "%v", err)
				return
			}
		}
		p, err := usm.BuildProgram(r.q, usm.ProgramSource{SPIRV: spv})
		require.NoError(t, err)
		k, err := p.Kernel("fill")
		require.NoError(t, err)
		yp, y := floats(t, r, 64)
		ev, err := k.Launch(r.q, usm.NDRange(64), nil, usm.Pointer(yp), usm.Scalar(float32(3.5)))
		require.NoError(t, err)
		require.NoError(t, ev.Wait())
		require.NoError(t, ev.Close())
		for i := range y {
			require.Equal(t, float32(3.5), y[i])
		}
		other, err := usm.BuildProgram(r.q, kernelSrc)
		require.NoError(t, err)
		assert.NotSame(t, p, other, "SPIR-V and OpenCL C are different programs")
	})
}

// TestKernelMalformedSPIRV: a malformed module is refused before the
// runtime sees it. Intel's looped forever in clBuildProgram on an
// instruction of word count 0, and ended the process on the others
// (testutil.MalformedSPIRV), hence a child, which now ends at once. A
// big-endian module is the same module, and builds where the
// little-endian one does.
func TestKernelMalformedSPIRV(t *testing.T) {
	spv := testutil.SPIRV(t)
	each(t, func(t *testing.T, r rt) {
		name := "malformed-spirv/" + r.name
		if !testutil.InChild(name) {
			c := testutil.RunChild(t, name, 60*time.Second)
			c.Expect(t, 0, "PASS")
			t.Logf("the child took %v", c.Elapsed)
			return
		}
		for _, m := range testutil.MalformedSPIRV(t) {
			_, err := usm.BuildProgram(r.q, usm.ProgramSource{SPIRV: m.Module})
			require.ErrorIs(t, err, usm.ErrValue, m.Name)
			var be *usm.BuildError
			require.False(t, errors.As(err, &be), "%s: refused before clCreateProgramWithIL: %v", m.Name, err)
			assert.ErrorContains(t, err, "malformed SPIR-V module: word "+strconv.Itoa(m.Word)+": ", m.Name)
		}
		if _, err := usm.BuildProgram(r.q, usm.ProgramSource{SPIRV: spv}); err != nil {
			var cl *Error
			require.True(t, errors.As(err, &cl), "%v", err)
			return // PoCL without SPIR-V (TestKernelSPIRV)
		}
		be := make([]byte, len(spv))
		for i := 0; i < len(spv); i += 4 {
			binary.BigEndian.PutUint32(be[i:], binary.LittleEndian.Uint32(spv[i:]))
		}
		p, err := usm.BuildProgram(r.q, usm.ProgramSource{SPIRV: be})
		require.NoError(t, err, "big-endian")
		k, err := p.Kernel("fill")
		require.NoError(t, err)
		yp, y := floats(t, r, 16)
		ev, err := k.Launch(r.q, usm.NDRange(16), nil, usm.Pointer(yp), usm.Scalar(float32(2.5)))
		require.NoError(t, err)
		require.NoError(t, ev.Wait())
		require.NoError(t, ev.Close())
		assert.Equal(t, float32(2.5), y[15])
		_, err = k.Launch(r.q, usm.NDRange(16), nil, usm.Scalar(float32(1)), usm.Scalar(float32(2.5)))
		assert.ErrorContains(t, err, "is a pointer to __global", "the big-endian module's parameters are read too")
	})
}

// TestKernelBuildFailure: the error carries the compiler's log, which
// names what is wrong, and matches usm.ErrValue.
func TestKernelBuildFailure(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		_, err := usm.BuildProgram(r.q, usm.ProgramSource{OpenCLC: "kernel void broken(global int *p) { p[0] = no_such_thing; }"})
		var be *usm.BuildError
		require.True(t, errors.As(err, &be), "%v", err)
		assert.Contains(t, be.Log, "no_such_thing")
		assert.ErrorIs(t, err, usm.ErrValue)
		assert.ErrorIs(t, err, clapi.BuildProgramFailure)
		_, err = usm.BuildProgram(r.q, usm.ProgramSource{OpenCLC: testutil.KernelSource(), Options: "-cl-no-such-option"})
		assert.Error(t, err, "a bad option fails the build")
	})
}

// TestKernelRefusals: what a launch refuses before it submits anything.
func TestKernelRefusals(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		p, err := usm.BuildProgram(r.q, kernelSrc)
		require.NoError(t, err)
		_, err = p.Kernel("no_such_kernel")
		assert.ErrorIs(t, err, usm.ErrValue)
		k, err := p.Kernel("fill")
		require.NoError(t, err)
		yp, y := floats(t, r, 16)

		_, err = k.Launch(r.q, usm.NDRange(16), nil, usm.Pointer(yp))
		assert.ErrorContains(t, err, "takes 2 arguments, got 1")
		_, err = k.Launch(r.q, usm.NDRange(16).WithLocal(5), nil, usm.Pointer(yp), usm.Scalar(float32(1)))
		assert.ErrorIs(t, err, usm.ErrValue, "a work-group that does not divide the range")
		_, err = k.Launch(r.q, usm.Range{}, nil, usm.Pointer(yp), usm.Scalar(float32(1)))
		assert.ErrorIs(t, err, usm.ErrValue, "no dimension")

		goMem := make([]float32, 16)
		_, err = k.Launch(r.q, usm.NDRange(16), nil, usm.Pointer(uintptr(unsafe.Pointer(&goMem[0]))), usm.Scalar(float32(1)))
		assert.ErrorIs(t, err, usm.ErrValue)
		assert.ErrorContains(t, err, "not USM")

		// USM of another context of the same device.
		c2, err := newContext(r.dev)
		require.NoError(t, err)
		var foreign uintptr
		if r.mem == svmMemory {
			foreign, err = c2.svmAlloc(r.dev, 64, 0)
		} else {
			foreign, err = c2.usmAlloc(memShared, r.dev, 64, 0)
		}
		require.NoError(t, err)
		_, err = k.Launch(r.q, usm.NDRange(16), nil, usm.Pointer(foreign), usm.Scalar(float32(1)))
		assert.ErrorIs(t, err, usm.ErrValue, "memory of another context")
		// A queue of that other context.
		q2, err := c2.newQueue(r.dev)
		require.NoError(t, err)
		_, err = k.Launch(q2, usm.NDRange(16), nil, usm.Pointer(yp), usm.Scalar(float32(1)))
		assert.ErrorContains(t, err, "not of the context")
		require.NoError(t, q2.Close())
		require.NoError(t, c2.free(foreign))
		require.NoError(t, c2.Close())

		// A closed queue.
		cq, err := r.q.Clone()
		require.NoError(t, err)
		require.NoError(t, cq.Close())
		_, err = k.Launch(cq, usm.NDRange(16), nil, usm.Pointer(yp), usm.Scalar(float32(1)))
		assert.ErrorIs(t, err, usm.ErrValue)
		assert.ErrorContains(t, err, "closed")

		require.NoError(t, r.q.Wait())
		for _, v := range y {
			require.Zero(t, v, "a refused launch wrote nothing")
		}
	})
}

// TestKernelAfterEvents holds a queue back with a user event, launches a
// fill on it, and on a second queue of the context a scale_add after the
// fill's event: the second must wait on the device for the first (it
// would otherwise run first and the fill overwrite it), and Launch must
// not wait on the host (the child would time out).
func TestKernelAfterEvents(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		for _, mode := range []string{"after", "no after"} {
			t.Run(mode, func(t *testing.T) {
				name := "kernel-after/" + r.name + "/" + mode
				if testutil.InChild(name) {
					afterCase(t, r, mode == "after")
					return
				}
				testutil.RunChild(t, name, 60*time.Second).Expect(t, 0, "PASS")
			})
		}
	})
}

func afterCase(t *testing.T, r rt, after bool) {
	l, err := lib()
	require.NoError(t, err)
	held, err := r.ctx.newQueue(r.dev)
	require.NoError(t, err)
	defer held.Close()
	other, err := r.ctx.newQueue(r.dev)
	require.NoError(t, err)
	defer other.Close()
	ue, err := l.CreateUserEvent(clapi.Context(r.ctx.Native()))
	require.NoError(t, err)
	mk, err := l.EnqueueMarker(clapi.Queue(held.Native()), []clapi.Event{ue})
	require.NoError(t, err)
	defer l.ReleaseEvent(mk)
	p, err := usm.BuildProgram(held, kernelSrc)
	require.NoError(t, err)
	fill, err := p.Kernel("fill")
	require.NoError(t, err)
	sa, err := p.Kernel("scale_add")
	require.NoError(t, err)
	yp, y := floats(t, r, 32)
	ev1, err := fill.Launch(held, usm.NDRange(32), nil, usm.Pointer(yp), usm.Scalar(float32(5)))
	require.NoError(t, err)
	var deps []usm.Event
	if after {
		deps = []usm.Event{ev1}
	}
	ev2, err := sa.Launch(other, usm.NDRange(32), deps, usm.Pointer(yp), usm.Scalar(float32(2)), usm.Scalar(float32(1)))
	require.NoError(t, err)
	require.NoError(t, ev1.Close(), "the launch after it holds its own reference")
	if after {
		require.NoError(t, l.Flush(clapi.Queue(other.Native()))) // submitted, not held back by us
		time.Sleep(50 * time.Millisecond)
		assert.Zero(t, y[0], "the second launch waits for the held first one")
	} else {
		// The control: nothing holds the second launch back, so it runs
		// on the zeros before the held fill.
		require.NoError(t, ev2.Wait())
	}
	require.NoError(t, l.SetUserEventStatus(ue, 0))
	require.NoError(t, l.ReleaseEvent(ue))
	require.NoError(t, ev2.Wait())
	require.NoError(t, ev2.Close())
	require.NoError(t, held.Wait())
	want := float32(11) // (5*2)+1
	if !after {
		want = 5 // scale_add ran on zeros first, then the fill
	}
	for i := range y {
		require.Equal(t, want, y[i], "y[%d]", i)
	}
}

// TestKernelProgramClose: Close releases the program for every holder,
// launches of its kernels then fail, and the next build makes a new one.
func TestKernelProgramClose(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		src := usm.ProgramSource{OpenCLC: testutil.KernelSource(), Options: "-DCLOSE_TEST"}
		p, err := usm.BuildProgram(r.q, src)
		require.NoError(t, err)
		k, err := p.Kernel("empty")
		require.NoError(t, err)
		before := Live()
		require.NoError(t, p.Close())
		require.NoError(t, p.Close())
		after := Live()
		assert.Equal(t, before["programs"]-1, after["programs"])
		assert.Equal(t, before["kernels"]-1, after["kernels"])
		_, err = k.Launch(r.q, usm.NDRange(1), nil)
		assert.ErrorIs(t, err, usm.ErrValue)
		p2, err := usm.BuildProgram(r.q, src)
		require.NoError(t, err)
		assert.NotSame(t, p, p2)
		require.NoError(t, p2.Close())
	})
}

// A queue from elsewhere (UnsafeAdoptQueue, UnsafeBorrowQueue, Clone: how
// a native queue taken from SYCL comes in) builds its own programs, kept
// until it closes, and launches on the native queue with the Backend's
// USM of the same context.
func TestKernelOnAdoptedQueue(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		// Another Context over the backend's handle, closed, leaves the
		// backend's records (its SVM) to programs of queues from
		// elsewhere.
		bc, err := UnsafeBorrowContext(r.ctx.Native())
		require.NoError(t, err)
		require.NoError(t, bc.Close())
		q, err := r.q.Clone() // wrapQueue, as UnsafeBorrowQueue
		require.NoError(t, err)
		p, err := usm.BuildProgram(q, kernelSrc)
		require.NoError(t, err)
		bp, err := usm.BuildProgram(r.q, kernelSrc)
		require.NoError(t, err)
		before := Live()["programs"]
		assert.NotSame(t, p, bp, "the adopted queue keeps its own programs")
		k, err := p.Kernel("fill")
		require.NoError(t, err)
		yp, y := floats(t, r, 32)
		ev, err := k.Launch(q, usm.NDRange(32), nil, usm.Pointer(yp), usm.Scalar(float32(9)))
		require.NoError(t, err)
		require.NoError(t, ev.Wait())
		require.NoError(t, ev.Close())
		assert.Equal(t, float32(9), y[31])
		ev, err = k.Launch(r.q, usm.NDRange(32), nil, usm.Pointer(yp), usm.Scalar(float32(1)))
		require.NoError(t, err, "a queue of the same context and device launches it too")
		require.NoError(t, ev.Close())
		require.NoError(t, r.q.Wait())
		require.NoError(t, q.Close())
		assert.Equal(t, before-1, Live()["programs"], "closing the queue released its program (the Backend's stays)")
		_, err = k.Launch(r.q, usm.NDRange(32), nil, usm.Pointer(yp), usm.Scalar(float32(1)))
		assert.ErrorIs(t, err, usm.ErrValue, "its kernels went with it")
	})
}

// paramSrc has a parameter of each kind Launch tells apart.
const paramSrc = `
typedef struct { float a; int b[5]; } pair;
kernel void spaces(global float* y, constant float* c, float v, pair p, float4 w) {
    y[get_global_id(0)] = c[0] + v + p.a + p.b[4] + w.x;
}
kernel void scratch(global float* y, local float* tmp) { tmp[0] = 1.0f; y[0] = tmp[0]; }
kernel void plain(global float* y, constant float* c, float v) { y[get_global_id(0)] = c[0] + v; }
kernel void images(read_only image2d_t im, sampler_t s, global float4* out, int k, write_only image2d_t w) {
    out[0] = read_imagef(im, s, (int2)(0, k));
    write_imagef(w, (int2)(0, 0), out[0]);
}
`

// paramSources are paramSrc as OpenCL C and, where the device takes it,
// as SPIR-V.
func paramSources(t *testing.T, r rt) map[string]usm.ProgramSource {
	srcs := map[string]usm.ProgramSource{"OpenCL C": {OpenCLC: paramSrc}}
	il, _ := lib()
	if v, _ := il.DeviceInfoString(r.dev.id, clapi.DeviceILVersion); il.HasIL() && strings.Contains(v, "SPIR-V") {
		srcs["SPIR-V"] = usm.ProgramSource{SPIRV: testutil.CompileSPIRV(t, paramSrc)}
	}
	return srcs
}

// TestKernelParameterKinds: where the runtime (clGetKernelArgInfo, for
// OpenCL C built with -cl-kernel-arg-info, which BuildProgram passes) or
// the SPIR-V module says what each parameter is, a scalar for a __global
// or __constant pointer is refused before anything is set: PoCL took its
// bits for a cl_mem and crashed the process (hence a child). __local
// parameters, which Launch cannot pass, are refused too; the right
// arguments still launch.
func TestKernelParameterKinds(t *testing.T) {
	each(t, func(t *testing.T, r rt) {
		name := "kernel-params/" + r.name
		if !testutil.InChild(name) {
			c := testutil.RunChild(t, name, 60*time.Second)
			c.Expect(t, 0, "PASS", "OpenCL C: checked")
			t.Log(strings.Count(c.Output, ": checked"), "forms checked")
			return
		}
		for form, src := range paramSources(t, r) {
			t.Run(form, func(t *testing.T) {
				p, err := usm.BuildProgram(r.q, src)
				require.NoError(t, err)
				k, err := p.Kernel("spaces")
				require.NoError(t, err)
				yp, y := floats(t, r, 16)
				cp, c := floats(t, r, 1)
				c[0] = 2
				pair := usm.Scalar(int64(0)) // not what the struct is: the runtime says so, not a crash
				for i, args := range [][]usm.Arg{
					{usm.Scalar(int64(0x1234)), usm.Pointer(cp), usm.Scalar(float32(1))},
					{usm.Scalar(int32(0x1234)), usm.Pointer(cp), usm.Scalar(float32(1))},
					{usm.Pointer(yp), usm.Scalar(float64(1)), usm.Scalar(float32(1))},
				} {
					args = append(args, pair, pair)
					_, err := k.Launch(r.q, usm.NDRange(16), nil, args...)
					require.ErrorIs(t, err, usm.ErrValue, "case %d", i)
					assert.ErrorContains(t, err, "is a pointer to __global or __constant memory; got a scalar", "case %d", i)
				}
				ks, err := p.Kernel("scratch")
				require.NoError(t, err)
				_, err = ks.Launch(r.q, usm.NDRange(1), nil, usm.Pointer(yp), usm.Scalar(int64(4)))
				require.ErrorIs(t, err, usm.ErrValue)
				assert.ErrorContains(t, err, "__local memory")
				ki, err := p.Kernel("images")
				require.NoError(t, err)
				for _, im := range []usm.Arg{usm.Scalar(int64(0x1234)), usm.Pointer(yp)} {
					_, err = ki.Launch(r.q, usm.NDRange(1), nil, im, usm.Scalar(int64(0)), usm.Pointer(yp), usm.Scalar(int32(0)), im)
					require.ErrorIs(t, err, usm.ErrValue)
					assert.ErrorContains(t, err, "argument 0 of kernel \"images\" is an image, a sampler, a pipe or a queue")
				}
				require.NoError(t, r.q.Wait())
				for _, v := range y {
					require.Zero(t, v, "a refused launch wrote nothing")
				}
				kp, err := p.Kernel("plain")
				require.NoError(t, err)
				ev, err := kp.Launch(r.q, usm.NDRange(16), nil, usm.Pointer(yp), usm.Pointer(cp), usm.Scalar(float32(1)))
				require.NoError(t, err)
				require.NoError(t, ev.Wait())
				require.NoError(t, ev.Close())
				for _, v := range y {
					require.Equal(t, float32(3), v)
				}
				t.Logf("%s: checked", form)
			})
		}
	})
}

// The kinds the SPIR-V of a source gives (kernelparams.FromSPIRV) are
// those the OpenCL runtimes give the same OpenCL C (clGetKernelArgInfo):
// the two ways the backend learns them agree.
func TestKernelParameterKindsAgree(t *testing.T) {
	fromSPIRV := kernelparams.FromSPIRV(testutil.CompileSPIRV(t, paramSrc+testutil.KernelSource()))
	each(t, func(t *testing.T, r rt) {
		p, err := usm.BuildProgram(r.q, usm.ProgramSource{OpenCLC: paramSrc + testutil.KernelSource()})
		require.NoError(t, err)
		op := p.(*program)
		pid, err := op.h.RLock("test")
		require.NoError(t, err)
		defer op.h.RUnlock()
		l, _ := lib()
		require.NotEmpty(t, fromSPIRV)
		for name, want := range fromSPIRV {
			kid, err := l.CreateKernel(clapi.Program(pid), append([]byte(name), 0))
			require.NoError(t, err)
			n, err := l.KernelNumArgs(kid)
			require.NoError(t, err)
			got := make([]kernelparams.Kind, n)
			for i := range got {
				got[i] = paramKind(l, kid, uint32(i))
			}
			require.NoError(t, l.ReleaseKernel(kid))
			assert.Equal(t, want, got, "kernel %s", name)
		}
	})
}
