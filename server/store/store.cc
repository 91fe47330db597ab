// The Store's conveniences over its bundle methods (tests and tools hold
// bundles in memory; the server streams them, core/bundles.h) and ClaimJobs,
// and the key check both backends' RecentRunTimes share, and the reports
// both backends' RecordProgressMany write.
#include "server/store/store.h"

#include <algorithm>
#include <map>

namespace npuperf::server {

absl::StatusOr<bool> Store::PutBundle(const std::string& team, const std::string& name,
                                      const std::string& sha256, const std::string& content,
                                      int64_t now_ms) {
  NewBundle b;
  b.team = team;
  b.name = name;
  b.sha256 = sha256;
  b.size_bytes = static_cast<int64_t>(content.size());
  b.now_ms = now_ms;
  b.read = [&content](int64_t offset, int64_t max) -> absl::StatusOr<std::string> {
    const auto at = static_cast<size_t>(std::min<int64_t>(offset, content.size()));
    return content.substr(at, static_cast<size_t>(max));
  };
  return StoreBundle(b);
}

std::vector<const ProgressReport*> LastReportPerJob(const std::vector<ProgressReport>& reports) {
  std::map<int64_t, const ProgressReport*> last;
  for (const ProgressReport& r : reports) last[r.ref.job_id] = &r;
  std::vector<const ProgressReport*> out;
  for (const ProgressReport& r : reports) {
    if (last[r.ref.job_id] == &r) out.push_back(&r);
  }
  return out;
}

std::vector<std::string> DurationKeysToAsk(const std::vector<std::string>& keys) {
  std::vector<std::string> hex;
  for (const std::string& k : keys) {
    if (!k.empty() && k.find_first_not_of("0123456789abcdef") == std::string::npos) {
      hex.push_back(k);
    }
  }
  return hex;
}

std::string JsonStringArray(const std::vector<std::string>& names) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "[";
  for (const std::string& n : names) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (const char c : n) {
      const auto b = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (b < 0x20) {
        out += "\\u00";
        out += kHex[b >> 4];
        out += kHex[b & 15];
      } else {
        out += c;
      }
    }
    out += '"';
  }
  return out + "]";
}

size_t ClaimMaxLeases(const ClaimRequest& req) { return 1 + req.more_lease_secrets.size(); }

const std::string& ClaimLeaseSecret(const ClaimRequest& req, size_t k) {
  return k == 0 ? req.lease_secret : req.more_lease_secrets[k - 1];
}

absl::Status CheckClaimSecrets(const ClaimRequest& req) {
  for (size_t k = 0; k < ClaimMaxLeases(req); ++k) {
    if (ClaimLeaseSecret(req, k).empty()) {
      return absl::InvalidArgumentError("a claim needs a lease secret");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<v1::JobAssignment>> Store::ClaimJob(const ClaimRequest& req,
                                                                 const ClaimChooser& choose) {
  ClaimRequest one = req;
  one.more_lease_secrets.clear();
  auto got = ClaimJobs(one, choose);
  if (!got.ok()) return got.status();
  if (got->empty()) return std::optional<v1::JobAssignment>();
  return std::optional<v1::JobAssignment>(std::move(got->front()));
}

absl::StatusOr<std::string> Store::GetBundle(const std::string& sha256) {
  std::string content;
  for (int32_t i = 0;; ++i) {
    auto chunk = GetBundleChunk(sha256, i);
    if (absl::IsNotFound(chunk.status()) && i > 0) return content;
    if (!chunk.ok()) return chunk.status();
    content += *chunk;
  }
}

}  // namespace npuperf::server
