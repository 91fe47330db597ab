// The files an --instr-profiling=on capture keeps beside its trace
// (timeline.h FindTimelineDeviceFiles).
#include <string>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "evidence/timeline.h"

namespace npuperf::evidence {
namespace fs = std::filesystem;
namespace {

// Subdirectories of dir whose name starts with prefix (symlinks are not followed).
std::vector<fs::path> DirsStartingWith(const fs::path& dir, std::string_view prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(prefix) && it->symlink_status(ec).type() == fs::file_type::directory) {
      out.push_back(it->path());
    }
  }
  return out;
}

// Rows over every table of db.
absl::StatusOr<int64_t> CountRows(const fs::path& db) {
  try {
    SQLite::Database d(db.string(), SQLite::OPEN_READONLY);
    std::vector<std::string> tables;
    SQLite::Statement q(d, "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (q.executeStep()) tables.push_back(q.getColumn(0).getString());
    int64_t rows = 0;
    for (const std::string& t : tables) {
      std::string quoted = "\"";
      for (char c : t) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      quoted += '"';
      SQLite::Statement n(d, "SELECT COUNT(*) FROM " + quoted);
      if (n.executeStep()) rows += n.getColumn(0).getInt64();
    }
    return rows;
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(absl::StrCat(db.string(), ": SQLite: ", e.what()));
  }
}

}  // namespace

absl::StatusOr<TimelineDeviceFiles> FindTimelineDeviceFiles(const fs::path& input, int device_id) {
  std::error_code ec;
  TimelineDeviceFiles out;
  if (absl::StartsWith(input.filename().string(), "PROF_") && fs::is_directory(input, ec)) {
    out.prof_dir = input;
  } else {
    const std::vector<fs::path> profs = DirsStartingWith(input, "PROF_");
    if (profs.size() != 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          input.string(), " holds ", profs.size(), " PROF_* directories; the timeline needs one"));
    }
    out.prof_dir = profs.front();
  }
  const std::vector<fs::path> devices = DirsStartingWith(out.prof_dir, "device_");
  if (devices.size() != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat(out.prof_dir.string(), " holds ", devices.size(),
                     " device_* directories; an instruction profile of one device needs one"));
  }
  int id = -1;
  if (!absl::SimpleAtoi(devices.front().filename().string().substr(7), &id) || id != device_id) {
    return absl::FailedPreconditionError(
        absl::StrCat(devices.front().string(), " is not the job's device ", device_id));
  }
  const fs::path sqlite = devices.front() / "sqlite";
  out.biu_perf_db = sqlite / "biu_perf.db";
  // Neither the directory nor the db may be a link out of the capture.
  if (fs::symlink_status(sqlite, ec).type() != fs::file_type::directory ||
      fs::symlink_status(out.biu_perf_db, ec).type() != fs::file_type::regular) {
    return absl::FailedPreconditionError(absl::StrCat("no regular ", out.biu_perf_db.string(),
                                                      ": was --instr-profiling=on honoured?"));
  }
  absl::StatusOr<int64_t> biu = CountRows(out.biu_perf_db);
  if (!biu.ok()) return biu.status();
  out.biu_rows = *biu;
  const fs::path task = sqlite / "ascend_task.db";
  if (fs::symlink_status(task, ec).type() == fs::file_type::regular) {
    absl::StatusOr<int64_t> rows = CountRows(task);
    if (!rows.ok()) return rows.status();
    out.ascend_task_db = task;
    out.ascend_task_rows = *rows;
  }
  return out;
}

}  // namespace npuperf::evidence
