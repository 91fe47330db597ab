#include "agent/npu_smi.h"

#include <atomic>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

extern char** environ;

namespace npuperf::agent {
namespace {

// Each query may take this long (the reference scripts give npu-smi 10 s).
constexpr std::chrono::seconds kQueryTimeout{10};

// "key : value" lines of one section (up to the first blank line after a
// key was seen, when first_section_only); the first value of a key wins.
std::map<std::string, std::string> KeyValues(absl::string_view text, bool first_section_only) {
  std::map<std::string, std::string> out;
  bool in_chip = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    std::string key(absl::StripAsciiWhitespace(line.substr(0, colon)));
    std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    // The chip sections of `-t common` start at "Chip ID"; the mcu's at
    // "Chip Name".
    if (key == "Chip Name" && in_chip && first_section_only) break;
    if (key == "Chip ID") in_chip = true;
    out.emplace(std::move(key), std::move(value));
  }
  return out;
}

int IntOf(const std::map<std::string, std::string>& kv, const char* key) {
  auto it = kv.find(key);
  int v = 0;
  if (it == kv.end() || !absl::SimpleAtoi(it->second, &v) || v < 0) return 0;
  return v;
}

std::optional<double> DoubleOf(const std::map<std::string, std::string>& kv, const char* key) {
  auto it = kv.find(key);
  double v = 0;
  if (it == kv.end() || !absl::SimpleAtod(it->second, &v) || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

// The server takes at most 255 bytes (core/limits.h kMaxAgentStringBytes).
void AddProblem(v1::DeviceReading* r, absl::string_view problem) {
  std::string all =
      r->problem().empty() ? std::string(problem) : absl::StrCat(r->problem(), "; ", problem);
  if (all.size() > 255) all.resize(255);
  r->set_problem(std::move(all));
}

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    absl::string_view kv(*e);
    const size_t eq = kv.find('=');
    if (eq != absl::string_view::npos) {
      env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
  }
  return env;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

void ParseHealthOutput(absl::string_view text, v1::DeviceReading* reading) {
  const auto kv = KeyValues(text, false);
  auto status = kv.find("Health Status");
  if (status == kv.end() || status->second.empty()) {
    AddProblem(reading, "npu-smi -t health printed no Health Status");
    return;
  }
  reading->set_health(status->second.substr(0, 32));
  auto code = kv.find("Error Code");
  if (code != kv.end()) reading->set_error_code(code->second.substr(0, 64));
}

void ParseCommonOutput(absl::string_view text, v1::DeviceReading* reading) {
  const auto kv = KeyValues(text, true);
  reading->set_aicore_rated_mhz(IntOf(kv, "Aicore Freq(MHZ)"));
  reading->set_aicore_current_mhz(IntOf(kv, "Aicore curFreq(MHZ)"));
  if (auto t = DoubleOf(kv, "Temperature(C)")) reading->set_temperature_c(*t);
  if (auto w = DoubleOf(kv, "NPU Real-time Power(W)")) reading->set_power_w(*w);
  if (reading->aicore_rated_mhz() == 0 || reading->aicore_current_mhz() == 0) {
    AddProblem(reading, "npu-smi -t common printed no Aicore Freq(MHZ) / Aicore curFreq(MHZ)");
  }
}

NpuSmiProbe::NpuSmiProbe(ProfilerRunner& runner, Clock& clock, std::string npu_smi,
                         std::filesystem::path scratch)
    : runner_(runner), clock_(clock), npu_smi_(std::move(npu_smi)), scratch_(std::move(scratch)) {}

absl::StatusOr<std::string> NpuSmiProbe::Query(const char* type, int device) {
  static std::atomic<uint64_t> sequence{0};
  std::error_code ec;
  std::filesystem::create_directories(scratch_, ec);
  const std::filesystem::path out =
      scratch_ / absl::StrCat("npu-smi-", type, "-", device, "-", sequence++, ".out");
  ProfilerSpec spec;
  spec.argv = {npu_smi_, "info", "-t", type, "-i", std::to_string(device)};
  spec.env = ProcessEnvironment();
  spec.cwd = scratch_.string();
  spec.stdout_path = out.string();
  spec.stderr_path = out.string();
  auto child = runner_.Start(spec);
  if (!child.ok()) return child.status();
  ExitStatus exit = (*child)->Wait(clock_.MonotonicNow() + kQueryTimeout);
  if (exit.timed_out) exit = (*child)->Terminate(std::chrono::seconds(1));
  std::string text = ReadFile(out);
  std::filesystem::remove(out, ec);
  if (!exit.ok()) {
    return absl::UnavailableError(absl::StrCat(npu_smi_, " info -t ", type, " -i ", device, ": ",
                                               exit.timed_out ? "timed out" : exit.ToString(), ": ",
                                               absl::StripAsciiWhitespace(text.substr(0, 200))));
  }
  return text;
}

v1::DeviceReading NpuSmiProbe::Read(int device) {
  v1::DeviceReading reading;
  if (!enabled()) {
    reading.set_problem("no --npu-smi");
    return reading;
  }
  absl::StatusOr<std::string> health = Query("health", device);
  if (health.ok()) {
    ParseHealthOutput(*health, &reading);
  } else {
    AddProblem(&reading, health.status().message());
  }
  absl::StatusOr<std::string> common = Query("common", device);
  if (common.ok()) {
    ParseCommonOutput(*common, &reading);
  } else {
    AddProblem(&reading, common.status().message());
  }
  absl::MutexLock lock(&mu_);
  cache_[device] = Cached{reading, clock_.MonotonicNow()};
  return reading;
}

v1::DeviceReading NpuSmiProbe::ReadCached(int device, std::chrono::milliseconds max_age) {
  const Clock::MonotonicTime now = clock_.MonotonicNow();
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(device);
    if (it != cache_.end() && now - it->second.at < max_age) return it->second.reading;
  }
  return Read(device);
}

}  // namespace npuperf::agent
