// nanobind's peers (CMakeLists.txt): of benchmod.f, the same signature
// with an empty body; of examples/saxpy's saxpy, y += a*x on 1-D float32
// arrays, the same loop.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nb = nanobind;

NB_MODULE(nbpeer, m) {
    m.def("f", [](nb::ndarray<float, nb::ndim<1>, nb::c_contig>) {}, nb::arg("x").noconvert(),
          "Take a 1-D C-contiguous float32 array and do nothing.");
    m.def("saxpy",
          [](float a, nb::ndarray<const float, nb::ndim<1>, nb::c_contig> x,
             nb::ndarray<float, nb::ndim<1>, nb::c_contig> y) {
              if (x.shape(0) != y.shape(0))
                  throw nb::value_error("x and y differ in length");
              const float *xs = x.data();
              float *ys = y.data();
              for (size_t i = 0; i < y.shape(0); i++)
                  ys[i] += a * xs[i];
          },
          nb::arg("a"), nb::arg("x").noconvert(), nb::arg("y").noconvert(), "y += a*x, in place.");
}
