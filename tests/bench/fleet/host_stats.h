#pragma once

#include <map>
#include <string>
#include <vector>

namespace npuperf::fleet {

// CPU seconds (utime + stime, /proc/<pid>/stat) of a process; with
// children, also of its reaped children (cutime + cstime) and of its live
// children: a PostgreSQL postmaster and its backends.
double ProcessCpuSeconds(int pid, bool with_children = false);
// CPU seconds of this process (getrusage).
double SelfCpuSeconds();

// The machine's CPU time, busy and total, in seconds (/proc/stat).
struct MachineCpu {
  double busy = 0;
  double total = 0;
};
MachineCpu ReadMachineCpu();

// The postmaster pid of the PostgreSQL server at url (SHOW data_directory
// through psql, then its postmaster.pid); -1 when unknown.
int PostmasterPid(const std::string& url);

// One normalised statement of pg_stat_statements: how often it ran and its
// execution time (ms, planning not included).
struct Statement {
  double calls = 0;
  double total_ms = 0;
  std::string query;  // whitespace collapsed
};
// pg_stat_statements of the database at url, through psql: Reset empties it
// (false when the extension is not loaded: deploy/with-postgres.sh loads it
// with NPUPERF_PG_STATEMENTS=1); Top returns the n statements of the most
// execution time, most first (all with n = 0; empty when unavailable).
bool ResetStatements(const std::string& url);
std::vector<Statement> TopStatements(const std::string& url, int n);

// A Prometheus text scrape as series -> value ("name{labels}" as written).
std::map<std::string, double> ParseScrape(const std::string& text);
// b - a for every series of b.
std::map<std::string, double> Delta(const std::map<std::string, double>& a,
                                    const std::map<std::string, double>& b);
// The q-quantile (0..1) of a histogram `name` in a scrape (or a delta of
// two): the upper bound of the first bucket holding it; 0 without samples.
double HistogramQuantile(const std::map<std::string, double>& series, const std::string& name,
                         double q);

}  // namespace npuperf::fleet
