// The race checker's hooks (onesided/races.hpp) for Python: a call site is
// the first frame outside the onesided package, interned as (code object,
// line) and turned into "file:line" only when a report needs it; a finding
// is a onesided.RaceWarning, warned in the frame that made the call being
// reported. Called only by windows created with onesided_check=races.
#include <pybind11/pybind11.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "onesided/races.hpp"
#include "registrations.hpp"

namespace onesided::python {
namespace {

struct Sites {
  std::mutex mutex;  // the GIL is held too; this keeps the tables whole without relying on it
  std::string package;  // the onesided package's directory, with its trailing '/'
  std::map<std::pair<PyObject*, int>, std::uint32_t> ids;
  std::vector<std::pair<PyObject*, int>> sites{{nullptr, 0}};  // id 0: unknown
};

Sites& sites() {
  static auto* s = new Sites;  // never destroyed: windows may report at exit
  return *s;
}

bool in_package(PyCodeObject* code) {
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  if (!file) {
    PyErr_Clear();
    return false;
  }
  return std::string_view(file).starts_with(sites().package);
}

std::uint32_t site() {
  const PyGILState_STATE gil = PyGILState_Ensure();
  PyFrameObject* frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  std::uint32_t id = 0;
  while (frame) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    if (!in_package(code)) {
      const std::pair<PyObject*, int> key{reinterpret_cast<PyObject*>(code), PyFrame_GetLineNumber(frame)};
      Sites& s = sites();
      std::lock_guard lk(s.mutex);
      auto [it, fresh] = s.ids.emplace(key, static_cast<std::uint32_t>(s.sites.size()));
      if (fresh) {
        Py_INCREF(key.first);  // kept: the id must stay resolvable
        s.sites.push_back(key);
      }
      id = it->second;
      Py_DECREF(code);
      break;
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  PyGILState_Release(gil);
  return id;
}

std::string site_text(std::uint32_t id) {
  const PyGILState_STATE gil = PyGILState_Ensure();
  std::string text = "?";
  {
    Sites& s = sites();
    std::lock_guard lk(s.mutex);
    if (id < s.sites.size() && s.sites[id].first) {
      auto* code = reinterpret_cast<PyCodeObject*>(s.sites[id].first);
      const char* file = PyUnicode_AsUTF8(code->co_filename);
      const char* name = PyUnicode_AsUTF8(code->co_name);
      if (file && name)
        text = std::string(file) + ":" + std::to_string(s.sites[id].second) + " (" + name + ")";
      else
        PyErr_Clear();
    }
  }
  PyGILState_Release(gil);
  return text;
}

// How many frames up the first one outside the onesided package is, as
// warnings' stacklevel counts (1: the current frame).
Py_ssize_t user_stack_level() {
  Py_ssize_t level = 1;
  PyFrameObject* frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  while (frame) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const bool inside = in_package(code);
    Py_DECREF(code);
    if (!inside) break;
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
    ++level;
  }
  Py_XDECREF(frame);
  return level;
}

void warn(const std::string& text) {
  const PyGILState_STATE gil = PyGILState_Ensure();
  try {
    py::object cls = py::module_::import("onesided._errors").attr("RaceWarning");
    // Warnings turned into errors cannot leave the core's call here; they
    // are shown as unraisable instead of being lost.
    if (PyErr_WarnEx(cls.ptr(), text.c_str(), user_stack_level()) < 0) PyErr_WriteUnraisable(nullptr);
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("onesided race checker");
  }
  PyGILState_Release(gil);
}

}  // namespace

void register_races(py::module_& m) {
  std::string file = m.attr("__file__").cast<std::string>();
  sites().package = file.substr(0, file.rfind('/') + 1);
  races::set_hooks({site, site_text, warn});
}

}  // namespace onesided::python
