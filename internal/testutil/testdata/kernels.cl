// The kernels usmbridge's kernel tests and benchmarks run, in OpenCL C.
// The opencl and dpctl backends build this source as it is; SPIR-V is
// made from it by scripts/spirv.sh (clang's SPIR target and llvm-spirv,
// Debian packages), for the backends and tests that take SPIR-V: no
// binary is kept in the repository. The fake Level Zero driver
// (levelzero/testdata/fakedriver) runs these kernels by name with C
// implementations of its own: keep the two in step.

// y[i*sy] += a * x[i*sx]: strides in elements, pointers at element 0.
kernel void saxpy(float a, global const float *x, long sx, global float *y, long sy)
{
    long i = get_global_id(0);
    y[i * sy] += a * x[i * sx];
}

// out[j*w + i] = 1000*j + i + k over a 2-D range.
kernel void iota2d(global int *out, int w, int k)
{
    int i = get_global_id(0), j = get_global_id(1);
    out[j * w + i] = 1000 * j + i + k;
}

// y[i] = v.
kernel void fill(global float *y, float v)
{
    y[get_global_id(0)] = v;
}

// y[i] = y[i] * m + c.
kernel void scale_add(global float *y, float m, float c)
{
    size_t i = get_global_id(0);
    y[i] = y[i] * m + c;
}

// Nothing: the launch overhead's kernel.
kernel void empty(void)
{
}
