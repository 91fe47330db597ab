#include "tests/bench/fleet/job_log.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace npuperf::fleet {

int64_t JobLog::Leased(int device, Clock::MonotonicTime at, double call_ms) {
  running_.fetch_add(1);
  absl::MutexLock lock(&mu_);
  records_.push_back({device, at, at, call_ms, false});
  return static_cast<int64_t>(records_.size()) - 1;
}

void JobLog::Freed(int64_t id, Clock::MonotonicTime at) {
  running_.fetch_sub(1);
  absl::MutexLock lock(&mu_);
  Record& r = records_[static_cast<size_t>(id)];
  r.freed = at;
  r.done = true;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

WindowFigures JobLog::Window(Clock::MonotonicTime from, Clock::MonotonicTime to) const {
  WindowFigures f;
  f.seconds = SecondsBetween(from, to);
  double busy = 0;
  std::map<int, std::vector<const Record*>> by_device;
  std::vector<double> calls;
  absl::MutexLock lock(&mu_);
  for (const Record& r : records_) {
    if (r.leased >= from && r.leased <= to) calls.push_back(r.call_ms);
    const Clock::MonotonicTime end = r.done ? r.freed : to;
    const Clock::MonotonicTime a = std::max(r.leased, from);
    const Clock::MonotonicTime b = std::min(end, to);
    if (b > a) busy += SecondsBetween(a, b);
    if (r.done && r.freed >= from && r.freed <= to) ++f.jobs_done;
    by_device[r.device].push_back(&r);
  }
  std::vector<double> gaps;
  for (auto& [device, jobs] : by_device) {
    std::sort(jobs.begin(), jobs.end(),
              [](const Record* x, const Record* y) { return x->leased < y->leased; });
    for (size_t i = 1; i < jobs.size(); ++i) {
      const Record& prev = *jobs[i - 1];
      const Record& next = *jobs[i];
      if (!prev.done || next.leased < from || next.leased > to) continue;
      gaps.push_back(1e3 * SecondsBetween(prev.freed, next.leased));
    }
  }
  if (f.seconds > 0) {
    f.jobs_per_s = static_cast<double>(f.jobs_done) / f.seconds;
    f.utilisation = busy / (f.seconds * devices_);
  }
  f.idle_gaps = static_cast<int64_t>(gaps.size());
  f.idle_p50_ms = Percentile(gaps, 50);
  f.idle_p99_ms = Percentile(gaps, 99);
  f.idle_max_ms = Percentile(gaps, 100);
  f.lease_p50_ms = Percentile(calls, 50);
  f.lease_p99_ms = Percentile(calls, 99);
  return f;
}

}  // namespace npuperf::fleet
