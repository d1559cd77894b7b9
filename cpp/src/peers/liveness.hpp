// Whether a peer's process is still there, asked by the waits that depend
// on it (peer_watch.hpp) every 100 ms, and never by an operation.
//
// On this host the pid says it (memory/process.hpp). On another host a pid
// means nothing, so every process opens one TCP listener (on first use,
// never accepted from, closed only by the process's exit) and each rank
// connects once to every process on another host that one of its windows
// includes. Nothing is ever sent on such a connection; the kernels keep it:
//
//   * the peer's process exits (SIGKILL included): its kernel closes the
//     listener and resets the connection, seen at the next look (~100 ms);
//   * the peer's host or link goes silent: TCP keepalive probes every
//     second go unanswered, and the kernel drops the connection once
//     nothing came back for the peer timeout (ONESIDED_PEER_TIMEOUT,
//     default 3 s; TCP_USER_TIMEOUT), so a wait raises within it + 1 s;
//   * a peer that is alive but busy (in Python holding the GIL, stopped
//     by SIGSTOP, swapped out) is never declared dead: its kernel answers
//     the probes, not the process.
//
// Cost: one socket per pair of processes on different hosts, a 1 s
// keepalive each way while idle (a few dozen bytes per second per pair),
// and a poll() of the window's connections every 100 ms by a thread that
// waits anyway; nothing per operation.
//
// Who writes what: a LinkWatch's verdict is written once, under its mutex,
// by whichever waiting thread first finds the connection broken; the
// process-wide listener and the table of connections are under their own
// mutexes (liveness.cpp).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace onesided::detail {

// How long a peer's host may stay silent before it counts as gone:
// ONESIDED_PEER_TIMEOUT seconds, an integer from 2 to 3600 (default 3); a
// malformed value raises, naming it.
std::chrono::seconds peer_timeout();

// This process's liveness listener, opened on first call: its port, or 0
// when no socket could be opened (its peers then watch nothing of it, and
// a death there is seen only as the provider reports it).
std::uint16_t liveness_port();

// One peer's life as a wait sees it. gone(): nullopt while it lives, else
// why not, as "(pid N ...) has died ..." for the caller to prefix with the
// rank; once gone, always gone, with the same words.
class LifeSign {
 public:
  virtual ~LifeSign() = default;
  virtual std::optional<std::string> gone() const = 0;
};

// A process on this host, by its pid.
std::shared_ptr<const LifeSign> watch_process(pid_t pid);

// A process on another host, by its liveness listener at `ip`:`port`; one
// connection per listener and pid, shared by every window that includes
// that process (a later process may get a dead one's port). `host` and
// `pid` are for messages. nullptr when port is 0 or ip empty (nothing to
// connect to).
std::shared_ptr<const LifeSign> watch_link(const std::string& host, const std::string& ip, std::uint16_t port,
                                           std::int64_t pid);

}  // namespace onesided::detail
