// The corpus test (issue 15): every fixture under testdata/ (simulated and
// the public real captures of testdata/real/, provenance in
// testdata/README.md and testdata/real/PROVENANCE.md). For each, the figures
// the library reports are compared with values this file computes itself
// from the CSV files, with its own small CSV splitter: nothing here calls the
// library's parsing code to get the expected numbers.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "evidence/discovery.h"
#include "evidence/evidence.h"
#include "evidence/launch.h"
#include "evidence/opprof.h"
#include "evidence/task_time.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TestData;

enum class Kind { kTable, kTaskTime, kOpprof };
struct Fixture {
  std::string dir;  // under testdata/
  Kind kind;
};

// Every fixture directory; CorpusTest.EveryFixtureIsListed fails when one is added and not here.
const std::vector<Fixture>& Fixtures() {
  static const auto* f = new std::vector<Fixture>{
      {"group_a2_e2", Kind::kTable},
      {"group_aiv_partial", Kind::kTable},
      {"group_dup", Kind::kTable},
      {"quick_mix", Kind::kTaskTime},
      {"quick_api_only", Kind::kTaskTime},
      {"opprof_official", Kind::kOpprof},
      {"opprof_vector", Kind::kOpprof},
      {"real/as_strided_cann7", Kind::kTable},
      {"real/as_strided_pre8", Kind::kTable},
      {"real/torch_level1", Kind::kTable},
      {"real/cann9_opprof_950", Kind::kOpprof},
      {"real/helix_cann85_matmul", Kind::kTable},
  };
  return *f;
}

// --- an independent CSV reader: RFC 4180 quotes, BOM, CR, trailing TABs ---
using Row = std::map<std::string, std::string>;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\t' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == '\t' || s[i] == ' ')) ++i;
  return s.substr(i);
}

std::vector<std::string> SplitLine(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  for (auto& c : cells) c = Trim(c);
  return cells;
}

std::vector<Row> ReadCsv(const fs::path& p) {
  std::string text = ReadFile(p);
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text = text.substr(3);
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    if (Trim(line).empty()) continue;
    std::vector<std::string> cells = SplitLine(line);
    if (header.empty()) {
      header = cells;
      continue;
    }
    Row r;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) r[header[i]] = cells[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

std::optional<double> Num(const Row& r, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = r.find(n);
    if (it == r.end() || it->second.empty() || it->second == "N/A" || it->second == "NA") continue;
    return std::stod(it->second);
  }
  return std::nullopt;
}

std::string Str(const Row& r, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = r.find(n);
    if (it != r.end()) return it->second;
  }
  return "";
}

