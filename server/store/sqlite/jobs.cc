// SqliteStore: the job life cycle (claims, leases, results) and rounds.
#include <map>
#include <set>

#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "server/core/job_rules.h"
#include "server/core/job_state.h"
#include "server/store/sqlite/rows.h"
#include "server/store/sqlite/sqlite_store.h"
#include "server/store/sqlite/errors.h"

namespace npuperf::server {
namespace {

constexpr int kLeased = v1::JOB_STATE_LEASED;
constexpr int kRunning = v1::JOB_STATE_RUNNING;
constexpr int kQueued = v1::JOB_STATE_QUEUED;

// Stores the evidence of a succeeded attempt as a round with its figures;
// returns the round id. REQUIRES: inside the result's transaction.
int64_t InsertRound(SQLite::Database& db, const AttemptResult& r, const std::string& collection_id,
                    int attempt, const std::string& team, const std::string& op,
                    const std::string& case_id) {
  const std::string blob = r.evidence.SerializeAsString();
  SQLite::Statement ins(db,
                        "INSERT INTO rounds (collection_id, job_id, attempt, team, operator_name, "
                        "case_id, kernel_time_us, bound_label, evidence, created_ms) VALUES "
                        "(?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, collection_id);
  ins.bind(2, r.ref.job_id);
  ins.bind(3, attempt);
  ins.bind(4, team);
  ins.bind(5, op);
  ins.bind(6, case_id);
  ins.bind(7, r.evidence.duration().aggregate_us());
  ins.bind(8, r.evidence.bound().label());
  ins.bind(9, blob.data(), static_cast<int>(blob.size()));
  ins.bind(10, r.now_ms);
  ins.exec();
  const int64_t round_id = db.getLastInsertRowid();
  SQLite::Statement metric(db, "INSERT OR REPLACE INTO round_metrics VALUES (?, ?, ?)");
  for (const auto& [name, value] : r.metrics) {
    metric.bind(1, round_id);
    metric.bind(2, name);
    metric.bind(3, value);
    metric.exec();
    metric.reset();
  }
  return round_id;
}

}  // namespace

absl::StatusOr<std::optional<v1::JobAssignment>> SqliteStore::ClaimJob(
    const ClaimRequest& req, const ClaimChooser& choose) {
  std::lock_guard<std::mutex> lock(mu_);
  using Result = std::optional<v1::JobAssignment>;
  return GuardSqlite("claim job", [&]() -> absl::StatusOr<Result> {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    // Devices with a live lease are not free, whatever the agent believes.
    std::set<int> busy_devices;
    SQLite::Statement busy(*db_, "SELECT device_id FROM jobs WHERE agent_id = ? AND state IN (?, ?)");
    busy.bind(1, req.agent_id);
    busy.bind(2, kLeased);
    busy.bind(3, kRunning);
    while (busy.executeStep()) busy_devices.insert(busy.getColumn(0).getInt());
    std::vector<OfferedDevice> offered;
    for (const auto& d : req.devices) {
      if (!busy_devices.contains(d.device_id)) offered.push_back(d);
    }
    if (offered.empty()) return Result();
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
    // Jobs of one collection share constraints and priority: its oldest
    // queued job stands for all of them.
    SQLite::Statement heads(*db_,
                            "SELECT j.id, j.collection_id, j.team, j.priority, j.operator_name "
                            "FROM jobs j WHERE j.id IN (SELECT MIN(id) FROM jobs WHERE state = ? "
                            "GROUP BY collection_id) ORDER BY j.priority DESC, j.id");
    heads.bind(1, kQueued);
    std::vector<ClaimCandidate> candidates;
    std::vector<std::string> operators;
    while (heads.executeStep()) {
      ClaimCandidate c;
      c.job_id = heads.getColumn(0).getInt64();
      c.collection_id = heads.getColumn(1).getString();
      c.team = heads.getColumn(2).getString();
      c.priority = heads.getColumn(3).getInt();
      c.collection_active = collection_active[c.collection_id];
      c.team_active = team_active[c.team];
      candidates.push_back(std::move(c));
      operators.push_back(heads.getColumn(4).getString());
    }
    heads.reset();
    if (specs_.size() + candidates.size() > 10'000) specs_.clear();  // before taking pointers
    for (auto& c : candidates) c.spec = CachedSpec(c.collection_id);
    auto choice = choose(candidates, offered, req.agent_labels);
    if (!choice) return Result();
    const ClaimCandidate& pick = candidates[choice->first];
    const OfferedDevice& device = offered[choice->second];
    SQLite::Statement lease(*db_,
                            "UPDATE jobs SET state = ?, attempt = attempt + 1, fencing_token = "
                            "fencing_token + 1, agent_id = ?, host = ?, device_id = ?, soc = ?, "
                            "lease_expires_ms = ?, started_ms = COALESCE(started_ms, ?), progress = "
                            "NULL WHERE id = ? AND state = ? RETURNING attempt, max_attempts, "
                            "fencing_token, op_name, case_id, queued_ms");
    lease.bind(1, kLeased);
    lease.bind(2, req.agent_id);
    lease.bind(3, req.host);
    lease.bind(4, device.device_id);
    lease.bind(5, device.soc);
    lease.bind(6, req.now_ms + req.lease_ttl_ms);
    lease.bind(7, req.now_ms);
    lease.bind(8, pick.job_id);
    lease.bind(9, kQueued);
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
    a.set_operator_name(operators[choice->first]);
    FillAssignmentFromSpec(*pick.spec, a.operator_name(), &a);
    AddEvent(req.now_ms, pick.collection_id, pick.job_id, "job_leased",
             absl::StrCat("attempt ", a.attempt(), " token ", a.fencing_token(), " on ",
                          req.host, " device ", device.device_id));
    // A lease leaves a live job: DeriveCollectionState says RUNNING.
    SQLite::Statement running(*db_,
                              "UPDATE collections SET state = ?, finished_ms = NULL WHERE id = ? AND "
                              "(state <> ? OR finished_ms IS NOT NULL)");
    running.bind(1, static_cast<int>(v1::COLLECTION_STATE_RUNNING));
    running.bind(2, pick.collection_id);
    running.bind(3, static_cast<int>(v1::COLLECTION_STATE_RUNNING));
    running.exec();
    tx.commit();
    return Result(std::move(a));
  });
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
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("renew leases", [&]() -> absl::StatusOr<LeaseRenewal> {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    LeaseRenewal out;
    SQLite::Statement q(*db_,
                        "UPDATE jobs SET lease_expires_ms = ? WHERE id = ? AND fencing_token = ? "
                        "AND agent_id = ? AND state IN (?, ?) RETURNING collection_id");
    for (const auto& ref : running) {
      q.bind(1, now_ms + lease_ttl_ms);
      q.bind(2, ref.job_id);
      q.bind(3, ref.fencing_token);
      q.bind(4, agent_id);
      q.bind(5, kLeased);
      q.bind(6, kRunning);
      if (!q.executeStep()) {
        out.dropped.push_back(ref);
      } else if (CollectionCancelled(q.getColumn(0).getString())) {
        out.cancelled.push_back(ref);
      }
      q.reset();
    }
    tx.commit();
    return out;
  });
}

// REQUIRES: mu_ held, inside a transaction.
bool SqliteStore::CollectionCancelled(const std::string& collection_id) {
  SQLite::Statement c(*db_, "SELECT cancel_reason FROM collections WHERE id = ?");
  c.bind(1, collection_id);
  return c.executeStep() && !c.getColumn(0).getString().empty();
}

absl::StatusOr<std::vector<AttemptRef>> SqliteStore::AdoptAttempts(
    const std::string& agent_id, const std::vector<AttemptRef>& running, int64_t now_ms,
    int64_t lease_ttl_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("adopt attempts", [&]() -> absl::StatusOr<std::vector<AttemptRef>> {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    std::vector<AttemptRef> adopted;
    SQLite::Statement q(*db_,
                        "UPDATE jobs SET agent_id = ?, lease_expires_ms = ? WHERE id = ? AND "
                        "fencing_token = ? AND state IN (?, ?) AND lease_expires_ms >= ? AND host = "
                        "(SELECT host FROM agents WHERE id = ?)");
    for (const auto& ref : running) {
      q.bind(1, agent_id);
      q.bind(2, now_ms + lease_ttl_ms);
      q.bind(3, ref.job_id);
      q.bind(4, ref.fencing_token);
      q.bind(5, kLeased);
      q.bind(6, kRunning);
      q.bind(7, now_ms);
      q.bind(8, agent_id);
      if (q.exec() > 0) adopted.push_back(ref);
      q.reset();
    }
    tx.commit();
    return adopted;
  });
}

absl::StatusOr<bool> SqliteStore::RecordProgress(const std::string& /*agent_id*/,
                                                 const AttemptRef& ref,
                                                 const v1::JobProgress& progress, int64_t now_ms,
                                                 int64_t lease_ttl_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("record progress", [&]() -> absl::StatusOr<bool> {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    const std::string blob = progress.SerializeAsString();
    SQLite::Statement q(*db_,
                        "UPDATE jobs SET state = ?, progress = ?, lease_expires_ms = ? WHERE id = ? "
                        "AND fencing_token = ? AND attempt = ? AND state IN (?, ?) "
                        "RETURNING collection_id");
    q.bind(1, kRunning);
    q.bind(2, blob.data(), static_cast<int>(blob.size()));
    q.bind(3, now_ms + lease_ttl_ms);
    q.bind(4, ref.job_id);
    q.bind(5, ref.fencing_token);
    q.bind(6, ref.attempt);
    q.bind(7, kLeased);
    q.bind(8, kRunning);
    if (!q.executeStep()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job ", ref.job_id, " attempt ", ref.attempt, " token ", ref.fencing_token,
          " is not the current lease (stale fencing token, or the job finished)"));
    }
    const std::string collection_id = q.getColumn(0).getString();
    q.reset();
    const bool cancel = CollectionCancelled(collection_id);
    RefreshCollectionState(collection_id, now_ms);
    tx.commit();
    return cancel;
  });
}

absl::StatusOr<ResultAck> SqliteStore::RecordResult(const AttemptResult& r) {
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("record result", [&]() -> absl::StatusOr<ResultAck> {
    return ApplyResult(r);
  });
}

// REQUIRES: mu_ held.
absl::StatusOr<ResultAck> SqliteStore::ApplyResult(const AttemptResult& r) {
  SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement seen(*db_, "SELECT job_id, round_id FROM result_updates WHERE update_uuid = ?");
  seen.bind(1, r.update_uuid);
  if (seen.executeStep()) {
    if (seen.getColumn(0).getInt64() != r.ref.job_id) {
      return absl::InvalidArgumentError("update_uuid reused for another job");
    }
    ResultAck ack{seen.getColumn(1).isNull() ? 0 : seen.getColumn(1).getInt64(), true, ""};
    return ack;
  }
  SQLite::Statement job(*db_,
                        "SELECT state, fencing_token, attempt, max_attempts, lost_count, "
                        "collection_id, team, operator_name, case_id FROM jobs WHERE id = ?");
  job.bind(1, r.ref.job_id);
  if (!job.executeStep()) return absl::NotFoundError(absl::StrCat("job ", r.ref.job_id, " not found"));
  const int state = job.getColumn(0).getInt();
  if (job.getColumn(1).getInt64() != r.ref.fencing_token || job.getColumn(2).getInt() != r.ref.attempt ||
      (state != kLeased && state != kRunning)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", r.ref.job_id, " attempt ", r.ref.attempt, " token ", r.ref.fencing_token,
        " is not the current lease (stale fencing token, or the job finished); result not stored"));
  }
  JobFacts facts;
  facts.attempt = job.getColumn(2).getInt();
  facts.max_attempts = job.getColumn(3).getInt();
  facts.lost_count = job.getColumn(4).getInt();
  const int attempt = facts.attempt;
  ResultAck ack{0, false, job.getColumn(5).getString()};
  const std::string team = job.getColumn(6).getString();
  const std::string op = job.getColumn(7).getString();
  const std::string case_id = job.getColumn(8).getString();
  job.reset();
  facts.cancelled = CollectionCancelled(ack.collection_id);
  const JobDecision decision = DecideResult(r, facts);
  const int next = decision.next;
  const std::string& reason = decision.reason;
  const bool lost = decision.lost;
  if (next == v1::JOB_STATE_SUCCEEDED) {
    ack.round_id = InsertRound(*db_, r, ack.collection_id, attempt, team, op, case_id);
  }
  SQLite::Statement up(*db_,
                       "UPDATE jobs SET state = ?, reason = ?, round_id = ?, kernel_time_us = ?, "
                       "bound_label = ?, lease_expires_ms = NULL, finished_ms = ?, lost_count = "
                       "lost_count + ? WHERE id = ?");
  up.bind(1, next);
  up.bind(2, reason);
  if (ack.round_id > 0) {
    up.bind(3, ack.round_id);
    up.bind(4, r.evidence.duration().aggregate_us());
    up.bind(5, r.evidence.bound().label());
  } else {
    up.bind(3);
    up.bind(4);
    up.bind(5);
  }
  if (next == kQueued) {
    up.bind(6);
  } else {
    up.bind(6, r.now_ms);
  }
  up.bind(7, lost ? 1 : 0);
  up.bind(8, r.ref.job_id);
  up.exec();
  SQLite::Statement rec(*db_, "INSERT INTO result_updates VALUES (?, ?, ?, ?, ?, ?)");
  rec.bind(1, r.update_uuid);
  rec.bind(2, r.ref.job_id);
  rec.bind(3, attempt);
  rec.bind(4, r.ref.fencing_token);
  if (ack.round_id > 0) {
    rec.bind(5, ack.round_id);
  } else {
    rec.bind(5);
  }
  rec.bind(6, r.now_ms);
  rec.exec();
  AddEvent(r.now_ms, ack.collection_id, r.ref.job_id, "job_result",
           absl::StrCat(JobStateName(static_cast<v1::JobState>(next)), " ", reason));
  RefreshCollectionState(ack.collection_id, r.now_ms);
  tx.commit();
  return ack;
}

