// What the core sees of the machine (onesided/machine.hpp), for `python -m
// onesided info`: the libfabric providers on offer and the host key.
#include <pybind11/pybind11.h>

#include "onesided/machine.hpp"
#include "registrations.hpp"

void onesided::python::register_machine(py::module_& m) {
  m.def("offered_providers", [] {
    const auto offers = [] {
      py::gil_scoped_release release;  // fi_getinfo probes every provider
      return onesided::offered_providers();
    }();
    py::list out;
    for (const auto& o : offers) {
      py::dict d;
      d["provider"] = o.provider;
      d["version"] = std::to_string(o.major) + "." + std::to_string(o.minor);
      d["fabric"] = o.fabric;
      d["domain"] = o.domain;
      d["rdm"] = o.rdm;
      d["rma"] = o.rma;
      d["atomics"] = o.atomics;
      out.append(std::move(d));
    }
    return out;
  }, "Every provider and domain the process's libfabric offers, in its order of preference.");
  m.def("host_key", &onesided::host_key,
        "This process's host key: ranks take the shared-memory path only between equal keys.");
}
