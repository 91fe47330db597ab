// The tables of the round page (page_util.h MemoryTables, DvfsAndFindings):
// colours come from the rules of evidence/findings.h, never from numbers
// of their own.
#include <map>

#include "evidence/derived.h"
#include "evidence/findings.h"
#include "report/html.h"
#include "report/page_util.h"

namespace npuperf::report::internal {
namespace {

const v1::MetricGroup* Group(const v1::Evidence& e, std::string_view name) {
  for (const auto& g : e.metrics()) {
    if (g.group() == name) return &g;
  }
  return nullptr;
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string NotApplied(const v1::Evidence& e, std::string_view rule_id) {
  for (const auto& n : e.findings_not_applied()) {
    if (n.rule_id() == rule_id) return Para(n.rule_id() + " not applied: " + n.note(), "note");
  }
  return "";
}

std::string Memory(const v1::Evidence& e) {
  std::vector<std::vector<Cell>> rows;
  for (const char* name : {"Memory", "MemoryL0", "MemoryUB"}) {
    const v1::MetricGroup* g = Group(e, name);
    if (g == nullptr) continue;
    for (const auto& [field, v] :
         std::map<std::string, double>(g->fields().begin(), g->fields().end())) {
      const bool usage = EndsWith(field, "_bw_usage_rate(%)");
      rows.push_back(
          {name, field,
           Cell(Num(v, 3), usage ? "num " + RuleClass("MEMORY_BW_USAGE_GOOD", v) : "num")});
    }
  }
  std::string out = rows.empty() ? Para("no Memory, MemoryL0 or MemoryUB group in this capture")
                                 : Table("metrics memory", {"group", "field", "value"}, rows);
  const evidence::FindingRule* rule = evidence::FindRule("MEMORY_BW_USAGE_GOOD");
  out += Para("*_bw_usage_rate(%) above " + Num(rule->threshold, 0) + " % is good; " +
                  std::string(rule->caveat) + ".",
              "note");
  return Section("memory", "Memory", out + NotApplied(e, "MEMORY_BW_USAGE_GOOD"));
}

std::string L2Class(double pct) {
  const std::string good = RuleClass("L2_HIT_RATE_GOOD", pct);
  return good.empty() ? RuleClass("L2_HIT_RATE_LOW", pct) : good;
}

std::string L2(const v1::Evidence& e) {
  std::map<std::string, double> merged;
  for (const auto& g : e.metrics()) merged.insert(g.fields().begin(), g.fields().end());
  std::map<std::string, evidence::L2Count> total;
  std::vector<std::vector<Cell>> rows;
  for (const auto& [key, c] : evidence::L2Counts(merged)) {
    const double pct = 100 * c.hit / (c.hit + c.miss);
    rows.push_back({key, Cell(Num(c.hit, 0), "num"), Cell(Num(c.miss, 0), "num"),
                    Cell(Num(pct, 2), "num " + L2Class(pct))});
    total[key.substr(0, 3)].hit += c.hit;
    total[key.substr(0, 3)].miss += c.miss;
  }
  for (const auto& [core, c] : total) {
    const double pct = 100 * c.hit / (c.hit + c.miss);
    rows.push_back({core + " total", Cell(Num(c.hit, 0), "num"), Cell(Num(c.miss, 0), "num"),
                    Cell(Num(pct, 2), "num " + L2Class(pct))});
  }
  std::string out = rows.empty()
                        ? Para("no L2 hit / miss counts in this capture")
                        : Table("metrics l2", {"L2 path", "hit", "miss", "hit rate %"}, rows);
  out += Para("hit rate above " + Num(RuleThreshold("L2_HIT_RATE_GOOD"), 0) + " % is good, below " +
                  Num(RuleThreshold("L2_HIT_RATE_LOW"), 0) + " % needs optimisation.",
              "note");
  return Section("l2", "L2 cache", out + NotApplied(e, "L2_HIT_RATE_GOOD"));
}

// The conflict rule of a ResourceConflictRatio column, or "".
std::string_view ConflictRule(const std::string& field) {
  if (EndsWith(field, "bankgroup_cflt_ratio")) return "CONFLICT_BANKGROUP_HIGH";
  if (EndsWith(field, "bank_cflt_ratio")) return "CONFLICT_BANK_HIGH";
  if (EndsWith(field, "resc_cflt_ratio")) return "CONFLICT_RESOURCE_HIGH";
  return "";
}

std::string Conflicts(const v1::Evidence& e) {
  std::vector<std::vector<Cell>> rows;
  if (const v1::MetricGroup* g = Group(e, "ResourceConflictRatio")) {
    for (const auto& [field, v] :
         std::map<std::string, double>(g->fields().begin(), g->fields().end())) {
      const std::string_view rule = ConflictRule(field);
      const bool ratio = EndsWith(field, "_ratio");
      const std::string css = rule.empty() || v < 0 ? "num" : "num " + RuleClass(rule, 100 * v);
      rows.push_back({field, Cell(ratio ? Num(100 * v, 2) + " %" : Num(v, 3), css),
                      Cell(rule.empty() ? "-" : "> " + Num(RuleThreshold(rule), 0) + " %", "num")});
    }
  }
  std::string out = rows.empty()
                        ? Para("no ResourceConflictRatio group in this capture")
                        : Table("metrics conflicts", {"field", "value", "not good above"}, rows);
  out += Para(std::string(evidence::FindRule("CONFLICT_BANK_HIGH")->caveat) + ".", "note");
  return Section("conflicts", "Resource conflicts", out);
}

std::string DvfsClass(const std::string& status) {
  if (status == "ok") return "good";
  return status == "suspect" ? "warning" : "hint";
}

std::string Dvfs(const v1::Evidence& e) {
  const auto& d = e.dvfs();
  std::string out = Table(
      "kv dvfs", {"state", "observed (MHz)", "rated (MHz)", "deviation %", "tolerance %", "source"},
      {{Cell(d.status().empty() ? "unknown" : d.status(), "dvfs-state " + DvfsClass(d.status())),
        Cell(Num(d.observed_mhz(), 0), "num"), Cell(Num(d.rated_mhz(), 0), "num"),
        Cell(Num(d.deviation_pct(), 2), "num"), Cell(Num(d.tolerance_pct(), 2), "num"),
        d.source()}});
  out += Para(std::string(evidence::FindRule("DVFS_CURRENT_BELOW_RATED")->caveat) + ".", "note");
  return Section("dvfs", "DVFS", out);
}

std::string Findings(const v1::Evidence& e) {
  std::vector<std::vector<Cell>> rows;
  for (const auto& f : e.findings()) {
    rows.push_back({Cell(f.severity(), "s-" + ClassName(f.severity())),
                    Cell(f.rule_id(), "rule-id"), f.field(),
                    Cell(Num(f.value(), 2) + " " + f.unit(), "num"),
                    f.comparison() + " " + Num(f.threshold(), 2) + " " + f.unit(), f.message(),
                    Cell(f.caveat(), "note")});
  }
  std::string out =
      rows.empty()
          ? Para("no finding fired")
          : Table("findings",
                  {"severity", "rule", "field", "value", "threshold", "meaning", "caveat"}, rows);
  std::vector<std::vector<Cell>> absent;
  for (const auto& n : e.findings_not_applied())
    absent.push_back({n.rule_id(), Cell(n.note(), "note")});
  if (!absent.empty())
    out += "<h3>Not applied</h3>\n" + Table("not-applied", {"rule", "why"}, absent);
  out += Para(std::string(evidence::kRoutingCaveat) + ".", "note");
  return Section("findings", "Findings", out);
}

std::string Provenance(const v1::Evidence& e) {
  const auto& f = e.fingerprint();
  std::string out = Table(
      "kv fingerprint",
      {"soc", "device", "host", "CANN", "msprof", "driver", "mode", "clock", "bundle"},
      {{f.soc(), std::to_string(f.device_id()), f.host(), f.cann_version(), f.msprof_version(),
        f.driver_version(), f.mode(), f.clock_state(), f.bundle_sha256().substr(0, 12)}});
  std::vector<std::vector<Cell>> problems;
  for (const auto& err : e.errors())
    problems.push_back({Cell("error", "critical"), err.code(), err.message()});
  for (const auto& w : e.warnings()) problems.push_back({Cell("warning", "warning"), "", w});
  if (!problems.empty()) out += Table("problems", {"kind", "code", "message"}, problems);
  return Section("provenance", "Fingerprint, errors and warnings", out);
}

}  // namespace

std::string MemoryTables(const v1::Evidence& e) { return Memory(e) + L2(e) + Conflicts(e); }

std::string DvfsAndFindings(const v1::Evidence& e) { return Dvfs(e) + Findings(e) + Provenance(e); }

}  // namespace npuperf::report::internal