absl::StatusOr<std::vector<ExpiredLease>> SqliteStore::ExpireLeases(int64_t now_ms,
                                                                    int32_t max_lost) {
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("expire leases", [&]() -> absl::StatusOr<std::vector<ExpiredLease>> {
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
                        q.getColumn(2).getString(), q.getColumn(3).getInt(), q.getColumn(4).getInt());
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
      AddEvent(now_ms, collection, id, "lease_expired", reason);
      RefreshCollectionState(collection, now_ms);
      out.push_back({id, collection, agent, requeue});
    }
    tx.commit();
    return out;
  });
}

absl::StatusOr<v1::Round> SqliteStore::GetRound(const std::string& team, int64_t round_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("get round", [&]() -> absl::StatusOr<v1::Round> {
    SQLite::Statement q(*db_, absl::StrCat("SELECT ", kRoundColumns, " FROM rounds r WHERE r.id = ?"));
    q.bind(1, round_id);
    if (!q.executeStep() || (!team.empty() && q.getColumn(4).getString() != team)) {
      return absl::NotFoundError(absl::StrCat("round ", round_id, " not found"));
    }
    v1::Round round = RoundFromRow(q, true);
    SQLite::Statement l(*db_, "SELECT key, value FROM collection_labels WHERE collection_id = ?");
    l.bind(1, round.collection_id());
    while (l.executeStep()) {
      (*round.mutable_labels())[l.getColumn(0).getString()] = l.getColumn(1).getString();
    }
    return round;
  });
}

