// What package dpctl's Open, Queue and BuildProgram need of a
// libDPCTLSyclInterface to reach DPCTLKernelBundle_CreateFromSpirv
// (createfromspirv.c): one device, of a Level Zero context, without USM
// (so no pointer is ever classified), with one in-order queue. Every
// other function of the fake is a stub that returns 0, which deletes
// nothing and answers "no" (testutil.BuildFakeLibrary).
#include <stddef.h>

enum { backend_level_zero = 1 << 17 }; // DPCTLSyclBackendType

// The objects, named so that a test can find their addresses.
char fake_vector, fake_device, fake_context, fake_queue;

void *DPCTLDeviceMgr_GetDevices(int mask)
{
	(void)mask;
	return &fake_vector;
}

size_t DPCTLDeviceVector_Size(void *v) { return v == &fake_vector ? 1 : 0; }

void *DPCTLDeviceVector_GetAt(void *v, size_t i) { return v == &fake_vector && i == 0 ? &fake_device : NULL; }

void *DPCTLDeviceMgr_GetCachedContext(void *d) { return d == &fake_device ? &fake_context : NULL; }

void *DPCTLQueue_CreateForDevice(void *d, void *handler, int props)
{
	(void)handler;
	(void)props;
	return d == &fake_device ? &fake_queue : NULL;
}

void *DPCTLQueue_GetContext(void *q) { return q == &fake_queue ? &fake_context : NULL; }

void *DPCTLQueue_GetDevice(void *q) { return q == &fake_queue ? &fake_device : NULL; }

int DPCTLContext_GetBackend(void *c) { return c == &fake_context ? backend_level_zero : 0; }
