package opencl

import (
	"sync"

	"github.com/usmbridge/usmbridge/internal/errkind"
	"github.com/usmbridge/usmbridge/opencl/internal/clapi"
)

// The loader is opened once per process: the ICD loader reads its
// environment (OCL_ICD_VENDORS, OCL_ICD_FILENAMES) and the vendor
// directory on first use and never again, so reopening could not change
// which platforms appear.
var loadLib = sync.OnceValues(func() (*clapi.Lib, error) {
	return openLib(clapi.SONAMEs...)
})

// openLib loads the table. Both failures (no loader, a loader lacking
// entry points) match errkind.NotAvailable: a loader too old to be usable
// is as good as none.
func openLib(names ...string) (*clapi.Lib, error) {
	l, err := clapi.Load(names...)
	if err != nil {
		return nil, errkind.Wrap(errkind.NotAvailable, "opencl", "the OpenCL ICD loader (libOpenCL.so.1, Debian package ocl-icd-libopencl1) cannot be used", err)
	}
	return l, nil
}

// lib returns the loaded table or the "runtime not available" error.
func lib() (*clapi.Lib, error) { return loadLib() }