// Files under `root` whose name starts with `prefix` and ends in .csv, sorted.
std::vector<fs::path> Find(const fs::path& root, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    std::string n = e.path().filename().string();
    if (e.is_regular_file() && n.rfind(prefix, 0) == 0 && e.path().extension() == ".csv")
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The main table of a table fixture: PipeUtilization's op_summary of a group
// (the first metric in the fixed order present), else the one op_summary or
// kernel_details.
fs::path MainTable(const fs::path& fixture) {
  std::vector<fs::path> t = Find(fixture, "kernel_details");
  if (!t.empty()) return t.front();
  for (const char* m : {"PROF_PipeUtilization", "PROF_ArithmeticUtilization", "PROF_Memory"}) {
    if (fs::is_directory(fixture / m)) return Find(fixture / m, "op_summary").front();
  }
  return Find(fixture, "op_summary").front();
}

struct Expected {
  int64_t count = 0;
  double total_us = 0;
  std::vector<std::pair<double, double>> start_and_duration;  // file order
  std::vector<double> aiv_time, aicore_time;                  // per row where present
};

// (name, type) -> what the rows say.
std::map<std::pair<std::string, std::string>, Expected> Group(const std::vector<Row>& rows) {
  std::map<std::pair<std::string, std::string>, Expected> out;
  for (const Row& r : rows) {
    std::string name = Str(r, {"Op Name", "Name"});
    if (name.empty()) continue;
    Expected& e = out[{name, Str(r, {"Task Type", "Accelerator Core"})}];
    double d = Num(r, {"Task Duration(us)", "Duration(us)"}).value_or(0);
    ++e.count;
    if (d > 0) e.total_us += d;
    e.start_and_duration.push_back(
        {Num(r, {"Task Start Time(us)", "Start Time(us)"}).value_or(0), d});
    if (auto v = Num(r, {"aiv_time(us)"})) e.aiv_time.push_back(*v);
    if (auto v = Num(r, {"aicore_time(us)"})) e.aicore_time.push_back(*v);
  }
  return out;
}

std::vector<double> InStartOrder(std::vector<std::pair<double, double>> v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<double> out;
  for (const auto& p : v) out.push_back(p.second);
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double TrimmedMean(std::vector<double> v) {
  if (v.size() == 1) return v[0];
  if (v.size() == 2) return (v[0] + v[1]) / 2;
  std::sort(v.begin(), v.end());
  return std::accumulate(v.begin() + 1, v.end() - 1, 0.0) / static_cast<double>(v.size() - 2);
}

TEST(CorpusTest, EveryFixtureIsListed) {
  std::set<std::string> listed, present;
  for (const Fixture& f : Fixtures()) listed.insert(f.dir);
  for (const char* parent : {"", "real"}) {
    for (const auto& e : fs::directory_iterator(TestData(parent))) {
      if (!e.is_directory() || e.path().filename() == "real") continue;
      present.insert((fs::path(parent) / e.path().filename()).relative_path().string());
    }
  }
  EXPECT_EQ(listed, present);
}

// Discovery over every table fixture: each (name, task type) with its row
// count and summed positive duration, as the rows say.
TEST(CorpusTest, DiscoveryMatchesTheRows) {
  for (const Fixture& f : Fixtures()) {
    if (f.kind != Kind::kTable) continue;
    SCOPED_TRACE(f.dir);
    auto expected = Group(ReadCsv(MainTable(TestData(f.dir))));
    ASSERT_FALSE(expected.empty());
    auto d = DiscoverCandidates(TestData(f.dir));
    ASSERT_TRUE(d.ok()) << d.status();
    ASSERT_EQ(d->candidates.size(), expected.size());
    for (const OpCandidate& c : d->candidates) {
      auto it = expected.find({c.op_name, c.task_type});
      ASSERT_NE(it, expected.end()) << c.op_name << " " << c.task_type;
      EXPECT_EQ(c.count, it->second.count) << c.op_name;
      EXPECT_NEAR(c.total_duration_us, it->second.total_us, 1e-6) << c.op_name;
      EXPECT_EQ(c.launches.size(), static_cast<size_t>(it->second.count)) << c.op_name;
    }
  }
}

// The evidence of the five longest kernels of every table fixture, every
// launch kept (`--launch all`): one duration sample per launch in start
// order, their trimmed mean, and the core time as the median over launches.
TEST(CorpusTest, EvidenceOfEveryLongKernelMatchesTheRows) {
  auto all = ParseLaunchSelector("all");
  ASSERT_TRUE(all.ok());
  for (const Fixture& f : Fixtures()) {
    if (f.kind != Kind::kTable) continue;
    auto expected = Group(ReadCsv(MainTable(TestData(f.dir))));
    std::map<std::string, int> types_of_name;
    for (const auto& [key, e] : expected) ++types_of_name[key.first];
    std::vector<std::pair<double, std::string>> longest;
    for (const auto& [key, e] : expected) {
      if (types_of_name[key.first] == 1 && e.total_us > 0)
        longest.push_back({e.total_us, key.first});
    }
    std::sort(longest.rbegin(), longest.rend());
    if (longest.size() > 5) longest.resize(5);
    EXPECT_FALSE(longest.empty()) << f.dir;
    for (const auto& [total, name] : longest) {
      SCOPED_TRACE(f.dir + " " + name);
      const Expected* e = nullptr;
      for (const auto& [key, value] : expected) {
        if (key.first == name) e = &value;
      }
      BuildOptions o;
      o.op_name = name;
      o.launch = *all;
      auto ev = BuildEvidence(TestData(f.dir), o);
      ASSERT_TRUE(ev.ok()) << ev.status();
      std::vector<double> durations = InStartOrder(e->start_and_duration);
      ASSERT_EQ(ev->duration.samples_us.size(), durations.size());
      for (size_t i = 0; i < durations.size(); ++i) {
        EXPECT_DOUBLE_EQ(ev->duration.samples_us[i], durations[i]) << i;
      }
      EXPECT_NEAR(ev->duration.aggregate_us, TrimmedMean(durations), 1e-9);
      if (e->aiv_time.size() == durations.size()) {
        EXPECT_NEAR(ev->aiv_time_us, Median(e->aiv_time), 1e-9);
      }
      if (e->aicore_time.size() == durations.size()) {
        EXPECT_NEAR(ev->aicore_time_us, Median(e->aicore_time), 1e-9);
      }
    }
  }
}

// Quick timing of every task_time fixture: per kernel its task_time(us)
// values in task_start order and their trimmed mean; with no kernel row, the
// api_statistic node/launch Avg(us).
TEST(CorpusTest, QuickTimingMatchesTheRows) {
  auto all = ParseLaunchSelector("all");
  ASSERT_TRUE(all.ok());
  for (const Fixture& f : Fixtures()) {
    if (f.kind != Kind::kTaskTime) continue;
    SCOPED_TRACE(f.dir);
    std::map<std::string, std::vector<std::pair<double, double>>> kernels;
    for (const Row& r : ReadCsv(Find(TestData(f.dir), "task_time").front())) {
      std::string name = Str(r, {"kernel_name"});
      std::string type = Str(r, {"kernel_type"});
      double d = Num(r, {"task_time(us)"}).value_or(0);
      if (name.empty() || name == "N/A" || type.empty() || type == "PROFILING_ENABLE" ||
          type == "PROFILING_DISABLE" || type == "TASK_TIMEOUT_SET" || d <= 0)
        continue;
      kernels[name].push_back({Num(r, {"task_start(us)"}).value_or(0), d});
    }
    if (kernels.empty()) {
      double avg = -1;
      for (const Row& r : ReadCsv(Find(TestData(f.dir), "api_statistic").front())) {
        if (Str(r, {"Level"}) == "node" && Str(r, {"API Name"}) == "launch")
          avg = *Num(r, {"Avg(us)"});
      }
      auto t = ReadQuickTiming(TestData(f.dir), "");
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(Name(t->source), "api_statistic.node.launch");
      EXPECT_DOUBLE_EQ(t->aggregate_us, avg);
      continue;
    }
    for (const auto& [name, launches] : kernels) {
      SCOPED_TRACE(name + " x" + std::to_string(launches.size()));
      auto t = ReadQuickTiming(TestData(f.dir), name, *all);
      ASSERT_TRUE(t.ok()) << name << ": " << t.status();
      std::vector<double> d = InStartOrder(launches);
      EXPECT_EQ(t->launches_us, d) << name;
      EXPECT_NEAR(t->aggregate_us, TrimmedMean(d), 1e-9) << name;
    }
  }
}

// msprof op fixtures: Task Duration and Current/Rated Freq of OpBasicInfo
// (or CANN 9.x summary.jsonl), the longest block time of PipeUtilization.
TEST(CorpusTest, OpprofFiguresMatchTheFiles) {
  for (const Fixture& f : Fixtures()) {
    if (f.kind != Kind::kOpprof) continue;
    SCOPED_TRACE(f.dir);
    const fs::path root = TestData(f.dir);
    std::optional<double> duration, current, rated;
    std::vector<fs::path> basic = Find(root, "OpBasicInfo");
    if (!basic.empty()) {
      Row r = ReadCsv(basic.front()).at(0);
      duration = Num(r, {"Task Duration(us)"});
      current = Num(r, {"Current Freq"});
      rated = Num(r, {"Rated Freq"});
    } else {
      std::string text = ReadFile(root / "summary.jsonl");
      std::smatch m;
      auto field = [&](const std::string& key) -> std::optional<double> {
        std::regex re("\"" + key + "\"\\s*:\\s*\"?([0-9.]+)");
        if (std::regex_search(text, m, re)) return std::stod(m[1]);
        return std::nullopt;
      };
      duration = field("Task Duration\\(us\\)");
      current = field("Current Freq");
      rated = field("Rated Freq");
    }
    double longest = 0;
    for (const Row& r : ReadCsv(Find(root, "PipeUtilization").front())) {
      longest = std::max(
          {longest, Num(r, {"aic_time(us)"}).value_or(0), Num(r, {"aiv_time(us)"}).value_or(0)});
    }
    auto runs = ReadOpprofLaunches(root);
    ASSERT_TRUE(runs.ok()) << runs.status();
    ASSERT_EQ(runs->size(), 1u);
    const OpprofSummary& s = runs->front();
    ASSERT_TRUE(s.basic.has_value());
    ASSERT_TRUE(duration.has_value());
    EXPECT_DOUBLE_EQ(s.basic->task_duration_us, *duration);
    EXPECT_EQ(s.basic->current_freq_mhz, current);
    EXPECT_EQ(s.basic->rated_freq_mhz, rated);
    EXPECT_DOUBLE_EQ(s.max_core_time_us, longest);
  }
}

}  // namespace
}  // namespace npuperf::evidence
