// Layout: which elements of a buffer a call touches (onesided/layout.hpp),
// built by the Python layer from a numpy view, an mpi4py derived datatype
// or onesided.Layout, and passed to the full forms of the data calls.

#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

#include "checked_args.hpp"
#include "onesided/layout.hpp"
#include "parsed_args.hpp"
#include "registrations.hpp"

namespace onesided::python {

namespace py = pybind11;

namespace {

// A sequence of exactly `n` items (a tuple or list), or an ArgumentTypeError.
py::sequence items(py::handle h, std::size_t n, const char* what) {
  if (!py::isinstance<py::tuple>(h) && !py::isinstance<py::list>(h))
    raise(kArgumentType, std::string(what) + " must be a tuple or list, got " + type_name(h));
  auto seq = py::reinterpret_borrow<py::sequence>(h);
  if (n && seq.size() != n)
    raise(kArgumentType, std::string(what) + " must have " + std::to_string(n) + " items, got " +
                             std::to_string(seq.size()));
  return seq;
}

Layout make_layout(int dtype, py::handle blocks_arg) {
  const Dtype d = to_dtype(dtype);
  std::vector<Layout::Block> blocks;
  for (py::handle b : items(blocks_arg, 0, "layout blocks")) {
    auto block = items(b, 2, "a layout block (offset, dims)");
    Layout::Block out{int64_arg(block[0], "layout block offset"), {}};
    for (py::handle dim : items(block[1], 0, "a layout block's dims")) {
      auto cs = items(dim, 2, "a layout dim (count, stride)");
      const std::int64_t count = int64_arg(cs[0], "layout dim count");
      if (count < 0) raise(ErrorCategory::Argument, "layout dim count must be >= 0, got " + std::to_string(count));
      out.dims.push_back({static_cast<std::uint64_t>(count), int64_arg(cs[1], "layout dim stride")});
    }
    blocks.push_back(std::move(out));
  }
  return Layout(d, std::move(blocks));
}

}  // namespace

void register_layout(py::module_& m) {
  py::class_<Layout>(m, "Layout",
                     "Which elements of a buffer a call touches: blocks (offset, [(count, stride), ...]) of "
                     "elements of one dtype, byte offsets and strides, visited in C order (onesided/layout.hpp).")
      .def(py::init([](py::handle dtype, py::handle blocks) {
             return make_layout(static_cast<int>(int64_arg(dtype, "layout dtype")), blocks);
           }),
           py::arg("dtype"), py::arg("blocks"))
      .def_property_readonly("dtype", [](const Layout& l) { return static_cast<int>(l.dtype()); })
      .def_property_readonly("count", [](const Layout& l) { return l.count(); })
      .def_property_readonly("lo", [](const Layout& l) { return l.lo(); })
      .def_property_readonly("hi", [](const Layout& l) { return l.hi(); })
      .def_property_readonly("runs", [](const Layout& l) { return l.runs(); })
      .def_property_readonly("contiguous", [](const Layout& l) { return l.is_contiguous(); })
      .def_property_readonly("blocks",
                             [](const Layout& l) {
                               py::list out;
                               for (const auto& b : l.blocks()) {
                                 py::list dims;
                                 for (const auto& d : b.dims) dims.append(py::make_tuple(d.count, d.stride));
                                 out.append(py::make_tuple(b.offset, dims));
                               }
                               return out;
                             })
      .def("__repr__", [](const Layout& l) {
        return "<onesided._core.Layout " + std::string(dtype_info(l.dtype()).name) + " x " +
               std::to_string(l.count()) + " in " + std::to_string(l.runs()) + " runs, bytes [" +
               std::to_string(l.lo()) + ", " + std::to_string(l.hi()) + ")>";
      });
}

}  // namespace onesided::python
