// An RMA window: memory that every rank of a group exposes to the others,
// with MPI-3 one-sided semantics.
//
// Guarantees, for every call below (the Python docstrings repeat them):
//  - Operations are non-blocking: they may return before they complete.
//    They complete, locally and at the target, at the next Flush, Unlock,
//    Unlock_all or Fence that covers their target.
//  - Every accumulate-style call (accumulate, get_accumulate, fetch_and_op,
//    compare_and_swap, rmw, rmw2) is atomic per element with respect to every
//    other accumulate-style call on the same window, from any origin, among
//    the ops the window declares (info key accumulate_ops; default: all).
//  - Accumulate-style calls from one origin to overlapping target memory are
//    applied in issue order (accumulate_ordering = rar,raw,war,waw).
//  - put and get are neither atomic nor ordered.
//  - A target range outside the target's window is rejected at the origin,
//    before anything is sent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onesided/bootstrap.hpp"
#include "onesided/error.hpp"
#include "onesided/layout.hpp"
#include "onesided/request.hpp"
#include "onesided/types.hpp"

namespace onesided {

enum class LockType : int { Exclusive = 234, Shared = 235 };
enum class Flavor : int { Create = 1, Allocate = 2, Dynamic = 3, Shared = 4 };
enum class Model : int { Separate = 1, Unified = 2 };

// Assertion bits, with MPICH's values so mpi4py's constants pass through.
namespace mode {
inline constexpr unsigned kNoCheck = 1024;
inline constexpr unsigned kNoStore = 2048;
inline constexpr unsigned kNoPut = 4096;
inline constexpr unsigned kNoPrecede = 8192;
inline constexpr unsigned kNoSucceed = 16384;
// Seed 002: the call is Lock(EXCLUSIVE) + op + Unlock; with kNoCheck, no lock.
inline constexpr unsigned kPassiveEpochImplicit = 1u << 20;
}  // namespace mode

using Info = std::map<std::string, std::string>;

// MPI_PROC_NULL: a valid target rank of every data call and of lock,
// unlock and flush, which then do nothing (a request is complete at once);
// shared_query(kProcNull) gives the first rank whose segment is not empty.
inline constexpr int kProcNull = -1;

class Epoch;  // onesided/epoch.hpp

struct SharedMemory {
  void* base = nullptr;
  std::size_t size = 0;
  int disp_unit = 1;
  std::shared_ptr<void> mapping;  // keeps the memory mapped, even past free()
};

class Window {
 public:
  // Collective over `group`. Exposes [base, base + size) of the caller's
  // memory, which must stay valid until free(). Info keys (the same at every
  // rank): "provider" (a libfabric provider name such as "shm" or
  // "tcp;ofi_rxm"), "accumulate_ops" (alias "which_accumulate_ops"; see
  // docs/atomics.md), "accumulate_ordering" ("none" or a subset of
  // rar,raw,war,waw), and MPI's other standard hints.
  static std::unique_ptr<Window> create(void* base, std::size_t size, int disp_unit,
                                        const Info& info, std::shared_ptr<Bootstrap> group,
                                        Flavor flavor = Flavor::Create);
  // Collective: as create(), over `size` zeroed bytes the window owns.
  static std::unique_ptr<Window> allocate(std::size_t size, int disp_unit, const Info& info,
                                          std::shared_ptr<Bootstrap> group);
  // Collective, every rank of `group` on one host: as allocate(), but the
  // memory of every rank is mapped by every rank (shared_query). Segments
  // are contiguous in rank order unless info alloc_shared_noncontig=true.
  static std::unique_ptr<Window> allocate_shared(std::size_t size, int disp_unit, const Info& info,
                                                 std::shared_ptr<Bootstrap> group);
  // Collective: a window with no memory until attach(). Targets are then
  // absolute addresses (disp_unit 1) inside a region the target attached.
  static std::unique_ptr<Window> create_dynamic(const Info& info, std::shared_ptr<Bootstrap> group);
  // Window creation is collective, and so are its failures: every factory
  // first checks its arguments, then the ranks agree, and bad input on any
  // rank raises the same Error at every rank (settings that must match,
  // such as accumulate_ops, accumulate_ordering, provider, the flavor and
  // alloc_shared_noncontig, must match). A caller that finds its own
  // arguments bad before calling a factory calls this instead, collectively
  // where the others call the factory: it raises `error` at every rank.
  [[noreturn]] static void fail_creation(Bootstrap& group, const Error& error);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  void* base() const;
  std::size_t size() const;
  int disp_unit() const;
  int rank() const;
  int group_size() const;
  Flavor flavor() const;
  Model model() const;
  const std::string& provider() const;
  Info info() const;
  // The data path chosen at creation ("shared-memory", "provider",
  // "cross-memory", each maybe wrapped as "nasty(...)") and one line that
  // says what it does. Fixed for the window's life.
  const std::string& path_name() const;
  const std::string& path_description() const;
  // True when every operation is complete at its target when its call
  // returns, or (small puts and gets on the cross-memory path) waits with
  // nothing in flight until the next completion point: no call but the
  // synchronisation ones can wait, and buffers need not outlive the call,
  // but for holds_get_results().
  bool completes_in_call() const;
  // True when a plain get's result buffer (no request) must outlive its
  // call, until the next completion point (Flush*, Unlock*, Fence,
  // Complete), where the get's result is valid, as MPI says.
  bool holds_get_results() const;
  // Whether operations this window posted may still be reported complete:
  // after a Free that was interrupted or gave up, or before any Free. A
  // Window destroyed so keeps its bookkeeping (and whatever it still holds)
  // for the process's life, for those completions; the caller keeps the
  // buffers the operations read and write (the Python Window does).
  bool in_flight() const;
  // Window extent and displacement unit of `target`, as every origin knows it.
  std::size_t size_of(int target) const;
  int disp_unit_of(int target) const;

