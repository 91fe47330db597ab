#include "server/compare/canaries.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/sha256.h"
#include "common/status_util.h"
#include "evidence/op_summary.h"
#include "google/protobuf/util/time_util.h"
#include "server/compare/canary_operator.h"
#include "server/compare/comparator.h"
#include "server/core/canary_rules.h"
#include "server/core/job_state.h"
#include "server/core/limits.h"
#include "server/core/noise_rules.h"
#include "server/core/request_rules.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

constexpr char kPending[] = "pending";
constexpr char kPass[] = "pass";
constexpr char kSlow[] = "slow";
constexpr char kInconclusive[] = "inconclusive";
constexpr char kFailed[] = "failed";
// Canaries of the device replayed for a decision (ActionFromHistory needs
// kSlowCanariesToQuarantine or kPassingCanariesToRelease of them, past the
// inconclusive ones), and its passing ones its history is made of.
constexpr int32_t kDecisionWindow = 20;
constexpr size_t kHistoryCanaries = 8;
constexpr int32_t kDefaultListPage = 100;

using DeviceKey = std::pair<std::string, int32_t>;

// The verdict a stored canary stands for in a decision.
std::optional<CanaryVerdict> VerdictOf(const CanaryRecord& c) {
  if (c.state == kPass) return CanaryVerdict::kPass;
  if (c.state == kSlow || c.state == kFailed) return CanaryVerdict::kSlow;
  if (c.state == kInconclusive) return CanaryVerdict::kInconclusive;
  return std::nullopt;  // pending
}

const char* StateOf(CanaryVerdict v) {
  switch (v) {
    case CanaryVerdict::kPass: return kPass;
    case CanaryVerdict::kSlow: return kSlow;
    case CanaryVerdict::kInconclusive: return kInconclusive;
  }
  return kInconclusive;
}

std::string DeviceName(const std::string& host, int32_t device_id) {
  return absl::StrCat(host, ":", device_id);
}

}  // namespace

v1::Canary CanaryToProto(const CanaryRecord& c) {
  v1::Canary out;
  out.set_id(c.id);
  out.set_host(c.host);
  out.set_device_id(c.device_id);
  out.set_soc(c.soc);
  out.set_state(c.state);
  out.set_collection_id(c.collection_id);
  out.set_round_id(c.round_id);
  out.set_kernel_us(c.kernel_us);
  out.set_reference(c.reference);
  out.set_reference_us(c.reference_us);
  out.set_excess_pct(c.excess_pct);
  out.set_threshold_pct(c.threshold_pct);
  out.set_reason(c.reason);
  *out.mutable_created_at() = TimeUtil::MillisecondsToTimestamp(c.created_ms);
  if (c.finished_ms > 0) {
    *out.mutable_finished_at() = TimeUtil::MillisecondsToTimestamp(c.finished_ms);
  }
  return out;
}

Canaries::Canaries(Store& store, Clock& clock, ServerMetrics& metrics, DeviceHealth& health,
                   Submit submit, Cancel cancel, CanaryOptions options)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      health_(health),
      submit_(std::move(submit)),
      cancel_(std::move(cancel)),
      options_(std::move(options)) {}

