// Fixed tunables of npuperf-server, in one place (mesos
// src/slave/constants.hpp): how waits, caches, batches and streams behave
// inside the server. What bounds a client's or an agent's input is a limit
// (limits.h, the table docs/api.md lists); what an operator may change is a
// flag (ServerOptions, SchedulerOptions). These change with a release.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace npuperf::server {

// ChangeNotifier: a waiter wakes at least this often to notice stop() (the
// client went away, the server is stopping), which no notification signals.
inline constexpr std::chrono::milliseconds kStopCheckPeriod{200};

// ComparisonQueries: rounds read per store call (collections and windows
// are paged through), and the most rounds one regression listing scans.
inline constexpr int32_t kComparisonPage = 1000;
inline constexpr size_t kMaxComparisonScan = 200'000;

// The jobs-unplaceable gauges look at this many queued collections (the
// oldest) per refresh.
inline constexpr int32_t kMaxUnplaceableScan = 10'000;

// DownloadBundle: bytes per streamed chunk.
inline constexpr size_t kBundleChunkBytes = 1 << 20;

// The store work of one heartbeat of an AgentSession, and of one look of a
// LeaseJob long poll, stops after this long (or at the call's deadline, when
// sooner), as an agent's unary call does (its deadline, agent/constants.h
// kRpcDeadline). A stream has no deadline of its own: one stuck heartbeat
// never holds a database connection for good. And the statement timeout is
// the one the agents' reports want, so the pool finds connections already
// set: a long poll's deadline is its wait plus a margin, and its looks wanted
// 25, 20, 15 s as the wait went on, each a SET round trip (issue 36).
inline constexpr std::chrono::seconds kAgentStoreDeadline{15};

// Lease secrets: random bytes per lease (64 hex digits).
inline constexpr size_t kLeaseSecretBytes = 32;

// The scheduler's cache of registrations by agent id: cleared when it would
// grow past this (every miss reads the store).
inline constexpr size_t kMaxCachedAgents = 10'000;
// A heartbeat that changes no device state writes its agent's last-seen time
// at most this often (and at most a quarter of --agent-retention apart):
// agent_rules.h SeenWriteDue.
inline constexpr std::chrono::seconds kAgentSeenRefresh{10};
// The reaper prunes at most this many long-unseen agents per round.
inline constexpr int32_t kAgentPruneBatch = 1000;

}  // namespace npuperf::server
