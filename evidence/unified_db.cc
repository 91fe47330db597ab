#include "evidence/unified_db.h"

#include <algorithm>
#include <climits>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include <SQLiteCpp/SQLiteCpp.h>

#include "evidence/columns.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;
using Db = SQLite::Database;

// Launches whose PMU rows are fetched by one IN (...) query.
constexpr size_t kPmuChunk = 500;
// Launches kept per discovery candidate (FormatCandidatesTsv shows eight).
constexpr int kCandidateLaunches = 8;

absl::Status SqlError(const fs::path& db, const std::exception& e) {
  return absl::InternalError(Cat(db.string(), ": SQLite: ", e.what()));
}

absl::StatusOr<std::unique_ptr<Db>> Open(const fs::path& db) {
  try {
    return std::make_unique<Db>(db.string(), SQLite::OPEN_READONLY);
  } catch (const std::exception& e) {
    return SqlError(db, e);
  }
}

std::set<std::string> ColumnsOf(Db& db, const std::string& table) {
  std::set<std::string> out;
  SQLite::Statement q(db, Cat("PRAGMA table_info(", table, ")"));
  while (q.executeStep()) out.insert(q.getColumn(1).getString());
  return out;
}

// The first of `names` that `cols` has, else "0" (the SQL for "absent").
std::string Pick(const std::set<std::string>& cols, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (cols.count(n)) return Cat("c.", n);
  }
  return "NULL";
}

absl::Status RequireTables(Db& db, const fs::path& path) {
  for (const char* t : {"TASK", "COMPUTE_TASK_INFO", "STRING_IDS"}) {
    if (!db.tableExists(t)) {
      return absl::FailedPreconditionError(
          Cat(path.string(), " has no ", t,
              " table: not a unified msprof db with compute tasks (msprof --type=db at task-time "
              "level1 writes TASK, COMPUTE_TASK_INFO and STRING_IDS)"));
    }
  }
  return absl::OkStatus();
}

std::string Str(const SQLite::Column& c) { return c.isNull() ? std::string() : c.getString(); }

// The string of STRING_IDS `id` as a scalar subquery.
std::string S(const std::string& expr) {
  return Cat("(SELECT value FROM STRING_IDS WHERE id = ", expr, ")");
}

std::string ResolvedType(const std::string& compute, const std::string& task) {
  if (!compute.empty() && compute != "N/A") return compute;
  return NormalizeTaskType(task);
}

// One launch of the target as the db holds it.
struct DbRow {
  OpRow identity;
  LaunchInfo launch;
  int64_t global_task_id = 0;
};

std::string LaunchQuery(Db& db) {
  std::set<std::string> c = ColumnsOf(db, "COMPUTE_TASK_INFO");
  return Cat("SELECT t.startNs, t.endNs, t.streamId, t.taskId, t.globalTaskId, ", S("t.taskType"),
             ", ", Pick(c, {"blockNum", "blockDim"}), ", ", Pick(c, {"mixBlockNum", "mixBlockDim"}),
             ", ", S("c.taskType"), ", ", S("c.opType"), ", ", S("c.inputShapes"), ", ",
             S("c.inputDataTypes"), ", ", S("c.inputFormats"),
             " FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId"
             " WHERE c.name IN (SELECT id FROM STRING_IDS WHERE value = ?)"
             " ORDER BY t.startNs, t.globalTaskId");
}

