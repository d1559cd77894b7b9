// Creation: the ranks agree on the provider, the settings and what they can
// share, then the window chooses its objects once: the data path, the
// window lock and the addressing. After this file, no code asks which
// path, lock or flavor a window has.
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "atomics/cpu_atomics.hpp"
#include "memory/cross_memory.hpp"
#include "paths/paths.hpp"
#include "window/impl.hpp"
#include "window/records.hpp"

namespace onesided {

using namespace detail;

namespace {

std::string hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// onesided's own part of a shared mapping, before every segment: the stripe
// locks of the CPU atomics, then one window lock per rank.
std::size_t control_bytes(int nranks) {
  return sizeof(cpu::Stripes) + static_cast<std::size_t>(nranks) * sizeof(SharedLockWord);
}
SharedLockWord* lock_words(const SharedSegment& segment) {
  return reinterpret_cast<SharedLockWord*>(segment.control() + sizeof(cpu::Stripes));
}

// Collective: whether an Allocate/Allocate_shared window takes the
// shared-memory path. Every rank decides from the same gathered data: all
// ranks on one host, none asking for a network provider (explicitly or
// through FI_PROVIDER), for software atomics, or to keep off shared memory.
bool shared_memory_agreed(Bootstrap& group, const Config& config) {
  const bool wants = !config.wants_network() && config.software_only.empty() && config.shared_memory;
  const auto all = group.allgather(std::string(wants ? "1" : "0") + hostname());
  for (const auto& a : all)
    if (a[0] != '1' || a.substr(1) != all[0].substr(1)) return false;
  return true;
}

void check_group(const std::shared_ptr<Bootstrap>& group) {
  if (!group) raise(ErrorCategory::Argument, "a window needs a group (Bootstrap)");
}

}  // namespace

Window::Impl::Impl(const Config& cfg, std::shared_ptr<Bootstrap> group, Flavor flavor, void* base,
                   std::size_t size, int disp_unit, std::unique_ptr<std::byte[]> owned,
                   std::shared_ptr<SharedSegment> shared, bool shared_memory_path)
    : config(cfg), epochs(group->size()) {
  if (disp_unit <= 0) raise(ErrorCategory::Argument, "disp_unit must be positive");
  if (size > 0 && base == nullptr) raise(ErrorCategory::Argument, "window base is null");
  s.group = std::move(group);
  s.rank = s.group->rank();
  s.nranks = s.group->size();
  s.base = static_cast<std::byte*>(base);
  s.size = size;
  s.disp_unit = disp_unit;
  s.flavor = flavor;
  s.owned = std::move(owned);
  s.shared = std::move(shared);
  s.declared = config.declared;
  s.ordering = config.ordering;
  posts_.reset(new std::atomic<int>[static_cast<std::size_t>(s.nranks)]());
  completes_.reset(new std::atomic<int>[static_cast<std::size_t>(s.nranks)]());
  negotiate(shared_memory_path);
}

Window::Impl::~Impl() { release(); }

void Window::Impl::negotiate(bool shared_memory_path) {
  // Round 1: agree on the provider. Every rank decides from the same
  // gathered data, so every rank decides the same way.
  Record mine;
  mine.str(hostname()).str(config.provider);
  auto all = s.group->allgather(mine.bytes);
  s.same_host = true;
  std::string host0, req0;
  for (int r = 0; r < s.nranks; ++r) {
    RecordReader rd{all[r]};
    std::string host = rd.str(), req = rd.str();
    if (r == 0) {
      host0 = host;
      req0 = req;
    }
    s.same_host = s.same_host && host == host0;
    if (req != req0)
      raise(ErrorCategory::Argument, "info key 'provider' differs between ranks: rank 0 asks '" + req0 + "', rank " +
                                         std::to_string(r) + " asks '" + req + "'");
  }
  std::string provider = req0;
  if (provider.empty() && !std::getenv("FI_PROVIDER")) provider = s.same_host ? "shm" : "tcp;ofi_rxm";

  // Round 2: open the endpoint and expose the memory, then exchange the
  // result; a failure at any rank is raised at every rank.
  std::string status, address;
  RemoteRegion region;
  NativeTable native;
  try {
    s.endpoint = Endpoint::get(provider, s.same_host);
    if (s.flavor != Flavor::Dynamic) {
      s.region = s.endpoint->transport().register_region(s.base, s.size);
      region = s.region->remote();
    }
    address = s.endpoint->transport().address();
    s.id = s.endpoint->attach(this);
    s.provider = s.endpoint->transport().provider();
    native = NativeTable::probe(s.endpoint->transport());
  } catch (const Error& e) {
    status = e.what();
  }
  mine = Record();
  mine.str(status).str(s.provider).str(address);
  mine.put(s.id).put(region.addr).put(region.key).put(static_cast<std::uint64_t>(s.size));
  mine.put(static_cast<std::int32_t>(s.disp_unit)).put(static_cast<std::int64_t>(::getpid()));
  mine.put(reinterpret_cast<std::uint64_t>(s.base)).str(config.agreed()).str(native.bytes());
  all = s.group->allgather(mine.bytes);
  NativeTable everywhere = native;
  s.peers.resize(static_cast<std::size_t>(s.nranks));
  std::string failures;
  const std::string my_hints = config.agreed();
  for (int r = 0; r < s.nranks; ++r) {
    RecordReader rd{all[r]};
    std::string st = rd.str(), prov = rd.str(), addr = rd.str();
    Peer& p = s.peers[r];
    p.window = rd.get<std::uint32_t>();
    p.region.addr = rd.get<std::uint64_t>();
    p.region.key = rd.get<std::uint64_t>();
    p.size = rd.get<std::uint64_t>();
    p.disp_unit = rd.get<std::int32_t>();
    p.pid = rd.get<std::int64_t>();
    p.base = rd.get<std::uint64_t>();
    const std::string hints = rd.str();
    const std::string table = rd.str();
    if (!st.empty()) {
      failures += " rank " + std::to_string(r) + ": " + st + ";";
      continue;
    }
    if (prov != s.provider && status.empty())
      failures += " rank " + std::to_string(r) + " opened provider '" + prov + "' but rank " +
                  std::to_string(s.rank) + " opened '" + s.provider + "';";
    if (hints != my_hints && status.empty())
      failures += " rank " + std::to_string(r) + " asks accumulate_ops|accumulate_ordering|onesided_atomics '" +
                  hints + "', rank " + std::to_string(s.rank) + " '" + my_hints + "';";
    if (!status.empty() || !failures.empty()) continue;
    everywhere.meet(NativeTable::from_bytes(table));
    // This rank too: native atomics on its own memory go through the
    // provider, so they stay atomic with the ones arriving from elsewhere.
    p.addr = s.endpoint->transport().insert_peer(addr);
  }
  if (!failures.empty()) {
    release();
    raise(ErrorCategory::Transport, "window creation failed:" + failures);
  }
  s.plan = AtomicPlan(s.declared, native, everywhere, s.provider,
                      config.software_only.empty() ? s.endpoint->transport().native_unavailable()
                                                   : config.software_only);
  s.rule = OrderRule(s.ordering, s.endpoint->transport().atomic_order());
  // The shared-memory path: every op completes in the calling thread,
  // sequentially consistent, on CPU atomics.
  if (shared_memory_path) s.plan = AtomicPlan::cpu(cpu::lock_free);

  // Round 3: on one host with shm (shared memory not switched off), ranks
  // may reach each other without the provider: cross-memory attach for a
  // Create window's puts and gets, doorbells, and window locks in shared
  // memory (the shared-memory path has its own), which cost atomic
  // instructions instead of two round trips to the target's progress
  // engine. May this rank reach every other's window by cross-memory
  // attach, and does it want shared-memory locks (the switch may differ
  // by rank)?
  const bool local = s.same_host && config.shared_memory && s.provider == "shm";
  const bool try_cma = local && s.flavor == Flavor::Create;
  bool reach = try_cma;
  for (int r = 0; reach && r < s.nranks; ++r)
    if (r != s.rank && s.peers[r].size > 0)
      reach = cma::can_read(static_cast<pid_t>(s.peers[r].pid), s.peers[r].base, 1);
  const bool try_locks = local && !shared_memory_path;
  all = s.group->allgather(std::string{reach ? '1' : '0', try_locks ? '1' : '0'});
  bool cma = try_cma, locks = try_locks;
  for (const auto& a : all) {
    cma = cma && a[0] == '1';
    locks = locks && a[1] == '1';
  }
  // An idle target sleeps on its doorbell; posting to it rings.
  if (local)
    for (int r = 0; r < s.nranks; ++r)
      if (r != s.rank) s.peers[r].bell = Doorbell::of(static_cast<pid_t>(s.peers[r].pid));

  // The choices, once.
  s.shared_memory_path = shared_memory_path;
  path = shared_memory_path ? detail::shared_memory_path(s)
         : cma              ? cross_memory_path(s, software)
                            : provider_path(s, software);
  if (config.nasty_seed) path = nasty_path(std::move(path), s, *config.nasty_seed);
  addressing = s.flavor == Flavor::Dynamic ? attached_regions(s) : window_extent(s);
  if (shared_memory_path) {
    window_lock = shared_memory_lock(s, s.shared, lock_words(*s.shared), false);
  } else if (locks) {
    std::shared_ptr<SharedSegment> segment = s.shared;
    if (!segment) {
      try {
        segment = SharedSegment::create(*s.group, 0, false, static_cast<std::size_t>(s.nranks) * sizeof(SharedLockWord));
      } catch (const Error&) {
        segment = nullptr;  // raised at every rank alike: every rank keeps lock messages
      }
    }
    if (segment)
      window_lock = shared_memory_lock(s, segment,
                                       s.shared ? lock_words(*segment)
                                                : reinterpret_cast<SharedLockWord*>(segment->control()),
                                       true);
  }
  if (!window_lock) window_lock = message_lock(s, *path);
  // No rank passes this point before every rank has its peer table and
  // the objects that serve incoming messages: only then may any send.
  s.group->barrier();
}

void Window::Impl::release() {
  if (s.freed.exchange(true)) return;
  if (s.endpoint && s.id) s.endpoint->detach(s.id);
  window_lock.reset();
  s.region.reset();
  if (addressing) addressing->release();
}

// ---- the flavors ---------------------------------------------------------------

std::unique_ptr<Window> Window::create(void* base, std::size_t size, int disp_unit, const Info& info,
                                       std::shared_ptr<Bootstrap> group, Flavor flavor) {
  check_group(group);
  const auto config = Config::parse(info);
  return std::unique_ptr<Window>(new Window(
      std::make_unique<Impl>(config, std::move(group), flavor, base, size, disp_unit, nullptr, nullptr, false)));
}

std::unique_ptr<Window> Window::allocate(std::size_t size, int disp_unit, const Info& info,
                                         std::shared_ptr<Bootstrap> group) {
  check_group(group);
  const auto config = Config::parse(info);
  if (shared_memory_agreed(*group, config)) {
    // Page-aligned segments keep every element naturally aligned.
    auto segment = SharedSegment::create(*group, size, true, control_bytes(group->size()));
    void* base = segment->base(group->rank());
    return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(
        config, std::move(group), Flavor::Allocate, base, size, disp_unit, nullptr, std::move(segment), true)));
  }
  // 64-byte alignment keeps every element naturally aligned for atomics.
  auto memory = std::make_unique<std::byte[]>(size + 64);
  void* base = memory.get() + (64 - reinterpret_cast<std::uintptr_t>(memory.get()) % 64) % 64;
  return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(
      config, std::move(group), Flavor::Allocate, base, size, disp_unit, std::move(memory), nullptr, false)));
}

std::unique_ptr<Window> Window::allocate_shared(std::size_t size, int disp_unit, const Info& info,
                                                std::shared_ptr<Bootstrap> group) {
  check_group(group);
  const auto config = Config::parse(info);
  const bool shared_memory = shared_memory_agreed(*group, config);
  auto segment = SharedSegment::create(*group, size, config.alloc_shared_noncontig, control_bytes(group->size()));
  void* base = segment->base(group->rank());
  return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(
      config, std::move(group), Flavor::Shared, base, size, disp_unit, nullptr, std::move(segment), shared_memory)));
}

std::unique_ptr<Window> Window::create_dynamic(const Info& info, std::shared_ptr<Bootstrap> group) {
  check_group(group);
  const auto config = Config::parse(info);
  return std::unique_ptr<Window>(new Window(
      std::make_unique<Impl>(config, std::move(group), Flavor::Dynamic, nullptr, 0, 1, nullptr, nullptr, false)));
}

}  // namespace onesided