  // `rank`'s segment, for direct loads and stores, where this rank reaches
  // it by load/store (MPI 4.1): every segment of an allocate_shared window
  // (and of an allocate window, or a create window over AllocatedMemory,
  // on the shared-memory path), this rank's own
  // of a create or allocate window (no mapping: valid while the Window
  // lives); elsewhere size 0 and a null base.
  SharedMemory shared_query(int rank) const;
  // A dynamic window: expose [base, base + size) (local, not collective);
  // detach(base) withdraws it. Origins see an attach at their next epoch
  // start (lock, lock_all, fence, start) or on their first miss.
  void attach(void* base, std::size_t size);
  void detach(const void* base);

  // Data movement. `disp` counts the target's displacement units. A
  // non-null `request` is set to a Request for the operation.
  void put(const void* origin, std::size_t count, Dtype dtype, int target, std::int64_t disp,
           Request* request = nullptr);
  void get(void* result, std::size_t count, Dtype dtype, int target, std::int64_t disp,
           Request* request = nullptr);

  // Non-contiguous forms (onesided/layout.hpp): the elements of the
  // origin's (or result's) layout, offsets from `origin` (`result`), paired
  // in order with the elements of the target's layout, offsets from
  // `disp` x the target's disp_unit. The layouts hold the same number of
  // elements of the same dtype (no conversion); every byte of the target
  // layout is checked against the target's window before anything is sent,
  // and a target or result layout may not touch a byte twice. Same
  // completion and ordering as the contiguous forms.
  void put(const void* origin, const Layout& origin_layout, int target, std::int64_t disp,
           const Layout& target_layout, Request* request = nullptr);
  void get(void* result, const Layout& result_layout, int target, std::int64_t disp, const Layout& target_layout,
           Request* request = nullptr);

  // The accumulate family. Each element is updated atomically: result (if
  // not null) receives the old target values, then target = op(target, ...).
  // Ops are checked against the window's declared accumulate_ops.
  void accumulate(const void* origin, std::size_t count, Dtype dtype, int target,
                  std::int64_t disp, Op op, Request* request = nullptr);
  void get_accumulate(const void* origin, void* result, std::size_t count, Dtype dtype,
                      int target, std::int64_t disp, Op op, Request* request = nullptr);
  // Non-contiguous forms, as put and get above: atomic per element, and
  // per element in accumulate_ordering's order. A null `origin` is allowed
  // where the op reads no operand (NO_OP); its layout then only counts.
  void accumulate(const void* origin, const Layout& origin_layout, int target, std::int64_t disp,
                  const Layout& target_layout, Op op, Request* request = nullptr);
  void get_accumulate(const void* origin, const Layout& origin_layout, void* result, const Layout& result_layout,
                      int target, std::int64_t disp, const Layout& target_layout, Op op,
                      Request* request = nullptr);
  // A non-null `request` (an extension beyond MPI, MPI Forum issue #128)
  // is set to a Request; `result` is valid once it completes, not before.
  void fetch_and_op(const void* origin, void* result, Dtype dtype, int target, std::int64_t disp,
                    Op op, Request* request = nullptr);
  void compare_and_swap(const void* origin, const void* compare, void* result, Dtype dtype,
                        int target, std::int64_t disp, Request* request = nullptr);
  // The generalised read-modify-write of seed 002. rmw: INC (origin
  // ignored), SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, REPLACE
  // (swap). rmw2: MASK_SWAP (origin = mask, origin2 = swap value) and
  // CSWAP_* (origin = comperand, origin2 = swaperand; swaps when
  // `comperand OP target` holds). A non-null `request` is set to a Request
  // for the operation.
  // `assertion` may hold mode::kPassiveEpochImplicit (| mode::kNoCheck).
  void rmw(Op op, const void* origin, void* result, std::size_t count, Dtype dtype, int target,
           std::int64_t disp, unsigned assertion = 0, Request* request = nullptr);
  void rmw2(Op op, const void* origin, const void* origin2, void* result, std::size_t count,
            Dtype dtype, int target, std::int64_t disp, unsigned assertion = 0,
            Request* request = nullptr);

