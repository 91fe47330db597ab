// PostgresStore: regressions and their triage (migration 0013;
// core/triage_rules.h decides). A team's observations take its advisory
// lock (two replicas listing at once cannot both open one regression); every
// row changed is read FOR UPDATE first, so a triage's compare-and-set sees
// the latest committed state.
#include <optional>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/postgres_store.h"
#include "server/backends/postgres/statements.h"
#include "server/core/triage_rules.h"

namespace npuperf::server {
namespace {

RegressionRecord RegressionOf(const pqxx::row& row) {
  RegressionRecord r;
  r.id = row[0].as<int64_t>();
  r.key.team = row[1].as<std::string>();
  r.key.operator_name = row[2].as<std::string>();
  r.key.case_id = row[3].as<std::string>();
  r.key.baseline_label = row[4].as<std::string>();
  r.key.rule = row[5].as<std::string>();
  r.state = static_cast<v1::RegressionState>(row[6].as<int>());
  r.confirmed = row[7].as<bool>();
  r.detected_ms = row[8].as<int64_t>();
  r.last_seen_ms = row[9].as<int64_t>();
  r.first_round_id = row[10].as<int64_t>();
  r.last_round_id = row[11].as<int64_t>();
  r.seen_rounds = row[12].as<int>();
  r.ended_ms = row[13].as<int64_t>();
  return r;
}

std::optional<RegressionRecord> FirstOf(const pqxx::result& rows) {
  if (rows.empty()) return std::nullopt;
  return RegressionOf(rows[0]);
}

void AddTransition(pqxx::work& tx, int64_t id, const RegressionTransitionRecord& t) {
  tx.exec_prepared("regression_transition_insert", id, static_cast<int>(t.from),
                   static_cast<int>(t.to), t.actor, t.note, t.at_ms);
}

void Save(pqxx::work& tx, const RegressionRecord& r) {
  tx.exec_prepared("regression_save", static_cast<int>(r.state), r.confirmed, r.last_seen_ms,
                   r.last_round_id, r.seen_rounds, r.ended_ms, r.id);
}

// Inserts a new regression; its id.
int64_t Insert(pqxx::work& tx, const RegressionRecord& r) {
  const RegressionKey& k = r.key;
  return tx
      .exec_prepared("regression_insert", k.team, k.operator_name, k.case_id, k.baseline_label,
                     k.rule, static_cast<int>(r.state), r.detected_ms, r.last_seen_ms,
                     r.first_round_id, r.last_round_id, r.seen_rounds)[0][0]
      .as<int64_t>();
}

// One observation (Store::ObserveRegressions): loads the key's current
// regression, saves what core/triage_rules.h's ApplyObservation made of it.
RegressionRecord Observe(pqxx::work& tx, const RegressionObservation& o, int64_t now_ms) {
  const RegressionKey& k = o.key;
  std::optional<RegressionRecord> cur = FirstOf(tx.exec_prepared(
      "regression_current", k.team, k.operator_name, k.case_id, k.baseline_label, k.rule));
  ObservationOutcome out = ApplyObservation(cur ? &*cur : nullptr, o, now_ms);
  if (out.action == ObservationAction::kNothing) return RegressionRecord();
  if (out.action == ObservationAction::kOpen) {
    out.record.id = Insert(tx, out.record);
  } else {
    Save(tx, out.record);
  }
  if (out.transition) AddTransition(tx, out.record.id, *out.transition);
  return out.Current();
}

}  // namespace

absl::StatusOr<std::vector<RegressionRecord>> PostgresStore::ObserveRegressions(
    const std::vector<RegressionObservation>& seen, int64_t now_ms) {
  return pool_->Run("observe regressions",
                    [&](pqxx::work& tx) -> absl::StatusOr<std::vector<RegressionRecord>> {
                      std::vector<RegressionRecord> out;
                      out.reserve(seen.size());
                      std::string locked;
                      for (const RegressionObservation& o : seen) {
                        if (o.key.team != locked) {
                          tx.exec_prepared("regression_team_lock", o.key.team);
                          locked = o.key.team;
                        }
                        out.push_back(Observe(tx, o, now_ms));
                      }
                      return out;
                    });
}

absl::StatusOr<RegressionRecord> PostgresStore::TriageRegression(const RegressionTriage& t) {
  return pool_->Run(absl::StrCat("triage regression ", t.id),
                    [&](pqxx::work& tx) -> absl::StatusOr<RegressionRecord> {
                      std::optional<RegressionRecord> r =
                          FirstOf(tx.exec_prepared("regression_by_id_lock", t.id, t.team));
                      if (!r)
                        return absl::NotFoundError(absl::StrCat("regression ", t.id, " not found"));
                      if (absl::Status s = CheckTriage(*r, t.expected, t.next); !s.ok()) return s;
                      const RegressionRecord next = ApplyTriage(*r, t.next, t.now_ms);
                      Save(tx, next);
                      AddTransition(tx, next.id, {r->state, next.state, t.team, t.note, t.now_ms});
                      return next;
                    });
}

absl::StatusOr<RegressionDetail> PostgresStore::GetRegression(const std::string& team, int64_t id) {
  return pool_->Run(
      absl::StrCat("regression ", id), [&](pqxx::work& tx) -> absl::StatusOr<RegressionDetail> {
        std::optional<RegressionRecord> r = FirstOf(tx.exec_prepared("regression_by_id", id, team));
        if (!r) return absl::NotFoundError(absl::StrCat("regression ", id, " not found"));
        RegressionDetail d;
        d.regression = *r;
        for (const auto& row : tx.exec_prepared("regression_transitions", id)) {
          RegressionTransitionRecord t;
          t.from = static_cast<v1::RegressionState>(row[0].as<int>());
          t.to = static_cast<v1::RegressionState>(row[1].as<int>());
          t.actor = row[2].as<std::string>();
          t.note = row[3].as<std::string>();
          t.at_ms = row[4].as<int64_t>();
          d.transitions.push_back(std::move(t));
        }
        return d;
      });
}

absl::StatusOr<std::vector<RegressionCount>> PostgresStore::CountRegressions(
    const std::string& team) {
  return pool_->Run("count regressions",
                    [&](pqxx::work& tx) -> absl::StatusOr<std::vector<RegressionCount>> {
                      std::vector<RegressionCount> out;
                      for (const auto& row : tx.exec_prepared("regression_counts", team)) {
                        RegressionCount c;
                        c.rule = row[0].as<std::string>();
                        c.state = static_cast<v1::RegressionState>(row[1].as<int>());
                        c.confirmed = row[2].as<bool>();
                        c.count = row[3].as<int64_t>();
                        out.push_back(std::move(c));
                      }
                      return out;
                    });
}

}  // namespace npuperf::server
