// RenderMarkdown (declared in summary_text.h): the evidence as Markdown tables.
#include <cstdio>

#include "evidence/findings.h"
#include "evidence/str_util.h"
#include "evidence/summary_text.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;

std::string Num(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

void PerCoreRow(const PerCore& p, std::string* md) {
  if (!p.ok()) {
    *md += Cat("| ", Name(p.core_type), " | ", StatusText(p), " | | | | | |\n");
    return;
  }
  *md += Cat("| ", Name(p.core_type), " (device ", p.device_id, ") | ", StatusText(p), " | ",
             p.cores.size(), " | ", Num(p.freq_ghz), " | ", Num(p.min_us), " / ", Num(p.avg_us),
             " / ", Num(p.max_us), " | ", Num(p.spread_pct, 2), "% | ", Name(p.verdict), " |\n");
}

}  // namespace

std::string RenderMarkdown(const Evidence& ev) {
  std::string md = Cat("# Evidence: `", ev.op_name, "`\n\n");
  md += Cat("- OP Type: ", ev.op_type, "\n- Task Type: ", ev.task_type,
            "\n- Block Num: ", ev.block_num, " (mix ", ev.mix_block_num,
            ")\n- Task Duration: ", ShortNumber(ev.task_duration_us),
            " us\n- Seven-metric status: ", Name(ev.seven_metric_status), "\n");
  if (!ev.missing_metrics.empty()) {
    md += "- Missing metrics:";
    for (const std::string& m : ev.missing_metrics) md += Cat(" ", m);
    md += "\n";
  }
  md += "\n## Timing\n\n| figure | value |\n|---|---|\n";
  md += Cat("| aicore_time (us) | ", Num(ev.aicore_time_us), " |\n");
  md += Cat("| aiv_time (us) | ", Num(ev.aiv_time_us), " |\n");
  md += Cat("| head overhead (us) | ", Num(ev.head_overhead_us), " (", Num(ev.head_overhead_pct, 1),
            "%) |\n");
  md += Cat("| cube utilization (%) | ", Num(ev.cube_utilization_pct), " |\n");
  md += "\n## Bound (ratio-derived; pipeline overlap unverified)\n\n";
  md += Cat("| primary core | pipe bound | routing label | triggered |\n|---|---|---|---|\n| ",
            LowerName(ev.bound.primary_core), " | ", Name(ev.bound.label), " | ",
            Name(ev.bound.routing_label), " | ");
  for (RatioFamily f : ev.bound.triggered_families) md += Cat(Name(f), " ");
  md += "|\n\n## Per-core (process-scoped)\n\n";
  md +=
      "| core type | status | cores | clock (GHz) | min / avg / max (us) | spread | verdict |\n"
      "|---|---|---|---|---|---|---|\n";
  PerCoreRow(ev.per_core, &md);
  PerCoreRow(ev.per_core_secondary, &md);
  md += Cat("\n## DVFS\n\n- status: ", Name(ev.dvfs.status), " (observed ",
            Num(ev.dvfs.observed_mhz, 1), " MHz, rated ", Num(ev.dvfs.rated_mhz, 1),
            " MHz, source ", Name(ev.dvfs.source), ")\n");
  md += FindingsMarkdown(EvaluateFindings(ev));
  md += "\n## Metrics\n\n| group | field | value |\n|---|---|---|\n";
  for (const MetricGroup& g : ev.metrics) {
    for (const auto& [name, v] : g.fields)
      md += Cat("| ", g.group, " | ", name, " | ", ShortNumber(v), " |\n");
  }
  if (!ev.errors.empty()) {
    md += "\n## Errors\n\n";
    for (const EvidenceError& e : ev.errors) md += Cat("- `", e.code, "` ", e.message, "\n");
  }
  return md;
}

}  // namespace npuperf::evidence
