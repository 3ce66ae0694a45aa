package extmod

import (
	"github.com/usmbridge/usmbridge/pyext"
	"github.com/usmbridge/usmbridge/usm"
)

// A kernel specialized on its array's layout by a build option
// (docs/extensions.md, "A kernel that fits the arrays"): one source, two
// programs, each built once per context and device.

const scaleSource = `
kernel void scale(global double *y, long sy, double a)
{
    long i = get_global_id(0);
#ifdef UNIT_STRIDE
    y[i] *= a;
#else
    y[i * sy] *= a;
#endif
}`

// scaleProgram is the program for y's layout: built with -DUNIT_STRIDE
// for a contiguous y, without it otherwise; each is built once per
// context and device, and looked up after.
func scaleProgram(q usm.Queue, sy int64) (usm.Program, error) {
	src := usm.ProgramSource{OpenCLC: scaleSource}
	if sy == 1 {
		src.Options = "-DUNIT_STRIDE"
	}
	return usm.BuildProgram(q, src)
}

func defineLayout(m *pyext.Module) {
	pyext.Func2R(m, "scale_kernel", "y *= a on y's queue (1-D float64 USM), by the program for y's layout: "+
		"\"unit\" or \"strided\", which it returns.", scaleKernel, pyext.P("y", pyext.NDim(1), pyext.Writable()), pyext.P("a"))
}

func scaleKernel(y pyext.Array[float64], a float64) (string, error) {
	yu, sy := y.USM(), y.Strides()[0]
	if y.Len() <= 1 {
		sy = 1 // one element: its stride is never read
	}
	p, err := scaleProgram(yu.Queue, sy)
	if err != nil {
		return "", err
	}
	k, err := p.Kernel("scale")
	if err != nil {
		return "", err
	}
	ev, err := k.Launch(yu.Queue, usm.NDRange(y.Len()), nil, usm.Pointer(yu.ElementPointer()), usm.Scalar(sy), usm.Scalar(a))
	if err != nil {
		return "", err
	}
	defer ev.Close()
	if err := y.WrittenBy(ev); err != nil { // waited for as the call returns: scale is not NoWait
		return "", err
	}
	if sy == 1 {
		return "unit", nil
	}
	return "strided", nil
}
