// One open provider per process: its Transport, its progress engine, and the
// routing of incoming messages to the windows that use it. Windows over any
// group share the endpoint, so a process has one fabric address per provider.
#pragma once

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "transport/progress.hpp"
#include "transport/protocol.hpp"
#include "transport/transport.hpp"

namespace onesided::detail {

class MessageSink {
 public:
  virtual void on_message(const Header& h, const std::byte* payload, std::size_t len) = 0;

 protected:
  ~MessageSink() = default;
};

class Endpoint {
 public:
  // The endpoint for `provider`, opened on first use. `loopback` is honoured
  // only when the endpoint is first opened.
  static std::shared_ptr<Endpoint> get(const std::string& provider, bool loopback);
  // Stops every progress thread and closes every provider (process exit).
  static void shutdown_all();

  explicit Endpoint(std::unique_ptr<Transport> transport);
  ~Endpoint();

  Transport& transport() { return *transport_; }
  ProgressEngine& progress() { return *progress_; }

  // A window takes an id first (its peers need it to address messages),
  // and publishes itself as that id's sink once every object that serves
  // messages exists, before the barrier after which peers may send: the
  // publication, under sinks_mutex_, is what orders the progress thread's
  // reads of the window after its construction.
  std::uint32_t reserve();
  void publish(std::uint32_t id, MessageSink* sink);
  void detach(std::uint32_t id);

 private:
  void route(const std::byte* data, std::size_t len);

  std::unique_ptr<Transport> transport_;
  std::shared_mutex sinks_mutex_;
  std::unordered_map<std::uint32_t, MessageSink*> sinks_;
  std::uint32_t next_id_ = 1;
  std::unique_ptr<ProgressEngine> progress_;  // last: its thread uses the rest
};

}  // namespace onesided::detail