absl::Status Canaries::Tick() {
  if (!enabled()) return absl::OkStatus();
  CanaryFilter pending;
  pending.pending_only = true;
  pending.limit = kCanaryPage;
  auto waiting = store_.ListCanaries(pending);
  if (!waiting.ok()) return waiting.status();
  absl::Status first = absl::OkStatus();
  for (CanaryRecord& c : *waiting) {
    if (absl::Status s = Advance(std::move(c)); !s.ok() && first.ok()) first = s;
  }

  // Every idle device of an online agent whose newest canary is of an
  // earlier slot (and not still pending) gets one; looked for at most every
  // kCanaryScheduleEvery (or half the interval, when shorter).
  const Clock::MonotonicTime mono = clock_.MonotonicNow();
  {
    absl::MutexLock lock(&mu_);
    const auto every =
        std::min<std::chrono::milliseconds>(kCanaryScheduleEvery, options_.interval / 2);
    if (scheduled_at_ && mono - *scheduled_at_ < every) return first;
    scheduled_at_ = mono;
  }
  auto agents = store_.ListAgents();
  if (!agents.ok()) return agents.status();
  CanaryFilter newest;
  newest.limit = kCanaryPage;
  auto recent = store_.ListCanaries(newest);
  if (!recent.ok()) return recent.status();
  std::map<DeviceKey, const CanaryRecord*> latest;
  for (const CanaryRecord& c : *recent) latest.emplace(DeviceKey{c.host, c.device_id}, &c);
  const int64_t slot = NowMs() / options_.interval.count();
  for (const AgentRecord& a : *agents) {
    if (a.status.state() != "online") continue;
    for (const v1::DeviceStatus& d : a.status.devices()) {
      if (d.state() != "idle" || d.soc().empty()) continue;
      auto it = latest.find({a.status.host(), d.device_id()});
      if (it != latest.end() && (it->second->state == kPending || it->second->slot >= slot)) {
        continue;
      }
      absl::Status s = Queue(a.status.host(), d.device_id(), d.soc(), slot);
      if (!s.ok() && first.ok()) first = s;
    }
  }
  return first;
}

absl::Status Canaries::Queue(const std::string& host, int32_t device_id, const std::string& soc,
                             int64_t slot) {
  CanaryRecord c;
  c.host = host;
  c.device_id = device_id;
  c.soc = soc;
  c.slot = slot;
  c.state = kPending;
  c.created_ms = NowMs();
  auto made = store_.InsertCanary(c);
  if (!made.ok()) return made.status();
  if (!made->second) return absl::OkStatus();  // another replica queued it
  return SubmitCollection(made->first);
}

absl::StatusOr<std::string> Canaries::BundleSha() {
  std::string bundle, sha;
  {
    absl::MutexLock lock(&mu_);
    if (bundle_.empty()) {
      auto packed = CanaryBundle();
      if (!packed.ok()) return packed.status();
      bundle_ = *std::move(packed);
      bundle_sha_ = Sha256Hex(bundle_);
    }
    bundle = bundle_;
    sha = bundle_sha_;
  }
  // Owned bundles are kept while used; the collector may have taken it
  // after a long pause of the canaries.
  auto owned = store_.UseBundle(kCanaryTeam, sha, NowMs());
  if (!owned.ok()) return owned.status();
  if (!*owned) {
    auto put = store_.PutBundle(kCanaryTeam, kCanaryOperator, sha, bundle, NowMs());
    if (!put.ok()) return put.status();
  }
  return sha;
}

absl::Status Canaries::SubmitCollection(CanaryRecord& c) {
  auto sha = BundleSha();
  if (!sha.ok()) return sha.status();
  v1::SubmitCollectionRequest req;
  req.set_idempotency_key(absl::StrCat("npuperf-canary-", c.id));
  v1::CollectionSpec* spec = req.mutable_spec();
  spec->set_kind(v1::COLLECTION_KIND_SINGLE);
  spec->mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
  spec->mutable_params()->set_repeats(kCanaryRepeats);
  spec->mutable_params()->set_seed(1);
  spec->mutable_case_selector()->set_case_arg("--case-id");
  v1::OperatorSpec* op = spec->add_operators();
  op->set_name(kCanaryOperator);
  op->set_bundle_sha256(*sha);
  op->set_runner(kCanaryRunner);
  op->set_op_name(options_.op_name);
  op->add_case_ids(kCanaryCase);
  spec->mutable_constraints()->add_socs(c.soc);
  spec->mutable_constraints()->set_host(c.host);
  spec->mutable_constraints()->set_device_range(std::to_string(c.device_id));
  spec->set_priority(kCanaryPriority);
  spec->set_max_concurrent_jobs(1);
  spec->set_description(absl::StrCat("canary ", c.id, " of ", DeviceName(c.host, c.device_id)));
  auto made = submit_(kCanaryTeam, req, {{kCanaryLabel, std::to_string(c.id)}});
  if (!made.ok()) {
    // The server refused its own job (a limit, a store error): nothing about
    // the device, so it changes no streak.
    auto finished =
        Finish(c, kInconclusive,
               absl::StrCat("the canary could not be queued: ", made.status().message()));
    return finished.ok() ? absl::OkStatus() : finished.status();
  }
  c.collection_id = made->first.id();
  auto stored = store_.UpdateCanary(c);
  if (absl::IsFailedPrecondition(stored.status())) return absl::OkStatus();
  if (!stored.ok()) return stored.status();
  c = *std::move(stored);
  return absl::OkStatus();
}