absl::StatusOr<RoundPage> SqliteStore::ListRounds(const RoundFilter& f) {
  std::lock_guard<std::mutex> lock(mu_);
  return GuardSqlite("list rounds", [&]() -> absl::StatusOr<RoundPage> {
    std::string sql = absl::StrCat("SELECT ", kRoundColumns,
                                   ", m.value FROM rounds r LEFT JOIN round_metrics m ON "
                                   "m.round_id = r.id AND m.name = :metric WHERE r.team = :team "
                                   "AND r.created_ms >= :since");
    if (!f.newest_first) sql += " AND r.id > :after";
    if (f.newest_first && f.after_id > 0) sql += " AND r.id < :after";
    if (!f.operator_name.empty()) sql += " AND r.operator_name = :op";
    if (!f.case_id.empty()) sql += " AND r.case_id = :case";
    if (!f.collection_id.empty()) sql += " AND r.collection_id = :coll";
    if (f.until_ms > 0) sql += " AND r.created_ms < :until";
    AppendLabelFilter(&sql, f.labels.size(), "r.collection_id");
    sql += f.newest_first ? " ORDER BY r.id DESC LIMIT :limit" : " ORDER BY r.id LIMIT :limit";
    SQLite::Statement q(*db_, sql);
    q.bind(":metric", f.metric);
    q.bind(":team", f.team);
    if (!f.newest_first || f.after_id > 0) q.bind(":after", f.after_id);
    q.bind(":since", f.since_ms);
    if (!f.operator_name.empty()) q.bind(":op", f.operator_name);
    if (!f.case_id.empty()) q.bind(":case", f.case_id);
    if (!f.collection_id.empty()) q.bind(":coll", f.collection_id);
    if (f.until_ms > 0) q.bind(":until", f.until_ms);
    BindLabelFilter(q, f.labels);
    q.bind(":limit", f.limit + 1);
    RoundPage page;
    while (q.executeStep()) {
      if (static_cast<int32_t>(page.rounds.size()) == f.limit) {
        page.last_id = page.rounds.back().id();
        break;
      }
      v1::Round r = RoundFromRow(q, false);
      if (!f.metric.empty() && !q.getColumn(9).isNull()) {
        v1::MetricPoint* p = &page.series.emplace_back();
        p->set_round_id(r.id());
        *p->mutable_at() = r.created_at();
        p->set_value(q.getColumn(9).getDouble());
      }
      page.rounds.push_back(std::move(r));
    }
    return page;
  });
}

}  // namespace npuperf::server
