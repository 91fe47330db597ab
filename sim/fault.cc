#include "sim/fault.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/rng.h"

namespace npuperf::sim {
namespace {

absl::Status ParseQualifier(absl::string_view q, Fault& f) {
  std::vector<absl::string_view> kv = absl::StrSplit(q, absl::MaxSplits('=', 1));
  int n = 0;
  if (kv.size() != 2 || !absl::SimpleAtoi(kv[1], &n) || n < 0) {
    return absl::InvalidArgumentError(absl::StrCat("bad fault qualifier '@", q, "'"));
  }
  if (kv[0] == "dev")
    f.device = n;
  else if (kv[0] == "first")
    f.first = n;
  else
    return absl::InvalidArgumentError(
        absl::StrCat("unknown fault qualifier '@", q, "' (want dev or first)"));
  return absl::OkStatus();
}

absl::Status ParseBody(const std::vector<absl::string_view>& p, Fault& f) {
  auto bad = [&] { return absl::InvalidArgumentError(absl::StrCat("bad fault '", f.text, "'")); };
  absl::string_view k = p[0];
  if (k == "fail") {
    f.kind = FaultKind::kFail;
    if (p.size() != 3 || !absl::SimpleAtoi(p[2], &f.exit_code) || f.exit_code < 1 ||
        f.exit_code > 255)
      return bad();
    f.group = std::string(p[1]);
  } else if (k == "hang") {
    f.kind = FaultKind::kHang;
    if (p.size() != 2 || !absl::SimpleAtod(p[1], &f.seconds) || f.seconds < 0) return bad();
  } else if (k == "dvfs") {
    f.kind = FaultKind::kDvfs;
    if (p.size() != 2 || !absl::SimpleAtod(p[1], &f.mhz) || f.mhz <= 0) return bad();
  } else if (k == "slow") {
    f.kind = FaultKind::kSlow;
    if (p.size() != 2 || !absl::SimpleAtod(p[1], &f.factor) || !(f.factor > 1) || f.factor > 10)
      return bad();
  } else if (k == "ratio_gt1") {
    f.kind = FaultKind::kRatioAboveOne;
    if (p.size() > 2) return bad();
    if (p.size() == 2) f.op_name = std::string(p[1]);
  } else if (k == "timeline") {
    f.kind = FaultKind::kTimeline;
    if (p.size() != 2 || (p[1] != "pipelined" && p[1] != "serial")) return bad();
    f.layout = std::string(p[1]);
  } else if (p.size() == 1 &&
             (k == "crash" || k == "truncate" || k == "no_aicore_db" || k == "garbage")) {
    f.kind = k == "crash"      ? FaultKind::kCrash
             : k == "truncate" ? FaultKind::kTruncate
             : k == "garbage"  ? FaultKind::kGarbage
                               : FaultKind::kNoAicoreDb;
  } else {
    return bad();
  }
  return absl::OkStatus();
}

}  // namespace

int BumpCounter(absl::string_view key, const std::filesystem::path& state_dir) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  std::string path = (state_dir / absl::StrCat("fault_", HashName(key), ".count")).string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return 0;
  ::flock(fd, LOCK_EX);
  char buf[32] = {0};
  ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  int before = 0;
  if (n > 0) (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(buf, n)), &before);
  std::string next = std::to_string(before + 1);
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, next.data(), next.size(), 0) < 0) before = 0;
  ::close(fd);  // releases the flock
  return before;
}

absl::StatusOr<std::vector<Fault>> ParseFaults(absl::string_view spec) {
  std::vector<Fault> out;
  for (absl::string_view item : absl::StrSplit(spec, ';', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    Fault f;
    f.text = std::string(item);
    std::vector<absl::string_view> parts = absl::StrSplit(item, '@');
    for (size_t i = 1; i < parts.size(); ++i) {
      absl::Status s = ParseQualifier(parts[i], f);
      if (!s.ok()) return s;
    }
    absl::Status s = ParseBody(absl::StrSplit(parts[0], ':'), f);
    if (!s.ok()) return s;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Fault> ActiveFaults(const std::vector<Fault>& faults, int device,
                                absl::string_view group, const std::filesystem::path& state_dir) {
  std::vector<Fault> out;
  for (const Fault& f : faults) {
    if (f.device >= 0 && f.device != device) continue;
    if (f.kind == FaultKind::kFail && f.group != "*" && f.group != group) continue;
    if (f.first > 0 && BumpCounter(f.text, state_dir) >= f.first) continue;
    out.push_back(f);
  }
  return out;
}

const Fault* FindFault(const std::vector<Fault>& faults, FaultKind kind) {
  for (const Fault& f : faults) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

}  // namespace npuperf::sim
