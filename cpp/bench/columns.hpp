// The columns of the table: each owns one kind of ops, the phase the target
// must be in while it runs, and the model and checker of its results.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "control.hpp"
#include "ops.hpp"
#include "rows.hpp"

namespace onesided_bench {

class Column {
 public:
  Column(std::string name, Phase phase) : name_(std::move(name)), phase_(phase) {}
  virtual ~Column() = default;
  const std::string& name() const { return name_; }
  Phase phase() const { return phase_; }
  virtual void begin() {}  // open the access epoch (outside the timing)
  virtual void end() {}
  virtual void run(Row row, long n) = 0;
  // This rank's cells (at the target: what the origin's ops changed).
  virtual std::array<std::int64_t, kCellsUsed> local_cells() const = 0;
  Model model;
  Checker checker;

 private:
  std::string name_;
  Phase phase_;
};

class FloorColumn final : public Column {
 public:
  explicit FloorColumn(Control& c) : Column("CPU floor", kSpin), ops_{c.floor} {}
  void run(Row row, long n) override { run_row(ops_, row, n, model, checker); }
  std::array<std::int64_t, kCellsUsed> local_cells() const override {
    std::array<std::int64_t, kCellsUsed> v;
    for (int i = 0; i < kCellsUsed; ++i) v[i] = ops_.cell[i].load();
    return v;
  }

 private:
  FloorOps ops_;
};

class OnesidedColumn final : public Column {
 public:
  OnesidedColumn(std::string name, Window* w) : Column(std::move(name), kIdle), ops_{w} {}
  void begin() override { ops_.w->lock_all(); }
  void end() override { ops_.w->unlock_all(); }
  void run(Row row, long n) override { run_row(ops_, row, n, model, checker); }
  std::array<std::int64_t, kCellsUsed> local_cells() const override {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::array<std::int64_t, kCellsUsed> v;
    std::memcpy(v.data(), ops_.w->base(), sizeof v);
    return v;
  }

 private:
  OnesidedOps ops_;
};

// The fast path's window again, through an Epoch handle taken after lock_all.
class EpochColumn final : public Column {
 public:
  EpochColumn(std::string name, Window* w) : Column(std::move(name), kIdle), w_(w) {}
  void begin() override {
    w_->lock_all();
    ops_.e = w_->epoch_all();
  }
  void end() override { w_->unlock_all(); }
  void run(Row row, long n) override { run_row(ops_, row, n, model, checker); }
  std::array<std::int64_t, kCellsUsed> local_cells() const override {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::array<std::int64_t, kCellsUsed> v;
    std::memcpy(v.data(), w_->base(), sizeof v);
    return v;
  }

 private:
  Window* w_;
  EpochOps ops_;
};

class RawColumn final : public Column {
 public:
  RawColumn(std::string name, Phase phase, RawFabric* f) : Column(std::move(name), phase), ops_{f} {}
  void run(Row row, long n) override { run_row(ops_, row, n, model, checker); }
  std::array<std::int64_t, kCellsUsed> local_cells() const override {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::array<std::int64_t, kCellsUsed> v;
    for (int i = 0; i < kCellsUsed; ++i) v[i] = ops_.f->cells()[i];
    return v;
  }

 private:
  RawOps ops_;
};

}  // namespace onesided_bench
