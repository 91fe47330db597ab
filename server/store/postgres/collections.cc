// PostgresStore: tokens, collections, agents and devices, and the
// state counts behind /metrics.
#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "server/core/job_state.h"
#include "server/store/postgres/pool.h"
#include "server/store/postgres/postgres_store.h"
#include "server/store/postgres/rows.h"
#include "server/store/postgres/statements.h"

namespace npuperf::server {
namespace {

// A collection with its job counts (and its jobs when with_jobs). NOT_FOUND
// when absent or another team's (team empty: any team).
absl::StatusOr<v1::Collection> LoadCollection(pqxx::work& tx, const std::string& team,
                                              const std::string& id, bool with_jobs) {
  auto r = tx.exec_prepared("collection_get", id);
  if (r.empty() || (!team.empty() && r[0]["team"].as<std::string>() != team)) {
    return absl::NotFoundError(absl::StrCat("collection ", id, " not found"));
  }
  v1::Collection c = PgCollectionFromRow(r[0]);
  for (const auto& row : tx.exec_prepared("collection_jobs", id)) {
    v1::Job job = PgJobFromRow(row);
    CountJob(job.state(), c.mutable_counts());
    if (with_jobs) *c.add_jobs() = std::move(job);
  }
  return c;
}

// Inserts the collection and its jobs, or loads the one created earlier with
// the same (team, idempotency key) (then false).
absl::StatusOr<std::pair<v1::Collection, bool>> InsertCollectionTx(pqxx::work& tx,
                                                                   const NewCollection& c) {
  // ON CONFLICT waits for a concurrent insert of the same (team, key) and then
  // skips: the same key always yields the one collection.
  auto ins =
      tx.exec_prepared("collection_insert", c.id, c.team, PgBytes(c.spec.SerializeAsString()),
                       static_cast<int>(v1::COLLECTION_STATE_QUEUED), c.spec.priority(),
                       c.spec.max_concurrent_jobs(), c.idempotency_key, c.now_ms);
  if (ins.empty()) {
    auto existing = tx.exec_prepared("collection_by_key", c.team, c.idempotency_key);
    if (existing.empty()) return absl::AbortedError("idempotency key raced; retry");
    auto loaded = LoadCollection(tx, "", existing[0][0].as<std::string>(), true);
    if (!loaded.ok()) return loaded.status();
    return std::make_pair(*std::move(loaded), false);
  }
  for (const auto& [key, value] : c.spec.labels()) {
    tx.exec_prepared("label_insert", c.id, key, value);
  }
  for (const auto& j : c.jobs) {
    tx.exec_prepared("job_insert", c.id, c.team, c.spec.priority(), j.operator_name, j.case_id,
                     j.op_name, 1 + c.spec.params().retry(), c.now_ms);
  }
  PgAddEvent(tx, c.now_ms, c.id, 0, EventKind::kCollectionSubmitted,
             absl::StrCat(c.jobs.size(), " jobs, team ", c.team));
  auto loaded = LoadCollection(tx, "", c.id, true);
  if (!loaded.ok()) return loaded.status();
  return std::make_pair(*std::move(loaded), true);
}

}  // namespace

absl::StatusOr<std::pair<std::string, std::string>> PostgresStore::LookupToken(
    const std::string& hash) {
  using Out = std::pair<std::string, std::string>;
  return pool_->Run("lookup token", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    auto r = tx.exec_prepared("token_lookup", hash);
    if (r.empty()) return absl::NotFoundError("unknown token");
    return Out(r[0][0].as<std::string>(), r[0][1].as<std::string>());
  });
}

absl::Status PostgresStore::InsertToken(const std::string& hash, const std::string& kind,
                                        const std::string& name, int64_t now_ms) {
  return pool_->Run("insert token", [&](pqxx::work& tx) -> absl::Status {
    tx.exec_prepared("token_insert", hash, kind, name, now_ms);
    return absl::OkStatus();
  });
}

absl::StatusOr<int64_t> PostgresStore::CountTokens() {
  return pool_->Run("count tokens", [&](pqxx::work& tx) -> absl::StatusOr<int64_t> {
    return tx.exec_prepared("token_count")[0][0].as<int64_t>();
  });
}

absl::StatusOr<std::pair<v1::Collection, bool>> PostgresStore::InsertCollection(
    const NewCollection& c) {
  return pool_->Run("insert collection", [&](pqxx::work& tx) {
    auto inserted = InsertCollectionTx(tx, c);
    if (inserted.ok() && inserted->second) PgNotify(tx, StoreChange::kClaimable, replica_id_);
    return inserted;
  });
}

absl::StatusOr<v1::Collection> PostgresStore::GetCollection(const std::string& team,
                                                            const std::string& id) {
  return pool_->Run("get collection " + id,
                    [&](pqxx::work& tx) { return LoadCollection(tx, team, id, true); });
}

