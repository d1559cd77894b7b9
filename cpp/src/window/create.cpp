// Creation: the ranks agree on the provider, the settings and what they can
// share, then the window chooses its objects once: the data path, the
// window lock and the addressing. After this file, no code asks which
// path, lock or flavor a window has.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "atomics/cpu_atomics.hpp"
#include "memory/allocated_blocks.hpp"
#include "memory/checked.hpp"
#include "memory/cross_memory.hpp"
#include "memory/host_identity.hpp"
#include "memory/published_regions.hpp"
#include "paths/cross_memory_atomics.hpp"
#include "paths/paths.hpp"
#include "races/race_log.hpp"
#include "peers/liveness.hpp"
#include "window/impl.hpp"
#include "window/agreed.hpp"
#include "window/agreement.hpp"
#include "window/reachability.hpp"
#include "window/records.hpp"
#include "window/region_directory.hpp"

namespace onesided {

using namespace detail;

namespace {

// onesided's own part of a shared mapping, before every segment: the stripe
// locks of the CPU atomics, one window lock per rank, one publication word
// per rank (memory/publication.hpp), then each rank's notification counters
// (used on the shared-memory path only).
std::size_t lock_bytes(int nranks) { return static_cast<std::size_t>(nranks) * sizeof(SharedLockWord); }
// The lock segment of a window without a mapping of its own: every rank's
// window lock and atomic lock, and a dynamic window's region tables.
std::size_t lock_segment_bytes(int nranks, bool dynamic) {
  return 2 * lock_bytes(nranks) + (dynamic ? PublishedRegions::bytes(nranks) : 0);
}
std::size_t publication_bytes(int nranks) { return static_cast<std::size_t>(nranks) * sizeof(PublicationWord); }
std::size_t control_bytes(int nranks, std::size_t notifications) {
  const std::size_t counters =
      checked_mul(checked_mul(static_cast<std::size_t>(nranks), notifications, "notification counters"),
                  sizeof(std::uint64_t), "notification counters");
  return checked_add(sizeof(cpu::Stripes) + lock_bytes(nranks) + publication_bytes(nranks), counters,
                     "notification counters");
}
SharedLockWord* lock_words(const SharedSegment& segment) {
  return reinterpret_cast<SharedLockWord*>(segment.control() + sizeof(cpu::Stripes));
}
PublicationWord* publication_words(const SharedSegment& segment, int nranks) {
  return reinterpret_cast<PublicationWord*>(segment.control() + sizeof(cpu::Stripes) + lock_bytes(nranks));
}
std::atomic<std::uint64_t>* notify_words(const SharedSegment& segment, int nranks) {
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "counters in shared memory need lock-free words");
  return reinterpret_cast<std::atomic<std::uint64_t>*>(segment.control() + sizeof(cpu::Stripes) + lock_bytes(nranks) +
                                                       publication_bytes(nranks));
}

// Collective, the first step of every creation (agreement.hpp): each rank's
// verdict on its own arguments, the settings that must match, and its host
// (its host key: memory/host_identity.hpp, what sharing memory needs, not
// the hostname) and whether it may take the shared-memory path: none asks
// for a network provider (explicitly or through FI_PROVIDER), for software
// atomics, or to keep off shared memory. The round also carries what the
// rest of the creation needs to know of every rank before the exchange
// (agreed.hpp): its size, pid and base, and rank 0's file, made here
// (empty: a few microseconds) before anyone knows whether a segment will
// map it. Every rank decides from the same data. `place` (Create) rides
// along too: where this rank's memory lies in an Alloc_mem block
// (memory/allocated_blocks.hpp), so recognising it costs no round of its own.
Agreed agree_on(Bootstrap& group, const std::optional<Error>& local, const Config& config, Flavor flavor,
                std::size_t size, const void* base, const std::string& place = "") {
  const bool wants = !config.wants_network() && config.software_only.empty() && config.shared_memory;
  Agreed a;
  a.host_key = host_key();
  std::string offered;
  if (group.rank() == 0) {
    try {
      a.file = SharedSegment::offer();
      offered = a.file.address().text();
    } catch (const Error& e) {
      offered = "!" + std::string(e.what());
    }
  }
  Record mine;
  mine.str(wants ? "1" : "0").str(a.host_key).str(host_name()).put(static_cast<std::uint64_t>(size));
  mine.put(static_cast<std::int64_t>(::getpid())).put(reinterpret_cast<std::uint64_t>(base)).str(offered);
  mine.str(place);
  const auto all = agree(group, local, local ? "" : config.agreed(flavor), mine.bytes);
  for (const auto& x : all) {
    RecordReader rd{x};
    const bool ok = rd.str() == "1";
    a.keys.push_back(rd.str());
    a.names.push_back(rd.str());
    a.sizes.push_back(static_cast<std::size_t>(rd.get<std::uint64_t>()));
    a.pids.push_back(rd.get<std::int64_t>());
    a.bases.push_back(rd.get<std::uint64_t>());
    const std::string at = rd.str();
    if (a.keys.size() == 1) a.offered = at;  // rank 0's
    a.places.push_back(rd.str());
    a.same_host = a.same_host && a.keys.back() == a.keys[0];
    a.shared_memory = a.shared_memory && ok;
  }
  a.shared_memory = a.shared_memory && a.same_host;
  return a;
}

// The segment every rank maps from rank 0's file (agreed.hpp), laid out for
// `sizes`; a local failure is returned in `failed` (to be raised at every
// rank by the exchange), layout errors raise here at every rank alike.
std::shared_ptr<SharedSegment> map_offered(Agreed& a, const std::vector<std::size_t>& sizes, bool noncontig,
                                           std::size_t control, const char* what, std::string& failed) {
  const SharedSegment::Layout layout(sizes, noncontig, control);
  if (a.offered.starts_with('!'))
    raise(ErrorCategory::Transport, std::string(what) + ": rank 0 could not make the shared memory (" +
                                        a.offered.substr(1) + ")");
  try {
    return SharedSegment::map(layout, std::move(a.file), MemoryFileAddress::from_text(a.offered));
  } catch (const Error& e) {
    failed = std::string(what) + ": could not map the shared memory (" + e.what() + ")";
    return nullptr;
  }
}

// A Create window over Alloc_mem memory at every rank (agreed places):
// the control mapping from rank 0's file, as Allocate's, then every peer's
// block. Whether every rank mapped everything must reach every rank alike
// before the path is chosen (the exchange's contents depend on it), so
// such a window pays one round of its own here; plain Create windows never
// come here. Null at every rank alike when any rank failed: rank 0 then
// keeps its file, for the lock segment the exchange may map from it.
std::shared_ptr<SharedSegment> join_blocks(Bootstrap& group, Agreed& a, std::byte* base, std::size_t control) {
  std::shared_ptr<SharedSegment> joined;
  std::string failed;
  try {
    joined = map_offered(a, std::vector<std::size_t>(static_cast<std::size_t>(group.size()), 0), false, control,
                         "Create", failed);
    if (joined) failed = joined->join(group.rank(), base, a.places);
  } catch (const Error& e) {
    failed = e.what();
  }
  if (failed.empty() && !joined) failed = "no control mapping";
  for (const auto& x : group.allgather(failed))
    if (!x.empty()) {
      if (joined) a.file = joined->take_file();
      return nullptr;
    }
  return joined;
}

// What the endpoint's provider does natively: a property of the open
// provider, probed once per endpoint (some nine hundred queries of the
// transport, a third of a later window's own work before this) and kept
// for the process's later windows, with its wire form: coding it and
// decoding each peer's was a tenth of a later window's own work. An
// endpoint that went and came back is probed again: its weak pointer has
// expired.
struct ProbedTable {
  NativeTable table;
  std::string bytes;  // table.bytes(), what the exchange sends
};

const ProbedTable& native_table_of(const std::shared_ptr<Endpoint>& endpoint) {
  static std::mutex mutex;
  static std::vector<std::pair<std::weak_ptr<Endpoint>, ProbedTable>> probed;
  std::lock_guard lock(mutex);
  for (const auto& [known, table] : probed)
    if (known.lock() == endpoint) return table;
  std::erase_if(probed, [](const auto& entry) { return entry.first.expired(); });
  auto table = NativeTable::probe(endpoint->transport());
  probed.emplace_back(endpoint, ProbedTable{table, table.bytes()});
  return probed.back().second;
}

void check_group(const std::shared_ptr<Bootstrap>& group) {
  if (!group) raise(ErrorCategory::Argument, "a window needs a group (Bootstrap)");
}

void check_disp_unit(int disp_unit) {
  if (disp_unit <= 0) raise(ErrorCategory::Argument, "disp_unit must be positive, not " + std::to_string(disp_unit));
}

void check_size(std::size_t size);

// The first step of Allocate and Allocate_shared: this rank's verdict on
// its info, disp_unit and size, then the agreement.
std::pair<Config, Agreed> agree_sized(Bootstrap& group, const Info& info, int disp_unit, std::size_t size,
                                      Flavor flavor) {
  Config config;
  const auto local = verdict([&] {
    config = Config::parse(info);
    check_disp_unit(disp_unit);
    check_size(size);
  });
  Agreed a = agree_on(group, local, config, flavor, size, nullptr);
  return {config, std::move(a)};
}

// A byte every process maps: where a dynamic window's creation probes
// whether its peers can reach this process by cross-memory attach (such a
// window exposes no memory of its own until Attach).
const std::byte kReachable{1};

void check_size(std::size_t size) {
  if (size > kMaxWindowBytes)
    raise(ErrorCategory::Argument, "window size " + std::to_string(size) + " bytes exceeds the largest a process can map (" +
                                       std::to_string(kMaxWindowBytes) + ")");
}

}  // namespace

