#include "common/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "common/version.h"

namespace npuperf {
namespace {

std::string ReadAll(const char* path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

prometheus::MetricFamily Family(const std::string& name, const std::string& help,
                                prometheus::MetricType type, double value) {
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return prometheus::MetricFamily{name, help, type, {m}};
}

prometheus::MetricFamily Gauge(const std::string& name, const std::string& help, double value) {
  return Family(name, help, prometheus::MetricType::Gauge, value);
}

// Entries of /proc/self/fd, less the one opendir holds; -1 when unreadable.
int OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;
}

prometheus::MetricFamily BuildInfo() {
  prometheus::ClientMetric m;
  m.label = {{"version", std::string(Version())}, {"commit", std::string(Commit())}};
  m.gauge.value = 1;
  return prometheus::MetricFamily{"npuperf_build_info",
                                  "1, labelled with the release and commit of this binary",
                                  prometheus::MetricType::Gauge,
                                  {m}};
}

}  // namespace

bool ParseProcStat(const std::string& text, long ticks_per_second, ProcStat* out) {
  const size_t close = text.rfind(')');
  if (close == std::string::npos || ticks_per_second <= 0) return false;
  // After ")": field 3 (state) onward; utime is field 14, stime 15,
  // starttime 22, vsize 23, rss 24.
  std::istringstream in(text.substr(close + 1));
  std::vector<std::string> f;
  for (std::string w; in >> w;) f.push_back(w);
  if (f.size() < 22) return false;
  try {
    const double ticks = static_cast<double>(ticks_per_second);
    out->cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / ticks;
    out->start_seconds_since_boot = std::stod(f[19]) / ticks;
    out->vsize_bytes = std::stod(f[20]);
    out->rss_pages = std::stod(f[21]);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

double ParseBootTime(const std::string& proc_stat) {
  std::istringstream in(proc_stat);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) {
      try {
        return std::stod(line.substr(6));
      } catch (const std::exception&) {
        return -1;
      }
    }
  }
  return -1;
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  out.push_back(BuildInfo());
  ProcStat st;
  if (ParseProcStat(ReadAll("/proc/self/stat"), sysconf(_SC_CLK_TCK), &st)) {
    out.push_back(Family("process_cpu_seconds_total", "User and system CPU time spent in seconds",
                         prometheus::MetricType::Counter, st.cpu_seconds));
    out.push_back(Gauge("process_resident_memory_bytes", "Resident memory size in bytes",
                        st.rss_pages * static_cast<double>(sysconf(_SC_PAGESIZE))));
    out.push_back(
        Gauge("process_virtual_memory_bytes", "Virtual memory size in bytes", st.vsize_bytes));
    const double boot = ParseBootTime(ReadAll("/proc/stat"));
    if (boot >= 0) {
      out.push_back(Gauge("process_start_time_seconds",
                          "Start time of the process since the Unix epoch in seconds",
                          boot + st.start_seconds_since_boot));
    }
  }
  if (const int fds = OpenFds(); fds >= 0) {
    out.push_back(Gauge("process_open_fds", "Number of open file descriptors", fds));
  }
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    out.push_back(Gauge("process_max_fds", "Maximum number of open file descriptors",
                        static_cast<double>(lim.rlim_cur)));
  }
  return out;
}

}  // namespace npuperf
