// Bootstrap: how the ranks of a window's group find each other. It is the
// only collective channel the core needs (address and key exchange at window
// creation, the barrier in Fence and Free); the Python package implements it
// over an mpi4py communicator or onesided's own launcher, C++ programs over
// whatever they have.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace onesided {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective: every rank contributes `mine`; returns all contributions,
  // indexed by rank.
  virtual std::vector<std::string> allgather(const std::string& mine) = 0;
  // Collective: returns once every rank of the group has entered it.
  virtual void barrier() = 0;
};

// The group of one process: a notebook, or a serial test.
class SelfBootstrap final : public Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> allgather(const std::string& mine) override { return {mine}; }
  void barrier() override {}
};

}  // namespace onesided
