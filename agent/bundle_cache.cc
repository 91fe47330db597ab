#include "agent/bundle_cache.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <tuple>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "common/sha256.h"

namespace npuperf::agent {
namespace fs = std::filesystem;

namespace {

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

BundleCache::BundleCache(fs::path dir, int64_t limit_bytes, Clock& clock)
    : dir_(std::move(dir)), limit_bytes_(limit_bytes), clock_(clock) {}

absl::StatusOr<std::string> BundleCache::Get(const std::string& sha256, const Fetch& fetch) {
  const fs::path path = dir_ / (sha256 + ".tar");
  std::string tar = ReadVerified(path, sha256);
  if (!tar.empty()) return tar;
  auto got = fetch(sha256);
  if (!got.ok()) return got.status();
  if (Sha256Hex(*got) != sha256) {
    return absl::DataLossError("downloaded bundle does not match its sha256");
  }
  Store(path, *got);
  return got;
}

std::string BundleCache::ReadVerified(const fs::path& path, const std::string& sha256) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";
  std::string tar = ReadFile(path);
  if (Sha256Hex(tar) != sha256) return "";  // corrupt cache entry: refetch
  if (!tar.empty()) {
    fs::last_write_time(path, std::chrono::file_clock::from_sys(clock_.SystemNow()), ec);
  }
  return tar;
}

void BundleCache::Store(const fs::path& path, const std::string& tar) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  absl::BitGen gen;
  const fs::path tmp = path.string() + absl::StrFormat(".tmp%08x", absl::Uniform<uint32_t>(gen));
  std::ofstream(tmp, std::ios::binary) << tar;
  fs::rename(tmp, path, ec);
  Trim(path);
}

void BundleCache::Trim(const fs::path& keep) {
  std::error_code ec;
  std::vector<std::tuple<fs::file_time_type, int64_t, fs::path>> entries;
  int64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().extension() != ".tar") continue;
    const auto size = static_cast<int64_t>(e.file_size(ec));
    total += size;
    entries.emplace_back(e.last_write_time(ec), size, e.path());
  }
  std::sort(entries.begin(), entries.end());  // oldest mtime first
  for (const auto& [when, size, path] : entries) {
    if (total <= limit_bytes_) break;
    if (path == keep) continue;
    fs::remove(path, ec);
    total -= size;
  }
}

}  // namespace npuperf::agent
