#include "agent/result_spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace npuperf::agent {
namespace fs = std::filesystem;

ResultSpool::ResultSpool(fs::path dir) : dir_(std::move(dir)) {}

fs::path ResultSpool::PathOf(const v1::ReportResultRequest& r) const {
  return dir_ / absl::StrCat(r.job_id(), "-", r.attempt(), "-", r.update_uuid(), ".result");
}

absl::Status ResultSpool::Put(const v1::ReportResultRequest& result) {
  absl::MutexLock lock(&mu_);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const fs::path final_path = PathOf(result);
  const fs::path tmp = final_path.string() + ".tmp";
  const std::string bytes = result.SerializeAsString();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("spool ", tmp.string(), ": ", std::strerror(errno)));
  const bool ok = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) &&
                  ::fsync(fd) == 0;
  const int write_errno = errno;
  ::close(fd);
  if (!ok) {
    // A full disk must not keep a partial result (nor its blocks) forever.
    fs::remove(tmp, ec);
    return absl::InternalError(
        absl::StrCat("spool write ", tmp.string(), ": ", std::strerror(write_errno)));
  }
  fs::rename(tmp, final_path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return absl::InternalError(absl::StrCat("spool rename: ", ec.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::ReportResultRequest>> ResultSpool::Pending() {
  absl::MutexLock lock(&mu_);
  std::vector<v1::ReportResultRequest> out;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return out;
  std::vector<fs::path> leftovers;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    // Put holds mu_ from open to rename, so a .tmp seen here is the leftover
    // of a Put that a crash (kill -9) interrupted: never a result.
    if (e.path().extension() == ".tmp") leftovers.push_back(e.path());
    if (e.path().extension() != ".result") continue;
    std::ifstream in(e.path(), std::ios::binary);
    v1::ReportResultRequest r;
    if (!r.ParseFromIstream(&in)) {
      fs::rename(e.path(), e.path().string() + ".corrupt", ec);
      continue;
    }
    out.push_back(std::move(r));
  }
  for (const auto& p : leftovers) fs::remove(p, ec);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.job_id() < b.job_id(); });
  return out;
}

void ResultSpool::Remove(const v1::ReportResultRequest& result) {
  absl::MutexLock lock(&mu_);
  std::error_code ec;
  fs::remove(PathOf(result), ec);
}

size_t ResultSpool::Depth() {
  absl::MutexLock lock(&mu_);
  std::error_code ec;
  size_t n = 0;
  if (!fs::exists(dir_, ec)) return 0;
  for (const auto& e : fs::directory_iterator(dir_, ec)) n += e.path().extension() == ".result";
  return n;
}

}  // namespace npuperf::agent