DbRow RowOf(SQLite::Statement& q, const fs::path& db, std::string_view op_name) {
  DbRow r;
  int64_t start = q.getColumn(0).getInt64(), end = q.getColumn(1).getInt64();
  r.global_task_id = q.getColumn(4).getInt64();
  r.launch.start_ns = start;
  r.launch.start_us = static_cast<double>(start) / 1000.0;
  r.launch.duration_us = static_cast<double>(end - start) / 1000.0;
  if (!q.getColumn(2).isNull()) r.launch.stream_id = q.getColumn(2).getInt64();
  if (!q.getColumn(3).isNull()) r.launch.task_id = q.getColumn(3).getInt64();
  r.launch.where = Cat(db.filename().string(), " globalTaskId ", r.global_task_id);
  OpRow& o = r.identity;
  o.op_name = std::string(op_name);
  o.task_type = ResolvedType(Str(q.getColumn(8)), Str(q.getColumn(5)));
  if (!q.getColumn(6).isNull()) o.block_num = q.getColumn(6).getInt64();
  if (!q.getColumn(7).isNull()) o.mix_block_num = q.getColumn(7).getInt64();
  o.op_type = Str(q.getColumn(9));
  o.input_shapes = Str(q.getColumn(10));
  o.input_data_types = Str(q.getColumn(11));
  o.input_formats = Str(q.getColumn(12));
  o.task_duration_us = r.launch.duration_us;
  o.file = db;
  o.line = static_cast<size_t>(r.global_task_id);
  return r;
}

// globalTaskId -> its metrics (op_summary names, table order), for `ids`.
using PmuRows = std::map<int64_t, std::vector<std::pair<std::string, double>>>;

void ReadPmu(Db& db, const std::vector<int64_t>& ids, PmuRows* out) {
  if (!db.tableExists("TASK_PMU_INFO")) return;
  std::map<int64_t, std::string> names;  // STRING_IDS id -> op_summary name
  for (size_t at = 0; at < ids.size(); at += kPmuChunk) {
    std::string in;
    for (size_t i = at; i < ids.size() && i < at + kPmuChunk; ++i)
      in += Cat(i == at ? "" : ",", ids[i]);
    SQLite::Statement q(db, Cat("SELECT globalTaskId, name, value FROM TASK_PMU_INFO WHERE "
                                "globalTaskId IN (",
                                in, ") ORDER BY rowid"));
    while (q.executeStep()) {
      if (q.getColumn(2).isNull()) continue;  // N/A
      int64_t name = q.getColumn(1).getInt64();
      auto it = names.find(name);
      if (it == names.end()) {
        SQLite::Statement s(db, "SELECT value FROM STRING_IDS WHERE id = ?");
        s.bind(1, static_cast<int64_t>(name));
        std::string text = s.executeStep() ? Str(s.getColumn(0)) : Cat("metric_", name);
        it = names.emplace(name, OpSummaryNameOfDbMetric(text)).first;
      }
      (*out)[q.getColumn(0).getInt64()].emplace_back(it->second, q.getColumn(2).getDouble());
    }
  }
}

// `all`: per metric the median over the used launches, with the spread.
void MedianFields(const std::vector<DbRow>& rows, const PmuRows& pmu, SelectedTarget* out) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> values;
  for (size_t u : out->used) {
    auto it = pmu.find(rows[u].global_task_id);
    if (it == pmu.end()) continue;
    for (const auto& [name, v] : it->second) {
      if (!values.count(name)) order.push_back(name);
      values[name].push_back(v);
    }
  }
  for (const std::string& name : order) {
    const std::vector<double>& v = values[name];
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    out->spread.push_back({name, {*lo, *hi}});
    out->row.fields.emplace_back(name, Median(v));
  }
  out->row.task_duration_us = Median(out->durations_us);
}

absl::StatusOr<std::vector<DbRow>> ReadLaunches(Db& db, const fs::path& path,
                                                std::string_view op_name) {
  std::vector<DbRow> rows;
  SQLite::Statement q(db, LaunchQuery(db));
  q.bind(1, std::string(op_name));
  while (q.executeStep()) rows.push_back(RowOf(q, path, op_name));
  return rows;
}

std::string CandidateText(const std::vector<OpCandidate>& all) {
  if (all.empty()) return "none";
  std::string out;
  for (size_t i = 0; i < all.size() && i < 10; ++i) {
    out += Cat(i ? "; " : "", all[i].op_name, " [", all[i].task_type, ", ", all[i].count,
               " launches]");
  }
  if (all.size() > 10) out += Cat("; ... ", all.size() - 10, " more");
  return out;
}

