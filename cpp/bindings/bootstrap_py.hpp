// A Bootstrap over any Python communicator that speaks mpi4py's names
// (Get_rank, Get_size, allgather, Barrier): mpi4py communicators of every
// kind and onesided's own COMM_WORLD alike. onesided never links MPI.
#pragma once

#include <pybind11/pybind11.h>

#include "onesided/bootstrap.hpp"

namespace onesided::python {

namespace py = pybind11;

class PyBootstrap final : public Bootstrap {
 public:
  explicit PyBootstrap(py::object comm)
      : comm_(std::move(comm)),
        rank_(comm_.attr("Get_rank")().cast<int>()),
        size_(comm_.attr("Get_size")().cast<int>()) {}

  ~PyBootstrap() override {
    py::gil_scoped_acquire gil;
    comm_ = py::object();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // Core calls arrive with or without the GIL (blocking calls release it);
  // the communicator is Python, so take it here.
  std::vector<std::string> allgather(const std::string& mine) override {
    py::gil_scoped_acquire gil;
    py::list all = comm_.attr("allgather")(py::bytes(mine));
    std::vector<std::string> out;
    out.reserve(all.size());
    for (auto item : all) out.push_back(item.cast<std::string>());
    return out;
  }

  void barrier() override {
    py::gil_scoped_acquire gil;
    comm_.attr("Barrier")();
  }

 private:
  py::object comm_;
  int rank_;
  int size_;
};

}  // namespace onesided::python