// Every argument was checked, and agreed on, by the factory that calls this.
Window::Impl::Impl(const Config& cfg, std::shared_ptr<Bootstrap> group, Flavor flavor, void* base,
                   std::size_t size, int disp_unit, std::unique_ptr<std::byte[]> owned,
                   std::shared_ptr<SharedSegment> shared, Agreed agreed, bool shared_memory_path,
                   std::string failed)
    : config(cfg), epochs(group->size()) {
  s.same_host = agreed.same_host;
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
  s.accumulate_granularity = config.accumulate_granularity;
  posts_.reset(new std::atomic<int>[static_cast<std::size_t>(s.nranks)]());
  completes_.reset(new std::atomic<int>[static_cast<std::size_t>(s.nranks)]());
  negotiate(shared_memory_path, agreed, std::move(failed));
}

Window::Impl::~Impl() { release(); }

void Window::Impl::negotiate(bool shared_memory_path, Agreed& agreed, std::string failed) {
  // The provider: the one every rank asked for (agreed), else FI_PROVIDER,
  // else shm on one host and tcp across hosts.
  std::string provider = config.provider;
  if (provider.empty() && !std::getenv("FI_PROVIDER")) provider = s.same_host ? "shm" : "tcp;ofi_rxm";

  // The exchange, the creation's second round and last but for the
  // barrier: open the endpoint and expose the memory, then exchange the
  // result; a failure at any rank (`failed`: one before this step, as
  // mapping the window's segment) is raised at every rank.
  std::string status = std::move(failed), address;
  RemoteRegion region;
  ProbedTable native;
  Probe probe;  // across hosts: the word peers read to prove they reach this rank
  std::uint16_t liveness = 0;  // across hosts: where peers watch this process live (peers/liveness.hpp)
  if (status.empty()) try {
    s.endpoint = Endpoint::get(provider, s.same_host);
    if (s.flavor != Flavor::Dynamic) {
      s.region = s.endpoint->transport().register_region(s.base, s.size);
      region = s.region->remote();
    }
    address = s.endpoint->transport().address();
    s.id = s.endpoint->reserve();
    s.provider = s.endpoint->transport().provider();
    native = native_table_of(s.endpoint);
    if (!s.same_host) {
      probe = Probe::open(s.endpoint->transport());
      peer_timeout();  // a malformed ONESIDED_PEER_TIMEOUT fails here, at every rank alike
      liveness = liveness_port();
    }
  } catch (const Error& e) {
    status = e.what();
  }
  // On one host with shm (shared memory not switched off), ranks may reach
  // each other without the provider: cross-memory attach for a Create
  // window's puts and gets, doorbells, and window locks in shared memory
  // (the shared-memory path has its own), which cost atomic instructions
  // instead of two round trips to the target's progress engine. May this
  // rank reach every other's window by cross-memory attach (the
  // agreement gave their pids and bases), and does it want shared-memory
  // locks (the switch may differ by rank), in a lock segment it has mapped
  // from rank 0's file when the window has no segment of its own? The
  // exchange tells every rank every rank's answers.
  const bool local = status.empty() && s.same_host && config.shared_memory && s.provider == "shm";
  const bool dynamic = s.flavor == Flavor::Dynamic;
  const bool try_cma = local && (s.flavor == Flavor::Create || dynamic);
  bool reach = try_cma;
  for (int r = 0; reach && r < s.nranks; ++r)
    if (r != s.rank && (agreed.sizes[r] > 0 || dynamic))
      reach = cma::can_read(static_cast<pid_t>(agreed.pids[r]), agreed.bases[r], 1);
  const bool try_locks = local && !shared_memory_path;
  std::shared_ptr<SharedSegment> lock_segment;
  if (try_locks && !s.shared) {
    // Room for the ranks' window locks, then their atomic locks (used with
    // cross-memory attach), then on a dynamic window their published region
    // tables. Failing to map it only keeps this rank, and so every rank, on
    // lock messages and the provider's atomics.
    std::string unmapped;
    try {
      lock_segment = map_offered(agreed, std::vector<std::size_t>(static_cast<std::size_t>(s.nranks), 0), false,
                                 lock_segment_bytes(s.nranks, dynamic), "the window's locks", unmapped);
    } catch (const Error&) {
      lock_segment = nullptr;
    }
  }
  const bool locks_here = try_locks && (s.shared || lock_segment);
  Record mine;
  mine.str(status).str(s.provider).str(address);
  mine.put(s.id).put(region.addr).put(region.key).put(static_cast<std::uint64_t>(s.size));
  mine.put(static_cast<std::int32_t>(s.disp_unit)).put(static_cast<std::int64_t>(::getpid()));
  mine.put(reinterpret_cast<std::uint64_t>(s.base)).str(native.bytes);
  mine.put(probe.target.region.addr).put(probe.target.region.key);
  mine.str(probe.target.host).str(probe.target.address).str(probe.target.interface);
  mine.str(s.same_host ? Doorbell::address().text() : MemoryFileAddress{}.text());
  const std::string& key_here = agreed.host_key;
  mine.str(key_here).str(agreed.names[static_cast<std::size_t>(s.rank)]).put(liveness);
  mine.str(std::string{reach ? '1' : '0', locks_here ? '1' : '0'});
  auto all = s.group->allgather(mine.bytes);
  std::vector<ProbeTarget> targets(static_cast<std::size_t>(s.nranks));
  std::vector<MemoryFileAddress> bells(static_cast<std::size_t>(s.nranks));  // where each rank's doorbell opens
  NativeTable everywhere = native.table;
  s.peers.resize(static_cast<std::size_t>(s.nranks));
  std::string failures;
  bool cma = try_cma, locks = locks_here;
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
    const std::string table = rd.str();
    ProbeTarget& t = targets[r];
    t.region.addr = rd.get<std::uint64_t>();
    t.region.key = rd.get<std::uint64_t>();
    t.host = rd.str();
    t.address = rd.str();
    t.interface = rd.str();
    bells[r] = MemoryFileAddress::from_text(rd.str());
    const std::string key = rd.str();
    p.host = rd.str();
    const auto port = rd.get<std::uint16_t>();
    const std::string choices = rd.str();
    cma = cma && choices[0] == '1';
    locks = locks && choices[1] == '1';
    // Each peer's life is watched the way its host allows: by pid on this
    // host, by a kept TCP connection to its liveness listener on another.
    if (r != s.rank && st.empty())
      p.life = key == key_here ? watch_process(static_cast<pid_t>(p.pid))
                                 : watch_link(p.host, ip_part(t.address), port, p.pid);
    if (!st.empty()) {
      failures += " rank " + std::to_string(r) + ": " + st + ";";
      continue;
    }
    if (prov != s.provider && status.empty())
      failures += " rank " + std::to_string(r) + " opened provider '" + prov + "' but rank " +
                  std::to_string(s.rank) + " opened '" + s.provider + "';";
    if (!status.empty() || !failures.empty()) continue;
    // A peer on the same provider usually sends this rank's own table.
    if (table != native.bytes) everywhere.meet(NativeTable::from_bytes(table));
    // This rank too: native atomics on its own memory go through the
    // provider, so they stay atomic with the ones arriving from elsewhere.
    p.addr = s.endpoint->transport().insert_peer(addr);
  }
  if (!failures.empty()) {
    release();
    raise(ErrorCategory::Transport, "window creation failed:" + failures);
  }
  // Across hosts, every rank proves it reaches every other before the
  // window exists: a wrong interface raises here instead of hanging later.
  if (!s.same_host) {
    std::vector<PeerAddr> addrs;
    std::vector<bool> remote;
    for (int r = 0; r < s.nranks; ++r) {
      addrs.push_back(s.peers[r].addr);
      remote.push_back(r != s.rank);
    }
    try {
      check_reachable(*s.group, *s.endpoint, addrs, targets, remote, s.provider);
    } catch (const Error&) {
      release();
      throw;
    }
  }
  s.rule = OrderRule(s.ordering, s.endpoint->transport().atomic_order());

  // Every rank has opened rank 0's file: its descriptor may go.
  if (s.shared) s.shared->mapped_everywhere();
  if (lock_segment) lock_segment->mapped_everywhere();
  // An idle target sleeps on its doorbell; posting to it rings.
  if (local)
    for (int r = 0; r < s.nranks; ++r)
      if (r != s.rank) s.peers[r].bell = Doorbell::of(bells[r]);

  // The choices, once.
  s.shared_memory_path = shared_memory_path;
  s.notifications = config.notifications;
  s.publication = s.shared ? Publication(publication_words(*s.shared, s.nranks), s.nranks, s.rank)
                           : Publication::owned(s.nranks, s.rank);
  if (shared_memory_path) {
    s.shared_notify = notify_words(*s.shared, s.nranks);
    notify_counters = NotifyCounters::at(s.shared_notify + static_cast<std::size_t>(s.rank) * s.notifications,
                                         s.notifications);
  } else {
    notify_counters = NotifyCounters::owned(s.notifications);
  }
  // Window locks in shared memory (and, with cross-memory attach, the
  // ranks' atomic locks after them) need a mapping: the window's own, or
  // the lock segment mapped before the exchange. A rank that could not map
  // it said so in the exchange: every rank then keeps lock messages and the
  // provider's atomics.
  std::shared_ptr<SharedSegment> segment = s.shared ? s.shared : lock_segment;
  SharedLockWord* words = nullptr;
  if (locks) words = s.shared ? lock_words(*segment) : reinterpret_cast<SharedLockWord*>(segment->control());
  cma = cma && words && !s.shared;
  // The atomics' plan, once the path is known (the provider's plan, a
  // thousand lookups and as many strings, only for the provider's path).
  // The shared-memory path: every op completes in the calling thread,
  // sequentially consistent, on CPU atomics.
  if (shared_memory_path)
    s.plan = AtomicPlan::cpu(cpu::lock_free);
  else if (cma)
    s.plan = AtomicPlan::uniform(CrossMemoryAtomics::reason());
  else
    s.plan = AtomicPlan(s.declared, native.table, everywhere, s.provider,
                        config.software_only.empty() ? s.endpoint->transport().native_unavailable()
                                                     : config.software_only);
  // A dynamic window on the cross-memory path: origins check targets'
  // addresses in the tables every rank publishes in the lock segment.
  std::shared_ptr<PublishedRegions> published;
  if (cma && dynamic)
    published = std::make_shared<PublishedRegions>(segment->control() + 2 * lock_bytes(s.nranks), s.nranks, s.rank,
                                                   segment);
  path = shared_memory_path ? detail::shared_memory_path(s)
         : cma              ? cross_memory_path(s, software, segment, words + s.nranks, published)
                            : provider_path(s, software);
  if (config.nasty_seed) path = nasty_path(std::move(path), s, *config.nasty_seed);
  if (!config.check.empty()) {
    auto log = std::make_shared<RaceLog>(s, config.check == "races:error");
    path = checking_path(std::move(path), log);
    events = std::move(log);
  }
  addressing = !dynamic   ? window_extent(s)
               : published ? attached_regions(s, published_regions(s, published))
                           : attached_regions(s, fetched_regions(s));
  // Epoch handles touch memory themselves only where this path alone does
  // (not wrapped by nasty mode or the race checker): window/epoch_handle.cpp.
  if (shared_memory_path && !config.nasty_seed && config.check.empty() && s.flavor != Flavor::Dynamic)
    epoch_targets = load_store_targets(s);
  // The target polls while an origin holds its lock when something the
  // origin does needs its progress: not with cross-memory attach, where
  // only notifications arrive, and they ring.
  if (shared_memory_path)
    window_lock = shared_memory_lock(s, s.shared, lock_words(*s.shared), false);
  else if (words)
    window_lock = shared_memory_lock(s, segment, words, !cma);
  if (!window_lock) window_lock = message_lock(s, *path);
  // No rank passes this point before every rank has its peer table and
  // the objects that serve incoming messages, published: only then may any send.
  s.endpoint->publish(s.id, this);
  s.group->barrier();
}

