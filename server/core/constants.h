// Fixed tunables and limits of npuperf-server, in one place (mesos
// src/slave/constants.hpp). What an operator may change is a flag instead
// (ServerOptions, SchedulerOptions); these are part of the API contract or
// of how waits behave, so they change with a release, not with a flag.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace npuperf::server {

// LeaseJob: the longest long-poll an agent may ask for (wait_ms is
// INVALID_ARGUMENT above it).
inline constexpr std::chrono::milliseconds kMaxLeaseWait{30'000};

// ChangeNotifier: a waiter wakes at least this often to notice stop() (the
// client went away, the server is stopping), which no notification signals.
inline constexpr std::chrono::milliseconds kStopCheckPeriod{200};

}  // namespace npuperf::server
