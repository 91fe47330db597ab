#include "server/compare/device_suspects.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"

namespace npuperf::server {

absl::StatusOr<std::string> DeviceSuspects::Why(const v1::Round& r) {
  const v1::Fingerprint& fp = r.evidence().fingerprint();
  if (fp.host().empty()) return std::string();
  const auto key = std::make_pair(fp.host(), fp.device_id());
  auto it = quarantines_.find(key);
  if (it == quarantines_.end()) {
    auto got = store_.CanaryQuarantinesOf(fp.host(), fp.device_id());
    if (!got.ok()) return got.status();
    it = quarantines_.emplace(key, *std::move(got)).first;
  }
  const int64_t created = google::protobuf::util::TimeUtil::TimestampToMilliseconds(r.created_at());
  for (const QuarantineRecord& q : it->second) {
    const bool after_good = created >= q.suspect_since_ms;
    const bool before_release = q.released_ms == 0 || created < q.released_ms;
    if (after_good && before_release) {
      return absl::StrCat("device ", fp.host(), ":", fp.device_id(),
                          " was quarantined by its canaries (", q.reason,
                          "); this round ran after its last passing canary");
    }
  }
  return std::string();
}

absl::Status DeviceSuspects::Flag(
    const std::vector<const v1::Round*>& rounds,
    google::protobuf::RepeatedPtrField<v1::RoundComparison>* comparisons) {
  std::set<int64_t> suspect;
  for (const v1::Round* r : rounds) {
    auto why = Why(*r);
    if (!why.ok()) return why.status();
    if (!why->empty()) suspect.insert(r->id());
  }
  if (suspect.empty()) return absl::OkStatus();
  for (v1::RoundComparison& c : *comparisons) {
    if (suspect.contains(c.baseline_round_id())) {
      c.add_flags(absl::StrCat(kDeviceSuspectFlag, ":baseline"));
    }
    if (suspect.contains(c.candidate_round_id())) {
      c.add_flags(absl::StrCat(kDeviceSuspectFlag, ":candidate"));
    }
  }
  return absl::OkStatus();
}

absl::Status FlagSuspectRounds(
    Store& store, const std::vector<const std::vector<v1::Round>*>& sides,
    google::protobuf::RepeatedPtrField<v1::RoundComparison>* comparisons) {
  std::vector<const v1::Round*> rounds;
  for (const auto* side : sides) {
    for (const v1::Round& r : *side) rounds.push_back(&r);
  }
  DeviceSuspects suspects(store);
  return suspects.Flag(rounds, comparisons);
}

}  // namespace npuperf::server