  // Notified RMA (docs/semantics.md, "Notified RMA"), an extension beyond
  // MPI. A window has the notification counters its info asked for
  // ("onesided_notifications", the same at every rank; 0 by default).
  //
  // notify(target, index): once every operation this process issued to
  // `target` before the call is complete at the target (puts visible, gets
  // read, accumulates applied), add one to the target's counter `index`;
  // never earlier. Notifications from one process to one target take effect
  // in call order; nothing is promised between different origins. It needs
  // an access epoch to `target` like any operation, returns at once, and
  // completes (counted at the target; a non-null `request` with it) at the
  // next flush, unlock or fence covering `target`, or on its own through
  // progress: a target
  // waiting for it needs no further call at the origin. Python's
  // Put_notify, Get_notify and Accumulate_notify are the operation, then this.
  void notify(int target, std::size_t index, Request* request = nullptr);
  std::size_t notifications() const;
  // This rank's counters. notify_value: the count, read with acquire (so
  // the data it stands for is visible); set_notify_value: an atomic
  // exchange (no increment is lost), returning the old count;
  // test_notify: whether the count has reached `value`, after one round of
  // progress; wait_notify: blocks until it has, progress continuing (raises
  // if a rank on this host that could still notify dies).
  std::uint64_t notify_value(std::size_t index) const;
  std::uint64_t set_notify_value(std::size_t index, std::uint64_t value);
  bool test_notify(std::size_t index, std::uint64_t value);
  void wait_notify(std::size_t index, std::uint64_t value);
  // How notify() reaches targets on this window, in one line.
  std::string notification_mechanism() const;

  // Where this window's accumulate-style ops on `dtype` run, and why.
  bool native_atomics(Dtype dtype) const;
  const std::string& atomics_reason(Dtype dtype) const;
  // The probe behind that choice: elements per native atomic for `f`'s
  // shape of `op` on `dtype` at every rank (0: no native form).
  std::size_t native_count(Function f, Op op, Dtype dtype) const;

  // Synchronisation.
  void fence(unsigned assertion = 0);
  void lock(int target, LockType type = LockType::Exclusive, unsigned assertion = 0);
  // lock() in two steps, for a caller that must do something before it may
  // block (the Python binding releases the GIL only then): begin_lock does
  // all of lock() but the wait, never blocks, and returns true when the
  // lock is held; on false, end_lock(target) must follow and blocks until
  // it is. Errors are lock()'s, each raised by the step that finds it.
  bool begin_lock(int target, LockType type = LockType::Exclusive, unsigned assertion = 0);
  void end_lock(int target);
  void unlock(int target);
  void lock_all(unsigned assertion = 0);
  void unlock_all();
  void flush(int target);
  void flush_all();
  // A handle on the passive epoch open on `target` (after lock(target)) or
  // on every rank (after lock_all()), whose calls skip what the epoch
  // decided and keep the per-call checks (onesided/epoch.hpp). An Epoch
  // error when no such epoch is open; the handle is closed by the
  // unlock(target) or unlock_all() that ends it.
  Epoch epoch(int target);
  Epoch epoch_all();
  void flush_local(int target);
  void flush_local_all();
  // flush(target)'s and flush_all()'s conditions as Requests, for event
  // loops: returns at once; the Request completes once every operation
  // issued before the call (to `target`; to every target) is complete at
  // its target. flush(target) then returns at once and reports a failed
  // operation. PROC_NULL: complete at once.
  Request flush_request(int target);
  Request flush_all_request();
  void sync();
  // Active-target synchronisation (post/start/complete/wait). start() does
  // not block: an operation to a target waits for that target's post().
  // complete() returns once every operation of the access epoch is complete
  // at its target; wait() once every origin of the post group completed;
  // test() is wait() without blocking.
  void post(const std::vector<int>& group, unsigned assertion = 0);
  void start(const std::vector<int>& group, unsigned assertion = 0);
  void complete();
  void wait();
  bool test();
  // Collective: completes everything, then releases the window. Calls after
  // free() raise.
  void free();

  class Impl;

 private:
  explicit Window(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace onesided

// Epoch's calls are inline and forward to Window's, so it needs Window
// whole: it is defined after it, and this include makes window.hpp alone
// enough for callers of epoch() (either header may come first).
#include "onesided/epoch.hpp"