absl::Status Canaries::Advance(CanaryRecord c) {
  if (c.collection_id.empty()) return SubmitCollection(c);
  auto col = store_.GetCollectionPage(kCanaryTeam, c.collection_id, 0, 2);
  if (absl::IsNotFound(col.status())) {
    return Finish(c, kInconclusive, absl::StrCat("collection ", c.collection_id, " is gone"))
        .status();
  }
  if (!col.ok()) return col.status();
  const int64_t max_pending_ms = std::max<int64_t>(
      options_.interval.count(), std::chrono::milliseconds(kCanaryMaxPending).count());
  if (!IsTerminal(col->state())) {
    if (NowMs() - c.created_ms < max_pending_ms) return absl::OkStatus();
    const std::string why = absl::StrCat("not run within ", max_pending_ms / 1000,
                                         " s: the device stayed busy or went away");
    if (absl::Status s = cancel_(kCanaryTeam, c.collection_id, why);
        !s.ok() && !absl::IsFailedPrecondition(s)) {
      return s;
    }
    return Finish(c, kInconclusive, why).status();
  }
  if (col->jobs_size() != 1) {
    return Finish(c, kInconclusive,
                  absl::StrCat("collection ", c.collection_id, " has ", col->jobs_size(),
                               " jobs, not one"))
        .status();
  }
  const v1::Job& job = col->jobs(0);
  if (col->state() == v1::COLLECTION_STATE_CANCELLED) {
    return Finish(c, kInconclusive, absl::StrCat("cancelled: ", col->cancel_reason())).status();
  }
  if (col->state() != v1::COLLECTION_STATE_SUCCEEDED) {
    const std::string why = absl::StrCat("the canary job failed: ", job.reason());
    auto elsewhere = RunsElsewhere(c);
    if (!elsewhere.ok()) return elsewhere.status();
    if (!*elsewhere) {
      // It fails on every device of the SoC: the canary's configuration
      // (--canary-op-name, the hosts' CANN) is wrong, not this chip.
      return Finish(c, kInconclusive,
                    absl::StrCat(why, "; no other ", c.soc,
                                 " device measured a canary lately, so the job, not this device, "
                                 "is at fault (check --canary-op-name and the hosts' CANN)"))
          .status();
    }
    return Finish(c, kFailed, why).status();
  }
  auto round = store_.GetRound(kCanaryTeam, job.round_id());
  if (absl::IsNotFound(round.status())) {
    return Finish(c, kInconclusive, absl::StrCat("round ", job.round_id(), " is gone")).status();
  }
  if (!round.ok()) return round.status();
  const auto& samples = round->evidence().duration().samples_us();
  if (samples.empty()) {
    return Finish(c, kFailed, absl::StrCat("round ", round->id(), " has no kernel time")).status();
  }
  c.round_id = round->id();
  c.kernel_us = evidence::Median({samples.begin(), samples.end()});
  return Judge(c, DvfsSuspect(round->evidence()));
}

absl::StatusOr<std::vector<double>> Canaries::PeerTimes(const CanaryRecord& c) {
  CanaryFilter same_soc;
  same_soc.soc = c.soc;
  same_soc.finished_only = true;
  same_soc.limit = kCanaryPage;
  auto soc_canaries = store_.ListCanaries(same_soc);
  if (!soc_canaries.ok()) return soc_canaries.status();
  // Each other device's newest measured canary, if recent.
  const int64_t oldest = NowMs() - kCanaryPeerIntervals * options_.interval.count();
  std::set<DeviceKey> seen = {{c.host, c.device_id}};
  std::vector<double> peers;
  for (const CanaryRecord& p : *soc_canaries) {
    // A measured one at the rated clock (a first canary judged while its
    // peers were still running is inconclusive, yet measured).
    if (p.state == kFailed || p.kernel_us <= 0) continue;
    if (!seen.insert({p.host, p.device_id}).second) continue;
    if (p.finished_ms >= oldest) peers.push_back(p.kernel_us);
  }
  return peers;
}

