// PostgresStore: rounds, their metric series, and baselines pinned per team
// and label.
#include <map>
#include <string>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/rows.h"

namespace npuperf::server {

absl::StatusOr<v1::Round> PostgresStore::GetRound(const std::string& team, int64_t round_id) {
  return pool_->Run("get round", [&](pqxx::work& tx) -> absl::StatusOr<v1::Round> {
    auto r = tx.exec_prepared("round_get", round_id);
    if (r.empty() || (!team.empty() && r[0][4].as<std::string>() != team)) {
      return absl::NotFoundError(absl::StrCat("round ", round_id, " not found"));
    }
    v1::Round round = PgRoundFromRow(r[0], true);
    for (const auto& l : tx.exec_prepared("round_labels", round.collection_id())) {
      (*round.mutable_labels())[l[0].as<std::string>()] = l[1].as<std::string>();
    }
    return round;
  });
}

absl::StatusOr<RoundPage> PostgresStore::ListRounds(const RoundFilter& f) {
  return pool_->Run("list rounds", [&](pqxx::work& tx) -> absl::StatusOr<RoundPage> {
    auto rows = tx.exec_prepared(f.newest_first ? "round_list_desc" : "round_list", f.metric,
                                 f.team, f.after_id, f.since_ms, f.operator_name, f.case_id,
                                 f.collection_id, f.until_ms, PgLabelsJson(f.labels), f.limit + 1,
                                 f.include_server_rounds || !f.collection_id.empty());
    RoundPage page;
    for (const auto& row : rows) {
      if (static_cast<int32_t>(page.rounds.size()) == f.limit) {
        page.last_id = page.rounds.back().id();
        break;
      }
      v1::Round r = PgRoundFromRow(row, false);
      if (!f.metric.empty() && !row[9].is_null()) {
        v1::MetricPoint* p = &page.series.emplace_back();
        p->set_round_id(r.id());
        *p->mutable_at() = r.created_at();
        p->set_value(row[9].as<double>());
      }
      page.rounds.push_back(std::move(r));
    }
    // Labels of the collection, as GetRound gives them: one read per
    // collection on the page.
    std::map<std::string, google::protobuf::Map<std::string, std::string>> labels;
    for (v1::Round& r : page.rounds) {
      auto [it, fresh] = labels.try_emplace(r.collection_id());
      if (fresh) {
        for (const auto& l : tx.exec_prepared("round_labels", r.collection_id())) {
          it->second[l[0].as<std::string>()] = l[1].as<std::string>();
        }
      }
      *r.mutable_labels() = it->second;
    }
    return page;
  });
}

absl::StatusOr<Baseline> PostgresStore::PinBaseline(const std::string& team, const Baseline& pin) {
  return pool_->Run("pin baseline", [&](pqxx::work& tx) -> absl::StatusOr<Baseline> {
    const bool round = pin.round_id > 0;
    auto found = round ? tx.exec_prepared("baseline_round_of_team", pin.round_id, team)
                       : tx.exec_prepared("baseline_collection_of_team", pin.collection_id, team);
    if (found.empty()) {
      return absl::NotFoundError(
          round ? absl::StrCat("round ", pin.round_id, " not found")
                : absl::StrCat("collection ", pin.collection_id, " not found"));
    }
    tx.exec_prepared("baseline_pin", team, pin.label, pin.round_id, pin.collection_id,
                     pin.pinned_ms);
    return pin;
  });
}

absl::StatusOr<Baseline> PostgresStore::GetBaseline(const std::string& team,
                                                    const std::string& label) {
  return pool_->Run("get baseline", [&](pqxx::work& tx) -> absl::StatusOr<Baseline> {
    auto r = tx.exec_prepared("baseline_get", team, label);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("no baseline pinned for ", label));
    Baseline b;
    b.label = label;
    b.round_id = r[0][0].as<int64_t>();
    b.collection_id = r[0][1].as<std::string>();
    b.pinned_ms = r[0][2].as<int64_t>();
    return b;
  });
}

}  // namespace npuperf::server
