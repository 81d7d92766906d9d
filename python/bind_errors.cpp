// tcjit::Error -> the package's exceptions. Each ErrorCode has its class (bad_spec: SpecError, a
// ValueError too; unsupported: UnsupportedError; device: DeviceError; database: DatabaseError;
// invalid_argument: ArgumentError, a ValueError too; not_found: NotFoundError, a LookupError too;
// internal: Error itself), all subclasses of tcjit.Error. The message is the C++ what() ("tcjit:
// WHERE: WHAT" and "how to fix: ..."); the attributes problem, where, how_to_fix and code hold its
// parts.
#include "python/bindings.h"

#include "tcjit/tcjit.hpp"

#include <nanobind/stl/string.h>

#include <exception>

namespace nb = nanobind;

namespace tcjit::python {
namespace {

struct ErrorClasses {
  PyObject *base = nullptr, *spec = nullptr, *argument = nullptr, *not_found = nullptr,
           *unsupported = nullptr, *device = nullptr, *database = nullptr;
};
ErrorClasses classes;

const char *code_name(ErrorCode code) {
  switch (code) {
  case ErrorCode::invalid_argument: return "invalid_argument";
  case ErrorCode::bad_spec: return "bad_spec";
  case ErrorCode::not_found: return "not_found";
  case ErrorCode::unsupported: return "unsupported";
  case ErrorCode::device: return "device";
  case ErrorCode::database: return "database";
  case ErrorCode::internal: return "internal";
  }
  return "internal";
}

PyObject *class_of(ErrorCode code) {
  switch (code) {
  case ErrorCode::invalid_argument: return classes.argument;
  case ErrorCode::bad_spec: return classes.spec;
  case ErrorCode::not_found: return classes.not_found;
  case ErrorCode::unsupported: return classes.unsupported;
  case ErrorCode::device: return classes.device;
  case ErrorCode::database: return classes.database;
  case ErrorCode::internal: return classes.base;
  }
  return classes.base;
}

void translate(const std::exception_ptr &p, void *) {
  try {
    std::rethrow_exception(p);
  } catch (const Error &e) {
    nb::object error = nb::borrow(class_of(e.code()))(e.what());
    error.attr("problem") = e.problem();
    error.attr("where") = e.where();
    error.attr("how_to_fix") = e.how_to_fix();
    error.attr("code") = code_name(e.code());
    PyErr_SetObject(class_of(e.code()), error.ptr());
  }
}

PyObject *new_class(nb::module_ &m, const char *name, const char *doc, PyObject *bases) {
  const std::string qualified = std::string("tcjit.") + name;
  PyObject *cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!cls)
    throw nb::python_error();
  m.attr(name) = nb::borrow(cls);
  return cls;
}

PyObject *bases(PyObject *first, PyObject *second) {
  return second ? PyTuple_Pack(2, first, second) : PyTuple_Pack(1, first);
}

} // namespace

void bind_errors(nb::module_ &m) {
  classes.base = new_class(m, "Error",
                           "Every failure of tcjit: the message says what went wrong, where and "
                           "how to fix it (attributes problem, where, how_to_fix, code).",
                           nullptr);
  classes.spec = new_class(m, "SpecError",
                           "A spec that does not parse or is not valid (DSL text, or one built "
                           "from arrays that do not fit it).",
                           bases(classes.base, PyExc_ValueError));
  classes.argument = new_class(m, "ArgumentError", "A bad option or argument.",
                               bases(classes.base, PyExc_ValueError));
  classes.not_found = new_class(m, "NotFoundError",
                                "Nothing stored for the problem (on_miss=\"fail\", a key not in "
                                "the database).",
                                bases(classes.base, PyExc_LookupError));
  classes.unsupported = new_class(m, "UnsupportedError",
                                  "What this build or machine cannot do (no CUDA driver, an "
                                  "operation the code generator lacks).",
                                  bases(classes.base, nullptr));
  classes.device = new_class(m, "DeviceError", "The device (GPU or emulator) failed.",
                             bases(classes.base, nullptr));
  classes.database =
      new_class(m, "DatabaseError", "The kernel database failed.", bases(classes.base, nullptr));
  nb::register_exception_translator(translate);
}

} // namespace tcjit::python