absl::StatusOr<SelectedTarget> Select(Db& db, const fs::path& path, std::string_view op_name,
                                      const LaunchSelector& selector) {
  absl::StatusOr<std::vector<DbRow>> rows = ReadLaunches(db, path, op_name);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) {
    absl::StatusOr<std::vector<OpCandidate>> all = ListDbCandidates(path);
    return absl::NotFoundError(Cat("no compute task named '", op_name, "' in ", path.string(),
                                   "; candidates: ", all.ok() ? CandidateText(*all) : "?"));
  }
  SelectedTarget out;
  for (const DbRow& r : *rows) out.launches.push_back(r.launch);
  OrderLaunches(&out.launches);  // already in startNs order: numbers them
  absl::StatusOr<std::vector<size_t>> used =
      SelectLaunches(out.launches, selector, op_name, path.string());
  if (!used.ok()) return used.status();
  out.used = *std::move(used);
  std::vector<int64_t> ids;
  for (size_t u : out.used) {
    out.durations_us.push_back(out.launches[u].duration_us);
    ids.push_back((*rows)[u].global_task_id);
  }
  PmuRows pmu;
  ReadPmu(db, ids, &pmu);
  out.row = (*rows)[out.used.front()].identity;
  std::vector<double> cores;
  for (int64_t id : ids) {
    auto it = pmu.find(id);
    cores.push_back(it == pmu.end() ? 0 : PrimaryCoreTime(it->second));
  }
  out.core_times_us = CompleteCoreTimes(std::move(cores));
  if (selector.kind == LaunchSelector::Kind::kAll) {
    MedianFields(*rows, pmu, &out);
  } else if (auto it = pmu.find(ids.front()); it != pmu.end()) {
    out.row.fields = it->second;
  }
  return out;
}

// One (name, compute type, task type) id triple of the candidate pass, with
// its count, summed duration and first launches (by start).
struct Group {
  int64_t op_type = 0, count = 0, total_ns = 0;
  std::vector<LaunchInfo> first;  // at most kCandidateLaunches, unordered
};
using GroupKey = std::tuple<int64_t, int64_t, int64_t>;

// The latest of a group's kept launches.
std::vector<LaunchInfo>::iterator Latest(std::vector<LaunchInfo>* first) {
  return std::max_element(first->begin(), first->end(),
                          [](const auto& a, const auto& b) { return *a.start_ns < *b.start_ns; });
}

// Whether a launch starting at `start` belongs among the group's first.
bool Keeps(std::vector<LaunchInfo>* first, int64_t start) {
  return first->size() < static_cast<size_t>(kCandidateLaunches) ||
         start < *Latest(first)->start_ns;
}

// Keeps the kCandidateLaunches earliest launches of a group (Keeps() held).
void KeepFirst(LaunchInfo l, std::vector<LaunchInfo>* first) {
  if (first->size() < static_cast<size_t>(kCandidateLaunches)) {
    first->push_back(std::move(l));
  } else {
    *Latest(first) = std::move(l);
  }
}

// One compute task: its COMPUTE_TASK_INFO name, taskType and opType ids, and
// its TASK row.
struct JoinedTask {
  int64_t name = 0, compute_type = 0, op_type = 0, task_type = 0, start = 0, end = 0, id = 0;
  std::optional<int64_t> stream_id, task_id;
};

void AddToGroup(const JoinedTask& j, std::map<GroupKey, Group>* groups) {
  Group& g = (*groups)[{j.name, j.compute_type, j.task_type}];
  if (g.count++ == 0) g.op_type = j.op_type;
  g.total_ns += j.end - j.start;
  if (!Keeps(&g.first, j.start)) return;
  LaunchInfo l;
  l.start_ns = j.start;
  l.start_us = static_cast<double>(j.start) / 1000.0;
  l.duration_us = static_cast<double>(j.end - j.start) / 1000.0;
  l.stream_id = j.stream_id;
  l.task_id = j.task_id;
  l.where = Cat("globalTaskId ", j.id);
  KeepFirst(std::move(l), &g.first);
}

