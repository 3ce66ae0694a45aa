package dpctl_test

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/usmbridge/usmbridge/dpctl/internal/dpctlapi"
	"github.com/usmbridge/usmbridge/internal/ffi"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/syclobj"
	"github.com/usmbridge/usmbridge/usm"
)

// Native sides made for one bind (through a non-default context's ref,
// which no pin holds) give back the cl_context reference getNative took:
// the native reference count is the same after a hundred binds. A pin
// on that context's queue holds one reference until Unpin.
func TestNativeContextReleased(t *testing.T) {
	py, b := loaded(t)
	run(t, py, testutil.ExtentPy+"ctx2_cap_arr = [ExtWin('mem2', lambda: q2.sycl_context._get_capsule(), (16,), None, 0) for _ in range(100)]")
	run(t, py, "ctx2 = q2.sycl_context") // keeps the DPCTLSyclContextRef below alive
	cl, release := b.NativeCL(uintptr(evalInt(t, py, "ctx2.addressof_ref()")))
	require.NotZero(t, cl, "the OpenCL context of a dpctl.SyclContext has a native side")
	defer release()
	refs := clContextRefs(t, cl)
	before := refs()
	liveBefore := opencl.Live()["contexts"]
	for i := range 100 {
		arr, err := asArray(t, py, fmt.Sprintf("ctx2_cap_arr[%d]", i))
		require.NoError(t, err)
		require.NotZero(t, arr.Memory.Base)
		arr.Owner.Release()
	}
	assert.Equal(t, before, refs(), "cl_context references taken by getNative were released")
	assert.Equal(t, liveBefore, opencl.Live()["contexts"])

	ref := uintptr(evalInt(t, py, "q2.addressof_ref()")) // q2 keeps the queue alive
	pin := b.PinQueue(syclobj.UnsafeQueueRef(ref))
	require.NotNil(t, pin)
	assert.Equal(t, before+1, refs(), "the pin holds one reference")
	pin.Unpin()
	assert.Equal(t, before, refs(), "Unpin released it")
	pin.Unpin()
	assert.Equal(t, before, refs(), "a second Unpin does nothing")
}

// clContextRefs returns a reader of a cl_context's reference count
// (CL_CONTEXT_REFERENCE_COUNT), asked of the ICD loader SYCL loaded: the
// opencl package keeps it internal, and this test checks what SYCL's own
// references do, not the package's.
func clContextRefs(t *testing.T, ctx uintptr) func() uint32 {
	t.Helper()
	lib, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDNoLoad, "libOpenCL.so.1")
	require.NoError(t, err)
	var getInfo ffi.Fn
	require.NoError(t, lib.Resolve(ffi.Required(&getInfo, "clGetContextInfo")))
	const clContextReferenceCount = 0x1080
	return func() uint32 {
		var n uint32
		rc := int32(getInfo.Call(ctx, clContextReferenceCount, unsafe.Sizeof(n), uintptr(unsafe.Pointer(&n)), 0))
		require.Zero(t, rc, "clGetContextInfo")
		return n
	}
}

// nativeChildEnv names the child-process test to run.
const nativeChildEnv = "USMBRIDGE_DPCTL_NATIVE_CHILD"

// TestNativeAccessorGuard: context::getNative() is called only for
// OpenCL and Level Zero contexts. In a child process (a call that throws
// would abort it) the accessor is replaced by libc's abort(), and dpctl's
// backend query by a function saying "CUDA": binding a dpctl array must
// then succeed without an extent, never reaching the accessor. The
// control run, with the real backend query, must die by abort — so the
// replacement is really on the path.
func TestNativeAccessorGuard(t *testing.T) {
	if mode := os.Getenv(nativeChildEnv); mode != "" {
		nativeGuardChild(t, mode)
		return
	}
	loaded(t)
	runGuardChildren(t, "TestNativeAccessorGuard", nativeChildEnv, "getNative",
		[]guardCase{{"cuda", true}, {"no-usm", true}, {"control", false}})
}

// guardCase is one child run of a guard test: the mode it is told, and
// whether it must survive (the control must not).
type guardCase struct {
	mode    string
	survive bool
}

// runGuardChildren runs test, a test of this package, once per case in a
// child process told its mode through env. A child that must survive says
// "child <mode> done"; the control must die by SIGABRT in the stand-in
// for standIn, so the stand-in is really on the path.
func runGuardChildren(t *testing.T, test, env, standIn string, cases []guardCase) {
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), env+"="+c.mode)
			out, err := cmd.CombinedOutput()
			if c.survive {
				require.NoError(t, err, "%s", out)
				assert.Contains(t, string(out), "child "+c.mode+" done")
				return
			}
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "the control child must abort in %s's stand-in\n%s", standIn, out)
			ws, _ := ee.Sys().(syscall.WaitStatus)
			assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGABRT, "control child: %v\n%s", err, out)
			assert.NotContains(t, string(out), "child "+c.mode+" done")
		})
	}
}

// cudaBackend stands in for DPCTLContext_GetBackend on a CUDA context.
var cudaBackend = ffi.NewCallback(func(ctx uintptr) uintptr { return dpctlapi.BackendCUDA })

func nativeGuardChild(t *testing.T, mode string) {
	py, b := loaded(t)
	libc, err := ffi.OpenLib(ffi.RTLDNow|ffi.RTLDNoLoad, "libc.so.6")
	require.NoError(t, err)
	abort, err := libc.Lookup("abort")
	require.NoError(t, err)
	if mode == "cuda" {
		b.SetNativeRoute(ffi.Fn(cudaBackend), abort)
	} else {
		b.SetNativeRoute(0, abort)
	}
	run(t, py, testutil.ExtentPy+`
no_usm = [dv for dv in dpctl.get_devices() if not dv.has_aspect_usm_device_allocations
          and not dv.has_aspect_usm_host_allocations and not dv.has_aspect_usm_shared_allocations]
`)
	var exprs []string
	switch mode {
	case "no-usm":
		// A context without USM is refused before anything native.
		if evalInt(t, py, "len(no_usm)") == 0 {
			t.Fatal("dpctl sees no device without USM (PoCL supplies one)")
		}
		for _, so := range []string{"lambda: dpctl.SyclQueue(no_usm[0])", "lambda: dpctl.SyclQueue(no_usm[0]).sycl_context"} {
			_, err := asArray(t, py, "ExtWin('arr', "+so+", (16,), None, 0)")
			require.ErrorIs(t, err, usm.ErrValue)
		}
	default:
		for _, f := range testutil.WindowForms {
			exprs = append(exprs, "ExtWin('"+f.Buf+"', "+f.So+", (16,), None, 0)")
		}
	}
	for _, e := range exprs {
		arr, err := asArray(t, py, e)
		require.NoError(t, err, e)
		assert.False(t, arr.Memory.HasExtent(), "no extent without the native route")
		arr.Owner.Release()
	}
	fmt.Println("child " + mode + " done")
}
