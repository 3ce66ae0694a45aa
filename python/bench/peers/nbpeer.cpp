// nanobind's peer of benchmod.f (CMakeLists.txt): the same signature, an
// empty body.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nb = nanobind;

NB_MODULE(nbpeer, m) {
    m.def("f", [](nb::ndarray<float, nb::ndim<1>, nb::c_contig>) {}, nb::arg("x").noconvert(),
          "Take a 1-D C-contiguous float32 array and do nothing.");
}