std::optional<int64_t> OptionalInt(const SQLite::Column& c) {
  return c.isNull() ? std::nullopt : std::optional<int64_t>(c.getInt64());
}

// TASK columns from `at`: taskType, startNs, endNs, streamId, taskId, globalTaskId.
void ReadTaskColumns(SQLite::Statement& q, int at, JoinedTask* j) {
  j->task_type = q.getColumn(at).getInt64();
  j->start = q.getColumn(at + 1).getInt64();
  j->end = q.getColumn(at + 2).getInt64();
  j->stream_id = OptionalInt(q.getColumn(at + 3));
  j->task_id = OptionalInt(q.getColumn(at + 4));
  j->id = q.getColumn(at + 5).getInt64();
}

// msprof writes TASK and COMPUTE_TASK_INFO in globalTaskId order: merging the
// two in storage order joins them in one pass with no index (msprof's db has
// none, and SQLite's join would first build one over a million rows). False
// (groups partly filled) as soon as either table is out of that order.
bool MergeGroups(Db& db, std::map<GroupKey, Group>* groups) {
  SQLite::Statement t(db,
                      "SELECT taskType, startNs, endNs, streamId, taskId, globalTaskId FROM TASK "
                      "ORDER BY rowid");
  SQLite::Statement c(db,
                      "SELECT name, taskType, opType, globalTaskId FROM COMPUTE_TASK_INFO ORDER "
                      "BY rowid");
  // Every row of both tables is read, each table's ids checked strictly increasing: only then
  // is skipping a compute task whose id TASK passed over the same as the join dropping it.
  int64_t last_t = INT64_MIN, last_c = INT64_MIN;
  bool have_t = false, ordered = true;
  auto step_t = [&] {
    have_t = t.executeStep();
    if (!have_t) return;
    ordered = ordered && !t.getColumn(5).isNull() && t.getColumn(5).getInt64() > last_t;
    last_t = t.getColumn(5).getInt64();
  };
  step_t();
  while (ordered && c.executeStep()) {
    if (c.getColumn(3).isNull() || c.getColumn(3).getInt64() <= last_c) return false;
    last_c = c.getColumn(3).getInt64();
    while (ordered && have_t && last_t < last_c) step_t();
    if (!ordered) break;
    if (!have_t || last_t != last_c) continue;  // no TASK row: the join drops it too
    JoinedTask j;
    j.name = c.getColumn(0).getInt64();
    j.compute_type = c.getColumn(1).getInt64();
    j.op_type = c.getColumn(2).getInt64();
    ReadTaskColumns(t, 0, &j);
    AddToGroup(j, groups);
    step_t();
  }
  while (ordered && have_t) step_t();
  return ordered;
}

// One streaming pass over TASK ⋈ COMPUTE_TASK_INFO: memory is per group.
std::map<GroupKey, Group> Groups(Db& db) {
  std::map<GroupKey, Group> groups;
  try {
    if (MergeGroups(db, &groups)) return groups;
  } catch (const std::exception&) {  // e.g. a WITHOUT ROWID table: SQLite joins them below
  }
  groups.clear();
  SQLite::Statement q(db,
                      "SELECT c.name, c.taskType, c.opType, t.taskType, t.startNs, t.endNs, "
                      "t.streamId, t.taskId, t.globalTaskId FROM TASK t JOIN COMPUTE_TASK_INFO c "
                      "ON c.globalTaskId = t.globalTaskId");
  while (q.executeStep()) {
    JoinedTask j;
    j.name = q.getColumn(0).getInt64();
    j.compute_type = q.getColumn(1).getInt64();
    j.op_type = q.getColumn(2).getInt64();
    ReadTaskColumns(q, 3, &j);
    AddToGroup(j, &groups);
  }
  return groups;
}