absl::StatusOr<bool> Canaries::RunsElsewhere(const CanaryRecord& c) {
  auto peers = PeerTimes(c);
  if (!peers.ok()) return peers.status();
  return !peers->empty();
}

absl::StatusOr<std::vector<CanaryRecord>> Canaries::FinishedOf(const CanaryRecord& c) {
  CanaryFilter own;
  own.host = c.host;
  own.device_id = c.device_id;
  own.finished_only = true;
  own.limit = kDecisionWindow;
  return store_.ListCanaries(own);
}

absl::StatusOr<int64_t> Canaries::LastReleaseMs(const CanaryRecord& c) {
  auto quarantines = store_.CanaryQuarantinesOf(c.host, c.device_id);
  if (!quarantines.ok()) return quarantines.status();
  int64_t last = 0;
  for (const QuarantineRecord& q : *quarantines) last = std::max(last, q.released_ms);
  return last;
}

absl::Status Canaries::Judge(CanaryRecord& c, bool clock_suspect) {
  auto peers = PeerTimes(c);
  if (!peers.ok()) return peers.status();
  auto mine = FinishedOf(c);
  if (!mine.ok()) return mine.status();
  std::vector<double> history;
  for (const CanaryRecord& h : *mine) {
    if (h.state == kPass && h.kernel_us > 0 && history.size() < kHistoryCanaries) {
      history.push_back(h.kernel_us);
    }
  }
  // The device's own passing canaries are A/A runs of one job on one device:
  // their spread is the measured noise the threshold scales with.
  const std::optional<double> spread = DurationSpread(history);
  const CanaryJudgement j = JudgeCanary(c.kernel_us, *peers, history, spread, c.soc, clock_suspect);
  // A down-clocked run's time says nothing of the chip: it is kept by
  // nobody (its round has it), so no peer compares with it.
  if (clock_suspect) c.kernel_us = 0;
  c.reference = j.reference;
  c.reference_us = j.reference_us;
  c.excess_pct = j.excess_pct;
  c.threshold_pct = j.threshold_pct;
  return Finish(c, StateOf(j.verdict), j.reason).status();
}

absl::StatusOr<bool> Canaries::Finish(CanaryRecord& c, const std::string& state,
                                      const std::string& reason) {
  c.state = state;
  c.reason = reason;
  c.finished_ms = NowMs();
  auto stored = store_.UpdateCanary(c);
  if (absl::IsFailedPrecondition(stored.status())) return false;  // another replica's stands
  if (!stored.ok()) return stored.status();
  c = *std::move(stored);
  metrics_.canaries.Add({{"verdict", state}}).Increment();
  LogInfo("canary",
          absl::StrCat("canary ", c.id, " of ", DeviceName(c.host, c.device_id), ": ", state,
                       reason.empty() ? "" : " (", reason, reason.empty() ? "" : ")"));
  if (absl::Status s = Decide(c); !s.ok()) return s;
  return true;
}

absl::StatusOr<bool> Canaries::QuarantineFits(const CanaryRecord& c,
                                              const std::vector<QuarantineRecord>& current) {
  CanaryFilter same_soc;
  same_soc.soc = c.soc;
  same_soc.limit = kCanaryPage;
  auto recent = store_.ListCanaries(same_soc);
  if (!recent.ok()) return recent.status();
  const int64_t oldest = NowMs() - kCanaryPeerIntervals * options_.interval.count();
  std::set<DeviceKey> devices;
  for (const CanaryRecord& r : *recent) {
    if (r.created_ms >= oldest) devices.insert({r.host, r.device_id});
  }
  int quarantined = 0;
  for (const QuarantineRecord& q : current) {
    if (q.source == "canary" && q.soc == c.soc) ++quarantined;
  }
  if (CanaryQuarantineFits(quarantined, static_cast<int>(devices.size()))) return true;
  LogWarning("canary", absl::StrCat("device ", DeviceName(c.host, c.device_id),
                                    " not quarantined: ", quarantined, " of ", devices.size(), " ",
                                    c.soc, " devices already are (at most a quarter at once)"));
  return false;
}

