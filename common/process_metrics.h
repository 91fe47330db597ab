#pragma once

#include <string>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace npuperf {

// The process and build metrics both daemons export (prometheus-cpp has no
// process collector). Collect() reads /proc/self at each scrape:
//   process_cpu_seconds_total          counter  user + system CPU time
//   process_resident_memory_bytes      gauge    RSS
//   process_virtual_memory_bytes       gauge    VSZ
//   process_open_fds                   gauge    entries of /proc/self/fd
//   process_max_fds                    gauge    soft RLIMIT_NOFILE
//   process_start_time_seconds         gauge    start, seconds since the epoch
//   npuperf_build_info{version,commit} gauge    1 (common/version.h)
// A value /proc cannot give is left out of the scrape, never made up.
// Thread-safe (no state).
class ProcessCollector final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;
};

// The fields of /proc/self/stat and /proc/stat the collector uses; parsed
// apart from reading so that tests can feed text.
struct ProcStat {
  double cpu_seconds = 0;
  double start_seconds_since_boot = 0;
  double vsize_bytes = 0;
  double rss_pages = 0;
};

// Parses one /proc/<pid>/stat line (the command may hold spaces and
// parentheses: fields are counted after the last ')'). false: malformed.
bool ParseProcStat(const std::string& text, long ticks_per_second, ProcStat* out);

// The boot time ("btime N") of /proc/stat text; -1 when absent.
double ParseBootTime(const std::string& proc_stat);

}  // namespace npuperf