std::string StringOf(Db& db, int64_t id) {
  SQLite::Statement s(db, "SELECT value FROM STRING_IDS WHERE id = ?");
  s.bind(1, static_cast<int64_t>(id));
  return s.executeStep() ? Str(s.getColumn(0)) : std::string();
}

std::vector<OpCandidate> Candidates(Db& db) {
  std::map<std::pair<std::string, std::string>, OpCandidate> merged;
  for (auto& [key, g] : Groups(db)) {
    std::string name = StringOf(db, std::get<0>(key));
    if (name.empty() || name == "N/A") continue;
    std::string type = ResolvedType(StringOf(db, std::get<1>(key)), StringOf(db, std::get<2>(key)));
    OpCandidate& c = merged[{name, type}];
    c.op_name = name;
    c.task_type = type;
    if (c.op_type.empty()) c.op_type = StringOf(db, g.op_type);
    c.count += g.count;
    c.total_duration_us += static_cast<double>(g.total_ns) / 1000.0;
    c.launches.insert(c.launches.end(), g.first.begin(), g.first.end());
  }
  std::vector<OpCandidate> out;
  for (auto& [key, c] : merged) {
    OrderLaunches(&c.launches);
    if (c.launches.size() > kCandidateLaunches) c.launches.resize(kCandidateLaunches);
    c.incidental = IncidentalReason(c.op_name, c.op_type, c.task_type);
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const OpCandidate& a, const OpCandidate& b) {
    if (a.total_duration_us != b.total_duration_us)
      return a.total_duration_us > b.total_duration_us;
    return std::tie(a.op_name, a.task_type) < std::tie(b.op_name, b.task_type);
  });
  return out;
}

// The clock segments of AICORE_FREQ over [start, end].
std::optional<DbClockWindow> Window(Db& db, int device, int64_t start, int64_t end) {
  std::string where = device >= 0 ? Cat(" AND deviceId = ", device) : "";
  std::vector<std::pair<int64_t, double>> pts;
  SQLite::Statement before(db, Cat("SELECT timestampNs, freq FROM AICORE_FREQ WHERE timestampNs "
                                   "<= ?",
                                   where, " ORDER BY timestampNs DESC LIMIT 1"));
  before.bind(1, static_cast<int64_t>(start));
  if (before.executeStep()) pts.emplace_back(start, before.getColumn(1).getDouble());
  SQLite::Statement in(db, Cat("SELECT timestampNs, freq FROM AICORE_FREQ WHERE timestampNs > ? "
                               "AND timestampNs <= ?",
                               where, " ORDER BY timestampNs"));
  in.bind(1, static_cast<int64_t>(start));
  in.bind(2, static_cast<int64_t>(end));
  while (in.executeStep())
    pts.emplace_back(in.getColumn(0).getInt64(), in.getColumn(1).getDouble());
  if (pts.empty()) return std::nullopt;
  DbClockWindow w;
  w.changes = static_cast<int>(pts.size());
  w.min_mhz = w.max_mhz = pts.front().second;
  double weighted = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    w.min_mhz = std::min(w.min_mhz, pts[i].second);
    w.max_mhz = std::max(w.max_mhz, pts[i].second);
    int64_t until = i + 1 < pts.size() ? pts[i + 1].first : end;
    weighted += pts[i].second * static_cast<double>(until - pts[i].first);
  }
  int64_t span = end - pts.front().first;
  w.mean_mhz = span > 0 ? weighted / static_cast<double>(span) : pts.front().second;
  return w;
}

}  // namespace

