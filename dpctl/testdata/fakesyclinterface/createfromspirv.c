// DPCTLKernelBundle_CreateFromSpirv as the libDPCTLSyclInterface of dpctl
// generation FAKE_GEN (22 or 23) declares it, for the tests of dpctl and
// dpctlapi; the rest of a fake library is stubs and, for dpctl's, device.c
// (testutil.BuildFakeLibrary). It records the arguments it receives, in
// order, and returns the address of fake_bundle as the kernel bundle.
#include <stddef.h>
#include <stdint.h>

#if !defined(FAKE_GEN) || (FAKE_GEN != 22 && FAKE_GEN != 23)
#error "FAKE_GEN must be 22 or 23"
#endif

// dpctl 0.23's DPCTLSpecConst (dpctl_sycl_kernel_bundle_interface.h).
typedef struct {
	uint32_t id;
	size_t size;
	const void *value;
} DPCTLSpecConst;

char fake_bundle;

static uintptr_t args[7];
static int calls;

#if FAKE_GEN == 23
void *DPCTLKernelBundle_CreateFromSpirv(const void *ctx, const void *dev, const void *il, size_t length,
					const char *opts, size_t num_spec_consts, const DPCTLSpecConst *spec_consts)
{
	args[5] = (uintptr_t)num_spec_consts;
	args[6] = (uintptr_t)spec_consts;
#else
void *DPCTLKernelBundle_CreateFromSpirv(const void *ctx, const void *dev, const void *il, size_t length,
					const char *opts)
{
#endif
	args[0] = (uintptr_t)ctx;
	args[1] = (uintptr_t)dev;
	args[2] = (uintptr_t)il;
	args[3] = (uintptr_t)length;
	args[4] = (uintptr_t)opts;
	calls++;
	return &fake_bundle;
}

// fake_spirv_params is how many parameters the fake's CreateFromSpirv
// declares.
int fake_spirv_params(void) { return FAKE_GEN == 23 ? 7 : 5; }

// fake_spirv_calls counts the calls of CreateFromSpirv.
int fake_spirv_calls(void) { return calls; }

// fake_spirv_args returns the last call's arguments (seven slots; only
// the first fake_spirv_params() are written).
const uintptr_t *fake_spirv_args(void) { return args; }
