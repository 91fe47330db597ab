#include "tests/chaos/report.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_format.h"

namespace npuperf::chaos {
namespace {

bool OnAgent(const Lease& l, const AgentSlot& a) {
  return l.host == a.host && l.device >= a.first_device && l.device <= a.last_device;
}

// The first lease starting after `after` that `match` accepts; -1: none.
template <typename Match>
int64_t FirstLeaseAfter(const std::vector<Lease>& leases, int64_t after, Match match) {
  int64_t best = -1;
  for (const auto& l : leases) {
    if (l.start_ms >= after && match(l) && (best < 0 || l.start_ms < best)) best = l.start_ms;
  }
  return best < 0 ? -1 : best - after;
}

std::string Seconds(const std::vector<int64_t>& ms) {
  if (ms.empty()) return "-";
  std::vector<int64_t> v = ms;
  std::sort(v.begin(), v.end());
  return absl::StrFormat("%.1f / %.1f", v[v.size() / 2] / 1000.0, v.back() / 1000.0);
}

}  // namespace

Recovery RecoveryOf(const FaultRecord& r, const Fleet& fleet, const std::vector<Lease>& leases) {
  Recovery out;
  if (r.skipped || r.end_ms == 0) return out;
  const auto& agents = fleet.agents();
  switch (r.plan.kind) {
    case FaultKind::kPgRestart:
      out.to_lease_ms = FirstLeaseAfter(leases, r.end_ms, [](const Lease&) { return true; });
      break;
    case FaultKind::kReplicaKill:
      if (r.answered_ms > 0) out.to_answer_ms = r.answered_ms - r.start_ms;
      out.to_lease_ms = FirstLeaseAfter(leases, r.end_ms, [&](const Lease& l) {
        for (const auto& a : agents) {
          if (a.replica == r.plan.target && OnAgent(l, a)) return true;
        }
        return false;
      });
      break;
    default: {
      const AgentSlot& a = agents[r.plan.target];
      out.to_lease_ms =
          FirstLeaseAfter(leases, r.end_ms, [&](const Lease& l) { return OnAgent(l, a); });
    }
  }
  return out;
}

void PrintReport(std::ostream& out, const std::vector<FaultRecord>& faults, const Fleet& fleet,
                 const CheckResult& check, double wall_s) {
  struct Row {
    int injected = 0;
    int skipped = 0;
    std::vector<int64_t> lease;
    std::vector<int64_t> answer;
  };
  std::map<int, Row> rows;
  for (const auto& f : faults) {
    Row& row = rows[static_cast<int>(f.plan.kind)];
    if (f.skipped) {
      ++row.skipped;
      continue;
    }
    ++row.injected;
    const Recovery rec = RecoveryOf(f, fleet, check.history.leases);
    if (rec.to_lease_ms >= 0) row.lease.push_back(rec.to_lease_ms);
    if (rec.to_answer_ms >= 0) row.answer.push_back(rec.to_answer_ms);
  }
  out << absl::StrFormat("\n== chaos report (%.0f s wall)\n", wall_s);
  out << absl::StrFormat("%-30s %8s %8s  %-22s %s\n", "fault", "injected", "skipped",
                         "-> next lease p50/max s", "-> answers p50/max s");
  for (const auto& [kind, row] : rows) {
    out << absl::StrFormat("%-30s %8d %8d  %-22s %s\n", FaultName(static_cast<FaultKind>(kind)),
                           row.injected, row.skipped, Seconds(row.lease), Seconds(row.answer));
  }
  const JobFigures& j = check.figures;
  out << absl::StrFormat(
      "jobs %d: succeeded %d, failed %d, cancelled %d; retried %d (leases %d, %d expired)\n",
      j.jobs, j.succeeded, j.failed, j.cancelled, j.retried, j.attempts, j.expired);
  if (check.violations.empty()) {
    out << "invariants: all hold (terminal, one-round, no-double-book, no-stale-result, "
           "spools-empty, counts)\n";
    return;
  }
  out << "INVARIANT VIOLATIONS:\n";
  for (const auto& v : check.violations) out << "  " << v.invariant << ":\n    " << v.facts << "\n";
}

}  // namespace npuperf::chaos