void Window::Impl::release() {
  if (s.freed.exchange(true)) return;
  epochs.close_every_handle();  // a handle kept past free() raises, never touches unmapped memory
  if (s.endpoint && s.id) s.endpoint->detach(s.id);
  window_lock.reset();
  s.region.reset();
  s.exposed_block.reset();  // Free_mem of the block may go ahead
  if (addressing) addressing->release();
}

// ---- the flavors ---------------------------------------------------------------

std::unique_ptr<Window> Window::create(void* base, std::size_t size, int disp_unit, const Info& info,
                                       std::shared_ptr<Bootstrap> group, Flavor flavor) {
  check_group(group);
  Config config;
  const auto local = verdict([&] {
    config = Config::parse(info);
    check_disp_unit(disp_unit);
    check_size(size);
    if (size > 0 && base == nullptr) raise(ErrorCategory::Argument, "window memory is null but its size is " + std::to_string(size));
  });
  // The window holds its block on any path, so Free_mem of it raises
  // until the window is freed (a failed creation lets it go).
  std::optional<BlockUse> block;
  if (!local && size > 0 && flavor == Flavor::Create) block = use_allocated(base, size);
  Agreed a = agree_on(*group, local, config, flavor, size, base, place_text(size, block ? &block->place : nullptr));
  // Memory from Alloc_mem at every rank, on one host: the ranks map each
  // other's blocks and take the shared-memory path, as Allocate does.
  std::shared_ptr<SharedSegment> joined;
  if (a.shared_memory && flavor == Flavor::Create && SharedSegment::in_blocks(a.places))
    joined = join_blocks(*group, a, static_cast<std::byte*>(base), control_bytes(group->size(), config.notifications));
  const bool shared_path = joined != nullptr;
  auto impl = std::make_unique<Impl>(config, std::move(group), flavor, base, size, disp_unit, nullptr,
                                     std::move(joined), std::move(a), shared_path, "");
  if (block) impl->s.exposed_block = std::move(block->use);
  return std::unique_ptr<Window>(new Window(std::move(impl)));
}

