// SqliteStore: claims and leases (ClaimJobs, RenewLeases, AdoptAttempts,
// ExpireLeases).
#include <map>
#include <set>
#include <tuple>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "google/protobuf/util/time_util.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/rows.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/job_rules.h"

namespace npuperf::server {

absl::StatusOr<std::vector<v1::JobAssignment>> SqliteStore::ClaimJobs(const ClaimRequest& req,
                                                                      const ClaimChooser& choose) {
  using Leases = std::vector<v1::JobAssignment>;
  if (absl::Status s = CheckClaimSecrets(req); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  try {
    // One transaction; each lease sees the ones before it (the database is
    // this process's alone, so the heads are simply read again).
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    Leases out;
    for (size_t k = 0; k < ClaimMaxLeases(req); ++k) {
      const std::vector<OfferedDevice> offered = FreeDevices(req);
      if (offered.empty()) break;
      const ClaimHeads heads = LoadClaimHeads();
      auto choice = choose(heads.candidates, offered, req.agent_labels);
      if (!choice) break;
      auto lease = LeaseJob(req, ClaimLeaseSecret(req, k), heads.candidates[choice->first],
                            heads.operators[choice->first], offered[choice->second]);
      if (!lease.ok()) return lease.status();
      out.push_back(*std::move(lease));
    }
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError("claim job");
  }
}

std::vector<OfferedDevice> SqliteStore::FreeDevices(const ClaimRequest& req) {
  std::set<int> busy_devices;
  // Busy while any agent of the host holds a live lease on the device: a
  // restarted agent (a new instance) must not be handed a device that its
  // killed predecessor's lease still holds (issue #18's chaos soak).
  SQLite::Statement busy(
      *db_,
      // The live states as literals: jobs_one_lease_per_device (agent_id
      // first; migrations 0002, 0025) and jobs_live_by_host (0018) are
      // partial indexes on them.
      "SELECT device_id FROM jobs WHERE (agent_id = ? OR (? <> '' AND host = ?)) "
      "AND state IN (2, 3)");
  static_assert(kLeased == 2 && kRunning == 3);
  busy.bind(1, req.agent_id);
  busy.bind(2, req.host);
  busy.bind(3, req.host);
  while (busy.executeStep()) busy_devices.insert(busy.getColumn(0).getInt());
  std::vector<OfferedDevice> offered;
  for (const auto& d : req.devices) {
    if (!busy_devices.contains(d.device_id)) offered.push_back(d);
  }
  return offered;
}

SqliteStore::ClaimHeads SqliteStore::LoadClaimHeads() {
  std::map<std::string, int> collection_active, team_active;
  SQLite::Statement active(*db_,
                           "SELECT collection_id, team, COUNT(*) FROM jobs WHERE state IN (?, ?) "
                           "GROUP BY collection_id, team");
  active.bind(1, kLeased);
  active.bind(2, kRunning);
  while (active.executeStep()) {
    collection_active[active.getColumn(0).getString()] += active.getColumn(2).getInt();
    team_active[active.getColumn(1).getString()] += active.getColumn(2).getInt();
  }
  SQLite::Statement q(*db_, absl::StrCat(kQueueHeadsCte,
                                         "SELECT j.id, j.collection_id, j.team, j.priority, "
                                         "j.operator_name FROM heads h JOIN jobs j ON j.id = h.id "
                                         "ORDER BY j.priority DESC, j.id"));
  ClaimHeads heads;
  while (q.executeStep()) {
    ClaimCandidate c;
    c.job_id = q.getColumn(0).getInt64();
    c.collection_id = q.getColumn(1).getString();
    c.team = q.getColumn(2).getString();
    c.priority = q.getColumn(3).getInt();
    c.collection_active = collection_active[c.collection_id];
    c.team_active = team_active[c.team];
    heads.candidates.push_back(std::move(c));
    heads.operators.push_back(q.getColumn(4).getString());
  }
  q.reset();
  // Cleared before taking pointers: they stay valid through the chooser call.
  if (specs_.size() + heads.candidates.size() > kMaxCachedSpecs) specs_.clear();
  for (auto& c : heads.candidates) c.spec = CachedSpec(c.collection_id);
  return heads;
}

absl::StatusOr<v1::JobAssignment> SqliteStore::LeaseJob(const ClaimRequest& req,
                                                        const std::string& secret,
                                                        const ClaimCandidate& pick,
                                                        const std::string& operator_name,
                                                        const OfferedDevice& device) {
  // leased_ms = ?7 reuses the now_ms bound for started_ms; the plain ?s
  // after it number on from 8 (SQLite numbers a ? one past the largest so far).
  SQLite::Statement lease(
      *db_,
      "UPDATE jobs SET state = ?, attempt = attempt + 1, fencing_token = "
      "fencing_token + 1, agent_id = ?, host = ?, device_id = ?, soc = ?, "
      "lease_expires_ms = ?, started_ms = COALESCE(started_ms, ?), leased_ms = ?7, progress = "
      "NULL, lease_secret_sha256 = ? WHERE id = ? AND state = ? RETURNING "
      "attempt, max_attempts, fencing_token, op_name, case_id, queued_ms");
  lease.bind(1, kLeased);
  lease.bind(2, req.agent_id);
  lease.bind(3, req.host);
  lease.bind(4, device.device_id);
  lease.bind(5, device.soc);
  lease.bind(6, req.now_ms + req.lease_ttl_ms);
  lease.bind(7, req.now_ms);
  lease.bind(8, Sha256Hex(secret));
  lease.bind(9, pick.job_id);
  lease.bind(10, kQueued);
  if (!lease.executeStep()) return absl::AbortedError("job claimed concurrently");
  v1::JobAssignment a;
  a.set_job_id(pick.job_id);
  a.set_collection_id(pick.collection_id);
  a.set_attempt(lease.getColumn(0).getInt());
  a.set_max_attempts(lease.getColumn(1).getInt());
  a.set_fencing_token(lease.getColumn(2).getInt64());
  a.set_op_name(lease.getColumn(3).getString());
  a.set_case_id(lease.getColumn(4).getString());
  *a.mutable_queued_at() =
      google::protobuf::util::TimeUtil::MillisecondsToTimestamp(lease.getColumn(5).getInt64());
  lease.reset();
  a.set_device_id(device.device_id);
  a.set_soc(device.soc);
  a.set_lease_ttl_ms(static_cast<int32_t>(req.lease_ttl_ms));
  a.set_lease_secret(secret);
  a.set_operator_name(operator_name);
  FillAssignmentFromSpec(*pick.spec, a.operator_name(), &a);
  AddEvent(req.now_ms, pick.collection_id, pick.job_id, EventKind::kJobLeased,
           absl::StrCat("attempt ", a.attempt(), " token ", a.fencing_token(), " on ", req.host,
                        " device ", device.device_id));
  MarkCollectionRunning(pick.collection_id);
  return a;
}

void SqliteStore::MarkCollectionRunning(const std::string& collection_id) {
  // A lease leaves a live job: DeriveCollectionState says RUNNING.
  SQLite::Statement running(*db_,
                            "UPDATE collections SET state = ?, finished_ms = NULL WHERE id = ? AND "
                            "(state <> ? OR finished_ms IS NOT NULL)");
  running.bind(1, static_cast<int>(v1::COLLECTION_STATE_RUNNING));
  running.bind(2, collection_id);
  running.bind(3, static_cast<int>(v1::COLLECTION_STATE_RUNNING));
  running.exec();
}

const v1::CollectionSpec* SqliteStore::CachedSpec(const std::string& collection_id) {
  auto it = specs_.find(collection_id);
  if (it != specs_.end()) return it->second.get();
  auto spec = std::make_unique<v1::CollectionSpec>();
  SQLite::Statement q(*db_, "SELECT spec FROM collections WHERE id = ?");
  q.bind(1, collection_id);
  if (q.executeStep()) spec->ParseFromString(BlobOf(q.getColumn(0)));
  return specs_.emplace(collection_id, std::move(spec)).first->second.get();
}

absl::StatusOr<LeaseRenewal> SqliteStore::RenewLeases(const std::string& agent_id,
                                                      const std::vector<AttemptRef>& running,
                                                      int64_t now_ms, int64_t lease_ttl_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    LeaseRenewal out;
    SQLite::Statement renew(*db_, "UPDATE jobs SET lease_expires_ms = ? WHERE id = ?");
    SQLite::Statement cancelled(*db_,
                                "SELECT c.cancel_reason <> '' FROM jobs j JOIN collections c ON "
                                "c.id = j.collection_id WHERE j.id = ?");
    for (const auto& ref : running) {
      const std::optional<LeaseFacts> lease = LoadLease(ref.job_id);
      const auto why = lease ? CheckLease(*lease, ref, agent_id) : AgentRefusal::kUnknownJob;
      if (why) {
        out.dropped.push_back({ref, *why});
        continue;
      }
      out.renewed.push_back(ref);
      // Held; its expiry is rewritten only when due (core/job_rules.h
      // LeaseRenewalDue).
      if (LeaseRenewalDue(lease->lease_expires_ms, now_ms, lease_ttl_ms)) {
        renew.bind(1, now_ms + lease_ttl_ms);
        renew.bind(2, ref.job_id);
        renew.exec();
        renew.reset();
      }
      cancelled.bind(1, ref.job_id);
      if (cancelled.executeStep() && cancelled.getColumn(0).getInt() != 0) {
        out.cancelled.push_back(ref);
      }
      cancelled.reset();
    }
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError("renew leases");
  }
}

absl::StatusOr<LeaseRenewal> SqliteStore::AdoptAttempts(const std::string& agent_id,
                                                        const std::vector<AttemptRef>& running,
                                                        int64_t now_ms, int64_t lease_ttl_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement agent(*db_, "SELECT host FROM agents WHERE id = ?");
    agent.bind(1, agent_id);
    const std::string host = agent.executeStep() ? agent.getColumn(0).getString() : "";
    LeaseRenewal out;
    SQLite::Statement q(*db_, "UPDATE jobs SET agent_id = ?, lease_expires_ms = ? WHERE id = ?");
    for (const auto& ref : running) {
      const std::optional<LeaseFacts> lease = LoadLease(ref.job_id);
      const auto why = lease ? CheckAdoption(*lease, ref, host, now_ms) : AgentRefusal::kUnknownJob;
      if (why) {
        out.dropped.push_back({ref, *why});
        continue;
      }
      q.bind(1, agent_id);
      q.bind(2, now_ms + lease_ttl_ms);
      q.bind(3, ref.job_id);
      q.exec();
      q.reset();
      out.renewed.push_back(ref);
    }
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError("adopt attempts");
  }
}

