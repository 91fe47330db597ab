#include "sim/export_only.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace npuperf::sim {
namespace {

namespace fs = std::filesystem;

int Fail(const std::string& message) {
  std::fprintf(stderr, "[ERROR] msprof-sim: %s\n", message.c_str());
  return 1;
}

bool HasBiuDb(const fs::path& prof) {
  std::error_code ec;
  for (fs::directory_iterator it(prof, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind("device_", 0) == 0 &&
        fs::is_regular_file(it->path() / "sqlite" / "biu_perf.db", ec)) {
      return true;
    }
  }
  return false;
}

}  // namespace

int RunExportOnly(const SimOptions& options) {
  const fs::path prof = options.output;
  std::error_code ec;
  if (prof.filename().string().rfind("PROF_", 0) != 0 ||
      !fs::is_directory(prof / "mindstudio_profiler_output", ec)) {
    return Fail("--output=" + prof.string() +
                " is not a collected PROF_* directory (no mindstudio_profiler_output)");
  }
  bool wants_biu = false;
  if (!options.reports.empty()) {
    std::ifstream in(options.reports);
    std::stringstream text;
    text << in.rdbuf();
    if (!in || text.str().find("\"json_process\"") == std::string::npos) {
      return Fail("--reports=" + options.reports + " is unreadable or has no json_process");
    }
    std::string compact;
    for (char c : text.str()) {
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') compact += c;
    }
    wants_biu = compact.find("\"biu_perf\":true") != std::string::npos;
  }
  std::printf("[INFO] Start export data in %s.\n", prof.filename().c_str());
  if (wants_biu && !HasBiuDb(prof)) {
    std::printf(
        "[WARNING] no instruction profiling data in %s: collect with --instr-profiling=on\n",
        prof.filename().c_str());
  }
  std::printf("[INFO] Export data in %s done.\n", prof.filename().c_str());
  return 0;
}

}  // namespace npuperf::sim