std::unique_ptr<Window> Window::allocate(std::size_t size, int disp_unit, const Info& info,
                                         std::shared_ptr<Bootstrap> group) {
  check_group(group);
  auto [config, a] = agree_sized(*group, info, disp_unit, size, Flavor::Allocate);
  if (a.shared_memory) {
    // Page-aligned segments keep every element naturally aligned.
    std::string failed;
    const auto sizes = a.sizes;
    auto segment = map_offered(a, sizes, true, control_bytes(group->size(), config.notifications), "Allocate", failed);
    void* base = segment ? segment->base(group->rank()) : nullptr;
    return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(config, std::move(group), Flavor::Allocate, base,
                                                                     size, disp_unit, nullptr, std::move(segment),
                                                                     std::move(a), true, std::move(failed))));
  }
  // 64-byte alignment keeps every element naturally aligned for atomics.
  // An allocation that fails on one rank fails every rank.
  std::unique_ptr<std::byte[]> memory;
  agree(*group, verdict([&] { memory = std::make_unique<std::byte[]>(checked_add(size, 64, "window size")); }), "");
  void* base = memory.get() + (64 - reinterpret_cast<std::uintptr_t>(memory.get()) % 64) % 64;
  return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(
      config, std::move(group), Flavor::Allocate, base, size, disp_unit, std::move(memory), nullptr, std::move(a),
      false, "")));
}

