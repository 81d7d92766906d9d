// The _tcjit extension module: the bindings of libtcjit.so's API (include/tcjit/) that the tcjit
// Python package (python/tcjit/) is written on.
#include "python/bindings.h"

#include "tcjit/tcjit.h"

NB_MODULE(_tcjit, m) {
  m.doc() = "tcjit's compiled bindings (libtcjit.so). Use the tcjit package, not this module.";
  m.attr("__version__") = tcjit_version();
  tcjit::python::bind_errors(m);
  tcjit::python::bind_runtime(m);
  tcjit::python::bind_tools(m);
  tcjit::python::bind_arrays(m);
}
