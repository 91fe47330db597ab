// Evidence over several repeats (standard mode) and quick-mode evidence.
#include "evidence/evidence.h"
#include "evidence/golden.h"
#include "evidence/str_util.h"
#include "evidence/task_time.h"

namespace npuperf::evidence {

using internal::Cat;

Evidence CombineRepeats(std::vector<Evidence> repeats) {
  Evidence out = std::move(repeats.front());
  std::vector<double> samples = out.duration.samples_us;
  // Core samples pair with the duration samples: kept only when every repeat
  // has one per duration sample.
  std::vector<double> core = out.duration.core_samples_us;
  bool core_complete = core.size() == samples.size();
  for (size_t i = 1; i < repeats.size(); ++i) {
    const Evidence& r = repeats[i];
    samples.insert(samples.end(), r.duration.samples_us.begin(), r.duration.samples_us.end());
    core_complete =
        core_complete && r.duration.core_samples_us.size() == r.duration.samples_us.size();
    if (core_complete) {
      core.insert(core.end(), r.duration.core_samples_us.begin(), r.duration.core_samples_us.end());
    }
    for (const EvidenceError& e : r.errors) {
      out.errors.push_back({e.code, Cat("repeat ", i + 1, ": ", e.message)});
    }
    for (const std::string& w : r.warnings) out.warnings.push_back(Cat("repeat ", i + 1, ": ", w));
  }
  Aggregate agg = AggregateSamples(samples);
  out.duration.samples_us = std::move(samples);
  out.duration.core_samples_us = core_complete ? std::move(core) : std::vector<double>();
  out.duration.aggregate_us = agg.value;
  out.duration.method = agg.method;
  if (out.golden.status != GoldenStatus::kNotProvided) {
    out.golden = ComputeGoldenRatio(out.golden.golden_us, out.duration.aggregate_us);
  }
  ApplyRoofline(&out, out.roofline.attestation);
  return out;
}

Evidence QuickEvidence(const std::vector<KernelTiming>& repeats,
                       std::optional<double> golden_per_iteration_us) {
  Evidence ev;
  const KernelTiming& first = repeats.front();
  ev.op_name = first.kernel_name;
  ev.task_type = first.kernel_type;
  std::vector<double> samples;
  for (size_t i = 0; i < repeats.size(); ++i) {
    const KernelTiming& t = repeats[i];
    samples.insert(samples.end(), t.launches_us.begin(), t.launches_us.end());
    for (const std::string& w : t.warnings) {
      ev.warnings.push_back(repeats.size() > 1 ? Cat("repeat ", i + 1, ": ", w) : w);
    }
  }
  Aggregate agg = AggregateSamples(samples);
  ev.duration.samples_us = samples;
  ev.duration.aggregate_us = agg.value;
  ev.duration.method = agg.method;
  ev.duration.source = first.source;
  ev.task_duration_us = agg.value;
  ev.launch.selector = first.selector;
  ev.launch.total = static_cast<int>(first.launches.size());
  for (size_t u : first.used) ev.launch.used.push_back(first.launches[u]);
  ev.seven_metric_status = SevenMetricStatus::kNotCollected;
  ev.per_core.status = PerCoreStatus::kNotCollected;
  ev.per_core_secondary.status = PerCoreStatus::kNotCollected;
  ev.head_overhead_note = "quick mode: no core time";
  ev.golden = ComputeGoldenRatio(golden_per_iteration_us, agg.value);
  if (!first.files.empty()) ev.prof_group = first.files.front().parent_path();
  ApplyRoofline(&ev, std::nullopt);  // quick mode: no counters, insufficient_evidence
  return ev;
}

}  // namespace npuperf::evidence
