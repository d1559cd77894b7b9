// The factories of the data paths; window/create.cpp is their one caller.
#pragma once

#include <cstdint>
#include <memory>

#include "locks/shared_lock.hpp"
#include "paths/data_path.hpp"
#include "state/window_state.hpp"

namespace onesided::detail {

class SoftwareAtomics;
class PublishedRegions;

// One host, every rank's memory in `state.shared` (mapped by all).
std::unique_ptr<DataPath> shared_memory_path(WindowState& state);

// libfabric RMA; each dtype's accumulate-style ops native or software as
// state.plan says. `software` is set to the path's software atomics, whose
// target side the window's message dispatch serves.
std::unique_ptr<DataPath> provider_path(WindowState& state, SoftwareAtomics*& software);
// As provider_path, with puts, gets and atomics by cross-memory attach
// (every rank reaches every other's window through process_vm_writev/readv);
// `atomic_words`, in `mapping`, are the ranks' atomic locks. Only
// notifications use the provider. `attached`: on a dynamic window, the
// ranks' published region tables, which every remote op holds for its copy
// (null for a Create window).
std::unique_ptr<DataPath> cross_memory_path(WindowState& state, SoftwareAtomics*& software,
                                            std::shared_ptr<void> mapping, SharedLockWord* atomic_words,
                                            std::shared_ptr<PublishedRegions> attached);

class RaceLog;
// Race-checking mode around `inner`: every access told to `log` first.
std::unique_ptr<DataPath> checking_path(std::unique_ptr<DataPath> inner, std::shared_ptr<RaceLog> log);

// Nasty mode around `inner`.
std::unique_ptr<DataPath> nasty_path(std::unique_ptr<DataPath> inner, WindowState& state, std::uint64_t seed);

}  // namespace onesided::detail
