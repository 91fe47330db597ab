#pragma once

// Keepalive settings shared by the server and its long-lived clients (agents,
// watch streams), so a client never pings more often than the server permits
// (which would end in GOAWAY "too_many_pings", grpc doc/keepalive.md).
namespace npuperf::keepalive {

// Client: ping an idle connection this often.
inline constexpr int kClientKeepaliveTimeMs = 20'000;
// Client and server: wait this long for a ping ack.
inline constexpr int kKeepaliveTimeoutMs = 10'000;
// Server: accept pings this often at most (must be <= kClientKeepaliveTimeMs).
inline constexpr int kServerMinPingIntervalMs = 10'000;
// Server: ping idle clients this often.
inline constexpr int kServerKeepaliveTimeMs = 30'000;

}  // namespace npuperf::keepalive
