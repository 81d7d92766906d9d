// What the package needs of an object with __dlpack__ (a torch, CuPy or JAX tensor, a NumPy
// array): its data address, shape, strides in elements, element type and device, read through
// nanobind's DLPack import without copying.
#include "python/bindings.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <tuple>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace tcjit::python {
namespace {

// (address, shape, strides in elements, DLPack type code, bits, DLPack device type).
using ArrayInfo = std::tuple<uintptr_t, std::vector<int64_t>, std::vector<int64_t>, int, int, int>;

ArrayInfo dlpack_info(nb::ndarray<nb::ro> array) {
  std::vector<int64_t> shape, strides;
  for (size_t i = 0; i < array.ndim(); ++i) {
    shape.push_back(static_cast<int64_t>(array.shape(i)));
    strides.push_back(array.stride(i));
  }
  return {reinterpret_cast<uintptr_t>(array.data()),
          shape,
          strides,
          array.dtype().code,
          array.dtype().bits * array.dtype().lanes,
          array.device_type()};
}

} // namespace

void bind_arrays(nb::module_ &m) {
  m.def("dlpack_info", &dlpack_info, "array"_a,
        "(address, shape, strides in elements, DLPack type code, bits, DLPack device type) of an "
        "object with __dlpack__, read in place.");
}

} // namespace tcjit::python