std::unique_ptr<Window> Window::allocate_shared(std::size_t size, int disp_unit, const Info& info,
                                                std::shared_ptr<Bootstrap> group) {
  check_group(group);
  auto [config, a] = agree_sized(*group, info, disp_unit, size, Flavor::Shared);
  check_one_host(a.keys, a.names, "Allocate_shared");
  std::string failed;
  const auto sizes = a.sizes;
  auto segment = map_offered(a, sizes, config.alloc_shared_noncontig,
                             control_bytes(group->size(), config.notifications), "Allocate_shared", failed);
  void* base = segment ? segment->base(group->rank()) : nullptr;
  const bool shared_memory_path = a.shared_memory;
  return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(config, std::move(group), Flavor::Shared, base, size,
                                                                   disp_unit, nullptr, std::move(segment), std::move(a),
                                                                   shared_memory_path, std::move(failed))));
}

std::unique_ptr<Window> Window::create_dynamic(const Info& info, std::shared_ptr<Bootstrap> group) {
  check_group(group);
  Config config;
  const auto local = verdict([&] { config = Config::parse(info); });
  Agreed a = agree_on(*group, local, config, Flavor::Dynamic, 0, &kReachable);
  return std::unique_ptr<Window>(new Window(std::make_unique<Impl>(
      config, std::move(group), Flavor::Dynamic, nullptr, 0, 1, nullptr, nullptr, std::move(a), false, "")));
}

void Window::fail_creation(Bootstrap& group, const Error& error) {
  agree(group, error, "", "");
  raise(ErrorCategory::Internal, "unreachable: the agreement raises");  // agree() raised at every rank
}

}  // namespace onesided
