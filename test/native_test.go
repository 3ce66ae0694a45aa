package test

import (
	"os/exec"
	"testing"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/internal/testutil"
	"github.com/usmbridge/usmbridge/opencl"
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/test/nativemod"
	"github.com/usmbridge/usmbridge/usm"
)

func TestNativemodDefinition(t *testing.T) {
	if err := pyext.Check("nativemod", nativemod.Module); err != nil {
		t.Fatal(err)
	}
}

// TestNativeModule runs test_nativemod.py against nativemod: dpnp and
// dpnp.tensor use USM of the native OpenCL backend in place, and refuse
// what no SYCL context can be made for with usmbridge's ValueError. It
// needs Intel's CPU OpenCL runtime (USM), PoCL (SVM only), and dpctl with
// dpnp seeing the former.
func TestNativeModule(t *testing.T) {
	b, err := opencl.New()
	testutil.Runtime(t, testutil.IntelOpenCL, err)
	var kinds []usm.Kind
	for i := range b.Devices() {
		if a, err := b.Alloc(i, usm.KindDevice, 64); err == nil {
			kinds = append(kinds, a.Kind())
			_ = a.Free()
		}
	}
	_ = b.Close()
	has := func(k usm.Kind) bool {
		for _, x := range kinds {
			if x == k {
				return true
			}
		}
		return false
	}
	if !has(usm.KindDevice) {
		testutil.Runtime(t, testutil.IntelOpenCL, errkind.New(errkind.NotAvailable, "test", "no OpenCL device with cl_intel_unified_shared_memory"))
	}
	if !has(usm.KindShared) {
		testutil.Runtime(t, testutil.PoCL, errkind.New(errkind.NotAvailable, "test", "no OpenCL device with SVM only"))
	}
	dir := t.TempDir()
	py := buildModule(t, dir, "nativemod")
	if out, err := exec.Command(py, "-c", "import dpctl, dpnp; dpctl.SyclDevice('opencl:cpu')").CombinedOutput(); err != nil {
		testutil.Runtime(t, testutil.Dpctl, errkind.Wrap(errkind.NotAvailable, "test", "dpctl and dpnp with an opencl:cpu device: "+string(out), err))
	}
	testutil.Pytest(t, py, "", []string{"PYTHONPATH=" + dir}, "nativemod/test_nativemod.py")
}
