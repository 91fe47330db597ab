// PostgresStore: agents and their devices (registration, heartbeats, the
// listing, pruning).
#include <map>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/rows.h"
#include "server/backends/postgres/statements.h"

namespace npuperf::server {

absl::Status PostgresStore::UpsertAgent(const std::string& agent_id,
                                        const v1::RegisterAgentRequest& info, int64_t now_ms) {
  return pool_->Run("register agent", [&](pqxx::work& tx) -> absl::Status {
    // Other instances of the same host, boot and slot are gone: this one
    // replaced them (other slots are other agents of the host).
    tx.exec_prepared("agent_mark_lost", info.host(), info.boot_id(), info.slot(), agent_id);
    tx.exec_prepared("agent_upsert", agent_id, info.host(), info.boot_id(), info.instance_id(),
                     info.version(), PgBytes(info.SerializeAsString()), now_ms, info.slot());
    // Its devices become exactly the registered ones.
    tx.exec_prepared("devices_drop", agent_id);
    for (const auto& d : info.devices()) {
      tx.exec_prepared("device_insert", agent_id, d.device_id(), d.soc(),
                       static_cast<int>(d.state()));
    }
    return absl::OkStatus();
  });
}

absl::Status PostgresStore::UpdateDevices(const std::string& agent_id,
                                          const std::vector<v1::DeviceInfo>& devices,
                                          int64_t now_ms) {
  // One statement, every heartbeat of every agent (fleet_bench: a round trip
  // per device and unchanged rows rewritten cost PostgreSQL more than the
  // jobs did). Only the devices it registered: a heartbeat never adds one.
  nlohmann::json states = nlohmann::json::array();
  for (const auto& d : devices) {
    states.push_back({{"device_id", d.device_id()}, {"state", static_cast<int>(d.state())}});
  }
  return pool_->RunAutocommit("update devices", [&](pqxx::nontransaction& tx) -> absl::Status {
    const pqxx::row r = tx.exec_prepared1("heartbeat_seen", now_ms, agent_id, states.dump());
    if (r[0].as<int>() == 0)
      return absl::NotFoundError(absl::StrCat("agent ", agent_id, " unknown"));
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<AgentRecord>> PostgresStore::ListAgents() {
  using Out = std::vector<AgentRecord>;
  return pool_->Run("list agents", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    Out out;
    for (const auto& row : tx.exec_prepared("agents_list"))
      out.push_back({PgAgentFromRow(row), {}});
    std::map<std::string, AgentRecord*> by_id;
    for (auto& agent : out) by_id[agent.status.agent_id()] = &agent;
    for (const auto& row : tx.exec_prepared("agents_devices")) {
      auto it = by_id.find(row[5].as<std::string>());
      if (it == by_id.end()) continue;  // an agent registered after the list was read
      AgentRecord& agent = *it->second;
      const bool online = agent.status.state() == "online";  // 'online' or 'lost'
      *agent.status.add_devices() = PgDeviceFromRow(row, online);
      agent.job_teams.push_back(row[4].as<std::string>(""));
    }
    return out;
  });
}

absl::StatusOr<std::vector<std::string>> PostgresStore::PruneAgents(int64_t seen_before_ms,
                                                                    int32_t limit) {
  using Out = std::vector<std::string>;
  return pool_->Run("prune agents", [&](pqxx::work& tx) -> absl::StatusOr<Out> {
    Out ids;
    for (const auto& row : tx.exec_prepared("agents_prunable", seen_before_ms, limit)) {
      ids.push_back(row[0].as<std::string>());
    }
    for (const auto& id : ids) {
      tx.exec_prepared("devices_drop", id);
      tx.exec_prepared("agent_delete", id);
    }
    return ids;
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
