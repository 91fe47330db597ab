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

// ListCollections: page size when the request gives none, and the largest.
inline constexpr int32_t kDefaultCollectionsPage = 50;
inline constexpr int32_t kMaxCollectionsPage = 500;

// ListRounds: page size when the request gives none, and the largest.
inline constexpr int32_t kDefaultRoundsPage = 100;
inline constexpr int32_t kMaxRoundsPage = 1000;

// ComparisonQueries: rounds read per store call (collections and windows
// are paged through), and the most rounds one regression listing scans.
inline constexpr int32_t kComparisonPage = 1000;
inline constexpr size_t kMaxComparisonScan = 200'000;

// The jobs-unplaceable gauges look at this many queued collections (the
// oldest) per refresh.
inline constexpr int32_t kMaxUnplaceableScan = 10'000;

// DownloadBundle: bytes per streamed chunk.
inline constexpr size_t kBundleChunkBytes = 1 << 20;
// UploadBundle: a bundle may unpack to this many times the upload limit
// (SchedulerOptions::max_bundle_bytes).
inline constexpr int64_t kMaxUnpackedFactor = 4;

// Largest gRPC message the server accepts (a bundle arrives in chunks).
inline constexpr int kMaxReceiveMessageBytes = 64 << 20;

// RegisterAgent, heartbeats and LeaseJob offers (core/agent_rules.h): the
// most devices one agent serves, the range of device ids, the most labels
// and capabilities with the longest key, value and other string, and the most
// running jobs one message lists. Above them: INVALID_ARGUMENT naming each
// field (docs/api.md, "Agent limits").
inline constexpr int kMaxAgentDevices = 64;
inline constexpr int32_t kMaxAgentDeviceId = 4095;
inline constexpr int kMaxAgentLabels = 32;
inline constexpr size_t kMaxAgentLabelKeyBytes = 63;
inline constexpr size_t kMaxAgentLabelValueBytes = 255;
inline constexpr int kMaxAgentCapabilities = 16;
inline constexpr size_t kMaxAgentStringBytes = 255;
inline constexpr int kMaxAgentRunningJobs = 1024;

// Lease secrets: random bytes per lease (64 hex digits).
inline constexpr size_t kLeaseSecretBytes = 32;

// The scheduler's cache of registrations by agent id: cleared when it would
// grow past this (every miss reads the store).
inline constexpr size_t kMaxCachedAgents = 10'000;
// The reaper prunes at most this many long-unseen agents per round.
inline constexpr int32_t kAgentPruneBatch = 1000;

}  // namespace npuperf::server
