#include "tests/bench/fleet/host_stats.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace npuperf::fleet {
namespace {

// The fields of /proc/<pid>/stat, field n of proc(5) at [n - 1] (pid and
// comm left empty: comm may hold spaces); empty when the process is gone.
std::vector<std::string> StatFields(int pid) {
  // read(2), not a stream: a backend that exits meanwhile fails the read
  // with ESRCH, which libstdc++ streams throw.
  const int fd = open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[2048];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return {};
  const std::string stat(buf, static_cast<size_t>(n));
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::vector<std::string> fields = {"", ""};  // pid and comm
  std::istringstream rest(stat.substr(close + 2));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

double Ticks(const std::vector<std::string>& f, size_t field) {
  double v = 0;
  return field - 1 < f.size() && absl::SimpleAtod(f[field - 1], &v) ? v : 0;
}

double TickSeconds(double ticks) { return ticks / static_cast<double>(sysconf(_SC_CLK_TCK)); }

std::vector<int> ChildrenOf(int parent) {
  std::vector<int> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    int pid = 0;
    if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
    const auto f = StatFields(pid);
    if (f.size() > 4 && f[3] == std::to_string(parent)) out.push_back(pid);
  }
  closedir(d);
  return out;
}

// psql's unaligned rows of one query, fields split at the first `fields - 1`
// '|' (the last field may hold '|'); empty on failure.
std::vector<std::vector<std::string>> PsqlRows(const std::string& url, const std::string& sql,
                                               int fields = 1) {
  const std::string cmd = "psql '" + url + "' -qAt -F '|' -c \"" + sql + "\" 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {};
  std::vector<std::vector<std::string>> rows;
  char buf[8192];
  while (fgets(buf, sizeof buf, p) != nullptr) {
    absl::string_view line = absl::StripTrailingAsciiWhitespace(buf);
    if (!line.empty()) rows.push_back(absl::StrSplit(line, absl::MaxSplits('|', fields - 1)));
  }
  pclose(p);
  return rows;
}

}  // namespace

double ProcessCpuSeconds(int pid, bool with_children) {
  const auto f = StatFields(pid);
  double ticks = Ticks(f, 14) + Ticks(f, 15);
  if (with_children) {
    ticks += Ticks(f, 16) + Ticks(f, 17);
    for (int child : ChildrenOf(pid)) {
      const auto c = StatFields(child);
      ticks += Ticks(c, 14) + Ticks(c, 15);
    }
  }
  return TickSeconds(ticks);
}

double SelfCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

MachineCpu ReadMachineCpu() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  MachineCpu m;
  in >> cpu;
  double v = 0;
  for (int i = 0; i < 8 && in >> v; ++i) {
    m.total += v;
    if (i != 3 && i != 4) m.busy += v;  // idle and iowait
  }
  m.busy = TickSeconds(m.busy);
  m.total = TickSeconds(m.total);
  return m;
}

int PostmasterPid(const std::string& url) {
  const auto rows = PsqlRows(url, "SHOW data_directory");
  if (rows.empty() || rows[0].empty()) return -1;
  std::ifstream pidfile(rows[0][0] + "/postmaster.pid");
  int pid = -1;
  pidfile >> pid;
  return pid;
}

bool ResetStatements(const std::string& url) {
  (void)PsqlRows(url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  return !PsqlRows(url, "SELECT 1 FROM pg_stat_statements_reset()").empty();
}

std::vector<Statement> TopStatements(const std::string& url, int n) {
  std::vector<Statement> out;
  const std::string sql =
      "SELECT calls, total_exec_time, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) "
      "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = "
      "current_database()) ORDER BY total_exec_time DESC" +
      (n > 0 ? " LIMIT " + std::to_string(n) : std::string());
  for (const auto& row : PsqlRows(url, sql, 3)) {
    Statement st;
    if (row.size() != 3 || !absl::SimpleAtod(row[0], &st.calls) ||
        !absl::SimpleAtod(row[1], &st.total_ms)) {
      continue;
    }
    st.query = row[2];
    out.push_back(std::move(st));
  }
  return out;
}

std::map<std::string, double> ParseScrape(const std::string& text) {
  std::map<std::string, double> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == absl::string_view::npos) continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(space + 1), &v)) out[std::string(line.substr(0, space))] = v;
  }
  return out;
}

std::map<std::string, double> Delta(const std::map<std::string, double>& a,
                                    const std::map<std::string, double>& b) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : b) {
    auto it = a.find(k);
    out[k] = v - (it == a.end() ? 0 : it->second);
  }
  return out;
}

double HistogramQuantile(const std::map<std::string, double>& series, const std::string& name,
                         double q) {
  const std::string prefix = name + "_bucket{le=\"";
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
  for (auto it = series.lower_bound(prefix); it != series.end(); ++it) {
    if (it->first.rfind(prefix, 0) != 0) break;
    std::string le = it->first.substr(prefix.size());
    le = le.substr(0, le.find('"'));
    double bound = 0;
    if (le == "+Inf")
      bound = 1e300;
    else if (!absl::SimpleAtod(le, &bound))
      continue;
    buckets.emplace_back(bound, it->second);
  }
  std::sort(buckets.begin(), buckets.end());
  if (buckets.empty() || buckets.back().second <= 0) return 0;
  const double want = q * buckets.back().second;
  for (const auto& [bound, count] : buckets) {
    if (count >= want) return bound;
  }
  return buckets.back().first;
}

}  // namespace npuperf::fleet
