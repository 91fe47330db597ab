#include "evidence/prof_layout.h"

#include <algorithm>
#include <map>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;

bool AllDigits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(c); });
}

std::string JoinNames(const std::vector<fs::path>& paths) {
  return absl::StrJoin(
      paths, ", ", [](std::string* out, const fs::path& p) { absl::StrAppend(out, p.string()); });
}

// Parses msprof's table file names (docs/evidence.md "File names"):
//   <name>.csv                         torch_npu ASCEND_PROFILER_OUTPUT
//   <name>_<ts14>.csv                  CANN 8.x mindstudio_profiler_output
//   <name>_<d>_<d>[_<d>...].csv        CANN 6/7 (op_summary_0_1.csv, op_summary_0_1_1_<ts>.csv)
//   <name>_slice_<k>[_<d>...].csv      a part of a table over 1,000,000 rows
// `key` is the digit groups (one export shares them); slice = -1 unsliced.
bool ParseCsvName(std::string_view file, std::string_view name, std::string* key, int* slice) {
  if (!internal::StartsWith(file, name) || !internal::EndsWith(file, ".csv")) return false;
  file.remove_prefix(name.size());
  file.remove_suffix(4);
  *slice = -1;
  key->clear();
  if (file.empty()) return true;
  if (!internal::ConsumePrefix(&file, "_")) return false;
  if (internal::ConsumePrefix(&file, "slice_")) {
    size_t us = file.find('_');
    std::string_view k = file.substr(0, us);
    if (!AllDigits(k) || !absl::SimpleAtoi(internal::ToAbsl(k), slice)) return false;
    if (us == std::string_view::npos) return true;
    file.remove_prefix(us + 1);
  }
  for (std::string_view rest = file; !rest.empty();) {
    size_t us = rest.find('_');
    if (!AllDigits(rest.substr(0, us))) return false;
    if (us == std::string_view::npos) break;
    rest.remove_prefix(us + 1);
    if (rest.empty()) return false;
  }
  *key = std::string(file);
  return true;
}

// The parts of one export, by slice (-1: unsliced): the whole file, or
// slices 0..n-1 without gaps.
absl::StatusOr<std::vector<fs::path>> ExportParts(const std::map<int, fs::path>& parts,
                                                  const fs::path& output_dir,
                                                  std::string_view name) {
  std::vector<fs::path> out;
  if (parts.count(-1) != 0) {
    if (parts.size() > 1) {
      return absl::FailedPreconditionError(
          internal::Cat(name, " in ", output_dir.string(), " is both whole and sliced"));
    }
    out.push_back(parts.at(-1));
    return out;
  }
  int expect = 0;
  for (const auto& [k, p] : parts) {
    if (k != expect) {
      return absl::FailedPreconditionError(
          internal::Cat(name, " slice ", expect, " missing in ", output_dir.string()));
    }
    ++expect;
    out.push_back(p);
  }
  return out;
}

}  // namespace

std::vector<fs::path> SortedChildren(const fs::path& dir, std::error_code& ec) {
  std::vector<fs::path> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<fs::path> FindSingleProfDir(const fs::path& output_dir) {
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) {
    return absl::NotFoundError(internal::Cat(output_dir.string(), ": not a directory"));
  }
  std::vector<fs::path> found, torch;
  for (const fs::path& p : SortedChildren(output_dir, ec)) {
    std::error_code ignored;
    if (!fs::is_directory(p, ignored)) continue;
    if (internal::StartsWith(p.filename().string(), "PROF_")) found.push_back(p);
    if (internal::EndsWith(p.filename().string(), "_ascend_pt")) torch.push_back(p);
  }
  if (ec) return absl::InternalError(internal::Cat(output_dir.string(), ": ", ec.message()));
  // torch_npu keeps its raw PROF_* inside the one *_ascend_pt export.
  if (found.empty() && torch.size() == 1) return FindSingleProfDir(torch.front());
  if (found.empty()) {
    return absl::NotFoundError(internal::Cat("no PROF_* directory in ", output_dir.string()));
  }
  if (found.size() > 1) {
    return absl::FailedPreconditionError(internal::Cat("expected exactly one PROF_* directory in ",
                                                       output_dir.string(), "; found ",
                                                       found.size(), ": ", JoinNames(found)));
  }
  return found.front();
}

absl::StatusOr<fs::path> ProfilerOutputDir(const fs::path& prof_dir) {
  fs::path out = prof_dir / "mindstudio_profiler_output";
  std::error_code ec;
  if (!fs::is_directory(out, ec)) {
    return absl::NotFoundError(internal::Cat("no mindstudio_profiler_output in ", prof_dir.string(),
                                             " (was msprof's export step run?)"));
  }
  return out;
}

absl::StatusOr<std::vector<fs::path>> FindCsvParts(const fs::path& output_dir,
                                                   std::string_view name,
                                                   std::vector<std::string>* skipped) {
  std::error_code ec;
  // export key -> slice -> path
  std::map<std::string, std::map<int, fs::path>> exports;
  for (const fs::path& p : SortedChildren(output_dir, ec)) {
    std::string key;
    int slice = -1;
    const std::string file = p.filename().string();
    if (ParseCsvName(file, name, &key, &slice)) {
      exports[key][slice] = p;
    } else if (skipped != nullptr && internal::StartsWith(file, name) &&
               internal::EndsWith(file, ".csv")) {
      skipped->push_back(internal::Cat("skipped ", file, ": not msprof's name form ", name,
                                       "[_slice_<k>][_<digits>...].csv"));
    }
  }
  if (ec) return absl::InternalError(internal::Cat(output_dir.string(), ": ", ec.message()));
  if (exports.empty()) return std::vector<fs::path>();
  if (exports.size() > 1) {
    std::vector<fs::path> all;
    for (const auto& [key, parts] : exports) {
      for (const auto& [k, p] : parts) all.push_back(p);
    }
    return absl::FailedPreconditionError(internal::Cat(
        "expected one export of ", name, " in ", output_dir.string(), "; found ", JoinNames(all)));
  }
  return ExportParts(exports.begin()->second, output_dir, name);
}

const std::vector<std::string>& SevenMetrics() {
  static const auto* const kMetrics = new std::vector<std::string>{
      "PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0", "MemoryUB",
      "L2Cache",         "ResourceConflictRatio"};
  return *kMetrics;
}

absl::StatusOr<std::vector<DeviceDb>> FindDeviceDbs(const fs::path& prof_dir,
                                                    std::string_view db_name) {
  std::error_code ec;
  std::vector<DeviceDb> out;
  for (const fs::path& p : SortedChildren(prof_dir, ec)) {
    std::string base = p.filename().string();
    int id = -1;
    if (!internal::StartsWith(base, "device_") ||
        !absl::SimpleAtoi(internal::ToAbsl(std::string_view(base).substr(7)), &id))
      continue;
    fs::path db = p / "sqlite" / std::string(db_name);
    std::error_code missing;  // a device without this db is not an error
    if (fs::is_regular_file(db, missing)) out.push_back({id, db});
  }
  if (ec) return absl::InternalError(internal::Cat(prof_dir.string(), ": ", ec.message()));
  std::sort(out.begin(), out.end(),
            [](const DeviceDb& a, const DeviceDb& b) { return a.device_id < b.device_id; });
  return out;
}

}  // namespace npuperf::evidence
