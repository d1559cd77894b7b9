#include "transport/endpoint.hpp"

#include <cstring>
#include <map>
#include <mutex>

#include "transport/fork_generation.hpp"
#include "onesided/error.hpp"
#include "transport/stale_shm.hpp"
#include "onesided/runtime.hpp"

namespace onesided::detail {
namespace {

std::mutex registry_mutex;
std::map<std::string, std::shared_ptr<Endpoint>>& registry() {
  static auto* endpoints = new std::map<std::string, std::shared_ptr<Endpoint>>();
  return *endpoints;
}

}  // namespace

std::shared_ptr<Endpoint> Endpoint::get(const std::string& provider, bool loopback) {
  std::lock_guard lk(registry_mutex);
  auto& endpoints = registry();
  if (auto it = endpoints.find(provider); it != endpoints.end()) {
    if (it->second->progress().forked()) raise_forked("the provider's endpoint");
    return it->second;
  }
  // Open first: a provider that fails to open leaves no entry behind.
  auto ep = std::make_shared<Endpoint>(open_fabric_transport(provider, loopback));
  endpoints.emplace(provider, ep);
  return ep;
}

void Endpoint::shutdown_all() {
  std::map<std::string, std::shared_ptr<Endpoint>> doomed;
  {
    std::lock_guard lk(registry_mutex);
    doomed.swap(registry());
  }
  // Windows the program never freed still hold their endpoint; its thread
  // must not outlive the interpreter and libfabric's own teardown.
  for (auto& [name, ep] : doomed) {
    ep->progress().stop();
    if (ep->progress().forked()) new std::shared_ptr<Endpoint>(ep);  // the parent's: never closed here
  }
}

Endpoint::Endpoint(std::unique_ptr<Transport> transport) : transport_(std::move(transport)) {
  transport_->set_message_handler([this](const std::byte* d, std::size_t n) { route(d, n); });
  progress_ = std::make_unique<ProgressEngine>(*transport_);
}

Endpoint::~Endpoint() {
  if (progress_->forked()) {
    // In a child made by fork(): closing would tear down the parent's
    // provider objects (shm regions are named, shared); let them be.
    progress_->stop();
    (void)progress_.release();
    (void)transport_.release();
    return;
  }
  progress_.reset();  // join the thread before the transport goes
}

std::uint32_t Endpoint::reserve() {
  std::unique_lock lk(sinks_mutex_);
  const std::uint32_t id = next_id_++;
  sinks_.emplace(id, nullptr);
  return id;
}

void Endpoint::publish(std::uint32_t id, MessageSink* sink) {
  std::unique_lock lk(sinks_mutex_);
  sinks_[id] = sink;
}

void Endpoint::detach(std::uint32_t id) {
  // Taking the lock exclusively waits out a handler running on this sink.
  std::unique_lock lk(sinks_mutex_);
  sinks_.erase(id);
}

void Endpoint::route(const std::byte* data, std::size_t len) {
  if (len < sizeof(Header)) raise(ErrorCategory::Internal, "truncated onesided message");
  Header h;
  std::memcpy(&h, data, sizeof h);
  std::shared_lock lk(sinks_mutex_);
  auto it = sinks_.find(h.window);
  // A message for a freed window can only come from an erroneous program
  // (Free is collective and completes everything first); dropping it is the
  // safe answer, since the memory it names is gone.
  // Unpublished: nobody may send to it yet (peers wait for its creation's
  // last barrier), so this too can only come from an erroneous peer.
  if (it == sinks_.end() || !it->second) return;
  it->second->on_message(h, data + sizeof h, len - sizeof h);
}

}  // namespace onesided::detail

namespace onesided {
void shutdown() { detail::Endpoint::shutdown_all(); }
std::size_t remove_stale_shared_memory() { return detail::remove_stale_shared_memory(false); }
}  // namespace onesided
