// SqliteStore: agents and their devices (registration, heartbeats, the
// listing, pruning).
#include "SQLiteCpp/Database.h"
#include "SQLiteCpp/Statement.h"
#include "SQLiteCpp/Transaction.h"
#include "absl/strings/str_cat.h"
#include "server/backends/sqlite/errors.h"
#include "server/backends/sqlite/rows.h"
#include "server/backends/sqlite/sqlite_store.h"

namespace npuperf::server {

absl::Status SqliteStore::UpsertAgent(const std::string& agent_id,
                                      const v1::RegisterAgentRequest& info, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    // Other instances of the same host, boot and slot are gone: this one
    // replaced them (other slots are other agents of the host).
    SQLite::Statement lost(*db_,
                           "UPDATE agents SET state = 'lost' WHERE host = ? AND boot_id = ? "
                           "AND slot = ? AND id <> ?");
    lost.bind(1, info.host());
    lost.bind(2, info.boot_id());
    lost.bind(3, info.slot());
    lost.bind(4, agent_id);
    lost.exec();
    SQLite::Statement q(*db_,
                        "INSERT INTO agents (id, host, boot_id, instance_id, version, info, state,"
                        " registered_ms, last_seen_ms, slot) VALUES (?,?,?,?,?,?,'online',?,?,?) "
                        "ON CONFLICT (id) DO UPDATE SET info = excluded.info, state = 'online', "
                        "last_seen_ms = excluded.last_seen_ms");
    const std::string blob = info.SerializeAsString();
    q.bind(1, agent_id);
    q.bind(2, info.host());
    q.bind(3, info.boot_id());
    q.bind(4, info.instance_id());
    q.bind(5, info.version());
    q.bind(6, blob.data(), static_cast<int>(blob.size()));
    q.bind(7, now_ms);
    q.bind(8, now_ms);
    q.bind(9, info.slot());
    q.exec();
    ReplaceDevices(agent_id, {info.devices().begin(), info.devices().end()});
    tx.commit();
    return absl::OkStatus();
  } catch (...) {
    return CurrentSqliteError("register agent");
  }
}

void SqliteStore::ReplaceDevices(const std::string& agent_id,
                                 const std::vector<v1::DeviceInfo>& devices) {
  SQLite::Statement drop(*db_, "DELETE FROM devices WHERE agent_id = ?");
  drop.bind(1, agent_id);
  drop.exec();
  SQLite::Statement ins(*db_,
                        "INSERT INTO devices (agent_id, device_id, soc, state) VALUES (?,?,?,?)");
  for (const auto& d : devices) {
    ins.bind(1, agent_id);
    ins.bind(2, d.device_id());
    ins.bind(3, d.soc());
    ins.bind(4, static_cast<int>(d.state()));
    ins.exec();
    ins.reset();
  }
}

absl::Status SqliteStore::UpdateDevices(const std::string& agent_id,
                                        const std::vector<v1::DeviceInfo>& devices,
                                        int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement seen(*db_,
                           "UPDATE agents SET last_seen_ms = ?, state = 'online' WHERE id = ?");
    seen.bind(1, now_ms);
    seen.bind(2, agent_id);
    if (seen.exec() == 0) return absl::NotFoundError(absl::StrCat("agent ", agent_id, " unknown"));
    // Only the devices it registered: a heartbeat never adds one.
    SQLite::Statement up(*db_, "UPDATE devices SET state = ? WHERE agent_id = ? AND device_id = ?");
    for (const auto& d : devices) {
      up.bind(1, static_cast<int>(d.state()));
      up.bind(2, agent_id);
      up.bind(3, d.device_id());
      up.exec();
      up.reset();
    }
    tx.commit();
    return absl::OkStatus();
  } catch (...) {
    return CurrentSqliteError("update devices");
  }
}

absl::StatusOr<std::vector<AgentRecord>> SqliteStore::ListAgents() {
  absl::MutexLock lock(&mu_);
  try {
    std::vector<AgentRecord> out;
    SQLite::Statement q(*db_,
                        "SELECT id, host, version, state, last_seen_ms, info FROM agents "
                        "ORDER BY host, registered_ms");
    while (q.executeStep()) out.push_back({AgentFromRow(q), {}});
    // At most one live job per device (jobs_one_lease_per_device).
    SQLite::Statement d(*db_,
                        "SELECT d.device_id, d.soc, d.state, j.id, j.team FROM devices d LEFT JOIN "
                        "jobs j ON j.agent_id = d.agent_id AND j.device_id = d.device_id AND "
                        "j.state IN (2, 3) WHERE d.agent_id = ? ORDER BY d.device_id");
    for (auto& agent : out) {
      const bool online = agent.status.state() == "online";  // 'online' or 'lost'
      d.bind(1, agent.status.agent_id());
      while (d.executeStep()) {
        *agent.status.add_devices() = DeviceFromRow(d, online);
        agent.job_teams.push_back(d.getColumn(4).getString());
      }
      d.reset();
    }
    return out;
  } catch (...) {
    return CurrentSqliteError("list agents");
  }
}

absl::StatusOr<std::vector<std::string>> SqliteStore::PruneAgents(int64_t seen_before_ms,
                                                                  int32_t limit) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    std::vector<std::string> ids;
    SQLite::Statement q(*db_,
                        "SELECT a.id FROM agents a WHERE a.last_seen_ms < ? AND NOT EXISTS "
                        "(SELECT 1 FROM jobs j WHERE j.agent_id = a.id AND j.state IN (2, 3)) "
                        "ORDER BY a.last_seen_ms LIMIT ?");
    q.bind(1, seen_before_ms);
    q.bind(2, limit);
    while (q.executeStep()) ids.push_back(q.getColumn(0).getString());
    SQLite::Statement devices(*db_, "DELETE FROM devices WHERE agent_id = ?");
    SQLite::Statement agent(*db_, "DELETE FROM agents WHERE id = ?");
    for (const auto& id : ids) {
      for (SQLite::Statement* del : {&devices, &agent}) {
        del->bind(1, id);
        del->exec();
        del->reset();
      }
    }
    tx.commit();
    return ids;
  } catch (...) {
    return CurrentSqliteError("prune agents");
  }
}

absl::StatusOr<v1::RegisterAgentRequest> SqliteStore::GetAgent(const std::string& agent_id) {
  absl::MutexLock lock(&mu_);
  try {
    SQLite::Statement q(*db_, "SELECT info FROM agents WHERE id = ? AND state = 'online'");
    q.bind(1, agent_id);
    if (!q.executeStep()) {
      return absl::NotFoundError(absl::StrCat("agent ", agent_id, " unknown; register again"));
    }
    v1::RegisterAgentRequest info;
    info.ParseFromString(BlobOf(q.getColumn(0)));
    return info;
  } catch (...) {
    return CurrentSqliteError("get agent");
  }
}

}  // namespace npuperf::server