absl::StatusOr<std::vector<v1::Collection>> PostgresStore::ListCollections(
    const CollectionFilter& f) {
  using Out = std::vector<v1::Collection>;
  std::vector<int> states(f.states.begin(), f.states.end());
  return pool_->Run("list collections", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    auto ids = tx.exec_prepared("collection_list", f.team, f.before_created_ms, f.before_id,
                                PgLabelsJson(f.labels), PgIntArray(states), f.limit);
    Out out;
    for (const auto& row : ids) {
      auto c = LoadCollection(tx, f.team, row[0].as<std::string>(), false);
      if (!c.ok()) return c.status();
      out.push_back(*std::move(c));
    }
    return out;
  });
}

absl::StatusOr<std::vector<CancelOrder>> PostgresStore::CancelCollection(const std::string& team,
                                                                         const std::string& id,
                                                                         const std::string& reason,
                                                                         int64_t now_ms) {
  using Out = std::vector<CancelOrder>;
  return pool_->Run("cancel " + id, [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    // The collection row lock orders us with claims of this collection.
    auto c = tx.exec_prepared("collection_lock", id);
    if (c.empty() || (!team.empty() && c[0][0].as<std::string>() != team)) {
      return absl::NotFoundError(absl::StrCat("collection ", id, " not found"));
    }
    tx.exec_prepared("collection_mark_cancel", reason.empty() ? "cancelled" : reason, id);
    tx.exec_prepared("collection_cancel_queued", absl::StrCat("cancelled: ", reason), now_ms, id);
    Out orders;
    for (const auto& row : tx.exec_prepared("collection_live_jobs", id)) {
      orders.push_back(
          {row[1].as<std::string>(""), row[0].as<int64_t>(), row[2].as<int64_t>(), reason});
    }
    PgAddEvent(tx, now_ms, id, 0, EventKind::kCollectionCancelled, reason);
    PgRefreshCollectionState(tx, id, now_ms, /*cancelled=*/true);
    PgNotify(tx, StoreChange::kUpdated, replica_id_);
    return orders;
  });
}

absl::Status PostgresStore::UpsertAgent(const std::string& agent_id,
                                        const v1::RegisterAgentRequest& info, int64_t now_ms) {
  absl::Status s = pool_->Run("register agent", [&](pqxx::work& tx) -> absl::Status {
    // Other instances of the same host + boot are gone: this one replaced them.
    tx.exec_prepared("agent_mark_lost", info.host(), info.boot_id(), agent_id);
    tx.exec_prepared("agent_upsert", agent_id, info.host(), info.boot_id(), info.instance_id(),
                     info.version(), PgBytes(info.SerializeAsString()), now_ms);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return UpdateDevices(agent_id, {info.devices().begin(), info.devices().end()}, now_ms);
}

absl::Status PostgresStore::UpdateDevices(const std::string& agent_id,
                                          const std::vector<v1::DeviceInfo>& devices,
                                          int64_t now_ms) {
  return pool_->Run("update devices", [&](pqxx::work& tx) -> absl::Status {
    if (tx.exec_prepared("agent_seen", now_ms, agent_id).affected_rows() == 0) {
      return absl::NotFoundError(absl::StrCat("agent ", agent_id, " unknown"));
    }
    for (const auto& d : devices) {
      tx.exec_prepared("device_upsert", agent_id, d.device_id(), d.soc(),
                       static_cast<int>(d.state()));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<v1::AgentStatus>> PostgresStore::ListAgents() {
  using Out = std::vector<v1::AgentStatus>;
  return pool_->Run("list agents", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    Out out;
    for (const auto& row : tx.exec_prepared("agents_list")) out.push_back(PgAgentFromRow(row));
    for (auto& agent : out) {
      const bool online = agent.state() == "online";  // agents.state is 'online' or 'lost'
      for (const auto& row : tx.exec_prepared("agent_devices", agent.agent_id())) {
        *agent.add_devices() = PgDeviceFromRow(row, online);
      }
    }
    return out;
  });
}

absl::StatusOr<StateCounts> PostgresStore::CountByState() {
  return pool_->Run("count by state", [&](pqxx::work& tx) -> absl::StatusOr<StateCounts> {
    StateCounts out;
    for (const auto& row : tx.exec_prepared("count_jobs")) {
      out.jobs[static_cast<v1::JobState>(row[0].as<int>())] = row[1].as<int64_t>();
    }
    for (const auto& row : tx.exec_prepared("count_agents")) {
      out.agents[row[0].as<std::string>()] = row[1].as<int64_t>();
    }
    for (const auto& row : tx.exec_prepared("count_devices")) {
      out.devices[DeviceStatusName(row[0].as<bool>(), row[1].as<int>(), row[2].as<bool>())] +=
          row[3].as<int64_t>();
    }
    return out;
  });
}

absl::StatusOr<v1::RegisterAgentRequest> PostgresStore::GetAgent(const std::string& agent_id) {
  using Out = v1::RegisterAgentRequest;
  return pool_->Run("get agent", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    auto r = tx.exec_prepared("agent_info", agent_id);
    if (r.empty()) {
      return absl::NotFoundError(absl::StrCat("agent ", agent_id, " unknown; register again"));
    }
    Out info;
    info.ParseFromString(PgBlob(r[0][0]));
    return info;
  });
}

}  // namespace npuperf::server