std::string OpSummaryNameOfDbMetric(std::string_view db_name) {
  std::string n(db_name);
  if (n == "aic_total_time" || n == "total_time") return "aicore_time(us)";
  if (n == "aiv_total_time") return "aiv_time(us)";
  if (n == "cube_utilization") return "cube_utilization(%)";
  if (n.find('(') == std::string::npos) {
    if (n.find("time") != std::string::npos) {
      n += "(us)";
    } else if (n.find("bw") != std::string::npos) {
      n += "(GB/s)";
    } else if (n.find("datas") != std::string::npos) {
      n += "(KB)";
    }
  }
  return CanonicalColumn(n);
}

std::string NormalizeTaskType(std::string_view type) {
  static const std::pair<std::string_view, std::string_view> kTypes[] = {
      {"KERNEL_AICORE", "AI_CORE"},  {"KERNEL_AIVEC", "AI_VECTOR_CORE"},
      {"KERNEL_MIX_AIC", "MIX_AIC"}, {"KERNEL_MIX_AIV", "MIX_AIV"},
      {"KERNEL_AICPU", "AI_CPU"},
  };
  for (const auto& [from, to] : kTypes) {
    if (type == from) return std::string(to);
  }
  return std::string(type);
}

bool IsUnifiedDbName(const fs::path& file) {
  std::string base = file.filename().string();
  std::string_view b = base;
  if (!internal::ConsumePrefix(&b, "msprof_") || !internal::EndsWith(b, ".db")) return false;
  b.remove_suffix(3);
  return !b.empty() &&
         std::all_of(b.begin(), b.end(), [](char c) { return (c >= '0' && c <= '9') || c == '_'; });
}

absl::StatusOr<SelectedTarget> SelectDbTarget(const fs::path& db, std::string_view op_name,
                                              const LaunchSelector& selector) {
  absl::StatusOr<std::unique_ptr<Db>> open = Open(db);
  if (!open.ok()) return open.status();
  try {
    absl::Status s = RequireTables(**open, db);
    if (!s.ok()) return s;
    return Select(**open, db, op_name, selector);
  } catch (const std::exception& e) {
    return SqlError(db, e);
  }
}

absl::StatusOr<std::vector<OpCandidate>> ListDbCandidates(const fs::path& db) {
  absl::StatusOr<std::unique_ptr<Db>> open = Open(db);
  if (!open.ok()) return open.status();
  try {
    absl::Status s = RequireTables(**open, db);
    if (!s.ok()) return s;
    return Candidates(**open);
  } catch (const std::exception& e) {
    return SqlError(db, e);
  }
}

absl::StatusOr<std::optional<DbClockWindow>> ReadDbClock(const fs::path& db, int device_id,
                                                         int64_t start_ns, int64_t end_ns) {
  absl::StatusOr<std::unique_ptr<Db>> open = Open(db);
  if (!open.ok()) return open.status();
  try {
    if (!(*open)->tableExists("AICORE_FREQ")) return std::optional<DbClockWindow>();
    return Window(**open, device_id, start_ns, std::max(start_ns, end_ns));
  } catch (const std::exception& e) {
    return SqlError(db, e);
  }
}

absl::StatusOr<DbFacts> ReadDbFacts(const fs::path& db) {
  absl::StatusOr<std::unique_ptr<Db>> open = Open(db);
  if (!open.ok()) return open.status();
  DbFacts f;
  try {
    Db& d = **open;
    if (d.tableExists("NPU_INFO")) {
      SQLite::Statement q(d, "SELECT id, name FROM NPU_INFO");
      while (q.executeStep()) f.chips[q.getColumn(0).getInt()] = Str(q.getColumn(1));
    }
    if (d.tableExists("META_DATA")) {
      SQLite::Statement q(d, "SELECT name, value FROM META_DATA");
      while (q.executeStep()) f.meta[Str(q.getColumn(0))] = Str(q.getColumn(1));
    }
  } catch (const std::exception& e) {
    return SqlError(db, e);
  }
  return f;
}

}  // namespace npuperf::evidence
