// The race checker's hooks (onesided/races.hpp) for Python: a call site is
// the first frame outside onesided's API wrappers (window/, args/),
// interned as (code object, instruction) and turned into "file:line" only
// when a report needs it; a finding
// is a onesided.RaceWarning, warned in the frame that made the call being
// reported. Called only by windows created with onesided_check=races.
#include <pybind11/pybind11.h>

#include <map>
#include <unordered_map>
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
  // The directories of the package's API layers (window/, args/): their
  // frames are onesided's own wrappers around the user's call.
  std::vector<std::string> wrappers;
  std::unordered_map<PyObject*, bool> wrapper_code;  // code object -> in a wrapper layer (kept alive below)
  // Sites interned as (code object, instruction offset); the line is
  // worked out only when a report needs it.
  std::map<std::pair<PyObject*, int>, std::uint32_t> ids;
  std::vector<std::pair<PyObject*, int>> sites{{nullptr, 0}};  // id 0: unknown
};

Sites& sites() {
  static auto* s = new Sites;  // never destroyed: windows may report at exit
  return *s;
}

// Whether `code` is one of onesided's API wrappers; asked once per code
// object. Called with the GIL and sites().mutex held.
bool in_package(PyCodeObject* code) {
  Sites& s = sites();
  auto it = s.wrapper_code.find(reinterpret_cast<PyObject*>(code));
  if (it != s.wrapper_code.end()) return it->second;
  bool inside = false;
  if (const char* file = PyUnicode_AsUTF8(code->co_filename)) {
    for (const std::string& w : s.wrappers) inside = inside || std::string_view(file).starts_with(w);
  } else {
    PyErr_Clear();
  }
  Py_INCREF(code);  // kept: its address must not be reused by another code object
  s.wrapper_code.emplace(reinterpret_cast<PyObject*>(code), inside);
  return inside;
}

std::uint32_t site() {
  const PyGILState_STATE gil = PyGILState_Ensure();
  Sites& s = sites();
  std::lock_guard lk(s.mutex);
  PyFrameObject* frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  std::uint32_t id = 0;
  while (frame) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    if (!in_package(code)) {
      const std::pair<PyObject*, int> key{reinterpret_cast<PyObject*>(code), PyFrame_GetLasti(frame)};
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
        text = std::string(file) + ":" + std::to_string(PyCode_Addr2Line(code, s.sites[id].second)) + " (" + name + ")";
      else
        PyErr_Clear();
    }
  }
  PyGILState_Release(gil);
  return text;
}

// How many frames up the first one outside onesided's wrappers is, as
// warnings' stacklevel counts (1: the current frame).
Py_ssize_t user_stack_level() {
  std::lock_guard lk(sites().mutex);
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
  const std::string file = m.attr("__file__").cast<std::string>();
  const std::string package = file.substr(0, file.rfind('/') + 1);
  sites().wrappers = {package + "window/", package + "args/"};
  races::set_hooks({site, site_text, warn});
}

}  // namespace onesided::python
