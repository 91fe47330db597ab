#include "server/core/device_health.h"

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_util.h"
#include "server/core/limits.h"

namespace npuperf::server {
namespace {

// The most current quarantines one refresh reads (a fleet larger than this
// has bigger problems; the rest are still withheld by their agents).
constexpr int32_t kMaxQuarantineScan = 10'000;

}  // namespace

DeviceHealth::DeviceHealth(Store& store, Clock& clock, ServerMetrics& metrics,
                           std::set<std::string> admins)
    : store_(store), clock_(clock), metrics_(metrics), admins_(std::move(admins)) {}

absl::Status DeviceHealth::Refresh(bool force) {
  const Clock::MonotonicTime now = clock_.MonotonicNow();
  {
    absl::MutexLock lock(&mu_);
    if (!force && read_at_ && now - *read_at_ < kQuarantineCacheTtl) return absl::OkStatus();
  }
  auto current = store_.ListQuarantines(/*include_released=*/false, kMaxQuarantineScan);
  if (!current.ok()) return current.status();
  std::map<DeviceKey, std::string> keys;
  for (const QuarantineRecord& q : *current) keys[{q.host, q.device_id}] = q.source;
  absl::MutexLock lock(&mu_);
  quarantined_ = std::move(keys);
  read_at_ = now;
  for (auto it = healthy_since_.begin(); it != healthy_since_.end();) {
    it = quarantined_.contains(it->first) ? std::next(it) : healthy_since_.erase(it);
  }
  return absl::OkStatus();
}

bool DeviceHealth::IsQuarantined(const DeviceKey& key) {
  absl::MutexLock lock(&mu_);
  return quarantined_.contains(key);
}

bool DeviceHealth::QuarantinedByChip(const DeviceKey& key) {
  absl::MutexLock lock(&mu_);
  auto it = quarantined_.find(key);
  return it != quarantined_.end() && it->second == "npu_smi";
}

bool DeviceHealth::HealthyLongEnough(const DeviceKey& key, bool healthy) {
  absl::MutexLock lock(&mu_);
  if (!healthy) {
    healthy_since_.erase(key);
    return false;
  }
  const Clock::MonotonicTime now = clock_.MonotonicNow();
  auto [it, fresh] = healthy_since_.emplace(key, now);
  return !fresh && now - it->second >= kHealthyStreakToRelease;
}

absl::Status DeviceHealth::Observe(
    const std::string& host, const google::protobuf::RepeatedPtrField<v1::DeviceInfo>& devices) {
  if (absl::Status s = Refresh(/*force=*/false); !s.ok()) return s;
  const int64_t now_ms = ToUnixMillis(clock_.SystemNow());
  for (const v1::DeviceInfo& d : devices) {
    const DeviceKey key{host, d.device_id()};
    if (std::optional<QuarantineRecord> q = QuarantineFor(host, d, now_ms)) {
      if (IsQuarantined(key)) {
        HealthyLongEnough(key, false);
        continue;
      }
      if (auto got = Quarantine(*q); !got.ok()) return got.status();
    } else if (QuarantinedByChip(key) && HealthyLongEnough(key, ReadsHealthy(d))) {
      // Only the chip's own quarantine ends by its readings: a canary
      // quarantine (a chip healthy by the driver and slow in fact) ends by
      // passing canaries (compare/canaries.h) or by a person.
      auto released = ReleaseAutomatically(
          host, d.device_id(),
          absl::StrCat("npu-smi read OK for ", kHealthyStreakToRelease.count(), " minutes"),
          "its chip read healthy");
      if (!released.ok()) return released.status();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> DeviceHealth::Quarantine(const QuarantineRecord& q) {
  auto got = store_.QuarantineDevice(q);
  if (!got.ok()) return got.status();
  if (got->second) {
    metrics_.device_quarantines.Add({{"source", q.source}}).Increment();
    LogWarning("health",
               absl::StrCat("device ", q.host, ":", q.device_id, " quarantined: ", q.reason));
  }
  if (absl::Status s = Refresh(/*force=*/true); !s.ok()) return s;
  return got->second;
}

absl::StatusOr<bool> DeviceHealth::ReleaseAutomatically(const std::string& host, int32_t device_id,
                                                        const std::string& note,
                                                        const std::string& why) {
  auto released = store_.ReleaseDevice(host, device_id, kHealthSystemActor, note,
                                       ToUnixMillis(clock_.SystemNow()));
  if (!released.ok() && !absl::IsFailedPrecondition(released.status())) {
    return released.status();
  }
  if (released.ok()) {
    metrics_.device_releases.Add({{"by", "automatic"}}).Increment();
    LogInfo("health", absl::StrCat("device ", host, ":", device_id, " released: ", why));
  }
  if (absl::Status s = Refresh(/*force=*/true); !s.ok()) return s;
  return released.ok();
}

std::vector<OfferedDevice> DeviceHealth::Placeable(const std::vector<OfferedDevice>& offered) {
  if (absl::Status s = Refresh(/*force=*/false); !s.ok()) {
    LogWarning("health",
               absl::StrCat("quarantines not read (using the last known): ", s.message()));
  }
  std::vector<OfferedDevice> out;
  for (OfferedDevice d : offered) {
    d.canary_only = IsQuarantined({d.host, d.device_id});
    out.push_back(std::move(d));
  }
  return out;
}

absl::StatusOr<v1::ListQuarantinesResponse> DeviceHealth::List(
    const Principal& p, bool auth_required, const v1::ListQuarantinesRequest& req) {
  if (req.limit() < 0 || req.limit() > kMaxQuarantinesPage) {
    return InvalidArgumentWithFields(
        {{"limit", absl::StrCat("must be in 0..", kMaxQuarantinesPage)}});
  }
  auto got = store_.ListQuarantines(req.include_released(),
                                    req.limit() == 0 ? kDefaultQuarantinesPage : req.limit());
  if (!got.ok()) return got.status();
  const bool admin = IsDeviceAdmin(p, auth_required);
  v1::ListQuarantinesResponse resp;
  for (const QuarantineRecord& q : *got) {
    v1::DeviceQuarantine* out = resp.add_quarantines();
    *out = QuarantineToProto(q);
    if (!admin) out->clear_host();
  }
  return resp;
}

bool DeviceHealth::IsDeviceAdmin(const Principal& p, bool auth_required) const {
  return CheckDeviceAdmin(p, auth_required, admins_).ok();
}

absl::StatusOr<v1::ReleaseDeviceResponse> DeviceHealth::Release(
    const Principal& p, bool auth_required, const v1::ReleaseDeviceRequest& req) {
  if (absl::Status s = CheckDeviceAdmin(p, auth_required, admins_); !s.ok()) return s;
  if (absl::Status s = CheckReleaseRequest(req); !s.ok()) return s;
  const std::string& host = req.host();
  const int32_t device_id = req.device_id();
  const std::string& actor = p.name;
  const std::string& note = req.note();
  auto released =
      store_.ReleaseDevice(host, device_id, actor, note, ToUnixMillis(clock_.SystemNow()));
  if (!released.ok()) return released.status();
  metrics_.device_releases.Add({{"by", "person"}}).Increment();
  LogInfo("health",
          absl::StrCat("device ", host, ":", device_id, " released by ", actor, ": ", note));
  if (absl::Status s = Refresh(/*force=*/true); !s.ok()) {
    LogWarning("health", absl::StrCat("quarantines not read again: ", s.message()));
  }
  v1::ReleaseDeviceResponse resp;
  *resp.mutable_quarantine() = QuarantineToProto(*released);
  return resp;
}

}  // namespace npuperf::server
