#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/store/store.h"

namespace npuperf::server {

// Which queued job goes to which offered device, as pure functions (no SQL,
// no clock): both Store backends call ChooseClaim inside their claim
// transaction (it is the ClaimChooser the Scheduler passes to
// Store::ClaimJob), so the policy is decided once, here, and tested without
// a database.

// Whether a device satisfies a collection's constraints: its SoC is one of
// `socs` (any when empty), the agent carries every `host_labels` pair
// (exact value), and its id lies in `device_range` (any when empty; a range
// that does not parse matches nothing, since Submit already rejected it).
bool DeviceMatches(const v1::DeviceConstraints& constraints, const OfferedDevice& device,
                   const std::map<std::string, std::string>& agent_labels);

// Why no online agent could take a job of a collection with these
// constraints now. kind is "" when some device of an online agent matches
// (busy or free: the job waits its turn), else the first constraint that
// rules every online device out, the npuperf_server_jobs_unplaceable label:
// "no_agent" (no agent online), "host" (none on constraints.host), "soc",
// "host_labels" (no online agent with a
// device of those SoCs carries the labels) or "device_range"; reason says it
// in words ("no online agent serves SoC NoSuchSoc"), for
// Collection.waiting_reason.
struct Unplaceable {
  std::string kind;
  std::string reason;
};
Unplaceable WhyUnplaceable(const v1::DeviceConstraints& constraints,
                           const std::vector<v1::AgentStatus>& agents);
// The same over the store's agent records (Store::ListAgents).
Unplaceable WhyUnplaceable(const v1::DeviceConstraints& constraints,
                           const std::vector<AgentRecord>& agents);
// Sets c->waiting_reason from the store's agents when c has queued jobs (how
// GetCollection and watches answer it); the store's error otherwise.
absl::Status FillWaitingReason(Store& store, v1::Collection* c);

// The (candidate index, device index) to claim, or nullopt. Candidates come
// in (priority desc, job_id asc) order. A candidate qualifies when its
// collection is under max_concurrent_jobs and one offered device matches
// (the first matching device is taken). The highest priority tier with a
// qualifying candidate wins; inside it the team with the fewest active jobs
// goes first (fair sharing between teams), and on a tie the oldest job.
// A canary (server label kCanaryLabel) is chosen only when no other
// candidate qualifies, so it never displaces a user's job, and a device
// marked canary_only (quarantined) matches only a canary.
std::optional<std::pair<size_t, size_t>> ChooseClaim(
    const std::vector<ClaimCandidate>& candidates, const std::vector<OfferedDevice>& devices,
    const std::map<std::string, std::string>& agent_labels);

// What the chooser sees of the candidates after a claim leased a job of
// candidates[pick]'s collection: one more live job for that collection and
// for every candidate of its team (Store::ClaimJobs asks the chooser once
// per lease of one claim).
void CountClaimedLease(std::vector<ClaimCandidate>& candidates, size_t pick);

}  // namespace npuperf::server