absl::StatusOr<std::vector<ExpiredLease>> SqliteStore::ExpireLeases(int64_t now_ms,
                                                                    int32_t max_lost) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    std::vector<ExpiredLease> out;
    SQLite::Statement q(*db_,
                        "SELECT id, collection_id, agent_id, attempt, lost_count FROM jobs WHERE "
                        "state IN (?, ?) AND lease_expires_ms < ?");
    q.bind(1, kLeased);
    q.bind(2, kRunning);
    q.bind(3, now_ms);
    std::vector<std::tuple<int64_t, std::string, std::string, int, int>> rows;
    while (q.executeStep()) {
      rows.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                        q.getColumn(2).getString(), q.getColumn(3).getInt(),
                        q.getColumn(4).getInt());
    }
    SQLite::Statement up(*db_,
                         "UPDATE jobs SET state = ?, reason = ?, lost_count = lost_count + 1, "
                         "lease_expires_ms = NULL, finished_ms = ? WHERE id = ?");
    for (const auto& [id, collection, agent, attempt, lost] : rows) {
      JobFacts facts;
      facts.attempt = attempt;
      facts.lost_count = lost;
      facts.cancelled = CollectionCancelled(collection);
      const JobDecision d = DecideExpiry(facts, agent, max_lost);
      const bool requeue = d.next == v1::JOB_STATE_QUEUED;
      const std::string& reason = d.reason;
      up.bind(1, static_cast<int>(d.next));
      up.bind(2, reason);
      if (requeue) {
        up.bind(3);
      } else {
        up.bind(3, now_ms);
      }
      up.bind(4, id);
      up.exec();
      up.reset();
      AddEvent(now_ms, collection, id, EventKind::kLeaseExpired, reason);
      RefreshCollectionState(collection, now_ms);
      out.push_back({id, collection, agent, requeue});
    }
    tx.commit();
    return out;
  } catch (...) {
    return CurrentSqliteError("expire leases");
  }
}

}  // namespace npuperf::server
