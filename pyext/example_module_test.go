package pyext_test

import (
	"fmt"
	"strings"

	"github.com/usmbridge/usmbridge/pyext"
)

// Module defines the module: one function, scale(x, factor=2.0), which
// multiplies a float64 array in place (NumPy's, dpnp's, any DLPack
// producer's), whatever memory it is in.
func Module(m *pyext.Module) error {
	m.Doc("Scale arrays in place, in Go.")
	pyext.Func2(m, "scale", "x *= factor, in place.", scale,
		pyext.P("x", pyext.NDim(1), pyext.Writable()), pyext.P("factor", pyext.Default(2.0)))
	return nil
}

func scale(x pyext.Array[float64], factor float64) error {
	vals := x.Slice() // nil for memory the host cannot read in place
	if vals == nil {
		return pyext.ValueError("x must be host-accessible and contiguous")
	}
	for i := range vals {
		vals[i] *= factor
	}
	return nil
}

// A module is a Go package with a Module function; `python -m
// usmbridge.build <dir>` builds it, and Check reports in a Go test what the
// import would refuse. Its stub says what Python sees.
func Example() {
	fmt.Println("definition errors:", pyext.Check("scaling", Module))
	stub, _ := pyext.Stub("scaling", Module)
	for _, line := range strings.Split(stub, "\n") {
		if strings.HasPrefix(line, "def scale(") {
			fmt.Println(line)
		}
	}
	// Output:
	// definition errors: <nil>
	// def scale(x: Annotated[_ArrayLike, dict(dtype='float64', ndim=1, writable=True)], factor: float = 2.0) -> None:
}
