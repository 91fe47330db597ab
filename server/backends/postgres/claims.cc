// PostgresStore: claims and leases (ClaimJobs, RenewLeases, AdoptAttempts,
// ExpireLeases).
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <pqxx/pqxx>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/sha256.h"
#include "google/protobuf/util/time_util.h"
#include "nlohmann/json.hpp"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/rows.h"
#include "server/backends/postgres/statements.h"
#include "server/core/assignment.h"
#include "server/core/job_rules.h"

namespace npuperf::server {
namespace {

using Result = std::optional<v1::JobAssignment>;
using SpecPtr = std::shared_ptr<const v1::CollectionSpec>;

// Chooser rounds per claim: a candidate whose collection turns out capped,
// cancelled or drained (another replica took its last job) is dropped and
// the chooser asked again.
constexpr int kMaxClaimRounds = 16;
// Picks a statement of a claim of one job (ChooseAndLease).
constexpr int kPicksPerCall = 4;

// What a claim works on: the free devices and the queue heads.
struct ClaimView {
  std::vector<OfferedDevice> offered;  // devices without a live lease
  // Shared with the spec cache; candidates[i].spec points into specs[i].
  std::vector<SpecPtr> specs;
  std::vector<ClaimCandidate> candidates;  // queue heads, priority desc, first job asc
  std::vector<int> queued;                 // queued[i]: candidates[i]'s queued jobs
};

// A JSON array of strings (statement parameters that are lists).
std::string JsonStrings(const std::vector<std::string>& values) {
  return nlohmann::json(values).dump();
}

// The agent's busy devices and the queue heads, in one statement (specs not
// yet attached). A device is busy while any agent of the host holds a live
// lease on it: a restarted agent (a new instance) must not be handed a device
// that its killed predecessor's lease still holds (issue #18's chaos soak).
// The heads are the active collections with queued jobs in queue order
// (priority desc, first job asc), each with its team's live jobs in all
// active collections; claim_heads reads them unordered.
ClaimView LoadClaimView(pqxx::transaction_base& tx, const ClaimRequest& req) {
  ClaimView view;
  auto rows = tx.exec_prepared("claim_heads", req.agent_id, req.host);
  std::set<int> busy;
  if (!rows.empty() && !rows[0][0].is_null()) {
    for (absl::string_view d : absl::StrSplit(rows[0][0].as<std::string>(), ',')) {
      int id = 0;
      if (absl::SimpleAtoi(d, &id)) busy.insert(id);
    }
  }
  for (const auto& d : req.devices) {
    if (!busy.contains(d.device_id)) view.offered.push_back(d);
  }
  if (view.offered.empty()) return view;
  // Jobs of one collection share constraints and priority: the collection
  // stands for all its queued jobs.
  std::vector<std::pair<ClaimCandidate, int>> heads;  // with its queued jobs
  std::map<std::string, int> team_live;
  for (const auto& row : rows) {
    if (row[1].is_null()) continue;  // no active collection
    const std::string team = row[3].as<std::string>();
    const int live = row[5].as<int>();
    team_live[team] += live;
    const int queued = row[6].as<int>();
    if (queued <= 0) continue;
    ClaimCandidate c;
    c.job_id = row[1].as<int64_t>();
    c.collection_id = row[2].as<std::string>();
    c.team = team;
    c.priority = row[4].as<int>();
    c.collection_active = live;
    heads.emplace_back(std::move(c), queued);
  }
  std::sort(heads.begin(), heads.end(), [](const auto& a, const auto& b) {
    return std::tie(b.first.priority, a.first.job_id) < std::tie(a.first.priority, b.first.job_id);
  });
  for (auto& [c, queued] : heads) {
    c.team_active = team_live[c.team];
    view.candidates.push_back(std::move(c));
    view.queued.push_back(queued);
  }
  return view;
}

// The specs of the listed collections, in one query.
std::map<std::string, SpecPtr> FetchSpecs(pqxx::transaction_base& tx,
                                          const std::vector<std::string>& ids) {
  std::map<std::string, SpecPtr> fetched;
  for (const auto& row : tx.exec_prepared("claim_specs", JsonStrings(ids))) {
    auto spec = std::make_shared<v1::CollectionSpec>();
    spec->ParseFromString(PgBlob(row[1]));
    fetched[row[0].as<std::string>()] = std::move(spec);
  }
  return fetched;
}

// Points every candidate at its spec. A collection deleted under us has no
// spec: its candidate is dropped.
void AttachSpecs(ClaimView& view) {
  size_t kept = 0;
  for (size_t i = 0; i < view.candidates.size(); ++i) {
    if (view.specs[i] == nullptr) continue;
    if (kept != i) {
      view.candidates[kept] = std::move(view.candidates[i]);
      view.specs[kept] = std::move(view.specs[i]);
    }
    if (kept != i) view.queued[kept] = view.queued[i];
    view.candidates[kept].spec = view.specs[kept].get();
    ++kept;
  }
  view.candidates.resize(kept);
  view.specs.resize(kept);
  view.queued.resize(kept);
}

// Drops candidate i from the view.
void DropCandidate(ClaimView& view, size_t i) {
  const auto at = static_cast<std::ptrdiff_t>(i);
  view.candidates.erase(view.candidates.begin() + at);
  view.specs.erase(view.specs.begin() + at);
  view.queued.erase(view.queued.begin() + at);
}

// What the chooser sees after a lease of candidate i on offered device d:
// the device gone, one more live job for the collection and its team, one
// fewer queued (the candidate gone with its last one).
void CountLease(ClaimView& view, size_t i, size_t d) {
  view.offered.erase(view.offered.begin() + static_cast<std::ptrdiff_t>(d));
  CountClaimedLease(view.candidates, i);
  if (--view.queued[i] <= 0) DropCandidate(view, i);
}

// The assignment of a lease from npuperf_claim's columns starting at `at`
// (outcome, job_id, attempt, max_attempts, fencing_token, op_name, case_id,
// operator_name, queued_ms); nullopt when it leased nothing.
Result AssignmentFrom(const pqxx::row& row, int at, const ClaimRequest& req,
                      const ClaimCandidate& c, const OfferedDevice& device,
                      const std::string& secret) {
  if (row[at + 1].is_null()) return std::nullopt;
  v1::JobAssignment a;
  a.set_job_id(row[at + 1].as<int64_t>());
  a.set_collection_id(c.collection_id);
  a.set_attempt(row[at + 2].as<int>());
  a.set_max_attempts(row[at + 3].as<int>());
  a.set_fencing_token(row[at + 4].as<int64_t>());
  a.set_op_name(row[at + 5].as<std::string>());
  a.set_case_id(row[at + 6].as<std::string>());
  a.set_operator_name(row[at + 7].as<std::string>());
  *a.mutable_queued_at() =
      google::protobuf::util::TimeUtil::MillisecondsToTimestamp(row[at + 8].as<int64_t>());
  a.set_device_id(device.device_id);
  a.set_soc(device.soc);
  a.set_lease_ttl_ms(static_cast<int32_t>(req.lease_ttl_ms));
  a.set_lease_secret(secret);
  FillAssignmentFromSpec(*c.spec, a.operator_name(), &a);
  return a;
}

// A chooser's pick, kept for the lease's assignment, and its entry in a
// statement's plan of picks ({"coll", "device", "soc"}: claim_take_first and
// claim_take_many).
struct Pick {
  ClaimCandidate candidate;
  SpecPtr spec;  // keeps candidate.spec alive
  OfferedDevice device;
};
Pick PickOf(const ClaimView& view, const std::pair<size_t, size_t>& choice) {
  return {view.candidates[choice.first], view.specs[choice.first], view.offered[choice.second]};
}
nlohmann::json PlanEntry(const Pick& p) {
  return {
      {"coll", p.candidate.collection_id}, {"device", p.device.device_id}, {"soc", p.device.soc}};
}

// Asks the chooser again and again, each time as if its picks so far had
// failed, and leases the first pick that can be leased (npuperf_claim_first:
// kPicksPerCall picks a statement, so a pick whose collection turns out
// capped, cancelled, drained or locked costs no round trip; issue 36). Only
// the claim's first pick waits for its collection's lock: a claim that lost
// a race does not queue behind every busy collection in turn. The picks
// tried are dropped from `view`.
Result ChooseAndLease(pqxx::transaction_base& tx, const ClaimRequest& req,
                      const std::string& secret, const ClaimChooser& choose, ClaimView& view,
                      ClaimsInFlight& in_flight) {
  for (int tried = 0; tried < kMaxClaimRounds && !view.candidates.empty();) {
    std::vector<Pick> picks;
    nlohmann::json plan = nlohmann::json::array();
    while (static_cast<int>(picks.size()) < kPicksPerCall &&
           tried + static_cast<int>(picks.size()) < kMaxClaimRounds && !view.candidates.empty()) {
      auto choice = choose(view.candidates, view.offered, req.agent_labels);
      if (!choice) break;
      picks.push_back(PickOf(view, *choice));
      plan.push_back(PlanEntry(picks.back()));
      DropCandidate(view, choice->first);
    }
    if (picks.empty()) break;
    // The first pick is the one the statement most likely leases.
    const ClaimsInFlight::Pick flying = in_flight.Start(picks.front().candidate);
    const pqxx::row row =
        tx.exec_prepared1("claim_take_first", plan.dump(), /*wait_first=*/tried == 0, req.agent_id,
                          req.host, req.now_ms + req.lease_ttl_ms, req.now_ms,
                          static_cast<int>(v1::COLLECTION_STATE_RUNNING), Sha256Hex(secret));
    const int n = row[0].as<int>();
    if (n >= 0 && n < static_cast<int>(picks.size())) {
      return AssignmentFrom(row, 1, req, picks[n].candidate, picks[n].device, secret);
    }
    tried += static_cast<int>(picks.size());
  }
  return Result();
}

// A claim of several leases: the chooser's picks for every offered device,
// each counted in (a copy of) the view as if leased, taken in one statement
// (issue 36: one round trip for an agent's free devices instead of two per
// device). A collection another claim holds is skipped, never waited for:
// this claim holds the locks of its earlier picks until the statement ends.
// A pick that leased nothing leaves its device free for the agent's next
// call, and its collection is added to `failed`.
std::vector<v1::JobAssignment> LeaseInOneStatement(pqxx::transaction_base& tx,
                                                   const ClaimRequest& req,
                                                   const ClaimChooser& choose, ClaimView view,
                                                   std::set<std::string>& failed,
                                                   ClaimsInFlight& in_flight) {
  std::vector<Pick> picks;
  nlohmann::json plan = nlohmann::json::array();
  while (picks.size() < ClaimMaxLeases(req) && !view.offered.empty() && !view.candidates.empty()) {
    auto choice = choose(view.candidates, view.offered, req.agent_labels);
    if (!choice) break;
    const size_t n = picks.size();
    picks.push_back(PickOf(view, *choice));
    nlohmann::json entry = PlanEntry(picks.back());
    entry["n"] = n;
    entry["secret"] = Sha256Hex(ClaimLeaseSecret(req, n));
    plan.push_back(std::move(entry));
    CountLease(view, choice->first, choice->second);
  }
  std::vector<v1::JobAssignment> out;
  if (picks.empty()) return out;
  std::vector<ClaimsInFlight::Pick> flying;
  for (const Pick& p : picks) flying.push_back(in_flight.Start(p.candidate));
  const pqxx::result rows = tx.exec_prepared("claim_take_many", plan.dump(), req.agent_id, req.host,
                                             req.now_ms + req.lease_ttl_ms, req.now_ms,
                                             static_cast<int>(v1::COLLECTION_STATE_RUNNING));
  for (const auto& row : rows) {
    const auto n = row[0].as<size_t>();
    if (n >= picks.size()) continue;
    const Pick& p = picks[n];
    Result lease = AssignmentFrom(row, 1, req, p.candidate, p.device, ClaimLeaseSecret(req, n));
    if (lease) {
      out.push_back(*std::move(lease));
    } else {
      failed.insert(p.candidate.collection_id);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<v1::JobAssignment>> PostgresStore::ClaimJobs(
    const ClaimRequest& req, const ClaimChooser& choose) {
  using Leases = std::vector<v1::JobAssignment>;
  if (absl::Status s = CheckClaimSecrets(req); !s.ok()) return s;
  // No transaction around the round trips: the heads are a hint that
  // npuperf_claim() checks again under the collection's row lock, and each
  // lease is one call of it. One job: the heads, then the lease (a third
  // round trip when specs are fetched). Several: the heads, then every
  // planned lease in one statement, and the one-job way when that leased
  // none. A unique violation means another replica leased one of these
  // devices meanwhile: rerun, and the busy check leaves that device out.
  auto claim = [&](pqxx::nontransaction& tx) -> absl::StatusOr<Leases> {
    ClaimView view = LoadClaimView(tx, req);
    if (view.offered.empty()) return Leases();
    view.specs = CachedSpecs(view.candidates);
    std::vector<std::string> missing;
    for (size_t i = 0; i < view.candidates.size(); ++i) {
      if (view.specs[i] == nullptr) missing.push_back(view.candidates[i].collection_id);
    }
    if (!missing.empty()) {
      const std::map<std::string, SpecPtr> fetched = FetchSpecs(tx, missing);
      CacheSpecs(fetched);
      for (size_t i = 0; i < view.candidates.size(); ++i) {
        auto it = fetched.find(view.candidates[i].collection_id);
        if (it != fetched.end()) view.specs[i] = it->second;
      }
    }
    AttachSpecs(view);
    view.candidates =
        in_flight_.Steer(std::move(view.candidates), view.offered, req.agent_labels, choose);
    Leases out;
    if (ClaimMaxLeases(req) > 1) {
      // Another claim holding the chooser's collections (every claim
      // chases the same queue heads), or a capped or drained one: again
      // without them, until a statement leases or nothing is left to try.
      ClaimView untried = view;
      for (int round = 0; round < kMaxClaimRounds && out.empty() && !untried.candidates.empty();
           ++round) {
        std::set<std::string> failed;
        out = LeaseInOneStatement(tx, req, choose, untried, failed, in_flight_);
        if (failed.empty()) break;  // the chooser found nothing more to pick
        for (size_t i = untried.candidates.size(); i-- > 0;) {
          if (failed.contains(untried.candidates[i].collection_id)) DropCandidate(untried, i);
        }
      }
    }
    // A lease is the last write of a run: a rerun (unique violation,
    // deadlock) after a committed lease would leave that lease unreported.
    // So the one-job way, on the view as loaded (waiting for the lock of
    // the chooser's first pick), only when no statement leased anything;
    // devices left free are offered again by the agent's next call.
    if (out.empty()) {
      Result lease = ChooseAndLease(tx, req, req.lease_secret, choose, view, in_flight_);
      if (lease) out.push_back(*std::move(lease));
    }
    return out;
  };
  return pool_->RunAutocommit("claim job", claim, /*retry_unique=*/true);
}

std::vector<PostgresStore::SpecPtr> PostgresStore::CachedSpecs(
    const std::vector<ClaimCandidate>& candidates) {
  std::vector<SpecPtr> specs(candidates.size());
  absl::MutexLock lock(&specs_mu_);
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto it = specs_.find(candidates[i].collection_id);
    if (it != specs_.end()) specs[i] = it->second;
  }
  return specs;
}

void PostgresStore::CacheSpecs(const std::map<std::string, SpecPtr>& fetched) {
  absl::MutexLock lock(&specs_mu_);
  if (specs_.size() + fetched.size() > kMaxCachedSpecs) specs_.clear();
  for (const auto& [id, spec] : fetched) specs_[id] = spec;
}

absl::StatusOr<LeaseRenewal> PostgresStore::RenewLeases(const std::string& agent_id,
                                                        const std::vector<AttemptRef>& running,
                                                        int64_t now_ms, int64_t lease_ttl_ms) {
  if (running.empty()) return LeaseRenewal();
  // Every named lease in one statement (fleet_bench: two round trips per
  // running job on every heartbeat were PostgreSQL's largest cost), with the
  // facts of each one it did not renew, to say why. Named once each: the
  // statement joins the references with its held leases.
  using Key = std::tuple<int64_t, int64_t, int, std::string>;  // job, token, attempt, secret sha
  std::vector<Key> keys;                                       // keys[i]: running[i]'s
  keys.reserve(running.size());
  std::set<Key> named;
  nlohmann::json refs = nlohmann::json::array();
  for (const auto& ref : running) {
    const Key& key =
        keys.emplace_back(ref.job_id, ref.fencing_token, ref.attempt, Sha256Hex(ref.lease_secret));
    if (!named.insert(key).second) continue;
    refs.push_back({{"id", ref.job_id},
                    {"token", ref.fencing_token},
                    {"attempt", ref.attempt},
                    {"secret", std::get<3>(key)}});
  }
  // Autocommit: the renewal is one statement, safe to rerun (it renews the
  // same leases again), so BEGIN and COMMIT would be two round trips for
  // nothing on every heartbeat of every agent.
  return pool_->RunAutocommit(
      "renew leases", [&](pqxx::nontransaction& tx) -> absl::StatusOr<LeaseRenewal> {
        struct Named {
          bool held = false;
          bool cancelled = false;         // held: its collection was cancelled
          std::optional<LeaseFacts> job;  // not held: its job's lease; nullopt: no such job
        };
        std::map<Key, Named> found;
        for (const auto& row :
             tx.exec_prepared("lease_renew_all", now_ms + lease_ttl_ms, agent_id, refs.dump(),
                              LeaseRenewalThreshold(now_ms, lease_ttl_ms))) {
          Named n;
          n.held = row[4].as<bool>();
          n.cancelled = n.held && row[5].as<bool>(false);
          if (!n.held && row[6].as<bool>()) n.job = PgLeaseFactsFromRow(row, 7);
          found[Key{row[0].as<int64_t>(), row[1].as<int64_t>(), row[2].as<int>(),
                    row[3].as<std::string>()}] = std::move(n);
        }
        LeaseRenewal out;
        for (size_t i = 0; i < running.size(); ++i) {
          const AttemptRef& ref = running[i];
          const Named& n = found[keys[i]];
          if (!n.held) {
            out.dropped.push_back(
                {ref, n.job ? CheckLease(*n.job, ref, agent_id).value_or(AgentRefusal::kStaleLease)
                            : AgentRefusal::kUnknownJob});
            continue;
          }
          out.renewed.push_back(ref);
          if (n.cancelled) out.cancelled.push_back(ref);
        }
        return out;
      });
}

absl::StatusOr<LeaseRenewal> PostgresStore::AdoptAttempts(const std::string& agent_id,
                                                          const std::vector<AttemptRef>& running,
                                                          int64_t now_ms, int64_t lease_ttl_ms) {
  return pool_->Run("adopt attempts", [&](pqxx::work& tx) -> absl::StatusOr<LeaseRenewal> {
    LeaseRenewal out;
    std::optional<std::string> host;  // read on the first refusal
    for (const auto& ref : running) {
      auto r =
          tx.exec_prepared("lease_adopt", agent_id, now_ms + lease_ttl_ms, ref.job_id,
                           ref.fencing_token, ref.attempt, now_ms, Sha256Hex(ref.lease_secret));
      if (r.affected_rows() > 0) {
        out.renewed.push_back(ref);
        continue;
      }
      if (!host) {
        auto h = tx.exec_prepared("agent_host", agent_id);
        host = h.empty() ? "" : h[0][0].as<std::string>();
      }
      const auto lease = PgLoadLease(tx, ref.job_id);
      out.dropped.push_back(
          {ref, lease
                    ? CheckAdoption(*lease, ref, *host, now_ms).value_or(AgentRefusal::kStaleLease)
                    : AgentRefusal::kUnknownJob});
    }
    return out;
  });
}

absl::StatusOr<std::vector<ExpiredLease>> PostgresStore::ExpireLeases(int64_t now_ms,
                                                                      int32_t max_lost) {
  using Out = std::vector<ExpiredLease>;
  return pool_->Run("expire leases", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    Out out;
    // SKIP LOCKED twice: a collection another transaction holds, and a job
    // another replica is expiring (or an agent is reporting on), wait for
    // the next pass. The reaper never waits while it holds a lock.
    for (const auto& c : tx.exec_prepared("lease_expired_collections", now_ms)) {
      const std::string collection = c[0].as<std::string>();
      auto lock = tx.exec_prepared("collection_lock_skip", collection);
      if (lock.empty()) continue;
      const bool cancelled = !lock[0][1].as<std::string>().empty();
      for (const auto& row : tx.exec_prepared("lease_expired", collection, now_ms)) {
        const int64_t id = row[0].as<int64_t>();
        const std::string agent = row[1].as<std::string>("");
        const JobDecision d =
            DecideExpiry({row[2].as<int>(), 0, row[3].as<int>(), cancelled}, agent, max_lost);
        const bool requeue = d.next == v1::JOB_STATE_QUEUED;
        tx.exec_prepared("lease_expire_job", static_cast<int>(d.next), d.reason,
                         requeue ? int64_t{0} : now_ms, id);
        PgAddEvent(tx, now_ms, collection, id, EventKind::kLeaseExpired, d.reason);
        out.push_back({id, collection, agent, requeue});
      }
      PgRefreshCollectionState(tx, collection, now_ms, cancelled);
    }
    if (!out.empty()) PgNotify(tx, StoreChange::kClaimable, replica_id_);
    return out;
  });
}

}  // namespace npuperf::server
