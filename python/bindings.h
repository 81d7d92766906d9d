// The pieces of the _tcjit extension module (the Python package's compiled half, python/tcjit/),
// each binding one part of include/tcjit/ for the package's Python code. The module is a thin
// layer: plain values in and out (addresses as integers, JSON as text); the Python code checks
// arrays, builds specs and shapes results (docs/python.md).
#pragma once

#include <nanobind/nanobind.h>

namespace tcjit::python {

// tcjit::Error as the package's exceptions (Error and one subclass per ErrorCode), each carrying
// problem, where and how_to_fix as attributes.
void bind_errors(nanobind::module_ &m);
// Runtime and Operation: prepare, device memory, launches; the GIL released while they work.
void bind_runtime(nanobind::module_ &m);
// The tools (explain, resolve, tune, canonical text) and the kernel database (ls, show, export),
// returning the JSON text of the command line's --json.
void bind_tools(nanobind::module_ &m);
// dlpack_info: an object's DLPack description (address, shape, strides, type, device).
void bind_arrays(nanobind::module_ &m);

} // namespace tcjit::python