absl::Status Canaries::Decide(const CanaryRecord& c) {
  auto mine = FinishedOf(c);
  if (!mine.ok()) return mine.status();
  auto current = store_.ListQuarantines(/*include_released=*/false, kMaxQuarantinesPage);
  if (!current.ok()) return current.status();
  const QuarantineRecord* held = nullptr;
  for (const QuarantineRecord& q : *current) {
    if (q.host == c.host && q.device_id == c.device_id) held = &q;
  }
  int64_t released_ms = 0;
  if (held == nullptr) {
    auto last = LastReleaseMs(c);
    if (!last.ok()) return last.status();
    released_ms = *last;
  }
  std::vector<CanaryVerdict> verdicts;
  for (const CanaryRecord& r : *mine) {
    if (r.created_ms <= released_ms) continue;  // queued before the release
    if (auto v = VerdictOf(r)) verdicts.push_back(*v);
  }
  const CanaryAction action = ActionFromHistory(held != nullptr, verdicts);
  const int64_t now = NowMs();
  if (action == CanaryAction::kQuarantine) {
    auto fits = QuarantineFits(c, *current);
    if (!fits.ok()) return fits.status();
    if (!*fits) return absl::OkStatus();
    QuarantineRecord q;
    q.host = c.host;
    q.device_id = c.device_id;
    q.soc = c.soc;
    q.source = "canary";
    q.since_ms = now;
    q.reason = absl::StrCat(kSlowCanariesToQuarantine,
                            " canaries in a row slow or failed; the last: ", c.reason);
    // Suspect from the last passing canary on (the epoch when it never
    // passed one in the window: every earlier round is in doubt).
    for (const CanaryRecord& r : *mine) {
      if (r.state == kPass) {
        q.suspect_since_ms = r.finished_ms;
        break;
      }
    }
    if (auto made = health_.Quarantine(q); !made.ok()) return made.status();
  } else if (action == CanaryAction::kRelease && held->source == "canary") {
    auto released = health_.ReleaseAutomatically(
        c.host, c.device_id, absl::StrCat(kPassingCanariesToRelease, " canaries in a row passed"),
        "its canaries pass again");
    if (!released.ok()) return released.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::ListCanariesResponse> Canaries::List(bool admin,
                                                        const v1::ListCanariesRequest& req) {
  std::vector<FieldViolation> bad;
  if (req.limit() < 0 || req.limit() > kCanaryPage) {
    bad.push_back({"limit", absl::StrCat("must be in 0..", kCanaryPage)});
  }
  if (req.host().size() > kMaxAgentStringBytes) {
    bad.push_back({"host", absl::StrCat("at most ", kMaxAgentStringBytes, " bytes")});
  }
  if (req.soc().size() > kMaxAgentStringBytes) {
    bad.push_back({"soc", absl::StrCat("at most ", kMaxAgentStringBytes, " bytes")});
  }
  if (req.has_device_id() && (req.device_id() < 0 || req.device_id() > kMaxAgentDeviceId)) {
    bad.push_back({"device_id", absl::StrCat("must be in 0..", kMaxAgentDeviceId)});
  }
  CanaryFilter f;
  if (!req.page_token().empty()) {
    auto after = ParseIdToken(req.page_token(), "page_token");
    if (!after.ok()) return after.status();
    f.before_id = *after;
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  if (!req.host().empty() && !admin) {
    return absl::PermissionDeniedError(
        "host: only a team named by the server's --device-admin may filter by host");
  }
  f.host = req.host();
  f.device_id = req.has_device_id() ? req.device_id() : -1;
  f.soc = req.soc();
  f.limit = req.limit() == 0 ? kDefaultListPage : req.limit();
  auto got = store_.ListCanaries(f);
  if (!got.ok()) return got.status();
  v1::ListCanariesResponse resp;
  for (const CanaryRecord& c : *got) {
    v1::Canary* out = resp.add_canaries();
    *out = CanaryToProto(c);
    if (!admin) out->clear_host();
  }
  if (static_cast<int32_t>(got->size()) == f.limit && !got->empty()) {
    resp.set_next_page_token(std::to_string(got->back().id));
  }
  return resp;
}

}  // namespace npuperf::server
